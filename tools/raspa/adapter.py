"""RASPA2 as a simagent engine (simagent.engines.UserInputAdapter): profile in tools.raspa.engine,
protocol-job checks in tools.raspa.check, handlers, users' inputs and run readers in
tools.raspa.handlers."""

from __future__ import annotations

from pathlib import Path

from simagent.engines import UserInputAdapter, register
from tools.raspa import check, engine, handlers


@register
class RaspaAdapter(UserInputAdapter):
    name = "raspa"
    label = "RASPA2"
    main_input_name = engine.MAIN_INPUT
    install_hint = engine.INSTALL_HINT
    engine_module = engine
    handlers_module = handlers
    log_patterns = ("Output/System_*/*.data",)
    finished_marker = "Simulation finished"

    def binary(self) -> Path:
        return engine.python_with_raspa()

    def data_folders(self) -> dict[str, str]:
        return {"share": str(engine.share_dir())}

    def load_protocols(self) -> None:
        import tools.raspa.protocols  # noqa: F401

    def protocol_precheck(self, job) -> list[str]:
        return check.precheck(job)

    def output_problem(self, job_dir: Path, job) -> str | None:
        return handlers.output_problem(job_dir, job)

    def static_findings(self, job, seen: set[str] = frozenset()):
        return handlers.library_findings(job)

    def guess(self, path: Path) -> bool:
        if path.is_dir():
            return (path / engine.MAIN_INPUT).is_file()
        return path.name == engine.MAIN_INPUT or path.suffix == ".input"
