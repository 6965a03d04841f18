"""VASP as a simagent engine (simagent.engines.ModuleAdapter). VASP is licensed: it is optional (a
missing VASP does not make `simagent doctor` fail). The command comes from the settings
(`vasp_command`); a job runs `python -m tools.vasp.run`, which starts it with custodian's recovery."""

from __future__ import annotations

import shutil
from pathlib import Path

from simagent.engines import ModuleAdapter, register
from tools.vasp import engine
from tools.vasp.run import JOB_FILE


@register
class VaspAdapter(ModuleAdapter):
    name = "vasp"
    label = "VASP"
    main_input_name = JOB_FILE
    required = False
    install_hint = engine.NOT_CONFIGURED
    engine_module = engine

    def binary(self) -> Path:
        return Path(shutil.which(engine.vasp_command()[0]) or engine.vasp_command()[0])

    def version(self) -> str:
        return f"command: {' '.join(engine.vasp_command())}"

    def load_protocols(self) -> None:
        import tools.vasp.protocols  # noqa: F401
