"""gromacs protocols; importing this package registers them (see simagent.protocols)."""

from tools.gromacs.protocols import liquids  # noqa: F401
