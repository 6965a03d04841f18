"""A graphene sheet in a described simulation (simagent.described.sheet): the sheet built from a stated
atom count, its box (periodic in the plane, free across it), barostats in the plane, a loading that
goes on over several run commands, and the stress of a pulled sheet from per-atom stresses over a
stated thickness, averaged over a stated window. The wordings are written for these tests; the dev
task that prompted the rules is read from ../shared/mdgym when present (never copied)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from described_helpers import DEV, run_inputs

from simagent.backends.expert.protocol_text import read_dynamics
from simagent.described.reading import read_description
from simagent.described.sheet import GRAPHENE_BOND, sheet_cells
from simagent.described.solids import lateral_pressure
from tools.lammps.described import render

PULLED = ("Estimate the elastic modulus of a monolayer graphene sheet made of 384 carbon atoms described by the "
          "AIREBO potential, in metal units with a 1 fs timestep. The sheet sits in a three-dimensional simulation "
          "box that is periodic in the in-plane directions, with an open (non-periodic) boundary perpendicular to the "
          "sheet. Velocities are drawn at 300 K. Relax it with a Nose-Hoover NPT run at 300 K and zero in-plane "
          "pressure for 2000 steps, using coupling times of 1.0 ps for the pressure and 0.1 ps for the temperature. "
          "Next the sheet is pulled in the x direction at a strain rate of 0.01/ps, keeping zero pressure along the "
          "transverse (y-axis) direction, for 1000 steps. The pulling then goes on for 4000 more steps. A sheet "
          "thickness of 0.335 nm converts the in-plane stress into a bulk stress, and each stress value is a 50-step "
          "time average.")


def test_the_replication_that_gives_the_count_with_the_most_nearly_square_sheet():
    """Hand count: the rectangular cell holds 4 atoms, 3 d along x and sqrt(3) d = 1.732 d along y.
    1008 atoms = 252 cells: 12 x 21 makes 36 d by 36.4 d (the nearest to square of 1x252, 2x126, 3x84,
    4x63, 6x42, 7x36, 9x28, 12x21, 14x18, ...: 14 x 18 is 42 d by 31.2 d). 384 atoms = 96 cells:
    8 x 12 (24 d by 20.8 d). A count that is not a multiple of 4 has no replication."""
    assert sheet_cells(1008) == (12, 21)
    assert sheet_cells(384) == (8, 12)
    assert sheet_cells(1002) is None and sheet_cells(0) is None


def test_a_pulled_sheet_reads_completely():
    d = read_description(PULLED)
    assert d.renderable, (d.missing, d.unsupported)
    assert d.dimension == 3  # 'monolayer' names the material; the box is three-dimensional
    assert d.sheet is not None and d.sheet.cells == (8, 12) and d.sheet.atoms == 384
    assert d.sheet.bond_length == pytest.approx(GRAPHENE_BOND) and d.origin["sheet.bond_length"].source == "default"
    assert d.boundary == ("p", "p", "m") and d.origin["boundary"].source == "rules"
    relax, pull, more = d.stages
    assert relax.dynamics.ensemble == "npt" and relax.dynamics.p_axes == "xy" and relax.dynamics.p_stop == 0
    assert relax.dynamics.t_damp == pytest.approx(0.1) and relax.dynamics.p_damp == pytest.approx(1.0)
    assert "run1.t_damp" not in d.defaults and "run1.p_damp" not in d.defaults
    assert pull.steps == 1000 and pull.deform.axis == "x" and pull.deform.rate == pytest.approx(0.01)
    assert pull.dynamics.p_axes == "y" and pull.dynamics.t_stop == 300
    assert pull.deform.thickness == pytest.approx(3.35) and pull.deform.average_every == 50
    assert more.steps == 4000 and more.deform.continued and more.deform.axis == "x"
    assert more.dynamics == pull.dynamics


def test_the_sheet_renders_as_its_rectangular_cell_and_the_loading_is_one_fix_over_two_runs():
    text = render(read_description(PULLED))
    assert "boundary        p p m" in text and "dimension       3" in text
    assert "lattice         custom 1.0 a1 4.26 0.0 0.0 a2 0.0 2.459512147 0.0" in text  # 3 d, sqrt(3) d at d = 1.42
    assert "region          box block 0 8 0 12 -0.5 0.5" in text
    assert "fix             dyn1 all npt temp 300 300 0.1 x 0 0 1 y 0 0 1" in text
    assert "fix             dyn1 all npt temp 300 300 0.1 y 0 0 1" in text
    assert "variable        ssstress equal c_sssum/(lx*ly*3.35)" in text
    assert "fix             sscurve all ave/time 1 50 50 v_ssstrain v_ssstress file stress_strain.dat" in text
    assert text.count("fix             deform all deform") == 1 and "unfix           deform" not in text
    tail = text[text.index("# stage 3"):]
    assert "unfix" not in tail and tail.rstrip().endswith("run             4000")


@pytest.mark.parametrize("text, gap", [
    ("Metal units. A graphene sheet of 1002 atoms modelled with AIREBO, NVT at 300 K for 100 steps.", "1002 atoms"),
    ("Metal units. A graphene sheet modelled with AIREBO, NVT at 300 K for 100 steps.", "size of the graphene sheet"),
    ("Metal units, 0.5 fs timestep. A graphene sheet of 96 atoms with AIREBO; velocities at 300 K; NVT at 300 K for "
     "100 steps. Then stretch it along y at a strain rate of 0.01/ps for 200 steps.", "sheet thickness"),
])
def test_what_a_sheet_lacks_is_named(text, gap):
    d = read_description(text)
    assert any(gap in m for m in d.missing), d.missing


@pytest.mark.parametrize("text", [
    "Metal units. Bilayer graphene of 768 atoms with AIREBO, NVT at 300 K for 100 steps.",
    "Metal units. Two graphene sheets of 384 atoms each with AIREBO, NVT at 300 K for 100 steps.",
    "Metal units. A graphene sheet of 384 atoms read from the data file sheet.data, AIREBO, NVT at 300 K for 100 "
    "steps.",
    "Metal units. A carbon nanotube of 400 atoms with AIREBO, NVT at 300 K for 100 steps.",
    "Metal units. Hydrogenated graphene-H lying on a nickel surface, 500 atoms in all, NVE for 100 steps.",
    "Metal units. Graphene functionalised with hydroxyl groups, 3 atom types and 620 atoms, NVE for 100 steps.",
])
def test_no_sheet_is_built_for_layers_tubes_or_a_data_file(text):
    assert read_description(text).sheet is None


def test_a_stated_bond_length_or_lattice_constant_sets_the_cell():
    base = ("Metal units. A graphene sheet of 96 atoms, AIREBO, velocities at 300 K, NVT at 300 K for 100 steps. "
            "The carbon-carbon bond length is 1.40 angstrom.")
    d = read_description(base)
    assert d.sheet.bond_length == pytest.approx(1.40) and d.origin["sheet.bond_length"].source == "rules"
    d = read_description(base.replace("The carbon-carbon bond length is 1.40 angstrom.",
                                      "Its lattice constant is 2.46 angstrom."))
    assert d.sheet.bond_length == pytest.approx(2.46 / math.sqrt(3))


def test_two_dampings_in_one_phrase_go_to_what_each_damps():
    found = read_dynamics("npt with damping parameters of 0.2 ps for temperature and 2 ps for pressure", False)
    assert found["thermostat_damping"].value == pytest.approx(0.2) and found["barostat_damping"].value == 2.0
    found = read_dynamics("relaxation times of 1 ps for the barostat and 0.1 ps for the thermostat", False)
    assert found["thermostat_damping"].value == pytest.approx(0.1) and found["barostat_damping"].value == 1.0
    # one damping, one word: unchanged (the nearest thermostat or barostat word decides)
    found = read_dynamics("a nose-hoover thermostat with a damping time of 0.1 ps", False)
    assert found["thermostat_damping"].value == pytest.approx(0.1) and "barostat_damping" not in found


@pytest.mark.parametrize("sentence, axis, expected", [
    ("pull along y while holding zero pressure in the transverse (x-axis) direction", "y", "x"),
    ("stretch along z, the x pressure held at 0 bar", "z", "x"),
    ("stretch along z with zero pressure along x and y", "z", "xy"),  # two axes: the two-axis rule
    ("stretch along z at zero lateral pressure", "z", "xy"),
])
def test_a_pressure_held_on_one_lateral_axis(sentence, axis, expected):
    held = lateral_pressure(sentence, axis, "metal")
    assert held is not None and held[0] == expected and held[1] == 0.0


def test_an_n_step_average_is_no_run_and_a_later_relaxation_is_not_loaded():
    base = ("Metal units, 1 fs timestep. A graphene sheet of 96 atoms, AIREBO, velocities at 300 K, NVT at 300 K for "
            "100 steps. Then stretch it along y at a strain rate of 0.01/ps for 200 steps. The stress, averaged as a "
            "20-step running average, uses a thickness of 3.4 angstrom. ")
    d = read_description(base + "Then relax the stretched sheet for 300 steps.")
    assert [s.steps for s in d.stages] == [100, 200, 300]
    assert d.stages[2].deform is None and d.stages[1].deform.average_every == 20
    d = read_description(base + "The run then continues for 300 more steps.")
    assert d.stages[2].deform is not None and d.stages[2].deform.continued


SMALL_PULL = ("Metal units with a 0.5 fs timestep. A graphene sheet of 96 carbon atoms interacting by AIREBO, "
              "periodic in the plane and free out of plane. Velocities at 300 K. Keep it at 300 K in the NVT ensemble "
              "(Nose-Hoover) for 100 steps. Then stretch it along y at a strain rate of 0.05/ps for 100 steps; the "
              "loading then goes on for 100 more steps. The stress comes from the per-atom stresses with a sheet "
              "thickness of 3.4 angstrom, each sample a 25-step time average.")


def test_the_sheet_stress_equals_the_pressure_tensor_over_the_sheet_volume(tmp_path: Path):
    """The rendered sheet runs; its record spans both run commands of the loading (strain rising
    evenly), and its stress, the per-atom stresses' sum over lx ly t, equals -p_yy V / (lx ly t) from
    LAMMPS's global pressure tensor (V the box volume, z included), averaged alike: an independent
    path to the same number (sign, area and thickness)."""
    from tools.lammps.described_solids import STRESS_STRAIN_FILE, read_stress_strain

    d = read_description(SMALL_PULL)
    assert d.renderable, (d.missing, d.unsupported)
    assert d.sheet.cells == (4, 6) and d.stages[0].dynamics.ensemble == "nvt"
    text = render(d)
    check = ("variable        chk equal -pyy*vol/(lx*ly*3.4)\n"
             "fix             chk all ave/time 1 25 25 v_chk file check.dat\n")
    at = text.index("variable        ssL0")
    folder = run_inputs({"in.lammps": text[:at] + check + text[at:]}, tmp_path / "sheet")
    strain, stress = read_stress_strain(folder / STRESS_STRAIN_FILE)
    assert strain.size == 8  # 200 loading steps in 25-step windows, over the two run commands
    # each window's mean strain: 0.05 /ps x 0.0005 ps per step x (25 k + 13) steps on average; fix deform's
    # erate starts again from the box of each run command (LAMMPS sets L0 at a run's start), so the second
    # run's windows are (1 + 0.0025) (1 + rate dt (25 j + 13)) - 1, 0.0025 the strain after the first 100 steps
    per_step = 0.05 * 0.0005
    first = per_step * (25 * np.arange(4) + 13)
    second = (1 + 100 * per_step) * (1 + per_step * (25 * np.arange(4) + 13)) - 1
    assert strain == pytest.approx(np.concatenate([first, second]), rel=1e-5)  # 6 digits written
    rows = [line.split() for line in (folder / "check.dat").read_text().splitlines() if not line.startswith("#")]
    pressure_path = np.array([float(r[1]) for r in rows if len(r) == 2])
    assert pressure_path.size == 8
    assert stress == pytest.approx(pressure_path, rel=1e-6, abs=1e-3)


def test_the_dev_task_reads_as_the_sheet_it_describes():
    task = DEV / "lammps" / "32_graphene_sheet.json"
    if not task.is_file():
        pytest.skip("the MDGym dev set is not here")
    d = read_description(json.loads(task.read_text())["problem_description"])
    assert d.renderable, (d.missing, d.unsupported)
    assert d.sheet.atoms == 1008 and d.boundary == ("p", "p", "m") and d.dimension == 3
    assert [s.steps for s in d.stages] == [50000, 100, 500000]
    assert d.stages[0].dynamics.p_axes == "xy" and d.stages[1].dynamics.p_axes == "x"
    assert d.stages[1].deform.thickness == pytest.approx(3.4) and d.stages[2].deform.continued


def test_a_sheet_run_with_airebo_is_not_refused_for_the_potential_family():
    """AIREBO has no protocol of its own (a free request naming it is refused with what simagent can do
    instead); a described run that renders it as stated runs it. (32_graphene_sheet's solve ended with
    that refusal although its description rendered: only a retold example's system was let through.)"""
    from simagent.backends.expert import ExpertBackend
    from simagent.solve import TaskBackend

    backend = TaskBackend(ExpertBackend(), lambda spec: [], [], "lammps")
    spec = backend.task_spec(PULLED)
    assert backend.description is not None and backend.description.renderable
    assert not [u for u in spec.unsupported if u.capability == "potential"]
    assert spec.described is not None  # the query agent lets the described run's potential through on it
    free = ExpertBackend().task_spec("Young's modulus of a graphene sheet with the AIREBO potential at 300 K")
    assert [u for u in free.unsupported if u.capability == "potential"]  # a free request: still refused
