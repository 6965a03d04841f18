"""Water + CO2 in a described simulation (simagent.described.carbon_dioxide): the TraPPE model, its
count, random insertion of every molecule in the box, a pressure ramp, misspelt step words and the
rigid bodies' fixes. The texts are paraphrases written for these tests."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from described_helpers import run_job as run_lammps

from simagent.described.carbon_dioxide import TRAPPE_CO2, co2_count, co2_model
from simagent.described.reading import read_description, step_typos
from simagent.models import PropertyRequest, TaskSpec
from tools.lammps.described import render
from tools.lammps.protocols.described import DescribedRun

MIXTURE = ("A gas-liquid mixture in real units: 120 CO2 molecules with the TraPPE parameters and 200 SPC/E water "
           "molecules share a periodic cubic box from 0 to 30 A. Lennard-Jones plus Coulomb act within a 10 A cut-off, "
           "the long-range part by PPPM, and unlike pairs follow Lorentz-Berthelot rules. All molecules are put at "
           "random positions in the box so that no two atoms overlap. SHAKE keeps the waters rigid. We run NVT at "
           "320 K with a Nose-Hoover thermostat for 300 steps, then NPT at 320 K while the pressure is lowered "
           "from 50 atm down to 1 atm over 400 steps.")


def test_mixture_reads_trappe_co2_beside_the_water():
    desc = read_description(MIXTURE)
    assert desc.renderable, (desc.unsupported, desc.missing)
    m = desc.molecular
    assert m is not None and m.water is not None and m.water.name == "spc/e"
    assert [(s.template, s.count) for s in m.species] == [("water", 200), ("co2", 120)]
    assert m.rigid == ["co2"] and m.co2 is TRAPPE_CO2 or m.co2 == TRAPPE_CO2
    c, o = m.kinds[2], m.kinds[3]
    # Potoff & Siepmann 2001: C 27.0 K / 2.80 A / +0.70 e, O 79.0 K / 3.05 A / -0.35 e (k_B in kcal/mol/K)
    assert (c.type, c.element, c.sigma, c.charge) == (3, "C", 2.80, 0.70)
    assert (o.type, o.element, o.sigma, o.charge) == (4, "O", 3.05, -0.35)
    assert c.epsilon == pytest.approx(27.0 * 0.0019872, rel=1e-4)
    assert o.epsilon == pytest.approx(79.0 * 0.0019872, rel=1e-4)
    assert m.type_of("O") == 1 and m.type_of("O_co2") == 4  # the water's oxygen stays the O of the rdf, tip4p
    assert c.charge + 2 * o.charge == pytest.approx(0.0)
    assert "molecular.co2_rigid" in desc.defaults


def test_every_molecule_inserted_at_random_in_the_box():
    desc = read_description(MIXTURE)
    m = desc.molecular
    assert m is not None and not m.prepare
    assert [(p.molecule, p.count, p.region) for p in desc.placements] == [("water", 200, None), ("co2", 120, None)]
    assert len({p.seed for p in desc.placements}) == 2
    assert "molecular.preparation" not in desc.defaults and "molecular.insertion" in desc.defaults
    stated = read_description(MIXTURE.replace("so that no two atoms overlap", "with no atom closer than 2.2 A to "
                                              "another"))
    assert stated.molecular is not None and stated.molecular.overlap == 2.2


def test_stages_and_the_pressure_ramp():
    desc = read_description(MIXTURE)
    dyn = [(s.steps, s.dynamics.ensemble, s.dynamics.t_stop, s.dynamics.p_start, s.dynamics.p_stop)
           for s in desc.stages]
    assert dyn == [(300, "nvt", 320.0, None, None), (400, "npt", 320.0, 50.0, 1.0)]


def test_rendered_rigid_bodies_and_the_ramp():
    text = render(read_description(MIXTURE))
    assert "create_box      4 box bond/types 2 angle/types 2" in text
    assert "bond_coeff      2 1.16" in text and "angle_coeff     2 180" in text
    assert "group           nonrigid subtract all co2" in text
    stage1, stage2 = text.split("# stage 1")[1].split("# stage 2")
    assert ("fix             bodies co2 rigid/nvt/small molecule temp 320 320 100\n"
            "fix             dyn1 nonrigid nvt temp 320 320 100") in stage1
    assert "fix             dyn1 nonrigid npt temp 320 320 100 iso 50 1 1000" in stage2
    assert stage2.index("rigid/nvt/small") < stage2.index("nonrigid npt")  # LAMMPS: the rigid fix before the barostat
    assert "minimize" not in text  # the text states its own start


@pytest.mark.parametrize("sentence, start, stop", [
    ("then NPT at 320 K with the pressure ramped from 100 atm to 1 atm over 400 steps.", 100.0, 1.0),
    ("then NPT at 320 K, the barostat's target reduced from 20 bar down to 1 bar, for 400 steps.", 20 / 1.01325,
     1 / 1.01325),
    ("then 400 steps of NPT at 320 K, ramping the pressure from 10 to 1 atm.", 10.0, 1.0),
    # negatives: a temperature ramp is no pressure ramp; a constant pressure stays constant
    ("then NPT for 400 steps at a pressure of 1 atm while the temperature goes from 320 to 350 K.", 1.0, 1.0),
    ("then NPT at 5 atm for 400 steps.", 5.0, 5.0),
])
def test_pressure_ramp_paraphrases(sentence, start, stop):
    text = MIXTURE.split(", then NPT")[0] + ", " + sentence
    desc = read_description(text)
    last = desc.stages[-1].dynamics
    assert last.ensemble == "npt" and desc.stages[-1].steps == 400
    assert (last.p_start, last.p_stop) == (pytest.approx(start), pytest.approx(stop))


@pytest.mark.parametrize("written, read", [
    ("for 5000 timestspes", "for 5000 timesteps"), ("then 200 stpes", "then 200 steps"),
    ("over 100 tmesteps", "over 100 timesteps"), ("10000 setps", "10000 steps"),
    # negatives: English words after a count are kept
    ("after 3 stops", "after 3 stops"), ("12 sites", "12 sites"), ("every 10 times", "every 10 times"),
    ("50 steps", "50 steps"), ("4 stems", "4 stems"), ("20 timestamps", "20 timestamps"),
])
def test_misspelt_step_words_after_a_count(written, read):
    assert step_typos(written) == read


def test_a_misspelt_run_length_still_makes_its_stage():
    desc = read_description(MIXTURE.replace("for 300 steps", "for 300 timestspes"))
    assert [s.steps for s in desc.stages] == [300, 400]


@pytest.mark.parametrize("words, kind", [
    ("120 CO2 molecules with the TraPPE parameters", "trappe"),
    ("120 TraPPE-based carbon dioxide molecules", "trappe"),
    ("120 CO2 molecules of the EPM2 model", "unsupported"),
    ("120 flexible CO2 molecules", "unsupported"),
    ("120 CO2 molecules", "missing"),
])
def test_co2_model_words(words, kind):
    desc = read_description(MIXTURE.replace("120 CO2 molecules with the TraPPE parameters", words))
    if kind == "trappe":
        assert desc.renderable and desc.molecular is not None and desc.molecular.count_of("co2") == 120
    elif kind == "unsupported":
        assert not desc.renderable and any("CO2" in u for u in desc.unsupported)
    else:
        assert not desc.renderable and any("CO2 force field" in m for m in desc.missing)
    assert (co2_model(words.lower())[0] is not None) == (kind == "trappe")


@pytest.mark.parametrize("text, count", [
    ("300 carbon dioxide molecules", 300), ("a mixture of 250 co2 and 400 water molecules", 250),
    ("carbon dioxide (45) in water", 45), ("300 trappe co2 molecules", 300),
])
def test_co2_counts(text, count):
    found = co2_count(text)
    assert found is not None and found[0] == count


def test_a_co2_count_missing_is_named():
    desc = read_description(MIXTURE.replace("120 CO2 molecules with the TraPPE parameters", "TraPPE CO2"))
    assert any("number of CO2 molecules" in m for m in desc.missing)


def test_another_thermostat_on_rigid_co2_is_refused():
    text = MIXTURE.replace("NVT at 320 K with a Nose-Hoover thermostat", "NVE with a Langevin thermostat at 320 K "
                           "(damping 100 fs)")
    desc = read_description(text)
    assert any("langevin" in u and "rigid CO2" in u for u in desc.unsupported)


def test_region_insertion_is_not_a_whole_box_start():
    """A sentence that names a block with its span is an insertion in a region (module confinement)."""
    text = MIXTURE.replace("All molecules are put at random positions in the box so that no two atoms overlap.",
                           "All molecules are put at random positions in a block from 5 to 25 A.")
    desc = read_description(text)
    assert not any(p.region is None and p.molecule == "water" for p in desc.placements)


SMALL = ("Real units: 24 TraPPE CO2 molecules and 40 SPC/E water molecules in a periodic cubic box from 0 to 16 A. "
         "LJ and Coulomb within a 7 A cutoff, the long-range part by PPPM, arithmetic mixing. SHAKE keeps the "
         "waters rigid. NVT at 300 K with a Nose-Hoover thermostat for 40 steps, then NPT at 300 K with the pressure "
         "ramped from 100 atm to 1 atm for 40 steps.")


def test_small_mixture_runs_with_rigid_linear_co2(tmp_path: Path):
    """No random-start sentence: the listed preparation (waters on a grid, CO2 inserted at random, a
    minimisation with the CO2 atoms held, since rigid bodies do not exist in a minimisation). The run
    counts 24 rigid bodies, keeps every CO2 straight at 1.16 A (to the strain of the barostat's last
    step), and the energy per CO2 is the box's TotEng over the last stage / 24 (read here from the log
    itself)."""
    protocol = DescribedRun()
    spec = TaskSpec(request=SMALL, properties=[PropertyRequest(name="temperature"), PropertyRequest(
        name="total_energy_per_molecule", label="co2")])
    assert protocol.applies_to(spec)
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    text = job.inputs["in.lammps"]
    assert "fix             held co2 setforce 0 0 0" in text and "unfix           held" in text
    job.inputs["in.lammps"] = text + "write_data      final.data nocoeff\n"
    job_dir = run_lammps(job, tmp_path)
    log = (job_dir / "log.lammps").read_text()
    assert "24 rigid bodies with 72 atoms" in log
    atoms = {}
    data = (job_dir / "final.data").read_text().split("Atoms")[1].split("Velocities")[0]
    for line in data.strip().splitlines()[1:]:
        f = line.split()
        if len(f) >= 7:
            atoms[int(f[0])] = (int(f[1]), int(f[2]), np.array([float(x) for x in f[4:7]]), [int(i) for i in f[7:10]])
    lo, hi = (float(x) for x in re.search(r"(\S+) (\S+) xlo xhi", (job_dir / "final.data").read_text()).groups())
    box = hi - lo  # after the barostat
    for mol in {a[0] for a in atoms.values() if a[1] == 3}:
        c = next(a for a in atoms.values() if a[0] == mol and a[1] == 3)
        ends = [a for a in atoms.values() if a[0] == mol and a[1] == 4]
        vec = [(e[2] + box * np.array(e[3])) - (c[2] + box * np.array(c[3])) for e in ends]
        # fix npt's last dilation of every atom stretches the bodies by that step's strain until the rigid fix
        # places their atoms again (the next step): 1.16 A within 0.2 %, and straight (the ends opposite)
        assert [np.linalg.norm(v) for v in vec] == pytest.approx([1.16, 1.16], rel=2e-3)
        assert np.linalg.norm(vec[0] + vec[1]) < 1e-6
    results = {r.property: r for r in protocol.analyze(params, {job.id: job_dir}, spec)}
    blocks = re.findall(r"^\s+Step .*\n((?:\s+\d+ .*\n)+)", log, flags=re.M)
    columns = log.split("   Step")[-1].split("\n")[0].split()
    rows = np.array([[float(x) for x in line.split()] for line in blocks[-1].strip().splitlines()])
    tot = rows[:, (["Step"] + columns).index("TotEng")]
    energy = results["total_energy_per_molecule"]
    assert energy.label == "co2" and energy.value == pytest.approx(tot.mean() / 24, rel=1e-6)
    assert math.isfinite(results["temperature"].value) and results["temperature"].value > 0
