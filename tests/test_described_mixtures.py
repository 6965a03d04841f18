"""Atomic mixtures in typed simulation descriptions: several atom types with masses and per-pair LJ
coefficients, atoms placed at random, atoms deposited during a run. Every reading rule is tested
on wordings written for these tests (never a task's own wording), and on the MDGym dev task that
prompted it when the dev set is present."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from described_helpers import DEV
from described_helpers import run_text as _run

from simagent.described.reading import read_description
from tools.lammps.described import render

BINARY = ("We study a binary Lennard-Jones liquid in reduced units. Atoms sit initially on an fcc lattice of reduced "
          "density 0.3 filling a box of 4 x 4 x 4 unit cells, all of them type 1. Type 1 atoms carry a mass of 1.0 and "
          "LJ parameters epsilon = 1.0, sigma = 1.0, whereas type 2 atoms are heavier, mass 2.5, with epsilon = 0.8 "
          "and sigma = 1.2. Cross interactions follow the Lorentz-Berthelot rule and every pair is cut at 3.0 sigma. "
          "Then 40 atoms of type 2 are inserted at random positions throughout the box (seed 9127), none closer "
          "than 0.9 to an atom already there. Velocities are drawn at T = 1.1 and the system is integrated with NVE "
          "for 300 steps with a timestep of 0.002.")


def test_types_masses_and_own_lj_parameters_are_read_per_type():
    desc = read_description(BINARY)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.atom_types == 2
    assert desc.masses == {1: 1.0, 2: 2.5}
    assert desc.pair is not None and desc.pair.mixing == "arithmetic"
    coeffs = {(c.i, c.j): (c.epsilon, c.sigma) for c in desc.pair.coeffs}
    assert coeffs == {("1", "1"): (1.0, 1.0), ("2", "2"): (0.8, 1.2)}


def test_random_placement_is_read_with_its_seed_and_overlap():
    desc = read_description(BINARY)
    (p,) = desc.placements
    assert (p.atom_type, p.count, p.seed, p.region, p.overlap) == (2, 40, 9127, None, 0.9)
    text = render(desc)
    assert "create_atoms    2 random 40 9127 NULL overlap 0.9 maxtry 1000 units box" in text
    assert text.index("create_atoms    1 box") < text.index("create_atoms    2 random")
    assert "pair_modify     mix arithmetic" in text


def test_unassigned_masses_are_missing_not_defaulted():
    text = ("Reduced LJ units, a binary mixture on a square lattice of density 0.7 in a 20 x 20 box. The big "
            "particles weigh mass 4 and the small ones mass 1. LJ epsilon 1, sigma 1, cutoff 2.5. NVE for 100 steps.")
    desc = read_description(text)
    assert "which atom type each stated mass belongs to" in desc.missing
    assert not desc.renderable


def test_a_placement_without_its_type_in_a_mixture_is_missing():
    text = ("LJ units. Two atom types, both of unit mass, with epsilon 1 and sigma 1 and a cutoff of 2.5. An sc "
            "lattice of density 0.5 fills a 5 x 5 x 5 box. We randomly insert 30 particles into the box. NVE, "
            "100 steps.")
    desc = read_description(text)
    assert any("randomly placed" in m for m in desc.missing)


SPUTTER = ("Reduced Lennard-Jones units. The box measures 6 x 6 x 12 lattice units, periodic along x and y with a "
           "fixed boundary along z. A surface made of type 1 atoms on an fcc lattice occupies the bottom part of the "
           "box (z from 0 to 2.5); the atoms with z above 1.5 are the mobile ones, kept at a temperature of 0.8 "
           "by a Langevin thermostat with damping 0.5 on top of NVE, and the rest do not move. Type 2 atoms are "
           "deposited from a slab region near the top, z = 10 to 11, travelling down toward the surface: 30 atoms "
           "are inserted every 50 steps, and once inserted they follow plain NVE. Every atom has unit mass; the LJ "
           "potential uses epsilon = 1.0 and sigma = 1.0 with a cutoff of 2.5 sigma, while the surface-deposit pairs "
           "reach out to 4.0 sigma. The whole run lasts 2000 timesteps.")


def test_deposition_onto_a_held_surface_is_read_from_our_wording():
    desc = read_description(SPUTTER)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.boundary == ("p", "p", "f")
    d = desc.deposition
    assert d is not None and (d.atom_type, d.count, d.every, d.axis) == (2, 30, 50, "z") and d.velocity < 0
    assert desc.masses == {1: 1.0, 2: 1.0}
    cross = [c for c in desc.pair.coeffs if (c.i, c.j) == ("1", "2")]
    assert len(cross) == 1 and cross[0].cutoff == 4.0
    layout = desc.layout
    assert layout is not None and layout.create_in == "substrate_region"
    assert layout.integrated == "mobile" and layout.thermostat_group == "mobile"
    for name in ("deposition.count", "deposition.velocity", "deposition.near", "deposition.wall"):
        assert name in desc.defaults  # every unstated choice of the deposition is listed
    text = render(desc)
    assert "fix             dyn1 mobile nve" in text and "fix             dyn2 mobile langevin 0.8 0.8 0.5" in text
    assert "deposit 30 2 50" in text and "vz -1 -1" in text and "wall/reflect zhi EDGE" in text
    assert "pair_coeff      1 2 1 1 4" in text and "compute_modify  thermo_temp dynamic/dof yes" in text


def _last_atoms(log: str) -> int:
    rows = [line.split() for line in log.splitlines() if line.split() and line.split()[0].isdigit()]
    return int(rows[-1][-1])  # the thermo 'atoms' column is the last


def test_placed_and_deposited_atoms_reach_a_real_run(tmp_path: Path):
    """The random atoms are all inserted (4 x 4 x 4 fcc cells = 256 lattice atoms + 40) and the
    deposition adds one atom every 50 steps (2000 steps: 30 atoms, all of them, into 6 x 6 x 2.5
    cells' surface)."""
    (tmp_path / "binary").mkdir()
    log = _run(render(read_description(BINARY)), tmp_path / "binary")
    assert "Created 40 atoms" in log and "Only inserted" not in log and _last_atoms(log) == 256 + 40
    sputter = SPUTTER.replace("2000 timesteps", "1500 timesteps")
    (tmp_path / "dep").mkdir()
    log = _run(render(read_description(sputter)), tmp_path / "dep")
    surface = int(re.search(r"Created (\d+) atoms", log).group(1))
    assert _last_atoms(log) == surface + 30  # 1500 / 50 = 30 insertions, the 30 stated


@pytest.mark.skipif(not (DEV / "lammps" / "46_deposit.json").is_file(), reason="MDGym dev set not present")
def test_dev_task_deposition_is_complete():
    task = json.loads((DEV / "lammps" / "46_deposit.json").read_text())
    desc = read_description(task["problem_description"])
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.deposition is not None and desc.deposition.velocity < 0 and desc.lattice.scale == 1.0
    assert "lattice.scale" in desc.defaults


# --- what an unrendered method would also need, named in the refusal --------------------------

COLLOIDS = ("A 2D simulation in reduced LJ units of a few big spheres in a sea of small ones, on a square lattice of "
            "density 0.5 in a 40 x 40 box. A binary mixture: type 1 for the big spheres and type 2 for the small "
            "ones, all of unit mass. Big and small spheres interact through a colloid pair potential with suitable "
            "parameters for each pair, cut at 10. Velocities at 1.0; NVE for 2000 steps.")


def test_a_colloid_potential_without_coefficients_names_both():
    desc = read_description(COLLOIDS)
    assert "pair_style colloid" in desc.unsupported
    assert any("colloid potential's coefficients" in m for m in desc.missing)


def test_colloidal_particles_with_lj_are_not_the_colloid_potential():
    text = COLLOIDS.replace("interact through a colloid pair potential with suitable parameters for each pair, "
                            "cut at 10", "are colloidal particles that interact by Lennard-Jones, epsilon 1, sigma 1, "
                            "cutoff 2.5")
    assert "pair_style colloid" not in read_description(text).unsupported


@pytest.mark.parametrize(("words", "gap"), [
    ("The solvent is treated with stochastic rotation dynamics at temperature 1.0.", "the SRD bin (grid) size"),
    ("Atoms inside a cylindrical region along z are removed.", "the radius of the cylindrical region"),
])
def test_unstated_parts_of_an_unrendered_method_are_missing(words, gap):
    text = ("Reduced LJ units, two atom types of unit mass, epsilon 1, sigma 1, cutoff 2.5, on an sc lattice of "
            "density 0.6 in a 6 x 6 x 6 box. " + words + " NVE for 500 steps.")
    assert gap in read_description(text).missing


def test_a_required_data_file_is_named_as_the_missing_configuration():
    text = ("A mixture of 900 LJ atoms in reduced units, read from an equilibrated LAMMPS data file, cutoff 2.5, "
            "NVE for 1000 steps.")
    assert any("data file the text requires" in m for m in read_description(text).missing)


def test_solve_names_the_unrendered_method_not_another_protocol(tmp_path, settings):
    """A described run that prescribes something simagent does not render stops with that, and what the
    text leaves out, even when the old reader finds a protocol for the rest (no substitute)."""
    from simagent.solve import solve

    path = tmp_path / "colloids.json"
    path.write_text(json.dumps({"id": "colloids", "problem_description": COLLOIDS, "level": 1, "ground_truth": {},
                                "metrics": ["average_potential_energy_per_particle"], "time_limit": 60,
                                "engine": "lammps"}))
    outcome = solve(path, tmp_path / "w", settings=settings)
    assert outcome.final_answer == {}
    reason = outcome.not_computed["average_potential_energy_per_particle"]
    assert "pair_style colloid" in reason and "coefficients" in reason and "fluid_md" not in reason


@pytest.mark.parametrize(("words", "p_start", "p_stop"), [
    ("NPT with a Nose-Hoover thermostat at 1.5 and isotropic pressure coupling ranging from 0.5 to 2.0", 0.5, 2.0),
    ("NPT dynamics at temperature 1.5 with the barostat holding the pressure near zero", 0.0, 0.0),
])
def test_barostat_set_points_in_words(words, p_start, p_stop):
    text = ("Reduced LJ units, fcc lattice of density 0.8 in a 5 x 5 x 5 box, epsilon 1, sigma 1, cutoff 2.5. "
            f"Velocities at 1.5. Run {words} for 1000 steps.")
    (stage,) = read_description(text).stages
    assert (stage.dynamics.p_start, stage.dynamics.p_stop) == (p_start, p_stop)


def test_a_pre_minimised_configuration_is_no_minimisation_stage():
    text = ("Reduced LJ units, fcc lattice of density 0.8 in a 5 x 5 x 5 box, epsilon 1, sigma 1, cutoff 2.5, taken "
            "from a pre-minimised state. Velocities at 1.0; NVE for 1000 steps.")
    desc = read_description(text)
    assert [s.kind for s in desc.stages] == ["run"] and desc.renderable


GAS = ("A dilute gas in reduced LJ units: 400 particles are placed at random positions in a cubic box of side 12, "
       "seed 5511, no two closer than 0.85. They interact by Lennard-Jones with epsilon 1, sigma 1 and a cutoff of "
       "2.5. Velocities are drawn at a temperature of 1.2 and the gas evolves under NVE for 400 steps, timestep 0.004.")


def test_a_random_gas_needs_no_lattice(tmp_path: Path):
    """No lattice: the box is absolute (sigma), every atom is placed at random, and all 400 fit (a
    volume fraction of about 0.13 at a least distance of 0.85)."""
    desc = read_description(GAS)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.lattice is None and desc.box is not None and not desc.box.lattice_units
    assert desc.box.hi == (12.0, 12.0, 12.0)
    (p,) = desc.placements
    assert (p.atom_type, p.count, p.seed, p.overlap) == (1, 400, 5511, 0.85)
    text = render(desc)
    assert "lattice " not in text
    assert "create_atoms    1 random 400 5511 NULL overlap 0.85 maxtry 1000 units box" in text
    log = _run(text, tmp_path)
    assert "Created 400 atoms" in log and _last_atoms(log) == 400


def test_random_words_without_a_count_leave_the_atoms_missing():
    text = GAS.replace("400 particles are placed at random positions", "the particles are placed at random positions")
    assert "the atoms placed at random (how many, of which type)" in read_description(text).missing


@pytest.mark.parametrize(("metric", "over"), [
    ("mean_pe_per_heavy_particle", "refused"), ("average_potential_energy_per_type_2_atom", "type2"),
    ("Potential_energy_per_atom_of_type_1", "type1"), ("average_potential_energy_per_particle", None),
    ("average_total_energy_per_atom", None),
])
def test_per_type_metrics_of_a_mixture_are_not_divided_by_all_atoms(metric, over):
    """A quantity of one kind of atom is measured over that type (tests/test_described_group_metrics.py)
    or refused by name when the type cannot be told; never answered with the all-atom average."""
    from simagent.solve import _group_targets, read_metric

    target = read_metric(metric)
    assert target.property is not None
    _group_targets(read_description(BINARY), [target])
    if over == "refused":
        assert target.property is None and "one kind of atom" in target.reason
    else:
        assert target.property is not None and target.group == over


def test_masses_stated_by_the_words_a_type_is_called_by():
    text = ("Reduced LJ units, 3D. Heavy beads (type 1) and light beads (type 2) form a binary mixture on an sc "
            "lattice of density 0.5 in a 6 x 6 x 6 box, 30 % of them changed at random to type 2 (seed 771). "
            "The heavy beads carry a mass of 5. Each light bead has mass 0.5. LJ epsilon 1, sigma 1, cutoff 2.5. "
            "Velocities at 1.0, NVE for 200 steps.")
    desc = read_description(text)
    assert desc.masses == {1: 5.0, 2: 0.5}
    assert "which atom type each stated mass belongs to" not in desc.missing
