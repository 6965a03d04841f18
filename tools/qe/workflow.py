"""The typed description of one QE job (qe_job.json): which pw.x runs the runner makes, in order.

A job is a small workflow in one folder (the runs share pw.x's outdir): an optional cutoff scan that
picks the smallest cutoff within `cutoff_tol_meV_per_atom` of the highest one, then either the
points of an equation of state (with, for a cohesive energy, one isolated atom in a box), or an SCF
followed by a band-structure run, or one SCF."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from tools.qe.inputs import KPoint, PwInput

JOB_FILE = "qe_job.json"
CONVERGENCE_FILE = "convergence.json"
STEPS_FILE = "steps.json"


class QeWorkflow(BaseModel):
    kind: Literal["scf", "eos", "band_gap"]
    base: PwInput
    cutoffs_Ry: list[float] = Field(default_factory=list, description="cutoff scan (empty: base.ecutwfc)")
    cutoff_tol_meV_per_atom: float = Field(default=1.0, gt=0)
    cutoff_kpts: tuple[int, int, int] | None = Field(default=None, description="k mesh of the scan")
    strains: list[float] = Field(default_factory=list, description="EOS: linear scale factors of the cell")
    bands_kpoints: list[KPoint] = Field(default_factory=list)
    bands_labels: list[tuple[int, str]] = Field(default_factory=list, description="(k index, label)")
    nbnd: int | None = Field(default=None, description="bands of the band-gap runs")
    atom: PwInput | None = Field(default=None, description="EOS: an isolated-atom SCF at the chosen cutoff "
                                 "(cohesive energy)")
    ranks: int = Field(default=1, ge=1, le=64, description="MPI ranks of pw.x (1: serial, no launcher)")
    max_attempts: int = Field(default=4, ge=1)
    max_seconds: float | None = Field(default=None, gt=0, description="wall time of each pw.x run: it then stops "
                                      "cleanly with its restart files and the runner restarts it (recovery.Walltime)")

    @model_validator(mode="after")
    def _consistent(self) -> QeWorkflow:
        if self.kind == "eos" and len(self.strains) < 5:
            raise ValueError("an equation of state needs at least 5 volumes")
        if self.kind == "band_gap" and not self.bands_kpoints:
            raise ValueError("a band gap needs the k-points of the band-structure path")
        if any(c <= 0 for c in self.cutoffs_Ry):
            raise ValueError("cutoffs must be positive")
        return self
