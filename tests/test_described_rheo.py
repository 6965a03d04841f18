"""A 2D dam break with RHEO particles (simagent/described/rheo.py, tools/lammps/described_rheo.py): a
text retelling LAMMPS examples/rheo/dam-break gets the example's unstated fluid block, wall region and
timestep through example_fill, each listed; the regions are the general typed ones (groups.Region,
RegionFill). Every reading rule is tested on a wording written here and on the MDGym dev task's own
text (skipped when absent); the real run is 40 steps and asserts what it shows against an independent
count of the hexagonal lattice's sites and against the rule that held particles do not move."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from described_helpers import dev_text, run_inputs

from simagent.backends.expert import method_words
from simagent.described.reading import read_description
from simagent.models import PropertyRequest, TaskSpec
from tools.lammps.described import render
from tools.lammps.protocols.described import DescribedRun

OURS = ("Simulate the collapse of a liquid column (a dam break) in 2D with the RHEO particle method, in LJ units, "
        "using atom style rheo. Boundaries are f s p; ghost velocities are communicated (comm_modify vel yes) and "
        "newton is off. The domain spans x from -1 to 150 and y from -1 to 80, with z from -0.1 to 0.1. Wall "
        "particles (type 2) line the box with a buffer dx = 3.0, and fluid particles (type 1) fill a block on a "
        "hexagonal lattice with number density n = 1.0. Status flags are set to 0 for the fluid and 1 for the "
        "walls. The rheo pair style uses a cutoff of 2.2 and an artificial viscosity zeta = 0.1; the reference "
        "density rho_0 = 1.0, the dynamic viscosity eta = 0.1 and the sound speed c_s = 1.0. Masses are m_p = 1.0 "
        "for the fluid and 2 m_p for the walls. Gravity of magnitude 0.001 pulls along -y. Use fix rheo with "
        "quintic 10, surface/detection coordination 22 8 and rho/sum, and a linear rheo/pressure equation of state. "
        "The walls stay fixed and the motion is two-dimensional. Print thermo every 20 steps, run the system for "
        "50000 steps, and dump the per-atom data to a file named damDump every 200 steps.")


def _lines(desc) -> list[str]:  # the input without comments, the dump file's name (each text names its own)
    return [re.sub(r" \w+Dump ", " FILE ", line) for line in render(desc).splitlines() if not line.startswith("#")]


def test_our_wording_and_the_dev_task_read_to_the_same_dam_break():
    ours, dev = read_description(OURS), read_description(dev_text("lammps_3/26_rheo.json"))
    for desc in (ours, dev):
        assert desc.renderable, (desc.missing, desc.unsupported)
        r = desc.rheo
        assert (r.cutoff, r.zmin, r.surface, r.artificial_viscosity, r.viscosity, r.rho0, r.gravity) == (
            2.2, 10, (22, 8), 0.1, 0.1, 1.0, 0.001)
        assert r.status == {"all": 0, "rig": 1} and r.dump_every == 200
        assert desc.box.lo == (-1.0, -1.0, -0.1) and desc.box.hi == (150.0, 80.0, 0.1)
        assert desc.boundary == ("f", "s", "p") and desc.dimension == 2 and desc.atom_style == "rheo"
        assert desc.masses == {1: 1.0, 2: 2.0} and math.isclose(desc.timestep, 0.1 * 2.2 / 1.0 / 3)
        bounds = {reg.name: reg.bounds for reg in desc.layout.regions}
        assert bounds["fluid"] == (3.0, 39.0, 3.0, 60.0, None, None)
        assert bounds["walls_outer"] == (2.0, 147.0, 2.0, 77.0, None, None)
        assert desc.layout.at_rest == ["rig"] and [s.steps for s in desc.stages] == [50000]
        for key in ("layout.fluid", "layout.walls", "timestep"):
            assert "examples/rheo/dam-break" in desc.defaults[key]
        assert "50000 are run" in desc.origin["example.departures"].evidence  # the example runs 30000
    assert _lines(ours) == _lines(dev)


def test_the_rendered_dam_break_has_no_nve_and_sets_newton_before_the_box():
    text = render(read_description(OURS))
    assert text.index("newton          off") < text.index("create_box")
    assert " nve" not in text and "fix             rheo all rheo 2.2 quintic 10 surface/detection coordination 22 " \
                                  "8 rho/sum" in text
    assert text.index("fix             rheo all") < text.index("compute         p all rheo/property/atom pressure")
    assert "dump            rheo all custom 200 damDump" in text
    assert "fix             rest_rig rig setforce 0 0 0" in text


def test_another_box_is_not_the_example_and_is_named():
    desc = read_description(OURS.replace("from -1 to 150", "from -1 to 120"))
    assert desc.rheo is None and not desc.renderable
    assert "box_x -1 120 where LAMMPS examples/rheo/dam-break (in.rheo.dam.break) has -1 150" in \
        desc.origin["example.rheo_dam_break"].evidence


def test_a_number_no_rule_reads_stops_the_fill():
    desc = read_description(OURS.replace("Print thermo", "The column is 7 units wide. Print thermo"))
    assert desc.rheo is None and "what the numbers 7 are (stated, not understood)" in desc.missing


def _hex_sites(lo: tuple[float, float], hi: tuple[float, float], n: float) -> int:
    """Sites of LAMMPS's 2D hex lattice at number density n (two per cell, a x sqrt(3) a, basis (0, 0) and
    (1/2, 1/2)) inside the closed rectangle lo..hi: counted here, independently of LAMMPS."""
    a = math.sqrt(2.0 / (n * math.sqrt(3.0)))
    count = 0
    for i in range(-5, int(hi[0] / a) + 5):
        for j in range(-5, int(hi[1] / (a * math.sqrt(3))) + 5):
            for bx, by in ((0.0, 0.0), (0.5, 0.5)):
                x, y = (i + bx) * a, (j + by) * a * math.sqrt(3.0)
                count += lo[0] <= x <= hi[0] and lo[1] <= y <= hi[1]
    return count


def test_a_short_run_makes_the_fluid_block_and_holds_the_walls(tmp_path: Path):
    desc = read_description(OURS.replace("50000 steps", "40 steps"))
    text = render(desc).replace("damDump", "frames.dump").replace("custom 200", "custom 40")
    log = (run_inputs({"in.lammps": text}, tmp_path) / "log.lammps").read_text()
    made = [int(n) for n in re.findall(r"Created (\d+) atoms", log)]
    assert made[0] == _hex_sites((3.0, 3.0), (39.0, 60.0), 1.0) and made[1] > 0
    frames = (tmp_path / "frames.dump").read_text().split("ITEM: TIMESTEP")[1:]
    first, last = ([np.array(line.split(), dtype=float) for line in f.split("ITEM: ATOMS")[1].splitlines()[1:]]
                   for f in (frames[0], frames[-1]))
    walls0 = {int(r[0]): r[2:4] for r in first if r[1] == 2}
    walls1 = {int(r[0]): r[2:4] for r in last if r[1] == 2}
    fluid_moved = max(abs(r[5]) for r in last if r[1] == 1)  # |v_y| of the fluid: gravity acted
    assert len(walls0) == made[1] and all(np.array_equal(walls0[i], walls1[i]) for i in walls0)
    assert fluid_moved > 0


def test_the_pressure_metric_is_the_runs_thermo_pressure(tmp_path: Path):
    protocol = DescribedRun()
    spec = TaskSpec(request=OURS.replace("50000 steps", "40 steps"), properties=[PropertyRequest(name="pressure")])
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    job = job.model_copy(update={"inputs": {"in.lammps": job.inputs["in.lammps"].replace("damDump", "d.dump")}})
    job_dir = run_inputs(job.inputs, tmp_path / job.id)
    (pressure,) = protocol.analyze(params, {job.id: job_dir}, spec)
    log = (job_dir / "log.lammps").read_text()
    columns = log.split("   Step")[-1].split("\n")[0].split()
    rows = [line.split() for line in log.split("   Step")[-1].split("Loop time")[0].strip().splitlines()[1:]]
    press = [float(r[(["Step"] + columns).index("Press")]) for r in rows]
    assert len(rows) == 3 and math.isclose(pressure.value, float(np.mean(press)), rel_tol=1e-9)


@pytest.mark.parametrize("words, literature", [
    ("the fluid's reference density rho_0 = 1.0 sets the equation of state", False),
    ("pressures are measured from a reference pressure of zero", False),
    ("compute the density and list the references that report it", True),
])
def test_a_reference_density_is_a_model_parameter_not_a_literature_ask(words, literature):
    assert any(u.capability == "literature" for u in method_words.find(words)) == literature
