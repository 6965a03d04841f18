"""Molecular liquids in typed simulation descriptions: water models (SPC/E, TIP3P, TIP4P/2005), Na+
and Cl- ions, SHAKE, cut-off and long-range Coulomb, energies per molecule. Every reading rule is
tested on wordings written for these tests (never a task's own wording); the real runs are tiny
boxes of a few tens of molecules and a few tens of steps."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from described_helpers import run_job as run_lammps

from simagent.described.molecular import WATER_MODELS, grid, template_coordinates
from simagent.described.reading import read_description
from simagent.models import PropertyRequest, TaskSpec
from simagent.solve import read_metric
from tools.lammps.described import render
from tools.lammps.protocols.described import DescribedRun

SPCE_BOX = ("We want liquid water: 1000 water molecules of the rigid SPC/E model at 310 K, in a cubic periodic box "
            "with edge length 31.04 A, real units. LJ and Coulomb are cut at 10.0 A; the long-range part of the "
            "electrostatics is handled by PPPM with an accuracy of 1e-5, and SHAKE keeps every molecule rigid. "
            "A 1 fs timestep is used with a Nose-Hoover thermostat (NVT, damping 50 fs); velocities are drawn at "
            "310 K. After 2000 steps of equilibration, 3000 steps are sampled.")
BRINE = ("Simulate brine in real units: 60 TIP4P/2005 water molecules with NaCl (2) dissolved, 184 atoms in all, "
         "in a cubic box from -6.5 A to 6.5 A. Harmonic bond_style and angle_style are declared and SHAKE holds "
         "the water rigid (tolerance of 1e-5, maximum of 50 iterations). Lennard-Jones parameters: pair_coeff 1 1 "
         "0.1852 3.1589; pair_coeff 2 2 0.0 0.0; pair_coeff 3 3 0.10755 2.31; pair_coeff 4 4 0.10038 4.3. The "
         "Coulomb sum uses PPPM for TIP4P, with a 0.6 nm cutoff and arithmetic mixing. The box is held at 300 K "
         "and 1 atm in the NPT ensemble with a 1 fs timestep for 40 steps, then 40 more steps.")


def test_spce_box_is_read_with_its_model_and_numbers():
    desc = read_description(SPCE_BOX)
    assert desc.renderable, (desc.unsupported, desc.missing)
    m = desc.molecular
    assert m is not None and m.water is not None and m.water.name == "spc/e"
    # Berendsen et al. 1987: q_H = 0.4238 e, sigma_O = 3.166 A, epsilon_O = 0.650 kJ/mol
    assert m.kinds[0].charge == pytest.approx(-0.8476) and m.kinds[0].sigma == 3.166
    assert m.kinds[0].epsilon == pytest.approx(0.650 / 4.184)
    assert [s.count for s in m.species] == [1000] and m.cutoff == 10.0
    assert m.kspace == "pppm" and m.accuracy == 1e-5 and m.shake is not None
    assert desc.box is not None and desc.box.hi == (31.04,) * 3 and not desc.box.lattice_units
    assert desc.timestep == 1.0
    assert [(s.steps, s.dynamics.ensemble, s.dynamics.t_stop) for s in desc.stages] == [
        (2000, "nvt", 310.0), (3000, "nvt", 310.0)]
    assert "molecular.placement" in desc.defaults and "molecular.preparation" in desc.defaults


def test_brine_counts_pair_coefficients_and_tip4p():
    desc = read_description(BRINE)
    assert desc.renderable, (desc.unsupported, desc.missing)
    m = desc.molecular
    assert m is not None and [(s.template, s.count) for s in m.species] == [("water", 60), ("na", 2), ("cl", 2)]
    assert [k.element for k in m.kinds] == ["O", "H", "Na", "Cl"]
    assert (m.kinds[2].epsilon, m.kinds[2].sigma, m.kinds[2].charge) == (0.10755, 2.31, 1.0)
    assert m.cutoff == pytest.approx(6.0) and m.kspace == "pppm/tip4p" and m.mixing == "arithmetic"
    assert m.water is not None and m.water.om == pytest.approx(0.1546)  # Abascal & Vega 2005
    assert m.shake is not None and (m.shake.tolerance, m.shake.iterations) == (1e-5, 50)
    assert m.bond_style == "harmonic" and "molecular.bond_k" in desc.defaults
    assert "molecular.kspace_accuracy" in desc.defaults  # none stated
    dyn = [s.dynamics for s in desc.stages]
    assert [(d.ensemble, d.t_stop, d.p_stop) for d in dyn] == [("npt", 300.0, 1.0)] * 2
    text = render(desc)
    assert "pair_style      lj/cut/tip4p/long 1 2 1 1 0.1546 6" in text
    assert "kspace_style    pppm/tip4p 0.0001" in text and "pair_modify     mix arithmetic" in text


def test_ion_count_follows_the_stated_total_of_atoms():
    """'NaCl (N)' is N of each ion, unless the total number of atoms stated counts N ions in all."""
    each = read_description(BRINE).molecular
    assert each is not None and each.count_of("na") == 2
    total = read_description(BRINE.replace("184 atoms", "182 atoms")).molecular
    assert total is not None and total.count_of("na") == 1 and total.count_of("cl") == 1
    wrong = read_description(BRINE.replace("184 atoms", "200 atoms"))
    assert not wrong.renderable and any("ion count" in m for m in wrong.missing)


def test_stated_geometry_and_oxygen_lj_win_over_the_model():
    text = ("A box of 500 TIP3P water molecules, 200*200*200 A^3, real units, with an O-H bond length of 0.9600 A and "
            "an H-O-H angle of 105.0. LJ acts only between the oxygen atoms, epsilon = 0.15 kcal/mol and sigma = 3.2 "
            "A. The Coulomb interaction is cut off together with LJ at 9 A cutoff; SHAKE keeps the water rigid. "
            "NVT (Nose-Hoover) at 298 K with a 2 fs timestep for 100 steps.")
    desc = read_description(text)
    m = desc.molecular
    assert m is not None and m.water is not None
    assert (m.water.bond, m.water.angle) == (0.96, 105.0)
    assert (m.kinds[0].epsilon, m.kinds[0].sigma) == (0.15, 3.2)
    assert m.kspace == "none" and m.pair_style == "lj/cut/coul/cut"  # no long-range solver named
    assert desc.box is not None and desc.box.hi == (200.0,) * 3


@pytest.mark.parametrize("words, refused", [
    ("with 40 ethanol molecules mixed in", "ethanol force field"),  # no model named (OPLS-AA's: test_described_ethanol)
    ("with 40 ethanol molecules in the TraPPE-UA model mixed in", "ethanol in a force field"),
    ("with 40 carbon dioxide molecules of the EPM2 model mixed in", "CO2"),  # TraPPE's: tests/test_described_co2.py
])
def test_molecules_without_a_template_are_refused_by_name(words, refused):
    desc = read_description(SPCE_BOX.replace("at 310 K,", f"at 310 K {words},"))
    assert not desc.renderable and any(refused in u for u in desc.unsupported + desc.missing)


def test_tip4p2005_template_geometry():
    """H-H distance of TIP4P/2005: 2 x 0.9572 x sin(104.52 deg / 2) = 1.5139 A."""
    o, h1, h2 = (np.array(c) for c in template_coordinates(WATER_MODELS["tip4p/2005"]))
    assert np.linalg.norm(h1 - o) == pytest.approx(0.9572)
    assert np.linalg.norm(h1 - h2) == pytest.approx(2 * 0.9572 * math.sin(math.radians(52.26)), abs=1e-4)


@pytest.mark.parametrize("metric, prop, label", [
    ("mean_total_energy_per_water_molecule", "total_energy_per_molecule", "water"),
    ("Average potential energy per CO2 molecule", "potential_energy_per_molecule", "co2"),
    ("total-energy-per-water", "total_energy_per_molecule", "water"),
    ("potential energy per molecule of water", "potential_energy_per_molecule", "water"),
])
def test_energy_per_molecule_metric_names(metric, prop, label):
    target = read_metric(metric)
    assert (target.property, target.label) == (prop, label)
    assert target.request().label == label


def test_brine_runs_and_reports_energy_per_water(tmp_path: Path):
    protocol = DescribedRun()
    spec = TaskSpec(request=BRINE, properties=[PropertyRequest(name="temperature"), PropertyRequest(
        name="total_energy_per_molecule", label="water")])
    assert protocol.applies_to(spec)
    params, defaults = protocol.parameters(spec)
    assert any(d.parameter == "molecular.preparation" for d in defaults)
    (job,) = protocol.jobs(params)
    assert set(job.inputs) == {"in.lammps", "water.mol", "na.mol", "cl.mol"}
    job_dir = run_lammps(job, tmp_path)
    log = (job_dir / "log.lammps").read_text()
    assert "Created 180 atoms" in log and "not charge neutral" not in log
    results = {r.property: r for r in protocol.analyze(params, {job.id: job_dir}, spec)}
    # the energy per water is the box's TotEng over the last stage / 60, read here from the log itself
    blocks = re.findall(r"^\s+Step .*\n((?:\s+\d+ .*\n)+)", log, flags=re.M)
    columns = log.split("   Step")[-1].split("\n")[0].split()
    rows = np.array([[float(x) for x in line.split()] for line in blocks[-1].strip().splitlines()])
    tot = rows[:, (["Step"] + columns).index("TotEng")]
    assert results["total_energy_per_molecule"].value == pytest.approx(tot.mean() / 60, rel=1e-6)
    assert results["total_energy_per_molecule"].label == "water"
    assert math.isfinite(results["temperature"].value) and results["temperature"].value > 0


def test_spce_coordination_number_from_the_oo_rdf(tmp_path: Path):
    """A small SPC/E box: the coordination number comes from the O-O g(r), integrated up to its first
    minimum; LAMMPS's own running coordination number (compute rdf's third column per pair) at that
    distance is the independent check. A 60-step run from a random start is no liquid water yet, so
    the value itself is not compared with water's."""
    text = SPCE_BOX.replace("1000 water", "100 water").replace("31.04", "14.41").replace("2000 steps", "30 steps") \
        .replace("3000 steps", "30 steps").replace("10.0 A", "6.0 A")
    protocol = DescribedRun()
    spec = TaskSpec(request=text, properties=[PropertyRequest(name="coordination_number")])
    assert protocol.applies_to(spec)
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    assert "compute         rdf all rdf 200 1 1" in job.inputs["in.lammps"]
    job_dir = run_lammps(job, tmp_path)
    (cn,) = protocol.analyze(params, {job.id: job_dir}, spec)
    assert "O-O" in cn.method
    r_min = float(re.search(r"first minimum at r = ([\d.]+)", cn.method).group(1))
    rows = [line.split() for line in (job_dir / "rdf.dat").read_text().splitlines() if not line.startswith("#")]
    table = np.array([[float(x) for x in r[1:4]] for r in rows if len(r) == 4]).reshape(-1, 200, 3)
    r, coord = table[0, :, 0], table[:, :, 2].mean(axis=0)
    assert cn.value == pytest.approx(float(np.interp(r_min, r, coord)), rel=0.08)


