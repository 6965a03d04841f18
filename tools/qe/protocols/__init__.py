"""Quantum ESPRESSO protocols; importing this package registers them (see simagent.protocols)."""

from tools.qe.protocols import crystal, defects, guest_binding  # noqa: F401
