"""Metrics over one kind of atom or one group in a described run (per type, per role word, counted in
a region): read from the metric name and the description, measured by a real LAMMPS run, answered
with typed Result fields (property, group, label). Wordings are written for these tests."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from described_helpers import run_job as run_lammps

from simagent.described.groups import Layout, Region
from simagent.described.reading import read_description
from simagent.models import PropertyRequest, Result, TaskSpec
from simagent.solve import _find_result, _group_targets, read_metric
from tools.lammps.described import render
from tools.lammps.protocols.described import DescribedRun

# 256 solvent particles on the lattice (4 x 4 x 4 fcc cells) and 60 solute particles put in at random
MIXTURE = ("A binary Lennard-Jones liquid in reduced units, 3D, periodic in every direction. Solvent particles "
           "(type 1) start on an fcc lattice of reduced density 0.5 in a box of 4 x 4 x 4 unit cells. Then 60 solute "
           "particles of type 2 are scattered at random positions through the box (seed 4421), none nearer than 0.8 "
           "to a particle already there. Type 1 has mass 1.0, epsilon 1.0 and sigma 1.0; type 2 has mass 3.0, "
           "epsilon 1.2 and sigma 1.1. Unlike pairs use arithmetic mixing and all pairs are cut off at 2.5. "
           "Velocities are drawn at T = 1.3 (seed 9931). Integrate with NVE for 200 steps with a timestep of 0.004.")


@pytest.mark.parametrize(("metric", "prop", "group"), [
    ("mean_potential_energy_per_type_2_atom", "potential_energy_per_atom", "type2"),
    ("Kinetic energy per particle of type 1", "kinetic_energy_per_atom", "type1"),
    ("average-total-energy-per-solvent-particle", "total_energy_per_atom", "type1"),
    ("Temperature of the type 2 atoms", "temperature", "type2"),
    ("mean_charge_on_atom_type_3", None, None),  # the mixture has two types
    ("pressure_of_type_2_atoms", None, None),  # a pressure is not measured per type
    ("potential energy per heavy particle", None, None),  # no type is called heavy
    ("potential_energy_per_particle", "potential_energy_per_atom", None),
])
def test_metric_names_a_type_by_number_or_by_the_word_the_text_uses(metric, prop, group):
    desc = read_description(MIXTURE)
    target = read_metric(metric)
    _group_targets(desc, [target])
    assert target.property == prop, target.reason
    if prop is None:
        assert target.reason
    else:
        assert target.group == group and target.request().group == group


def test_big_and_large_name_the_same_type_and_counts_name_their_region():
    text = MIXTURE.replace("Solvent particles (type 1)", "Large particles (type 1)")
    desc = read_description(text)
    desc.layout = Layout(regions=[Region(name="core", style="cylinder", center=(0, 0, 0), radius=2.0, axis="z")])
    big = read_metric("average_pe_per_big_particle")
    inside = read_metric("Mean number of type-2 particles within the cylindrical region")
    nowhere = read_metric("average number of type 1 atoms inside the sphere")
    _group_targets(desc, [big, inside, nowhere])
    assert big.group == "type1"
    assert (inside.property, inside.group, inside.label) == ("atom_count", "type2", "core")
    assert nowhere.property is None and "does not define" in nowhere.reason


def test_a_typed_result_answers_only_its_own_group():
    everyone = Result(quantity="potential_energy_per_atom", value=-5.0, unit="reduced", job="j", method="m")
    solute = Result(quantity="potential_energy_per_atom (type2)", property="potential_energy_per_atom",
                    group="type2", value=-6.0, unit="reduced", job="j", method="m")
    target = read_metric("potential energy per type 2 atom")
    assert _find_result(target, [everyone, solute], set()) is solute
    assert _find_result(read_metric("potential energy per atom"), [solute, everyone], set()) is everyone


def _thermo_rows(log: str) -> tuple[list[str], np.ndarray]:
    """The last thermo table of a LAMMPS log: its header and its rows."""
    lines = log.splitlines()
    start = max(i for i, line in enumerate(lines) if line.split()[:1] == ["Step"])
    head, rows = lines[start].split(), []
    for line in lines[start + 1:]:
        words = line.split()
        if not words or not re.fullmatch(r"\d+", words[0]) or len(words) != len(head):
            break
        rows.append([float(x) for x in words])
    return head, np.array(rows)


def test_per_type_energies_and_counts_of_a_real_binary_run(tmp_path: Path):
    """The per-type averages are independent of the all-atom ones LAMMPS prints: n1 <pe>_1 + n2 <pe>_2
    must equal the total PotEng (pe/atom sums to the total potential energy, LAMMPS manual, compute
    pe/atom), and the counts of the two types inside and outside a slab region must add up to them."""
    desc = read_description(MIXTURE)
    assert desc.renderable, (desc.missing, desc.unsupported)
    desc.layout = Layout(regions=[Region(name="slab", style="block", bounds=(None, None, None, None, 0.0, 2.0))])
    spec = TaskSpec(request=MIXTURE, described=desc.model_dump(mode="json"), properties=[
        PropertyRequest(name="potential_energy_per_atom"),
        PropertyRequest(name="potential_energy_per_atom", group="type1"),
        PropertyRequest(name="potential_energy_per_atom", group="type2"),
        PropertyRequest(name="temperature", group="type2"),
        PropertyRequest(name="atom_count", group="type1"), PropertyRequest(name="atom_count", group="type2"),
        PropertyRequest(name="atom_count", group="type2", label="slab")])
    protocol = DescribedRun()
    assert protocol.applies_to(spec)
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    text = job.inputs["in.lammps"]
    assert "compute         sa_pe_type2 type2 reduce ave c_sa_pe" in text
    assert "variable        sa_n_type2_slab equal count(type2,slab)" in text
    job_dir = run_lammps(job, tmp_path)
    results = protocol.analyze(params, {job.id: job_dir}, spec)
    got = {(r.property, r.group, r.label): r for r in results}
    n1 = got[("atom_count", "type1", None)].value
    n2 = got[("atom_count", "type2", None)].value
    assert (n1, n2) == (256, 60)
    pe1 = got[("potential_energy_per_atom", "type1", None)].value
    pe2 = got[("potential_energy_per_atom", "type2", None)].value
    pe_all = got[("potential_energy_per_atom", None, None)].value
    assert (n1 * pe1 + n2 * pe2) / (n1 + n2) == pytest.approx(pe_all, rel=1e-5)
    assert pe1 != pytest.approx(pe2, rel=1e-3)  # the two kinds really differ
    # the slab count, row by row from the log: never more than all type-2 atoms, and on average some
    head, rows = _thermo_rows((job_dir / "log.lammps").read_text())
    in_slab = rows[:, head.index("v_sa_n_type2_slab")]
    assert np.all(in_slab <= 60) and 0 < in_slab.mean() < 60
    assert got[("atom_count", "type2", "slab")].value == pytest.approx(in_slab.mean(), rel=1e-9)
    assert got[("temperature", "type2", None)].value > 0


TURNED = MIXTURE.replace("Solvent particles (type 1) start", "Particles start").replace(
    "Then 60 solute particles of type 2 are scattered at random positions through the box (seed 4421), none nearer "
    "than 0.8 to a particle already there.",
    "A randomly chosen 25 % of the lattice particles become type 2 (seed 4421).")


def test_a_fraction_of_the_lattice_turned_into_a_numbered_type():
    desc = read_description(TURNED)
    assert desc.renderable, (desc.missing, desc.unsupported)
    (sub,) = desc.substitutions
    assert (sub.from_type, sub.to_type, sub.fraction, sub.seed) == (1, 2, 0.25, 4421)


def test_a_type_with_parameters_but_no_atoms_made_is_never_left_out_silently():
    desc = read_description(TURNED.replace("A randomly chosen 25 % of the lattice particles become type 2 "
                                           "(seed 4421).", "Some particles are solutes."))
    assert not desc.renderable
    assert any("how the atoms of type 2 are made" in m for m in desc.missing)


@pytest.mark.parametrize(("metric", "unit"), [
    ("average_surface_tension_in_mN/m", "mN/m"), ("Interfacial tension (dyn/cm)", "dyn/cm"),
    ("mean liquid-vapour surface tension", None),
])
def test_surface_tension_metric_names(metric, unit):
    target = read_metric(metric)
    assert (target.property, target.unit) == ("surface_tension", unit)


def test_one_atm_angstrom_is_a_hundredth_of_a_millinewton_per_metre():
    from simagent.units import convert
    from tools.lammps.described_metrics import SURFACE_TENSION_FACTOR

    # 1 atm = 101325 Pa (definition); 1 A = 1e-10 m: 1 atm A = 1.01325e-5 N/m
    assert SURFACE_TENSION_FACTOR["real"] == pytest.approx(1.01325e-2, rel=1e-12)
    assert convert(1.0, "dyn/cm", "mN/m") == pytest.approx(1.0)


SLAB = ("Lennard-Jones atoms in reduced units, 3D and periodic, on an fcc lattice of reduced density 0.75 in a box of "
        "6 x 6 x 15 unit cells. LJ epsilon 1, sigma 1, cutoff 2.5. Velocities at T = 0.8 (seed 6121); the timestep is "
        "0.005. A Nose-Hoover thermostat at T = 0.8 with damping 0.5 runs for 1500 steps. Then the same NVT run goes "
        "on for 3000 steps.")


def test_a_liquid_slab_has_a_positive_surface_tension(tmp_path: Path):
    """A liquid LJ slab between two vacuum regions (the lattice filled only for 5 < z < 10 cells): the
    mechanical surface tension is positive (normal pressure above the tangential one; with P_xx in its
    place the sign flips) and of the size published for the 2.5-sigma truncated LJ fluid near T* = 0.75
    (gamma* about 0.4-0.6: Trokhymchuk and Alejandre, J. Chem. Phys. 111, 8510 (1999)); a 1,500-step run
    from a lattice is no equilibrium, so only the sign and the order of magnitude are asserted."""
    desc = read_description(SLAB)
    assert desc.renderable, (desc.missing, desc.unsupported)
    desc.layout = Layout(regions=[Region(name="slab", style="block", bounds=(None, None, None, None, 5.0, 10.0))],
                         create_in="slab")
    spec = TaskSpec(request=SLAB, described=desc.model_dump(mode="json"),
                    properties=[PropertyRequest(name="surface_tension")])
    protocol = DescribedRun()
    assert protocol.applies_to(spec)
    bulk = TaskSpec(request=SLAB, properties=[PropertyRequest(name="surface_tension")])
    assert not protocol.applies_to(bulk)  # no interface: no surface tension
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    assert "variable        sa_gamma equal 0.5*lz*(pzz-0.5*(pxx+pyy))" in job.inputs["in.lammps"]
    (gamma,) = protocol.analyze(params, {job.id: run_lammps(job, tmp_path)}, spec)
    assert gamma.unit == "reduced" and gamma.value > 2 * gamma.uncertainty
    assert 0.1 < gamma.value < 2.0


WATER_SLAB = ("Real units, periodic in x, y and z. 180 SPC/E water molecules are put in a middle slab along the z axis "
              "18 angstrom thick, centred in a box of 6*6*16 lattice units, measured on a simple cubic lattice of "
              "3.0 A spacing; the rest of the box is vacuum. LJ and real-space Coulomb are cut off at 9.0 A with "
              "shifted LJ potentials, long-range electrostatics by PPPM with accuracy 1e-4. The molecules are kept "
              "rigid by SHAKE, whose tolerance is 1e-5 with at most 100 iterations. Velocities are drawn at 300 K, the "
              "timestep is 2 fs, and NVT at 300 K (Nose-Hoover, damping 100 fs) runs for 40 steps.")


def test_a_water_slab_in_a_box_measured_in_lattice_units():
    desc = read_description(WATER_SLAB)
    assert desc.renderable, (desc.missing, desc.unsupported)
    system = desc.molecular
    assert desc.box is not None and desc.box.hi == pytest.approx((18.0, 18.0, 48.0))
    assert system.slab[0] == "z"
    assert system.slab[1:] == pytest.approx((15.0, 33.0))
    assert (system.shake.tolerance, system.shake.iterations, system.shift) == (1e-5, 100, True)
    text = render(desc)
    assert "pair_modify     mix geometric shift yes" in text and "shake 1e-05 100" in text
    grid_z = [float(x) for x in next(line for line in text.splitlines() if line.startswith("region          grid"))
              .split()[7:9]]
    assert 15.0 <= grid_z[0] < grid_z[1] <= 33.0  # the waters are made inside the slab only
    spec = TaskSpec(request=WATER_SLAB, properties=[PropertyRequest(name="surface_tension")])
    assert DescribedRun().applies_to(spec)


@pytest.mark.parametrize(("metric", "text_words", "kept"), [
    ("coordination_number", "Report the coordination number of type 2 particles around type 1 particles.", False),
    ("mean_coordination_number_of_type_1_about_type_2", "", False),
    ("coordination_number", "Report the coordination number.", True),
])
def test_a_partial_coordination_number_of_a_mixture_is_not_the_all_pairs_one(metric, text_words, kept):
    target = read_metric(metric)
    _group_targets(read_description(MIXTURE), [target], MIXTURE + " " + text_words)
    assert (target.property == "coordination_number") == kept
    if not kept:
        assert "all pairs" in target.reason
