"""Framework partial charges by charge equilibration (EQeq: Wilmer, Kim & Snurr, J. Phys. Chem. Lett.
3, 2506 (2012)), through PyPI pyeqeq 0.0.10 (its compiled `pyeqeq_eqeq` module, with the package's
own ionisation and charge-centre tables; the Python wrapper needs pkg_resources, which current
setuptools no longer ships).

EQeq reads a P1 CIF; it runs in a child process because the C++ code crashes the interpreter on
input it cannot parse. Settings are pyeqeq's defaults (dielectric screening 1.2, H electron
affinity -2.0 eV, Ewald sums over 2 real and 2 reciprocal cells, 3 decimals), the values Wilmer et
al. recommend. At these settings the charges of symmetry-equivalent atoms scatter by up to
~0.15 e (HKUST-1 Cu: 0.71-0.87; 0.85-0.90 with 4+4 Ewald cells at 7x the cost).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np

from simagent.errors import CalculationFailed, RequestError
from simagent.materials.frameworks import FrameworkStructure, p1_cif
from simagent.paths import cache_dir

CITATION = "EQeq (Wilmer, Kim & Snurr, J. Phys. Chem. Lett. 3, 2506 (2012)), pyeqeq 0.0.10 defaults"
TIME_LIMIT_S = 600.0
MAX_NET_CHARGE = 0.01  # e per cell; EQeq rounds to 3 decimals and corrects the sum

_RUN = """
import json, sys
import pyeqeq_eqeq
cif, ionization, centres = sys.argv[1:4]
out = pyeqeq_eqeq.run(cif, "json", 1.2, -2.0, 3, "ewald", 2, 2, 50.0, ionization, centres)
sys.stdout = sys.__stdout__
print("EQEQ-RESULT " + json.dumps(json.loads(out)))
"""


def _data_dir() -> Path:
    spec = importlib.util.find_spec("pyeqeq")
    if spec is None or not spec.submodule_search_locations or importlib.util.find_spec("pyeqeq_eqeq") is None:
        raise RequestError("charge equilibration needs pyeqeq 0.0.10 (installed by `make setup`)")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def eqeq_charges(structure: FrameworkStructure) -> np.ndarray:
    """EQeq partial charges (e) of every atom of the framework, in the structure's atom order.

    Kept in the cache folder (simagent.paths.cache_dir()/eqeq) under the hash of the P1 CIF and the
    settings, so a framework is equilibrated once (IRMOF-1, 424 atoms: ~10-20 s)."""
    text = p1_cif(structure, list(structure.symbols), np.zeros(len(structure.symbols)))
    digest = hashlib.sha256((text + _RUN).encode()).hexdigest()
    stored = cache_dir() / "eqeq" / f"{digest}.json"
    if stored.is_file():
        charges = json.loads(stored.read_text())
        if len(charges) == len(structure.symbols):
            return np.array(charges, dtype=float)
    charges = _cached(digest, text, structure.name, len(structure.symbols))
    stored.parent.mkdir(parents=True, exist_ok=True)
    tmp = stored.with_name(f".{stored.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(list(charges)))
    tmp.replace(stored)
    return np.array(charges, dtype=float)


@lru_cache(maxsize=32)
def _cached(_digest: str, cif_text: str, name: str, n_atoms: int) -> tuple[float, ...]:
    data = _data_dir()
    with tempfile.TemporaryDirectory(prefix="simagent-eqeq-") as folder:
        cif = Path(folder) / "framework.cif"
        cif.write_text(cif_text)
        try:
            proc = subprocess.run(
                [sys.executable, "-c", _RUN, str(cif), str(data / "ionizationdata.dat"),
                 str(data / "chargecenters.dat")],
                capture_output=True, text=True, timeout=TIME_LIMIT_S, cwd=folder, check=False,
            )
        except subprocess.TimeoutExpired:
            raise CalculationFailed(f"EQeq charges of {name} took longer than {TIME_LIMIT_S:g} s") from None
    result = next((line for line in proc.stdout.splitlines() if line.startswith("EQEQ-RESULT ")), None)
    if proc.returncode != 0 or result is None:
        raise CalculationFailed(f"EQeq failed on {name} (exit code {proc.returncode}): "
                                f"{(proc.stderr.strip().splitlines() or ['no message'])[-1]}")
    charges = json.loads(result.split(" ", 1)[1])
    if len(charges) != n_atoms or not all(np.isfinite(charges)):
        raise CalculationFailed(f"EQeq returned {len(charges)} charges for the {n_atoms} atoms of {name}")
    net = float(np.sum(charges))
    if abs(net) > MAX_NET_CHARGE:
        raise CalculationFailed(f"EQeq charges of {name} sum to {net:+.4f} e, not 0")
    return tuple(float(q) for q in charges)