def test_ions_held_at_their_initial_centre():
    text = BRINE.replace("Harmonic bond_style", "Throughout, the ions are recentred to their initial position. "
                         "Harmonic bond_style")
    desc = read_description(text)
    assert desc.renderable and desc.molecular is not None and desc.molecular.recenter == "ions"
    assert "group           ions type 3 4\nfix             recenter ions recenter INIT INIT INIT" in render(desc)
    vague = read_description(BRINE.replace("Harmonic bond_style", "Everything is recentered. Harmonic bond_style"))
    assert any("recenter" in u for u in vague.unsupported)


def test_npt_set_points_in_the_ensemble_sentence_and_a_misspelt_step_word():
    """'held at 300 K and 1 bar under NPT': in real units the barostat takes atm (1 bar = 0.986923 atm);
    'stps' still counts as steps."""
    text = BRINE.replace("300 K and 1 atm", "300 K and 1 bar").replace("40 more steps", "40 more stps")
    desc = read_description(text)
    assert [s.steps for s in desc.stages] == [40, 40]
    assert desc.stages[0].dynamics.p_stop == pytest.approx(1 / 1.01325)


@pytest.mark.parametrize("lo, hi, count", [((0.0,) * 3, (35.5,) * 3, 1500), ((-27.8,) * 3, (27.8,) * 3, 1834),
                                           ((-6.5,) * 3, (6.5,) * 3, 60), ((0.0, 0.0, 0.0), (20.0, 30.0, 41.0), 777)])
