"""VASP protocols; importing this package registers them (see simagent.protocols)."""

from tools.vasp.protocols import crystal  # noqa: F401
