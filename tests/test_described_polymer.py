"""A single bonded chain in typed simulation descriptions: harmonic bonds and angles, multi-harmonic
dihedrals, LJ between non-bonded beads, nve/limit, and the squared radius-of-gyration tensor as a
metric. Reading rules are tested on wordings written for these tests (never a task's own wording);
the real runs are a 10-bead chain for a few thousand steps (about a second)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from described_helpers import run_job as run_lammps

from simagent.described.polymer import CH2_MASS, zigzag
from simagent.described.reading import read_description
from simagent.models import PropertyRequest, TaskSpec
from simagent.solve import read_metric
from tools.lammps.protocols.described import DescribedRun

CHAIN = ("Model one alkane-like chain of 10 united atoms in real units inside a non-periodic box (boundary f f f) "
         "measuring 60 x 50 x 40 A^3. Bonds are harmonic with a force constant k_b = 300 kcal/mol/A^2 and a "
         "rest length of 1.54 A; the bending term is harmonic too, angle stiffness 55 kcal/mol/rad^2 with a "
         "natural angle of 112 degrees. Torsions follow the multi-harmonic form with coefficients 1.0, -2.0, "
         "0.5, 3.0 and 0.0, and beads further apart interact through Lennard-Jones (epsilon = 0.1 kcal/mol, "
         "sigma = 3.9 A, cutoff 9.0 A). The timestep is 1 fs. Draw velocities at 300 K, then run 2000 steps "
         "of Langevin dynamics at 300 K (damping 100 fs) on top of an nve/limit integrator that caps every "
         "move at 0.1 A. Next minimise the chain with conjugate gradients, energy and force tolerances both "
         "1e-8, at most 1000 iterations. Finish with 3000 steps of NVT at 300 K (damping 100 fs).")


def test_a_chain_is_read_with_its_bonded_terms_and_defaults():
    desc = read_description(CHAIN)
    assert desc.renderable, (desc.unsupported, desc.missing)
    chain = desc.chain
    assert chain is not None and chain.beads == 10
    assert (chain.bond.k, chain.bond.r0, chain.angle.k, chain.angle.theta0) == (300.0, 1.54, 55.0, 112.0)
    assert chain.dihedral is not None and chain.dihedral.a == (1.0, -2.0, 0.5, 3.0, 0.0)
    assert chain.mass == pytest.approx(CH2_MASS) and "chain.mass" in desc.defaults  # unstated: a CH2 bead
    assert "chain.conformation" in desc.defaults and "chain.special_bonds" in desc.defaults
    assert desc.boundary == ("f", "f", "f") and desc.box is not None
    assert np.allclose(np.subtract(desc.box.hi, desc.box.lo), (60, 50, 40))
    kinds = [(s.kind, s.steps) for s in desc.stages]
    assert kinds == [("run", 2000), ("minimize", 0), ("run", 3000)]
    first, _, last = desc.stages
    assert first.dynamics.thermostat == "langevin" and first.dynamics.limit == 0.1
    assert first.dynamics.t_stop == 300.0 and first.dynamics.t_damp == 100.0
    assert desc.stages[1].minimize.etol == desc.stages[1].minimize.ftol == 1e-8
    assert desc.stages[1].minimize.max_iterations == 1000
    assert last.dynamics.ensemble == "nvt" and last.dynamics.limit is None


@pytest.mark.parametrize(("drop", "named"), [
    ("a force constant k_b = 300 kcal/mol/A^2 and ", "bond K"),
    (" with a natural angle of 112 degrees", "equilibrium angle"),
])
def test_an_unstated_bonded_coefficient_is_named_missing(drop: str, named: str):
    desc = read_description(CHAIN.replace(drop, " " if drop.startswith(" with") else ""))
    assert desc.chain is None and not desc.renderable
    assert any(named in m for m in desc.missing), desc.missing


def test_a_stated_bead_mass_wins_and_torsions_need_their_coefficients():
    desc = read_description(CHAIN.replace("10 united atoms", "10 beads, bead mass 15.0,"))
    assert desc.chain is not None and desc.chain.mass == 15.0 and desc.origin["chain.mass"].source == "rules"
    vague = read_description(CHAIN.replace("with coefficients 1.0, -2.0, 0.5, 3.0 and 0.0", "with suitable values"))
    assert vague.chain is None and any("dihedral coefficients" in m for m in vague.missing)


@pytest.mark.parametrize(("metric", "description", "label", "unit"), [
    ("Rg2_zz", "", "squared_zz", None),
    ("mean_squared_radius_of_gyration_xy_nm", "", "squared_xy", "nm^2"),
    ("average_gyration_radius", "", None, None),
    ("average_radius_of_gyration", "Report the time average of Rg^2 along xx (the tensor's xx entry) in Angstrom.",
     "squared_xx", "angstrom^2"),
    ("radius_of_gyration", "Give the radius of gyration in nm of the chain.", None, "nm"),
])
def test_gyration_metric_names(metric: str, description: str, label: str | None, unit: str | None):
    target = read_metric(metric, description)
    if metric == "average_gyration_radius":  # not a name simagent reads: named, not guessed
        assert target.property is None
        return
    assert target.property == "radius_of_gyration" and target.label == label and target.unit == unit


def test_chain_runs_with_its_topology_and_start_geometry(tmp_path):
    protocol = DescribedRun()
    spec = TaskSpec(request=CHAIN, properties=[PropertyRequest(name="radius_of_gyration")])
    assert protocol.applies_to(spec)
    params, defaults = protocol.parameters(spec)
    assert {"chain.mass", "chain.conformation"} <= {d.parameter for d in defaults}
    (job,) = protocol.jobs(params)
    assert set(job.inputs) == {"in.lammps", "chain.mol"}
    job_dir = run_lammps(job, tmp_path)
    log = (job_dir / "log.lammps").read_text()
    # the bond lengths at the end, measured by LAMMPS itself (a copy of the input with a measurement appended)
    probe = job.model_copy(update={"id": "probe", "inputs": {**job.inputs, "in.lammps": job.inputs["in.lammps"] + (
        "compute blen all bond/local dist\ncompute bmean all reduce ave c_blen inputs local\n"
        "thermo_style custom step c_bmean\nrun 0\n")}})
    probe_log = (run_lammps(probe, tmp_path) / "log.lammps").read_text()
    assert all(f"{n} {what}" in log for n, what in ((9, "bonds"), (8, "angles"), (7, "dihedrals")))
    desc = params.description
    # the start: all-trans zig-zag along the longest edge (x); Rg^2_xx of n points spaced d apart along a
    # line is d^2 (n^2 - 1) / 12, and the zig-zag's x spacing is r0 sin(theta0 / 2)
    d = 1.54 * math.sin(math.radians(112) / 2)
    start = zigzag(desc.chain)
    assert np.var([p[0] for p in start]) == pytest.approx(d * d * 99 / 12, rel=1e-6)
    assert math.dist(start[0], start[1]) == pytest.approx(1.54) and math.dist(start[0], start[2]) == pytest.approx(
        2 * d)
    results = {r.label: r for r in protocol.analyze(params, {job.id: job_dir}, spec)}
    assert set(results) == {None, "squared_xx", "squared_yy", "squared_zz", "squared_xy", "squared_xz",
                            "squared_yz"}
    assert results["squared_yy"].unit == "angstrom^2" and results[None].unit == "angstrom"
    # each row: Rg^2 is the trace of the tensor; a 10-bead chain at 300 K stays far below its all-trans extent
    header = re.findall(r"^\s+Step .*c_rg\[6\].*$", log, flags=re.M)[-1].split()
    block = log.split(header[-1], maxsplit=2)[-1].split("Loop time")[0]
    rows = [[float(x) for x in line.split()] for line in block.splitlines() if len(line.split()) == len(header)]
    assert rows
    for row in rows:
        rg, xx, yy, zz = (row[header.index(c)] for c in ("c_rg", "c_rg[1]", "c_rg[2]", "c_rg[3]"))
        assert rg ** 2 == pytest.approx(xx + yy + zz, rel=1e-4)
    trace = sum(results[f"squared_{a}"].value for a in ("xx", "yy", "zz"))
    assert 0 < trace < (9 * 1.54) ** 2 / 4
    # at 300 K, harmonic bonds of K = 300 kcal/mol/A^2 fluctuate by sqrt(kT / 2K) ~ 0.03 A around r0
    bonds = float(probe_log.split("c_bmean")[-1].split()[1])
    assert bonds == pytest.approx(1.54, abs=0.03)


def test_a_chain_in_a_fixed_box_is_recentred_and_a_periodic_one_is_not():
    fixed = read_description(CHAIN)
    assert "chain.recenter" in fixed.defaults
    periodic = read_description(CHAIN.replace("a non-periodic box (boundary f f f)", "a periodic box"))
    assert periodic.chain is not None and periodic.boundary == ("p", "p", "p")
    assert "chain.recenter" not in periodic.defaults



BEADS = ("Simulate a 20-bead polymer in lj units in a periodic 30 x 30 x 30 box. Neighbouring beads are joined by "
         "harmonic springs of bond strength 100 and reference length 1.0; consecutive triples bend harmonically with "
         "an angle force constant of 5 around a reference angle of 120 degrees. Non-bonded beads interact by "
         "Lennard-Jones with epsilon = 1.0, sigma = 1.0 and a cutoff of 2.5. Velocities are drawn at T = 1.0 and "
         "the chain is run for 1000 steps of NVT at temperature 1.0.")


def test_a_bead_spring_chain_in_lj_units_without_torsions():
    desc = read_description(BEADS)
    assert desc.renderable, (desc.unsupported, desc.missing)
    chain = desc.chain
    assert chain is not None and chain.beads == 20 and chain.dihedral is None and chain.mass == 1.0
    assert (chain.bond.k, chain.bond.r0, chain.angle.k, chain.angle.theta0) == (100.0, 1.0, 5.0, 120.0)
    assert desc.boundary == ("p", "p", "p") and "chain.recenter" not in desc.defaults


def test_several_chains_are_not_read_as_one():
    melt = read_description(BEADS.replace("Simulate a 20-bead polymer", "Simulate a melt of 50 chains, each a 20-bead "
                                                                          "polymer,"))
    assert melt.chain is None and not melt.renderable
