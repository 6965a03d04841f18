"""Zeo++ (pyzeo, in a child Python process) as a simagent engine (simagent.engines.ModuleAdapter):
profile in tools.zeopp.engine, protocol-job checks in tools.zeopp.check, handlers in
tools.zeopp.handlers. Users' own Zeo++ inputs are not supported."""

from __future__ import annotations

import sys
from pathlib import Path

from simagent.engines import ModuleAdapter, register
from tools.zeopp import check, engine, handlers
from tools.zeopp.inputs import SETTINGS_NAME


@register
class ZeoppAdapter(ModuleAdapter):
    name = "zeopp"
    label = "Zeo++"
    main_input_name = SETTINGS_NAME
    install_hint = engine.INSTALL_HINT
    engine_module = engine
    # Zeo++ writes its result files only when it succeeds (finished: not empty)
    log_patterns = ("*.res", "*.sa", "*.vol", "*.volpo", "*.psd_histo", "*.chan", "zeopp_results.json")

    def binary(self) -> Path:
        engine.check_installed()
        return Path(sys.executable)  # pyzeo runs in a child of this Python (tools/zeopp/run.py)

    def load_protocols(self) -> None:
        import tools.zeopp.protocols  # noqa: F401

    def protocol_precheck(self, job) -> list[str]:
        return check.precheck(job)

    def handler_classes(self):
        return handlers.HANDLERS
