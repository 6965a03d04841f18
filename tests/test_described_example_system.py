"""A described run whose system is an installed LAMMPS example's (simagent.described.example_system,
tools.lammps.example_system): identification from what a text states, refusals by name, and a real
short run of the example's system under the text's protocol."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simagent.described.reading import read_description
from tests.described_helpers import dev_text, run_inputs
from tools.lammps.examples import example_folder

pytestmark = pytest.mark.skipif(example_folder("peptide") is None, reason="LAMMPS examples not installed")

# written for these tests: another wording and order than the dev tasks'
PEPTIDE = ("Report the mean temperature. Using LAMMPS real units, simulate a five-residue peptide in explicit "
           "water with the CHARMM force field (charmm angles and dihedrals, harmonic bonds and impropers). "
           "Coulomb interactions are long-ranged and handled by PPPM at a relative accuracy of 1e-4; bonds to "
           "hydrogen are held rigid by SHAKE. The timestep is 2 fs; run 20 steps of NVT with a Nose-Hoover "
           "thermostat at 300 K.")
DREIDING = ("Liquid methanol described with DREIDING in real units: an lj/cut/coul/long pair style (LJ cutoff "
            "8.5 angstrom, Coulomb cutoff 11.5 angstrom) overlaid with the hbond/dreiding/lj hydrogen-bond term; "
            "PPPM with accuracy 0.001. Exclude 1-2 and 1-3 neighbours, keep 1-4 pairs in full. Integrate in NVE "
            "for 100 steps and report the mean number of hydrogen bonds.")
REAXFF = ("A ReaxFF reactive force field with charge equilibration (QEq) in real units; the timestep is "
          "0.25 fs and the run is 10 steps of NVE.")


def _example(text: str):
    return read_description(text).example_system


def test_dev_peptide_is_the_peptide_example():
    desc = read_description(dev_text("lammps_1/7_peptide.json"))
    assert desc.example_system is not None and desc.example_system.name == "peptide"
    assert desc.renderable, (desc.unsupported, desc.missing)


def test_paraphrased_peptide_is_the_peptide_example_with_the_texts_protocol():
    desc = read_description(PEPTIDE)
    assert desc.example_system is not None and desc.example_system.name == "peptide"
    assert desc.renderable, (desc.unsupported, desc.missing)
    (stage,) = desc.stages
    assert stage.steps == 20 and stage.dynamics.ensemble == "nvt" and stage.dynamics.t_stop == 300
    assert desc.timestep == 2
    # the example's thermostat damping fills the one the text leaves out, listed as a default
    assert stage.dynamics.t_damp == 100 and "peptide" in desc.defaults["run1.t_damp"]
    # what the example's data file gives is not created anew
    assert desc.velocity is None and "data.peptide" in desc.defaults["velocity"]


def test_dev_dreiding_is_the_dreiding_example():
    desc = read_description(dev_text("lammps_1/47_dreiding.json"))
    assert desc.example_system is not None and desc.example_system.name == "dreiding"
    assert desc.renderable, (desc.unsupported, desc.missing)


def test_paraphrased_dreiding_is_the_dreiding_example():
    desc = read_description(DREIDING)
    assert desc.example_system is not None and desc.example_system.name == "dreiding"
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert [s.steps for s in desc.stages] == [100]


def test_a_stated_number_the_example_does_not_have_stops_it_by_name():
    desc = read_description(PEPTIDE.replace("1e-4", "1e-5"))
    assert desc.example_system is None
    assert any("1e-5" in u and "peptide" in u for u in desc.unsupported), desc.unsupported


def test_a_stated_atom_count_that_differs_from_the_data_file_is_named():
    desc = read_description(PEPTIDE.replace("explicit water", "explicit water (2100 atoms)"))
    assert desc.example_system is None
    assert any("atoms 2100 where peptide has 2004" in u for u in desc.unsupported), desc.unsupported


def test_several_examples_fitting_are_refused_naming_them():
    desc = read_description(REAXFF)
    assert desc.example_system is None
    (refusal,) = [u for u in desc.unsupported if "fits several" in u]
    assert "qeq/in.qeq.reaxc" in refusal and "reaxff/AuO/in.AuO" in refusal


def test_a_stated_atom_count_singles_one_out():
    desc = read_description(REAXFF.replace("in real units", "in real units, for a 960-atom gold oxide system"))
    assert desc.example_system is not None and desc.example_system.name == "reaxff/AuO", desc.unsupported


def test_a_text_naming_no_distinctive_style_uses_no_example():
    desc = read_description("A box of water with harmonic bonds and PPPM electrostatics in real units, NVE for "
                            "10 steps.")
    assert desc.example_system is None


def test_the_example_input_is_split_into_system_and_protocol():
    from tools.lammps.example_system import read_example

    folder = example_folder("peptide")
    example = read_example(folder, folder / "in.peptide", "peptide")
    kept = [line.text.split()[0] for line in example.kept]
    assert "read_data" in kept and "kspace_style" in kept and "fix" in kept  # fix shake is the system's
    assert any(re.match(r"fix\s+\S+\s+all\s+nvt", line) for line in example.protocol)
    assert not any(line.startswith(("timestep", "run", "thermo")) for line in kept)
    assert example.atoms == 2004 and example.atom_types == 14 and example.velocities
    assert example.files == ["data.peptide"]


def test_an_example_needing_host_code_or_loops_is_refused():
    from tools.lammps.example_system import example_systems

    refused = {f"{e.name}/{e.input}": e.refused for e in example_systems() if e.refused}
    assert any("clear" in why or "jump" in why or "shell" in why or "python" in why for why in refused.values())
    assert all(e.refused is None for e in example_systems() if e.name == "peptide")


def test_rendered_peptide_runs_with_shake_and_the_stated_kspace_accuracy(tmp_path: Path):
    """20 steps of the example's 2004 atoms under the text's NVT: the data file is read, SHAKE holds the
    constrained bonds, and PPPM runs at the example's (and the text's) accuracy."""
    from tools.lammps.described import render
    from tools.lammps.example_system import job_files

    desc = read_description(PEPTIDE)
    inputs = {"in.lammps": render(desc), **job_files(desc.example_system)}
    log = (run_inputs(inputs, tmp_path / "peptide") / "log.lammps").read_text()
    assert "2004 atoms" in log
    assert re.search(r"kspace_style\s+pppm 0\.0001", log)
    accuracy = float(re.search(r"estimated relative force accuracy = (\S+)", log).group(1))
    assert accuracy <= 1e-4
    deltas = [float(m.group(1)) for m in re.finditer(r"^Bond:\s+\d+\s+\S+\s+(\S+)", log, re.MULTILINE)]
    assert deltas and max(deltas) < 1e-3  # SHAKE: the constrained bond lengths stay at their targets
    assert re.search(r"fix\s+dyn1 all nvt temp 300 300 100", log)


@pytest.mark.parametrize("metric", ["average_hbond", "Mean number of hydrogen bonds", "h-bond count"])
def test_hydrogen_bond_metric_names(metric):
    from simagent.solve import read_metric

    assert read_metric(metric).property == "hydrogen_bond_count"


def test_rendered_dreiding_counts_hydrogen_bonds(tmp_path: Path):
    """20 NVE steps of the example's methanol: the hydrogen-bond pair style's own count (every donor-H-acceptor
    triple within its 6.5 A and 90 degree cutoffs) is a whole positive number, at most one per hydroxyl H
    (type 2) and oxygen (type 4) of another molecule."""
    from tools.lammps.described import render
    from tools.lammps.example_system import HBOND_COLUMN, job_files
    from tools.lammps.parse import read_output

    desc = read_description(DREIDING.replace("100 steps", "20 steps"))
    folder = run_inputs({"in.lammps": render(desc, hbonds=True), **job_files(desc.example_system)},
                        tmp_path / "dreiding")
    atoms = (folder / "data.dreiding").read_text().split("Atoms", 1)[1].split("Velocities")[0].split("Bonds")[0]
    types = [line.split()[2] for line in atoms.splitlines() if len(line.split()) > 6]
    hydrogens, oxygens = types.count("2"), types.count("4")
    (block,) = read_output(folder).runs
    counts = block[HBOND_COLUMN]
    assert hydrogens == oxygens > 0
    assert all(0 < c <= hydrogens * (oxygens - 1) and c == int(c) for c in counts), counts


QEQ = ("Average charge per atom type of a reactive C/H/O mixture: 105 atoms (20 O, 25 C, 60 H) in real units "
       "with atom style charge, ReaxFF with charges equilibrated by fix qeq/reax (parameters in param.qeq.reax, "
       "cutoff 10.0, tolerance 1e-6, every step). Velocities at 300 K; NVE with a 0.25 fs timestep for 10 steps.")


def test_dev_qeq_reaxff_is_the_qeq_example():
    desc = read_description(dev_text("lammps_3/22_qeq_reaxff.json"))
    assert desc.example_system is not None and (desc.example_system.name, desc.example_system.input) == (
        "qeq", "in.qeq.reaxc")
    assert desc.renderable, (desc.unsupported, desc.missing)


def test_paraphrased_qeq_names_its_file_and_counts():
    desc = read_description(QEQ)
    example = desc.example_system
    assert example is not None and example.name == "qeq", desc.unsupported
    assert "param.qeq.reax" in example.files and desc.atom_types == 3
    # the example's 2022 style names run under their current names, and the line says so
    (pair,) = [k for k in example.kept if k.text.startswith("pair_style")]
    assert pair.text.split()[1] == "reaxff" and "reax/c" in pair.note
    # a seed the text leaves out is the example's, for the same creation temperature
    assert desc.velocity.seed == 1281937 and "qeq" in desc.defaults["velocity.seed"]


def test_element_counts_that_differ_are_named():
    desc = read_description(QEQ.replace("20 O, 25 C, 60 H", "21 O, 24 C, 60 H"))
    assert desc.example_system is None
    assert any("atoms per element 21, 24, 60" in u for u in desc.unsupported), desc.unsupported


def test_dev_streitz_is_the_ewald_variant_and_wolf_the_other():
    desc = read_description(dev_text("lammps_2/70_streitz.json"))
    assert desc.example_system is not None and desc.example_system.input == "in.streitz.ewald", desc.unsupported
    assert desc.timestep == 0.0004 and "streitz" in desc.defaults["timestep"]  # the example's, none stated
    wolf = read_description("Alumina (Al: 864, O: 1296) with the Streitz-Mintmire coul/streitz potential and the "
                            "Wolf sum, eam/alloy for the short range, charges by fix qeq/slater, metal units. "
                            "Velocities at 300 K, then 10 steps of NVE.")
    assert wolf.example_system is not None and wolf.example_system.input == "in.streitz.wolf", wolf.unsupported


def test_dev_body_runs_its_particles_with_the_examples_integrator():
    from tools.lammps.described import render

    desc = read_description(dev_text("lammps_1/39_body.json"))
    assert desc.example_system is not None and desc.example_system.input == "in.body", desc.unsupported
    assert re.search(r"^fix\s+dyn1 all nve/body$", render(desc), re.MULTILINE)


def test_rendered_qeq_gives_neutral_charges_per_type(tmp_path: Path):
    """10 steps of ReaxFF with QEq: the per-type mean charges (compute property/atom q, reduce) weighted by the
    example's type counts sum to zero, as charge equilibration conserves the total charge."""
    from tools.lammps.described import render
    from tools.lammps.described_metrics import GroupMeasure
    from tools.lammps.example_system import job_files
    from tools.lammps.parse import read_output

    desc = read_description(QEQ)
    measures = [GroupMeasure(property="atomic_charge", group=f"type{n}") for n in (1, 2, 3)]
    folder = run_inputs({"in.lammps": render(desc, groups=measures), **job_files(desc.example_system)},
                        tmp_path / "qeq")
    (block,) = read_output(folder).runs
    counts = desc.example_system.type_counts
    total = sum(counts[n] * block[m.column][-1] for n, m in zip((1, 2, 3), measures, strict=True))
    assert abs(total) < 1e-3 and block[measures[0].column][-1] > 0  # neutral; hydrogen positive


