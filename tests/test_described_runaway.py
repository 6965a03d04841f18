"""A described NPT run held at zero pressure (tools.lammps.described.runaway_guard): a gas has no
finite volume there, so LAMMPS's fix halt ends the stage once the box has grown 100-fold, and the
analysis answers nothing from it (runaway_stop names why). Texts written here, not a task's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from described_helpers import run_job
from described_helpers import run_named as run_lammps

from simagent.described.reading import read_description
from simagent.errors import CalculationFailed
from simagent.models import PropertyRequest, TaskSpec
from tools.lammps.described import RUNAWAY_GROWTH, render, runaway_stop
from tools.lammps.protocols.described import DescribedRun

# a 2D LJ fluid at T = 2 (far above its critical temperature, about 0.5 in 2D): a gas
GAS = ("A two-dimensional Lennard-Jones fluid in reduced units with periodic boundaries: atoms on a square lattice of "
       "density 0.5 in a 10 x 10 box, LJ cutoff 2.5, velocities created at a temperature of 2.0. Run NPT with a "
       "Nose-Hoover thermostat at temperature 2.0 (damping 0.5) and isotropic pressure {p} (damping 1.0) for "
       "{n} steps with a timestep of 0.005.")


def test_only_a_zero_pressure_target_gets_the_guard():
    zero = render(read_description(GAS.format(p="0.0", n=30000)))
    assert re.search(r"fix\s+runaway all halt 1000 v_grown1 > 100 error soft", zero)
    assert "variable        vol0_1 equal $(vol)" in zero  # the stage's starting volume, as a number
    for other in ("1.0", "0.05"):
        assert "halt" not in render(read_description(GAS.format(p=other, n=30000)))
    ramp = GAS.format(p="0.0", n=30000).replace("isotropic pressure 0.0", "isotropic pressure from 0.0 to 1.0")
    assert "halt" not in render(read_description(ramp))  # ends at a positive pressure: a finite volume


def test_a_gas_at_zero_pressure_is_stopped_and_answers_nothing(tmp_path: Path):
    """100 atoms at T = 2 and P = 0: the box grows 100-fold within the 30,000 steps (12,000 here), the
    guard ends the run early, and the described protocol answers nothing, naming the step and the growth."""
    protocol = DescribedRun()
    spec = TaskSpec(request=GAS.format(p="0.0", n=30000),
                    properties=[PropertyRequest(name="potential_energy_per_atom")])
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    folder = run_job(job, tmp_path)
    log = (folder / "log.lammps").read_text()
    steps = int(re.search(r"Loop time of \S+ on \d+ procs for (\d+) steps", log).group(1))
    assert steps < 30000
    with pytest.raises(CalculationFailed) as stopped:
        protocol.analyze(params, {job.id: folder}, spec)
    why = str(stopped.value)
    assert f"at step {steps}" in why and "without bound" in why and why == runaway_stop(log)
    assert float(re.search(r"volume was (\S+) times", why).group(1)) > RUNAWAY_GROWTH


def test_a_positive_pressure_runs_to_its_end(tmp_path: Path):
    log = run_lammps(render(read_description(GAS.format(p="1.0", n=3000))), tmp_path, "pressed")
    assert re.search(r"Loop time of \S+ on \d+ procs for 3000 steps", log)
    assert runaway_stop(log) is None
