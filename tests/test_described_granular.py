"""Granular pours in typed simulation descriptions (simagent/described/granular.py, tools/lammps/
described_granular.py): a text retelling LAMMPS examples/pour (in.pour.2d: pair gran/hertz/history
4000.0 NULL 100.0 NULL 0.5 0, fix pour 1000 1 4767548 vol 0.4 10 diam range 0.5 1.0 into block
1.0 99.0 30 34.5, gravity 1 along -y, granular walls at x 0 and 100 and y 0) gets the example's
unstated numbers, each listed; what it states wins. Every reading rule is tested on wordings written
here and on the MDGym dev task's own text (read from ../shared/mdgym, skipped when absent); the real
run checks physics (insertion, free fall at the stated gravity, a flat 2D system), not numbers
copied from a run."""

from __future__ import annotations

import re

import pytest
from described_helpers import dev_text, run_named

from simagent.described.reading import read_description
from tools.lammps.described import render

# our own wording of the pour, every setup number the example's
OURS = ("Granular discs fall under gravity into an open 2D box measuring 100 by 50 (LJ units). Finite-size particles "
        "(atom style sphere) move and spin, integrated with nve/sphere. Contacts between grains and with the walls "
        "follow a Hertz law with shear history: normal spring constant kn = 4000, tangential damping coefficient "
        "gamma_t = 100 and coefficient of friction 0.5. Grains enter through a pouring algorithm into a thin slab "
        "close to the top, their diameters drawn uniformly between 0.5 and 1.0, at a packing fraction of 0.4. "
        "Gravity of strength 1 points in the negative y direction. Rigid granular walls on the left, right and "
        "bottom sides use the same contact law as the grains. The motion is kept strictly in the plane, with a "
        "time step of 0.001, and the system runs for 25000 steps; report the average kinetic energy per particle.")



def test_our_wording_and_the_dev_task_read_to_the_same_pour():
    ours, dev = read_description(OURS), read_description(dev_text("lammps_2/20_pour.json"))
    for desc in (ours, dev):
        assert desc.renderable, (desc.missing, desc.unsupported)
        g = desc.granular
        assert g is not None
        c = g.contact
        # stated: kn 4000, gamma_t 100, friction 0.5 (so tangential damping on); left out: kt NULL, gamma_n
        assert (c.kn, c.kt, c.gamma_t, c.friction, c.dampflag) == (4000.0, None, 100.0, 0.5, 1)
        assert c.gamma_n == 100.0 and "examples/pour" in desc.defaults["granular.contact.gamma_n"]
        assert g.diameters == (0.5, 1.0) and g.volume_fraction == 0.4 and g.gravity == 1.0
        assert g.direction == (0.0, -1.0, 0.0) and sorted(g.walls) == ["xhi", "xlo", "ylo"]
        # the example's insertion: 1000 particles, its seed and slab, each listed with its source
        assert (g.count, g.seed, g.region) == (1000, 4767548, (1.0, 99.0, 30.0, 34.5))
        for key in ("granular.count", "granular.seed", "granular.region", "boundary"):
            assert "LAMMPS examples/pour" in desc.defaults[key]
        assert desc.box is not None and (desc.box.hi[0], desc.box.hi[1]) == (100.0, 50.0)
        assert desc.timestep == 0.001 and desc.stages[0].steps == 25000
    def lines(desc):  # the input, without the comment quoting each text's run sentence
        return [line for line in render(desc).splitlines() if not line.startswith("#")]

    assert lines(ours) == lines(dev)
    assert "dampflag" in dev.origin["granular.contact.dampflag"].evidence  # why the stated damping is switched on


def test_the_rendered_pour_is_the_described_one():
    text = render(read_description(OURS))
    for line in ("atom_style      sphere", "boundary        f fm p", "comm_modify     vel yes",
                 "pair_style      gran/hertz/history 4000 NULL 100 100 0.5 1",
                 "compute_modify  thermo_temp dynamic/dof yes",  # else thermo ke is 0 for a run that starts empty
                 "fix             dyn1 all nve/sphere", "fix             gravity all gravity 1 vector 0 -1 0",
                 "wall/gran hertz/history 4000 NULL 100 100 0.5 1 xplane 0 100",
                 "wall/gran hertz/history 4000 NULL 100 100 0.5 1 yplane 0 NULL",
                 "fix             pour all pour 1000 1 4767548 vol 0.4 10 diam range 0.5 1 region pour",
                 "fix             e2d all enforce2d", "run             25000"):
        assert line in text, line
    assert text.index("fix             pour") < text.index("fix             e2d")  # enforce2d last


def test_stated_insertion_numbers_win_over_the_example():
    desc = read_description(OURS.replace("Grains enter", "In all 400 grains enter").replace(
        "packing fraction of 0.4.", "packing fraction of 0.4, random seed 12345."))
    assert desc.granular is not None and (desc.granular.count, desc.granular.seed) == (400, 12345)
    assert "granular.count" not in desc.defaults and "granular.seed" not in desc.defaults
    assert "LAMMPS examples/pour" in desc.defaults["granular.region"]  # still unstated: the example's


def test_another_friction_coefficient_is_not_the_example_and_is_named():
    desc = read_description(OURS.replace("coefficient of friction 0.5", "coefficient of friction 0.3"))
    assert desc.granular is None and not desc.renderable
    named = desc.origin["example.pour"].evidence
    assert "friction 0.3 where LAMMPS examples/pour (in.pour.2d) has 0.5" in named