def test_dev_core_shell_uses_the_examples_own_temperature_everywhere():
    from tools.lammps.described import render

    desc = read_description(dev_text("lammps_3/45_core_shell.json"))
    assert desc.example_system is not None and desc.example_system.input == "in.coreshell", desc.unsupported
    text = render(desc)
    assert re.search(r"^thermo_modify\s+norm no temp CStemp press thermo_press_lmp$", text, re.MULTILINE)
    assert re.search(r"^velocity\s+all create 1427 134 .*bias yes temp CStemp$", text, re.MULTILINE)
    assert re.search(r"^fix_modify\s+dyn2 temp CStemp$", text, re.MULTILINE)  # the Berendsen stage's thermostat


def test_paraphrased_core_shell_is_the_coreshell_example():
    desc = read_description("Sodium chloride with adiabatic core-shell ions (432 particles, metal units): cores and "
                            "shells held by harmonic springs, Born-Mayer short range plus Coulomb by Ewald at 1e-6. "
                            "Timestep 0.002 ps. A Berendsen thermostat at 1427 K with NVE for 500 steps, then "
                            "5000 steps of plain NVE.")
    assert desc.example_system is not None and desc.example_system.name == "coreshell", desc.unsupported


@pytest.mark.parametrize("metric, prop", [
    ("average_coulombic_energy_per_particle", "coulomb_energy_per_atom"),  # LAMMPS's name for thermo ecoul
    ("Mean Coulomb energy per ion", "coulomb_energy_per_atom"),
    ("ecoul per atom", "coulomb_energy_per_atom"),
    ("electrostatic energy per atom", "electrostatic_energy_per_atom"),  # the whole Coulomb energy: ecoul + elong
    ("coulomb energy including the long-range part, per atom", "electrostatic_energy_per_atom"),
    ("Coulombic energy with k-space, per particle", "electrostatic_energy_per_atom"),
    ("ecoul+elong per atom", "electrostatic_energy_per_atom"),
    ("average potential energy per atom", "potential_energy_per_atom"),  # not a Coulomb energy
])  # fmt: skip
def test_coulomb_energy_metric_names(metric, prop):
    from simagent.solve import read_metric

    target = read_metric(metric)
    assert target.property == prop and target.label is None  # per atom


