"""ML-potential protocols; importing this package registers them (see simagent.protocols)."""

from tools.mlp.protocols import crystal, defects, guest_binding  # noqa: F401
