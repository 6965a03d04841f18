"""Zeo++ (pyzeo) error handlers (simagent.handlers.ErrorHandler).

pyzeo aborts the whole process on some CIFs: "Unable to find radius for Cu2+" (an oxidation state
in the atom type: Zeo++'s radius table knows elements only) and "Unable to add edge because nodes
have not been added" (a degenerate Voronoi network of a high-symmetry structure). The adapter runs
Zeo++ in a child process, so these become a failed job with the message in stdout/stderr.
Corrections act on the job's CIF: oxidation states are stripped from the type symbols. The second
failure needs atoms nudged by ~1e-3 A, a numeric operation the adapter's CIF cleaning does (retry
with the job parameter `nudge_atoms`, when the adapter offers it).
"""

from __future__ import annotations

import re
from pathlib import Path

from simagent.handlers import ErrorHandler
from simagent.models import Job


def _output(job_dir: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in (job_dir / "stdout.txt", job_dir / "stderr.txt")
                     if p.is_file())


def _cif(job: Job) -> str | None:
    return next((name for name in job.inputs if name.lower().endswith(".cif")), None)


class RadiusTableFailure(ErrorHandler):
    """'Unable to find radius for Cu2+': oxidation states are stripped from the CIF's atom types
    (`_atom_site_type_symbol` values such as Cu2+ or O2- become Cu, O)."""

    engine = "zeopp"
    category = "radius table"
    max_num_corrections = 1

    def check(self, job_dir: Path, job: Job) -> bool:
        self.match = re.search(r"Unable to find radius for (\S+)", _output(job_dir))
        return self.match is not None

    def correct(self, job_dir: Path, job: Job) -> dict:
        bad = self.match.group(1)
        cif = _cif(job)
        errors = [f"Zeo++ has no radius for {bad} (an oxidation state in the atom type)"]
        if cif is None or not re.search(r"[A-Z][a-z]?\d*[+-]", job.inputs[cif]):
            if "nudge_atoms" in job.params or "clean_cif" in job.params:
                return {"errors": errors, "actions": [{"param": "clean_cif", "_set": True}]}
            return {"errors": errors, "actions": None}
        return {"errors": errors, "actions": [{"file": cif, "_substitute": {
            "match": r"^\s*\S+\s+[A-Z][a-z]?\d*[+-]\s", "old": r"(?<=\s)([A-Z][a-z]?)\d*[+-](?=\s)", "new": r"\1",
            "count": 0}}]}


class NetworkFailure(ErrorHandler):
    """'Unable to add edge because nodes have not been added' (or a crash without a message): the
    Voronoi network of a high-symmetry structure is degenerate; retried with atoms nudged by 1e-3 A
    when the protocol has that parameter, else passed on."""

    engine = "zeopp"
    category = "network"
    max_num_corrections = 1

    def check(self, job_dir: Path, job: Job) -> bool:
        text = _output(job_dir)
        self.message = next((m for m in ("Unable to add edge because nodes have not been added",
                                         "Segmentation fault", "std::bad_alloc", "Aborted") if m in text), None)
        return self.message is not None

    def correct(self, job_dir: Path, job: Job) -> dict:
        errors = [f"Zeo++ crashed: {self.message}"]
        if "nudge_atoms" in job.params and not job.params.get("nudge_atoms"):
            return {"errors": errors, "actions": [{"param": "nudge_atoms", "_set": True}]}
        return {"errors": errors, "actions": None}


HANDLERS: list[type[ErrorHandler]] = [RadiusTableFailure, NetworkFailure]