@pytest.mark.parametrize("metric", ["long-range Coulomb energy per atom", "kspace coulombic energy"])
def test_the_k_space_part_alone_is_refused_by_name(metric):
    from simagent.solve import read_metric

    target = read_metric(metric, "NaCl in metal units with PPPM")
    assert target.property is None and "long-range (k-space) part" in target.reason


def test_a_coulomb_energy_without_per_atom_is_the_systems_total():
    from simagent.solve import TOTAL, read_metric

    assert read_metric("average electrostatic energy", "a salt crystal in real units").label == TOTAL
    assert read_metric("average coulombic energy", "a salt crystal in real units").label == TOTAL


def test_dev_comb3_is_the_comb3_example_with_its_implicit_library_file():
    desc = read_description(dev_text("lammps_2/43_comb.json"))
    assert desc.example_system is not None and desc.example_system.input == "in.comb3", desc.unsupported
    assert "lib.comb3" in desc.example_system.files  # pair comb3 reads it from the run folder unnamed


def test_airebo_variants_the_text_cannot_tell_apart_are_refused_by_name():
    desc = read_description("Polyethylene of 60 atoms (20 C, 40 H) replicated 17 x 16 x 2, the AIREBO potential "
                            "in metal units with a 3.0 LJ cutoff; velocities at 300 K, NVE for 10 steps with a "
                            "0.0005 ps timestep.")
    assert desc.example_system is None
    (refusal,) = [u for u in desc.unsupported if "fits several" in u]
    assert "in.airebo," in refusal and "in.airebo-0-0" in refusal and "airebo-m" not in refusal  # Morse not named