def test_a_number_no_rule_reads_stops_the_fill():
    desc = read_description(OURS.replace("Gravity of strength 1", "The box is tilted by 5 degrees. Gravity of "
                                         "strength 1"))
    assert desc.granular is None
    assert "what the numbers 5 are (stated, not understood)" in desc.missing


def _column(log: str, name: str) -> list[float]:
    head = next(line.split() for line in log.splitlines() if line.split()[:1] == ["Step"])
    k = head.index(name)
    rows = [line.split() for line in log.splitlines()]
    return [float(r[k]) for r in rows if len(r) == len(head) and re.fullmatch(r"\d+", r[0])]


def test_a_short_pour_inserts_particles_that_fall_freely_at_the_stated_gravity_in_the_plane(tmp_path):
    """2,000 steps of the rendered pour: fix pour inserts its first batch at step 1 and the grains fall
    from y >= 30 without reaching the floor (free fall takes ~7.7 time units), so the only external
    force is gravity: the y momentum changes by -g M dt per unit time (Newton's second law; contacts
    between grains cancel). Every grain stays in the plane (z = 0, vz = 0)."""
    text = render(read_description(OURS.replace("25000 steps", "2000 steps")))
    probes = ["variable        pmy atom mass*vy", "variable        off atom abs(z)+abs(vz)",
              "variable        m atom mass", "compute         py all reduce sum v_pmy",
              "compute         mtot all reduce sum v_m",
              "compute         off all reduce max v_off",
              "thermo_style    custom step atoms ke c_py c_mtot c_off", "thermo_modify   norm no"]
    text = text.replace("thermo          ", "\n".join(probes) + "\nthermo          ", 1)
    text = re.sub(r"thermo          \d+", "thermo          500", text)
    log = run_named(text, tmp_path, "pour")
    atoms, py, mass, off = (_column(log, c) for c in ("Atoms", "c_py", "c_mtot", "c_off"))
    assert atoms[0] == 0 and atoms[1] > 100 and len(set(atoms[1:])) == 1  # one batch inserted, none lost
    for k in range(1, len(py) - 1):  # rows 500 steps (0.5 time units) apart
        assert (py[k + 1] - py[k]) / (mass[k] * 0.5) == pytest.approx(-1.0, rel=1e-6)
    assert max(off) == 0.0
    assert _column(log, "KinEng")[-1] > _column(log, "KinEng")[1] > 0  # they speed up as they fall


def test_energy_per_particle_skips_the_rows_before_the_first_particle():
    """Thermo rows with no atom yet (a pour starts empty) have no per-atom value: the mean is over the
    others, here (10/10 + 40/20) / 2 = 1.5 by hand."""
    import numpy as np

    from tools.lammps.protocols.described import _thermo

    block = {"Atoms": np.array([0.0, 10.0, 20.0]), "KinEng": np.array([0.0, 10.0, 40.0])}
    result = _thermo("kinetic_energy_per_atom", block, {"energy": "reduced"}, "stage 1")
    assert result.value == pytest.approx(1.5) and "not the 1 rows with no atom yet" in result.method
    assert "grows from 10 to 20" in result.method  # a transient: its block error is said to be no steady-state error


@pytest.mark.parametrize("said, faces", [
    ("Rigid granular walls on the left, right and bottom sides use the same contact law as the grains.",
     ["xhi", "xlo", "ylo"]),
    ("The box has frictional side walls and a floor, which use the same contact law as the grains.",
     ["xhi", "xlo", "ylo"]),
    ("Only the bottom wall is granular, with the same contact law as the grains.", ["ylo"]),
])
def test_the_walls_are_the_faces_the_text_names(said, faces):
    text = OURS.replace("Rigid granular walls on the left, right and bottom sides use the same contact law as the "
                        "grains.", said)
    desc = read_description(text)
    assert desc.granular is not None and sorted(desc.granular.walls) == faces


def test_a_stated_count_of_poured_particles_is_not_a_count_the_run_must_start_with():
    """The pour starts empty: its stated count is what fix pour inserts, not a miscount warning."""
    import numpy as np

    from tools.lammps.protocols.described import _count_warning

    desc = read_description(OURS.replace("Grains enter", "In all 400 particles enter"))
    assert desc.granular is not None and desc.granular.count == 400 and desc.stated_atoms == 400
    assert _count_warning({"Atoms": np.array([0.0, 400.0])}, desc) is None


def test_a_stated_normal_damping_and_timestep_win_and_are_listed_as_departures():
    desc = read_description(OURS.replace("coefficient of friction 0.5", "coefficient of friction 0.5, normal damping "
                                         "coefficient 50").replace("time step of 0.001", "time step of 0.0005"))
    assert desc.granular is not None and desc.granular.contact.gamma_n == 50.0 and desc.timestep == 0.0005
    assert "granular.contact.gamma_n" not in desc.defaults
    departed = desc.origin["granular.departures"].evidence
    assert "gamma_n 50 is run, not LAMMPS examples/pour (in.pour.2d)'s 100" in departed
    assert "timestep 0.0005 is run" in departed


def test_the_refusal_of_a_pour_that_departs_from_the_example_says_which_number_departs():
    from simagent.solve import not_rendered

    reason = not_rendered(read_description(OURS.replace("coefficient of friction 0.5", "coefficient of friction 0.3")))
    assert "fix pour" in reason and "not filled from LAMMPS examples/pour (in.pour.2d): the text states friction " \
        "0.3 where LAMMPS examples/pour (in.pour.2d) has 0.5" in reason
