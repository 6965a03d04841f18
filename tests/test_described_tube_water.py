"""Water let into a carbon nanotube by fix gcmc (simagent.described.tube_water, tools.lammps.described_tube_water):
the reading on texts written here (not any task's wording), its refusals, the rendered input, and a small tube
run by LAMMPS."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from described_helpers import run_inputs

from simagent.described.reading import read_description
from simagent.described.tube_water import EV_PER_KCAL, WERDER_EPSILON_KJ, WERDER_SIGMA
from tools.lammps import described_metrics as group_metrics
from tools.lammps import described_molecular
from tools.lammps.described import render

FILL = ("Fill an armchair carbon nanotube 1 nm across (diameter 1 nm) and 3.9 nm long with TIP4P/2005 water using "
        "grand canonical Monte Carlo. Use a periodic simulation box of 18 x 18 x 39.35 angstrom and metal units. The "
        "tube's carbon atoms interact through the AIREBO potential, and the water through its own model with a cut-"
        "off of 10 angstrom; long-range Coulomb forces are handled by PPPM with an accuracy of 1e-5. Molecules are "
        "inserted into a cylinder that is the interior of the nanotube, at 298 K and 1 atm, with a chemical potential"
        " of -0.5 kcal/mol and tfac_insert 5/3. Rigid water is kept by SHAKE. Run 1000 steps of NVT with a Nose-"
        "Hoover thermostat, then 500 steps of NVE under a Berendsen thermostat, with a timestep = 0.5 fs.")
COUNT = [group_metrics.GroupMeasure(property="molecule_count", group="water")]


def test_a_tube_filled_by_gcmc_is_read():
    desc = read_description(FILL)
    assert desc.renderable, (desc.unsupported, desc.missing)
    tube, gcmc, system = desc.nanotube, desc.gcmc, desc.molecular
    assert tube is not None and gcmc is not None and system is not None
    assert (tube.n, tube.m) == (7, 7)  # 16 armchair periods of 2.4595 A fill 39.35 A; (7,7) is 9.49 A across
    assert gcmc.temperature == 298.0
    assert gcmc.pressure == pytest.approx(1.01325)  # 1 atm in bar
    assert gcmc.mu == pytest.approx(-0.5 * 4.184 / 96.485332)  # kcal/mol -> eV
    assert gcmc.tfac == pytest.approx(5.0 / 3.0)
    assert gcmc.radius == pytest.approx(tube.diameter / 2)
    assert gcmc.g_ewald == pytest.approx((1.35 - 0.15 * math.log(1e-5)) / 10.0)
    assert (system.cutoff, system.accuracy, system.kspace) == (10.0, 1e-5, "pppm/tip4p")
    assert system.shake is not None and system.count_of("water") == 1  # the one start water
    assert desc.timestep == pytest.approx(0.0005)  # 0.5 fs in metal units (ps)
    assert [(s.dynamics.ensemble, s.dynamics.thermostat, s.dynamics.t_start) for s in desc.stages] == [
        ("nvt", "nose-hoover", 298.0), ("nve", "berendsen", 298.0)]
    assert desc.box is not None and desc.box.hi == (18.0, 18.0, 39.35)
    for listed in ("gcmc.carbon_oxygen", "gcmc.attempts", "gcmc.mu_and_pressure", "gcmc.start", "gcmc.g_ewald"):
        assert listed in desc.defaults
    assert "Werder" in desc.defaults["gcmc.carbon_oxygen"]


def test_mu_units():
    ev = read_description(FILL.replace("-0.5 kcal/mol", "-0.3 eV"))
    bare = read_description(FILL.replace("-0.5 kcal/mol", "-0.3"))
    kj = read_description(FILL.replace("-0.5 kcal/mol", "-2 kJ/mol"))
    assert ev.gcmc.mu == bare.gcmc.mu == -0.3  # a bare number in a metal-units text: eV, and said so
    assert "no unit stated" in bare.origin["gcmc.mu"].evidence
    assert kj.gcmc.mu == pytest.approx(-2 / 96.485332)


def test_without_a_pressure_mu_sets_the_reservoir():
    desc = read_description(FILL.replace("at 298 K and 1 atm", "at 298 K"))
    assert desc.gcmc is not None and desc.gcmc.pressure is None
    assert "gcmc.mu_and_pressure" not in desc.defaults
    assert " pressure " not in next(line for line in render(desc).splitlines() if " gcmc " in line)


def test_the_rigid_water_fraction_in_words():
    desc = read_description(FILL.replace("tfac_insert 5/3", "(3 translational + 2 rotational) / (3 translational)"))
    assert desc.gcmc.tfac == pytest.approx(5.0 / 3.0)


@pytest.mark.parametrize("old, new, named", [
    ("Rigid water is kept by SHAKE. ", "", "only SHAKE-constrained water"),
    ("a cylinder that is the interior of the nanotube", "the box", "where the water is inserted"),
    ("with a cut-off of 10 angstrom", "with a cut-off", "the short-range cutoff"),
    ("with a chemical potential of -0.5 kcal/mol and", "with", "the chemical potential"),
    ("PPPM with an accuracy of 1e-5", "Ewald sums", "other than PPPM"),
    ("and metal units", "and real units", "in real units"),
])
def test_what_is_left_out_is_named(old, new, named):
    assert old in FILL
    desc = read_description(FILL.replace(old, new))
    assert not desc.renderable
    assert any(named in m for m in desc.unsupported + desc.missing), (desc.unsupported, desc.missing)


def test_water_in_a_tube_without_gcmc_stays_not_rendered():
    text = FILL.replace("using grand canonical Monte Carlo", "").replace("Molecules are inserted into a cylinder "
                                                                        "that is the interior of the nanotube, ", "")
    desc = read_description(text)
    assert desc.gcmc is None and not desc.renderable


def test_two_temperatures_leave_the_thermostat_unset():
    """The set point is taken only from a text whose stated temperatures are all one value."""
    from simagent.described.tube_water import _set_points

    one = read_description(FILL)
    for stage in one.stages:
        stage.dynamics.t_start = stage.dynamics.t_stop = None
    _set_points(one, "inserted at 298 k; the tube was made at 298 k.")
    assert [s.dynamics.t_stop for s in one.stages] == [298.0, 298.0]
    for stage in one.stages:
        stage.dynamics.t_start = stage.dynamics.t_stop = None
    _set_points(one, "inserted at 298 k; the tube was annealed at 350 k.")
    assert [s.dynamics.t_stop for s in one.stages] == [None, None]


@pytest.mark.parametrize("sentence, units, expected", [
    ("All steps use time steps of 0.5 fs.", "metal", 0.0005),
    ("Integrate with a timestep = 0.001 ps.", "metal", 0.001),
    ("The time step of 2 fs is used throughout.", "real", 2.0),
])
def test_a_timestep_stated_after_its_name(sentence, units, expected):
    text = (f"Argon atoms on an fcc lattice with a lattice constant of 5.26 angstrom in a 5 x 5 x 5 box, {units} "
            f"units, LJ epsilon 0.0104 eV sigma 3.4 angstrom cutoff 8.5 angstrom. Run 1000 steps of NVE. {sentence}")
    desc = read_description(text)
    assert desc.timestep == pytest.approx(expected)
    assert desc.origin["timestep"].source == "rules"


def test_the_rendered_input():
    desc = read_description(FILL)
    text = render(desc, groups=COUNT)
    lines = text.splitlines()
    assert "pair_style      hybrid airebo 3.0 lj/cut/tip4p/long 2 3 1 1 0.1546 10" in lines
    assert "pair_coeff      * * airebo CH.airebo C NULL NULL" in lines
    co = next(line for line in lines if line.startswith("pair_coeff      1 2 "))
    assert co.split()[4:6] == [f"{WERDER_EPSILON_KJ / 96.485332:.10g}", f"{WERDER_SIGMA:g}"]
    oo = next(line for line in lines if line.startswith("pair_coeff      2 2 "))
    assert float(oo.split()[4]) == pytest.approx(93.2 * 8.617333e-5, rel=1e-5)  # TIP4P/2005's 93.2 K in eV
    assert float(oo.split()[4]) == pytest.approx(93.2 * 0.0019872036 * EV_PER_KCAL)
    assert sum(line.startswith("create_atoms    1 single") for line in lines) == 4 * 7 * 16
    gcmc = [line for line in lines if " gcmc " in line]
    assert len(gcmc) == 1
    words = gcmc[0].split()
    assert words[4:11] == ["100", "100", "0", "0", words[8], "298", f"{-0.5 * 4.184 / 96.485332:.10g}"]
    assert "pressure 1.01325" in gcmc[0] and "region interior" in gcmc[0] and "shake shake" in gcmc[0]
    assert "full_energy" in gcmc[0] and "mol water" in gcmc[0]
    assert "fix             shake all shake 0.0001 20 0 b 1 a 1 mol water" in lines
    # fix gcmc acts in the NVT stage only, and every temperature counts the atoms present
    second = text.index("# stage 2")
    assert text.index(gcmc[0]) < second and "unfix           gcmc" in text[second:]
    assert "compute_modify  dyn1_temp dynamic/dof yes" in text[:second]
    assert "compute_modify  dyn2_temp dynamic/dof yes" in text[second:]
    assert "compute_modify  thermo_temp dynamic/dof yes" in lines
    assert "c_sa_nmol_water" in text[second:]
    assert described_molecular.files(desc)["water.mol"].count("Shake") == 3


SMALL = ("A (5,5) carbon nanotube of length 17.2165 angstrom fills a periodic box of 16 x 16 x 17.2165 angstrom; metal "
         "units. SPC/E water is let into it by GCMC: molecules are inserted into a cylinder along z that is the "
         "tube's interior at 300 K and 1 bar, with a chemical potential of -0.4 eV. Carbon uses AIREBO; the water a "
         "cutoff of 7 angstrom with PPPM of accuracy 1e-4; SHAKE holds the water rigid. Run 60 steps of NVT "
         "(Nose-Hoover), then 40 steps of NVE with a Berendsen thermostat; time steps of 0.5 fs.")


def test_a_small_tube_fills_in_lammps(tmp_path: Path):
    """A (5,5) tube, 7 periods (140 carbons), SPC/E under pair hybrid with AIREBO, fix gcmc every 10 steps with 20
    attempts (set here for a test of seconds): LAMMPS runs both stages; the counted molecules are the atoms beyond
    the tube's, three per water, at every row of the production stage; the temperature
    (from rest: the text creates no velocities) stays below 600 K
    (the inserted molecules' SHAKE clusters hold: stop 27 saw 3311 K the step after insertions broke them)."""
    desc = read_description(SMALL)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.gcmc is not None and desc.nanotube is not None
    desc.gcmc.every, desc.gcmc.exchanges = 10, 20
    tube_atoms = desc.nanotube.atoms
    text = render(desc, groups=COUNT).replace("thermo          ", "thermo          10 #")
    log = (run_inputs({"in.lammps": text, **described_molecular.files(desc)}, tmp_path) / "log.lammps").read_text()
    head = re.findall(r"^\s+Step\s+Temp.*c_sa_nmol_water\s*$", log, re.M)
    assert head, log[-1500:]
    names = head[-1].split()
    rows = []
    for line in log[log.rindex(head[-1]):].splitlines()[1:]:
        if not re.match(r"^\s+\d+\s", line):
            break
        rows.append(dict(zip(names, line.split(), strict=True)))
    assert len(rows) >= 4
    for row in rows:
        waters = float(row["c_sa_nmol_water"])
        assert (int(row["Atoms"]) - tube_atoms) == 3 * waters
        assert 0.0 <= float(row["Temp"]) < 600.0  # from rest (the text creates no velocities), never blown up


def test_a_run_past_the_budget_is_refused_with_the_estimate():
    """The estimate: fix gcmc calls x attempts x the measured CPU-s per attempt plus steps x per step, scaled by the
    tube's carbons; the refusal names how far over the budget it is, and a run that fits is not refused."""
    from simagent.described.tube_water import (
        ATTEMPT_CPU_S,
        STEP_CPU_S,
        TWO_RANK_SPEEDUP,
        budget_refusal,
        estimated_cpu_s,
    )

    desc = read_description(FILL)  # 1000 NVT steps with fix gcmc every 100 (10 calls of 100), then 500 NVE
    carbons = 4 * 7 * 16
    expected = (10 * 100 * ATTEMPT_CPU_S + 1500 * STEP_CPU_S) * carbons / 644
    cpu, calls, steps = estimated_cpu_s(desc)
    assert (calls, steps) == (10, 1500) and cpu == pytest.approx(expected)
    why = budget_refusal(desc, 0.8 * expected, 1)
    assert why is not None and "25% over" in why and "nothing was run" in why
    assert budget_refusal(desc, 1.1 * expected, 1) is None
    two = expected / TWO_RANK_SPEEDUP  # 2 ranks: the measured speed-up, not 2
    assert budget_refusal(desc, 1.05 * two, 2) is None
    assert budget_refusal(desc, 0.95 * two, 2) is not None and budget_refusal(desc, 0.95 * two, 4) is not None
    desc.gcmc.every = 200
    assert estimated_cpu_s(desc)[1] == 5
