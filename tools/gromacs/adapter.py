"""GROMACS as a simagent engine (simagent.engines.UserInputAdapter): profile in
tools.gromacs.engine, protocol-job checks in tools.gromacs.check, handlers, users' inputs and run
readers in tools.gromacs.handlers."""

from __future__ import annotations

from pathlib import Path

from simagent.engines import UserInputAdapter, register
from tools.gromacs import check, engine, handlers


@register
class GromacsAdapter(UserInputAdapter):
    name = "gromacs"
    label = "GROMACS"
    main_input_name = "grompp.mdp"  # a user's .mdp keeps its own name (handlers.mdp_name)
    binary_names = ("gmx",)
    install_hint = engine.INSTALL_HINT
    parallel = True  # Job.ranks and Job.threads reach the engine (engine.job_command, handlers.user_command)
    dry_run_name = "dry run (grompp)"
    dry_run_optional = True
    engine_module = engine
    handlers_module = handlers
    log_patterns = ("*.log",)
    finished_marker = "Finished mdrun"

    def binary(self) -> Path:
        return engine.gmx_binary()

    def spread(self, job, cores: int):
        """OpenMP threads, not thread-MPI ranks: a small box has no domain decomposition for 2 ranks."""
        job = super().spread(job, cores)
        return job.model_copy(update={"ranks": 1, "threads": job.ranks}) if job.ranks > 1 else job

    def data_folders(self) -> dict[str, str]:
        return {"topologies": str(engine.share_top())}

    def library_dir(self) -> Path | None:
        return engine.share_top()

    def load_protocols(self) -> None:
        import tools.gromacs.protocols  # noqa: F401

    def protocol_precheck(self, job) -> list[str]:
        return check.precheck(job)

    def static_findings(self, job, seen: set[str] = frozenset()):
        return handlers.cutoff_findings(job)

    def dry_run(self, job, files: dict[str, Path] | None = None) -> list[str]:
        return handlers.dry_run(job)

    def run_logs(self, folder: Path) -> list[Path]:
        """mdrun's logs: *.log files (not a launcher's stdout.log/stderr.log) that name GROMACS at the top."""
        found = []
        for path in super().run_logs(folder):
            with path.open("rb") as handle:
                head = handle.read(2000).decode("utf-8", errors="replace")
            if path.name not in ("stdout.log", "stderr.log") and "GROMACS" in head:
                found.append(path)
        return found

    def guess(self, path: Path) -> bool:
        return any(path.glob("*.mdp")) if path.is_dir() else path.suffix == ".mdp"