def test_water_grid_holds_the_molecules(lo, hi, count):
    """Sites (i + 1/2) a, as LAMMPS's lattice places them, counted by brute force inside the spans:
    enough for the molecules, and the nearest periodic images at least a apart on every axis."""
    a, n, spans = grid(lo, hi, count)
    per_axis = []
    for (low, h), box_lo, box_hi in zip(spans, lo, hi, strict=True):
        xs = [(i + 0.5) * a for i in range(-200, 200) if low <= (i + 0.5) * a < h]
        assert box_lo <= xs[0] and xs[-1] <= box_hi
        assert xs[0] + (box_hi - box_lo) - xs[-1] >= a - 1e-9  # the gap across the periodic boundary
        per_axis.append(len(xs))
    assert n == math.prod(per_axis) and count <= n < 1.6 * count


def test_units_listed_in_one_sentence_go_to_their_own_metric():
    """'temperature in K, pressure in atm and ...': each property takes the unit right after it, not
    the first unit of the list that appears anywhere after it."""
    text = "Report the mean temperature in K, the mean pressure in atm and the potential energy per water molecule."
    assert read_metric("mean_temperature", text).unit == "K"
    assert read_metric("mean_pressure", text).unit == "atm"


def test_shake_iterations_after_a_decimal_tolerance():
    text = BRINE.replace("tolerance of 1e-5, maximum of 50 iterations", "tolerance of 2.5e-5 and a maximum of 80 "
                         "iterations")
    shake = read_description(text).molecular.shake
    assert (shake.tolerance, shake.iterations) == (2.5e-5, 80)


