"""LAMMPS protocols; importing this package registers them (see simagent.protocols)."""

from tools.lammps.protocols import crystal, fluid  # noqa: F401
