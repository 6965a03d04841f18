"""Binding energy of one guest in a framework with CHGNet (mlp/guest_binding), and the DFT variant
priced and refused (qe/guest_binding).

Reference band for CO2 in Mg-MOF-74: measured isosteric heats of adsorption at low loading are about
-42 to -47 kJ/mol (Mason, Sumida, Herm, Krishna, Long, Energy Environ. Sci. 4, 3030 (2011): ~-42 kJ/mol;
Dietzel, Besikiotis, Blom, J. Mater. Chem. 19, 7362 (2009): ~-47 kJ/mol). CHGNet is a surrogate of
PBE(+U) trained on MPtrj (no explicit dispersion), and a static 0 K binding energy at a fixed framework
is not an isosteric heat (no thermal or zero-point terms), so the test accepts a wide band, -15 to
-70 kJ/mol: it checks that the guest binds, by an amount of the right order, not the exact value."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ase import Atoms

from simagent.backends.expert import ExpertBackend
from simagent.errors import RequestError
from simagent.protocols import get_protocol, protocols_for
from tools.mlp.guest_binding import guest_molecule, min_distance_to_framework, place

SIMAGENT = str(Path(sys.executable).parent / "simagent")


def test_placements_keep_clear_of_the_framework_across_the_periodic_boundary():
    """A tiny cubic cell (6 A) with one atom at the corner: every accepted CO2 keeps every atom >= 2 A from
    each periodic image of it; a 3 A cell (no point farther than 2.6 A from an atom) has no room at 2.7 A."""
    framework = Atoms("Ar", positions=[[0, 0, 0]], cell=[6.0] * 3, pbc=True)
    co2 = guest_molecule("CO2")
    found = place(framework, co2, 10, 2.0, np.random.default_rng(1))
    assert len(found) == 10
    images = np.array([[i, j, k] for i in (-1, 0, 1, 2) for j in (-1, 0, 1, 2) for k in (-1, 0, 1, 2)]) * 6.0
    for positions in found:
        brute = np.linalg.norm(positions[:, None, :] - images[None, :, :], axis=-1).min()
        assert brute >= 2.0 - 1e-9
        assert abs(min_distance_to_framework(framework, positions) - brute) < 1e-9
        # rigid: the C=O bonds of the ASE geometry are kept
        assert np.allclose(np.linalg.norm(positions[[0, 2]] - positions[1], axis=1),
                           np.linalg.norm(co2.positions[[0, 2]] - co2.positions[1], axis=1))
    orientations = {tuple(np.round(p[0] - p[1], 3)) for p in found}
    assert len(orientations) == 10  # random orientations, not one
    tiny = Atoms("Ar", positions=[[0, 0, 0]], cell=[3.0] * 3, pbc=True)
    assert place(tiny, co2, 5, 2.7, np.random.default_rng(1), max_tries=500) == []


def test_binding_requests_reach_only_the_named_engine():
    backend = ExpertBackend()
    chgnet = backend.task_spec("Binding energy of CO2 in Mg-MOF-74 with CHGNet")
    assert [p.name for p in protocols_for(chgnet)] == ["mlp/guest_binding"]
    mlp = backend.task_spec("CO2 binding energy in Mg-MOF-74 using a machine-learning potential")
    assert [p.name for p in protocols_for(mlp)] == ["mlp/guest_binding"]
    dft = backend.task_spec("What is the CO2 adsorption energy in Mg-MOF-74 from density functional theory?")
    assert [p.name for p in protocols_for(dft)] == ["qe/guest_binding"]
    with pytest.raises(RequestError, match="does not fit this machine") as err:
        get_protocol("qe/guest_binding").parameters(dft)
    assert "CHGNet" in str(err.value) and " h serial" in str(err.value)


@pytest.mark.slow
def test_co2_binding_in_mg_mof_74_with_chgnet(tmp_path):
    """End to end, ~2 min on one core (longer under load): 20 placements, 3 relaxations of the 54-atom cell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_"))}
    env["SIMAGENT_CONFIG"] = str(tmp_path / "none.toml")
    env["SIMAGENT_BACKEND"] = "expert"
    proc = subprocess.run([SIMAGENT, "ask", "--yes", "--json", "Binding energy of CO2 in Mg-MOF-74 with CHGNet",
                           "--workdir", str(tmp_path / "runs")], capture_output=True, text=True, env=env,
                          timeout=1500)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    (e,) = [r for r in answer["answers"] if r["quantity"] == "interaction_energy"]
    assert e["unit"] == "kJ/mol" and -70.0 < e["value"] < -15.0
    assert "CHGNet 0.3.0" in e["method"] and "placements screened" in e["method"]
