"""LAMMPS protocols; importing this package registers them (see simagent.protocols)."""

from tools.lammps.protocols import crystal, fluid  # noqa: F401

# solids; the order matters: tensile_test (only for stress-strain wordings) before elastic_constants
from tools.lammps.protocols import tensile, elastic, defects, planar, expansion, minimize, melting  # noqa: F401  # isort: skip

# transport coefficients, bead-spring chains, energy terms
from tools.lammps.protocols import transport, chains, energies  # noqa: F401  # isort: skip

# porous frameworks: MOF-guest MD (rigid framework) and framework E(V) (flexible, UFF4MOF)
from tools.lammps.protocols import framework_md  # noqa: F401  # isort: skip

# TraPPE-UA alkanes and polyethylene (molecular liquids and a polymer melt)
from tools.lammps.protocols import alkanes  # noqa: F401  # isort: skip

# a task's own description, run literally (simagent.described)
from tools.lammps.protocols import described  # noqa: F401  # isort: skip
