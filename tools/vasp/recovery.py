"""Recovery of failed VASP runs through custodian's own VASP handlers; every correction custodian
makes is written to simagent's corrections log (corrections.json in the job folder).

custodian's handlers read the job folder (INCAR, KPOINTS, POSCAR, the VASP log, OSZICAR, vasprun.xml)
and edit the input files in place; simagent records their `errors` and `actions`. VASP's log is
vasp.out (written by tools/vasp/run.py)."""

from __future__ import annotations

from pathlib import Path

from custodian.vasp.handlers import (
    MeshSymmetryErrorHandler,
    NonConvergingErrorHandler,
    PotimErrorHandler,
    UnconvergedErrorHandler,
    VaspErrorHandler,
)

from simagent.handlers import CorrectionLog, CorrectionRecord

VASP_LOG = "vasp.out"


def handlers() -> list:
    """custodian's handlers in the order atomate2 uses them (the generic log scanner first)."""
    return [VaspErrorHandler(output_filename=VASP_LOG), MeshSymmetryErrorHandler(output_filename=VASP_LOG),
            UnconvergedErrorHandler(), NonConvergingErrorHandler(), PotimErrorHandler()]


def correct(job_dir: Path, job_id: str, log: CorrectionLog, attempt: int = 1) -> CorrectionRecord | None:
    """Apply the first custodian handler whose check fires; record it. None: no handler applies."""
    for handler in handlers():
        try:
            fired = handler.check(str(job_dir))
        except (FileNotFoundError, OSError, ValueError):
            continue  # the handler needs an output this run did not write
        if not fired:
            continue
        result = handler.correct(str(job_dir))
        actions = result.get("actions") or []
        record = CorrectionRecord(job=job_id, handler=f"custodian.{type(handler).__name__}", category="vasp",
                                  errors=[str(e) for e in result.get("errors", [])], actions=actions,
                                  changes=[_describe(a) for a in actions] or ["none: custodian has no fix"],
                                  attempt=attempt)
        log.add(record)
        log.write(job_dir, job_id)
        return record if actions else None
    return None


def _describe(action: dict) -> str:
    target = action.get("dict") or action.get("file") or "?"
    return f"{target}: {action.get('action')}"