def test_dev_micelle_swaps_its_pair_style_between_the_texts_two_runs():
    from tools.lammps.described import render

    desc = read_description(dev_text("lammps_2/9_micelle.json"))
    assert desc.example_system is not None and desc.example_system.input == "in.micelle", desc.unsupported
    assert desc.renderable, desc.missing
    assert [s.dynamics.rescale_every for s in desc.stages] == [100, 100] and desc.thermo_every == 50
    text = render(desc)
    soft, lj = text.index("pair_style\tsoft"), text.index("pair_style\tlj/cut")
    assert soft < text.index("run             1000\n") < lj < text.index("run             500000")


def test_paraphrased_rescaling_interval_and_set_point():
    desc = read_description("A 2D bead-spring amphiphile system in LJ units with harmonic bonds and FENE special "
                            "bonds. Using NVE dynamics, keeping the temperature at a reduced value of 0.45 via "
                            "velocity rescaling every 100 steps, first run a 200-step push-off with a soft pair "
                            "potential, then a 400-step run with the LJ potential. Thermo output every 20 steps.")
    assert desc.example_system is not None and desc.example_system.name == "micelle", desc.unsupported
    assert [(s.steps, s.dynamics.thermostat, s.dynamics.t_stop, s.dynamics.rescale_every) for s in desc.stages] == [
        (200, "velocity-rescale", 0.45, 100), (400, "velocity-rescale", 0.45, 100)]
    assert desc.thermo_every == 20


