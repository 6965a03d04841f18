"""GROMACS as a simagent engine (simagent.engines.EngineAdapter): profile in tools.gromacs.engine,
protocol-job checks in tools.gromacs.check, handlers, users' inputs and run readers in
tools.gromacs.handlers."""

from __future__ import annotations

from pathlib import Path

from simagent.engines import EngineAdapter, register
from tools.gromacs import check, engine, handlers


@register
class GromacsAdapter(EngineAdapter):
    name = "gromacs"
    label = "GROMACS"
    main_input_name = "grompp.mdp"  # a user's .mdp keeps its own name (handlers.mdp_name)
    binary_names = ("gmx",)
    install_hint = engine.INSTALL_HINT
    user_inputs = True
    parallel = True  # Job.ranks and Job.threads reach the engine (engine.job_command, handlers.user_command)
    dry_run_name = "dry run (grompp)"
    dry_run_optional = True

    def binary(self) -> Path:
        return engine.gmx_binary()

    def version(self) -> str:
        return engine.version()

    def environment(self) -> dict[str, str]:
        return engine.environment()

    def data_folders(self) -> dict[str, str]:
        return {"topologies": str(engine.share_top())}

    def load_protocols(self) -> None:
        import tools.gromacs.protocols  # noqa: F401

    def protocol_command(self, job) -> list[str]:
        return engine.job_command(job)

    def user_command(self, job) -> tuple[list[str], dict[str, str]]:
        return handlers.user_command(job)

    def protocol_precheck(self, job) -> list[str]:
        return check.precheck(job)

    def run_data(self, job_dir: Path, job):
        return handlers.run_data(job_dir, job)

    def user_log(self, job_dir: Path) -> Path:
        return handlers.user_log(job_dir)

    def safety_findings(self, job):
        return handlers.safety_findings(job)

    def static_findings(self, job, seen: set[str] = frozenset()):
        return handlers.cutoff_findings(job)

    def dry_run(self, job, files: dict[str, Path] | None = None) -> list[str]:
        return handlers.dry_run(job)

    def categorize(self, message: str) -> str:
        return handlers.categorize(message)

    def handler_classes(self):
        return handlers.HANDLERS

    def extend_actions(self, job, factor: float = 2.0):
        return handlers.extend_actions(job, factor)

    def load_user_job(self, path: Path, job_id: str = "run", time_limit_s: float = 1800.0):
        return handlers.load_user_job(path, job_id, time_limit_s)

    def guess(self, path: Path) -> bool:
        return any(path.glob("*.mdp")) if path.is_dir() else path.suffix == ".mdp"

    def main_input(self, job) -> str:
        return handlers.main_input(job)
