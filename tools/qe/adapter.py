"""Quantum ESPRESSO as a simagent engine (simagent.engines.ModuleAdapter): the profile and the job
command are tools.qe.engine's (a job runs `python -m tools.qe.run`, which starts pw.x). Users' own
pw.x inputs are not supported."""

from __future__ import annotations

from pathlib import Path

from simagent.engines import ModuleAdapter, register
from tools.qe import engine
from tools.qe.workflow import JOB_FILE


@register
class QeAdapter(ModuleAdapter):
    name = "qe"
    label = "Quantum ESPRESSO"
    main_input_name = JOB_FILE
    binary_names = ("pw.x",)
    install_hint = engine.INSTALL_HINT
    engine_module = engine

    def binary(self) -> Path:
        return Path(engine.pw_binary())

    def load_protocols(self) -> None:
        import tools.qe.protocols  # noqa: F401