def test_a_stated_total_of_atoms_beyond_the_waters_is_never_dropped():
    """A solute the reading cannot build (here a 150-atom polymer) must not vanish from the run: a box
    holding 'a total of 159 atoms' of which only 3 waters (9 atoms) would be placed is refused by name."""
    text = ("Simulate the adsorption of water on a polymer coil in real units: the cubic periodic box of side 30 A "
            "contains a total of 159 atoms, a 150-atom polymer and 3 SPC/E water molecules. LJ and Coulomb are cut "
            "at 10.0 A with PPPM for the long-range part, SHAKE keeps the water rigid, and the system runs 1000 "
            "steps of 1 fs in the NVT ensemble at 300 K.")
    desc = read_description(text)
    assert not desc.renderable
    assert any("stated 159 atoms" in u and "only the 9 atoms" in u for u in desc.unsupported)
    assert desc.molecular is None
    # the same text without the solute is consistent and reads
    plain = text.replace("a total of 159 atoms, a 150-atom polymer and 3 SPC/E", "a total of 9 atoms in 3 SPC/E")
    assert read_description(plain).molecular is not None


@pytest.mark.parametrize("metric, label", [
    ("mean_number_of_water_molecules", "water"),
    ("Average count of the CO2 molecules", "co2"),
    ("water-molecule-count", "water"),
    ("time averaged number of water molecules (in the tube)", "water"),
    ("number of molecules", None),  # which molecules: not said
    ("number of water molecules per nm^3", None),  # a number density, not a count
    ("average_number_of_water_molecules_in_a_unit_volume", None),
    ("average number of atoms", None),  # atoms, not molecules (an atom count)
    ("mean potential energy per water molecule", None),  # an energy per molecule, not a count
])
def test_molecule_count_metric_names(metric, label):
    target = read_metric(metric)
    if label is None:
        assert target.property != "molecule_count"
        return
    assert (target.property, target.label) == ("molecule_count", label)
    assert target.request().label == label and target.request().group is None


def test_brine_counts_its_water_molecules_in_a_real_run(tmp_path: Path):
    """The count is made by the run (one per water oxygen, every thermo row), so it must equal the 60
    waters the text states and stay there (no molecule is created or lost); the ions are not counted."""
    protocol = DescribedRun()
    spec = TaskSpec(request=BRINE, properties=[PropertyRequest(name="molecule_count", label="water"),
                                               PropertyRequest(name="molecule_count", label="na")])
    assert protocol.applies_to(spec)
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    assert 'variable        sa_is_water atom "type==1"' in job.inputs["in.lammps"]
    job_dir = run_lammps(job, tmp_path)
    results = {r.label: r for r in protocol.analyze(params, {job.id: job_dir}, spec)}
    assert results["water"].property == "molecule_count" and results["water"].value == 60
    assert results["water"].uncertainty == pytest.approx(0.0, abs=1e-12)
    assert results["na"].value == 2  # 'NaCl (2)': two ions of each


def test_a_count_of_molecules_the_system_does_not_have_is_not_planned():
    spec = TaskSpec(request=BRINE, properties=[PropertyRequest(name="molecule_count", label="methanol")])
    assert not DescribedRun().applies_to(spec)