# written for these tests: the gold oxide system, its thermostat stated apart from the NVE integration, in
# either order (simagent.described.separate_thermostat)
AUO_THERMOSTAT_LAST = ("Real units, charge atom style: 384 gold and 576 oxygen atoms, 960 in all, interacting "
                       "through ReaxFF (ffield.reax.AuO) with charges equilibrated by fix qeq/reax. Integrate in "
                       "NVE for 20 steps with a 0.25 fs timestep. A Berendsen thermostat holds the temperature at "
                       "500 K. "
                       "Report the mean temperature.")
AUO_THERMOSTAT_FIRST = ("Report the mean temperature. The 960-atom Au/O system (Au: 384, O: 576) uses ReaxFF from "
                        "ffield.reax.AuO, real units and QEq charges. Berendsen rescaling keeps the temperature "
                        "at 500 K. The atoms move under fix nve with a timestep of 0.25 fs for "
                        "20 steps.")


@pytest.mark.parametrize("text", [AUO_THERMOSTAT_LAST, AUO_THERMOSTAT_FIRST])
def test_paraphrased_auo_joins_the_berendsen_sentence_to_the_nve_run(text):
    desc = read_description(text)
    assert desc.example_system is not None and desc.example_system.name == "reaxff/AuO", desc.unsupported
    assert desc.renderable, (desc.unsupported, desc.missing)
    (stage,) = desc.stages
    dyn = stage.dynamics
    assert (stage.steps, dyn.ensemble, dyn.thermostat, dyn.t_stop) == (20, "nve", "berendsen", 500)
    # the damping the text leaves out is the example's own fix temp/berendsen's, listed with its source
    assert dyn.t_damp == 100 and "reaxff/AuO" in desc.defaults["run1.t_damp"]
    # neither the text nor the example creates velocities: none are invented, and the reason is listed
    assert desc.velocity is None and "in.AuO" in desc.defaults["velocity"]


def test_dev_auo_reads_one_thermostatted_nve_stage():
    desc = read_description(dev_text("lammps_2/23_reaxff_Au0.json"))
    assert desc.example_system is not None and desc.example_system.name == "reaxff/AuO", desc.unsupported
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert [(s.dynamics.ensemble, s.dynamics.thermostat, s.dynamics.t_stop) for s in desc.stages] == [
        ("nve", "berendsen", 500)]


