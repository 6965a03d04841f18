"""Machine-learned potentials (CHGNet, SevenNet through ASE) as a simagent engine
(simagent.engines.ModuleAdapter): a job runs `python -m tools.mlp.run` (tools.mlp.engine), so the
model loads in the job's process. Users' own inputs are not supported."""

from __future__ import annotations

import sys
from pathlib import Path

from simagent.engines import ModuleAdapter, register
from tools.mlp import engine
from tools.mlp.models import DEFAULT_MODEL, model_info, package_version
from tools.mlp.run import JOB_FILE


@register
class MlpAdapter(ModuleAdapter):
    name = "mlp"
    label = "ML potentials"
    main_input_name = JOB_FILE
    engine_module = engine

    def binary(self) -> Path:
        model_info(DEFAULT_MODEL)  # EngineNotFound (with the install hint) when its package is missing
        return Path(sys.executable)

    def version(self) -> str:
        info = model_info(DEFAULT_MODEL)
        return f"{info.label} ({info.package} {package_version(info)})"

    def load_protocols(self) -> None:
        import tools.mlp.protocols  # noqa: F401
