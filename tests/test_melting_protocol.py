"""lammps/melting_point: solid-liquid coexistence (interface method, NPH).

Published reference: Mishin, Mehl, Papaconstantopoulos, Voter & Kress, Phys. Rev. B 63, 224106
(2001), the table of properties of their EAM1 potential (Cu_mishin1.eam.alloy): the melting temperature from
solid-liquid coexistence MD is 1327 K.
"""

from __future__ import annotations

import numpy as np
import pytest

from simagent.backends.expert import ExpertBackend
from simagent.errors import CalculationFailed, RequestError
from tools.lammps.protocols.melting import MeltingPoint, coexistence_temperature

MISHIN_CU_TM = 1327.0  # K, Mishin et al. 2001 (EAM1 properties table)

REQUESTS = [
    "What is the melting temperature of copper with the Mishin EAM potential?",
    "melting point of Cu (Mishin 2001 EAM)?",
    "copper melting point, fcc, EAM potential by Mishin",
]


@pytest.mark.parametrize("request_text", REQUESTS)
def test_reader_and_parameters(request_text):
    spec = ExpertBackend().task_spec(request_text)
    assert [p.name for p in spec.properties] == ["melting_point"]
    params, defaults = MeltingPoint().parameters(spec)
    assert params.potential_file == "Cu_mishin1.eam.alloy" and params.lattice == "fcc"
    assert params.repetitions[2] >= 2 * params.repetitions[0] and params.pressure_bar == 0.0
    assert any(d.parameter == "start temperature" for d in defaults)
    text = MeltingPoint().jobs(params)[0].inputs["in.lammps"]
    assert "fix             coexist all nph aniso 0.0 0.0" in text and "dilate liquid" in text


def test_refusals():
    spec = ExpertBackend().task_spec("melting point of diamond-cubic silicon with the Tersoff potential")
    with pytest.raises(RequestError):
        MeltingPoint().parameters(spec)


def test_coexistence_analysis_on_synthetic_series():
    times = np.arange(400) * 0.1
    rng = np.random.default_rng(3)
    temps = 1300 + 5 * rng.standard_normal(400)
    temps[:40] += np.linspace(60, 0, 40)  # relaxation from the start temperature
    got = coexistence_temperature(times, temps, np.full(400, 0.5))
    assert got["tm"] == pytest.approx(1300, abs=3) and got["first"] >= 20
    assert got["uncertainty"] >= got["se"] > 0
    # a linear drift of 20 K across the window gives at least 10 K of uncertainty
    drifting = 1300 + np.linspace(-10, 10, 400) + 0.1 * rng.standard_normal(400)
    got = coexistence_temperature(times, drifting, np.full(400, 0.5))
    half_change = 0.5 * (20 / (times[-1] - times[0])) * (times[-1] - times[got["first"]])
    assert got["uncertainty"] >= 0.95 * half_change
    with pytest.raises(CalculationFailed, match="melted completely"):
        coexistence_temperature(times, temps, np.linspace(0.5, 0.0, 400))
    with pytest.raises(CalculationFailed, match="froze"):
        coexistence_temperature(times, temps, np.linspace(0.5, 1.0, 400))


@pytest.mark.engine
def test_tiny_coexistence_mechanics(tmp_path, run_protocol):
    """324 atoms, 7 ps of NPH: the mechanics (both phases kept, T settles) on a box far too small
    for the published accuracy; 10 % band."""
    run = run_protocol(MeltingPoint(), ExpertBackend().task_spec(REQUESTS[0]), tmp_path, repetitions=(3, 3, 9),
                       solid_steps=500, melt_steps=1500, liquid_steps=500, production_steps=2500)
    params, (result,) = run.params, run.results
    print(f"Tm = {result.value:.0f} +/- {result.uncertainty:.0f} K ({params.n_atoms} atoms)")
    assert result.unit == "K" and result.uncertainty > 0 and "coexistence" in result.method
    assert abs(result.value - MISHIN_CU_TM) < 0.10 * MISHIN_CU_TM


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_mishin_copper_melting_point(tmp_path, run_protocol):
    """The protocol's default box (2592 atoms) and schedule (50 ps NPH). The 30 K band: Mishin's value
    comes from a larger box; a 2592-atom NPH coexistence run moves Tm by O(10 K) (finite size, interface
    noise), more than its blocking error. Cost: 38,000 EAM steps, 22.5 min wall on the 2-core machine
    under load ~15-20 (measured: Tm = 1341 +/- 10 K, of which 9 K from the T drift)."""
    (result,) = run_protocol(MeltingPoint(), ExpertBackend().task_spec(REQUESTS[0]), tmp_path).results
    print(f"Tm = {result.value:.0f} +/- {result.uncertainty:.0f} K; {result.method}")
    assert abs(result.value - MISHIN_CU_TM) < max(3 * result.uncertainty, 30.0)