def test_rendered_auo_is_heated_from_rest_by_the_berendsen_fix(tmp_path: Path):
    """20 steps of ReaxFF from the data file's positions at rest: the forces and the Berendsen fix (target 500 K)
    heat it, so the temperature rises from exactly 0."""
    from tools.lammps.described import render
    from tools.lammps.example_system import job_files
    from tools.lammps.parse import read_output

    desc = read_description(AUO_THERMOSTAT_LAST)
    text = render(desc)
    assert re.search(r"^fix\s+\S+ all nve\n^fix\s+\S+ all temp/berendsen 500 500 100$", text, re.MULTILINE)
    assert not re.search(r"^velocity", text, re.MULTILINE)
    folder = run_inputs({"in.lammps": text, **job_files(desc.example_system)}, tmp_path / "auo")
    (block,) = read_output(folder).runs
    assert block["Temp"][0] == 0 and 0 < block["Temp"][-1] < 500


# AIREBO's LJ and torsion switches decide between examples/airebo's in.airebo (1 1) and in.airebo-0-0 (0 0)
POLYETHYLENE = ("Polyethylene of 60 atoms (20 C, 40 H) replicated 17 x 16 x 2, the AIREBO potential in metal units "
                "with a 3.0 LJ cutoff{switches}; velocities at 300 K, NVE for 10 steps with a 0.0005 ps timestep.")


@pytest.mark.parametrize("switches, example", [
    (" and the Lennard-Jones and torsion terms both switched on", "in.airebo"),
    (", torsional and LJ interactions included", "in.airebo"),
    (" and with the LJ and torsion contributions turned off", "in.airebo-0-0"),
    (", disabling the LJ and torsion terms", "in.airebo-0-0"),
])  # fmt: skip
def test_stated_airebo_switches_choose_the_example(switches, example):
    desc = read_description(POLYETHYLENE.format(switches=switches))
    assert desc.example_system is not None and desc.example_system.input == example, desc.unsupported
    assert desc.renderable, (desc.unsupported, desc.missing)


def test_airebo_switches_no_example_has_are_refused_by_name():
    """Torsion off with LJ left on (LAMMPS's default): in.airebo-0-0 also turns LJ off, which the text does not."""
    desc = read_description(POLYETHYLENE.format(switches=", without the torsion terms"))
    assert desc.example_system is None
    (refusal,) = [u for u in desc.unsupported if u.startswith("AIREBO with torsion off")]
    assert "in.airebo: lj on, torsion on" in refusal and "in.airebo-0-0: lj off, torsion off" in refusal


def test_dev_airebo_states_both_switches_on():
    desc = read_description(dev_text("lammps_2/36_airebo.json"))
    assert desc.example_system is not None and desc.example_system.input == "in.airebo", desc.unsupported
    assert desc.renderable, (desc.unsupported, desc.missing)


def test_an_energy_of_a_text_that_normalises_thermo_output_is_per_atom():
    """LAMMPS divides thermo energies by the atom count under `thermo_modify norm yes` (lj units' default):
    a text that turns it on in real or metal units names the per-atom energy when it says 'total energy'.
    Paraphrases of our own; a text that keeps norm off, or normalises by something else, keeps the total."""
    from simagent.solve import TOTAL, read_metric

    for text in ("Metal units. Set thermo_modify with norm yes so energies print per atom.",
                 "Real units; the thermodynamic output is normalized by the number of atoms.",
                 "Thermo energies are reported per atom (normalisation on), metal units.",
                 "Real units, energies normalised by the atom count."):
        target = read_metric("average_total_energy", text)
        assert target.property == "total_energy_per_atom" and target.label is None, text
    for text in ("Metal units, thermo_modify norm no.",
                 "Real units; the pressure is normalized by the box volume.",
                 "Metal units. Report the energy of the whole cell."):
        assert read_metric("average_total_energy", text).label == TOTAL, text
