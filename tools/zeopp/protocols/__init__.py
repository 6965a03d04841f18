"""zeopp protocols; importing this package registers them (see simagent.protocols)."""

from tools.zeopp.protocols import geometry  # noqa: F401
