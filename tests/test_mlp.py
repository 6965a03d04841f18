"""Universal ML potentials through `simagent ask`: CHGNet for fcc Cu.

Reference: fcc Cu a = 3.63 A (PBE, Haas, Tran & Blaha, Phys. Rev. B 79, 085104 (2009): 3.632 A);
CHGNet is trained on PBE data, so the issue asks for agreement within 1.5 %."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SIMAGENT = str(Path(sys.executable).parent / "simagent")


def ask(request, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_"))}
    env["SIMAGENT_CONFIG"] = str(tmp_path / "none.toml")
    env["SIMAGENT_BACKEND"] = "expert"  # the default would be the hybrid when the local model is installed
    return subprocess.run([SIMAGENT, "ask", "--yes", "--json", request, "--workdir", str(tmp_path / "runs")],
                          capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.engine
def test_cu_lattice_constant_with_chgnet(tmp_path):
    proc = ask("What is the lattice constant of fcc copper with CHGNet?", tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    (a,) = [r for r in answer["answers"] if r["quantity"] == "lattice_constant"]
    assert a["unit"] == "angstrom" and abs(a["value"] - 3.63) / 3.63 < 0.015
    assert "CHGNet 0.3.0" in a["method"] and "chgnet 0.4.2" in a["method"]


@pytest.mark.slow
def test_cu_lattice_constant_with_sevennet(tmp_path):
    """SevenNet-0 is trained on the same PBE data (MPtrj): within 1.5 % of 3.63 A as for CHGNet."""
    proc = ask("fcc Cu lattice parameter using SevenNet", tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    (a,) = [r for r in answer["answers"] if r["quantity"] == "lattice_constant"]
    assert abs(a["value"] - 3.63) / 3.63 < 0.015 and "SevenNet-0" in a["method"] and "sevenn 0.13.0" in a["method"]


@pytest.mark.slow
def test_cu_cohesive_energy_with_chgnet(tmp_path):
    """Cohesive energy of Cu: 3.49 eV/atom measured (C. Kittel, Introduction to Solid State Physics, 8th ed.,
    Table 3.1); PBE gives about the same. The isolated atom is outside CHGNet's training data (the answer
    warns), so the band is 10 %."""
    proc = ask("How much energy per atom holds fcc copper together (cohesive energy), with CHGNet?", tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    (e_coh,) = [r for r in answer["answers"] if r["quantity"] == "cohesive_energy"]
    assert e_coh["unit"] == "eV/atom" and abs(e_coh["value"] - 3.49) / 3.49 < 0.10
    assert "training data" in e_coh["warnings"][0] and "CHGNet 0.3.0" in e_coh["method"]
