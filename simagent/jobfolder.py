"""One job's folder: the only code that writes a job's inputs, keeps failed attempts and writes
corrections.json, for the graph's repair loop (agents.error) and `simagent run` (simagent.usercli).

Layout under the run folder: `<job>/` the current attempt; `<job>.failed<N>/` earlier attempts,
each with the corrections.json of the repairs made after it; `<job>.superseded<N>/` a finished job
set aside because a job it depends on was repaired (it runs again on the new output)."""

from __future__ import annotations

import shutil
from pathlib import Path

from simagent.executor import write_inputs
from simagent.handlers import CorrectionLog
from simagent.models import Job


class JobFolder:
    def __init__(self, path: Path | str, job_id: str | None = None) -> None:
        self.path = Path(path)
        self.job_id = job_id or self.path.name

    def write_inputs(self, job: Job, files: dict[str, Path] | None = None) -> None:
        """A fresh folder with the job's inputs, job.json, and binary `files` copied in by name."""
        if self.path.exists():
            shutil.rmtree(self.path)
        write_inputs(job, self.path)
        for name, source in (files or {}).items():
            shutil.copy2(source, self.path / name)

    def _next(self, kind: str) -> Path:
        n = 1
        while (self.path.parent / f"{self.job_id}.{kind}{n}").exists():
            n += 1
        return self.path.parent / f"{self.job_id}.{kind}{n}"

    def set_aside(self, kind: str) -> Path | None:
        """Move the folder to `<job>.<kind><N>` (the first free N); None when there is no folder."""
        if not self.path.is_dir():
            return None
        target = self._next(kind)
        shutil.move(str(self.path), str(target))
        return target

    def archive_failed(self, log: CorrectionLog) -> Path | None:
        """Keep a failed attempt as `<job>.failed<N>`, with the job's corrections so far (those of
        `log`, including the repair about to be made) in its corrections.json."""
        if not self.path.is_dir():
            return None
        log.write(self.path, self.job_id)
        return self.set_aside("failed")

    def failed_attempts(self) -> list[Path]:
        found, n = [], 1
        while (attempt := self.path.parent / f"{self.job_id}.failed{n}").is_dir():
            found.append(attempt)
            n += 1
        return found

    def write_corrections(self, log: CorrectionLog) -> Path:
        """corrections.json of the current attempt: the full record of each repair as written into the
        folder of the attempt it repaired, or `log`'s records when attempts were moved or removed."""
        records = [saved[-1] for attempt in self.failed_attempts() if (saved := CorrectionLog.read(attempt))]
        if records and len(records) == len(log.for_job(self.job_id)):
            return CorrectionLog(records).write(self.path, self.job_id)
        return log.write(self.path, self.job_id)
