"""RASPA protocols; importing this package registers them (see simagent.protocols)."""

from tools.raspa.protocols import adsorption  # noqa: F401
