"""Recovery from common pw.x failures, custodian-style: one handler per failure mode, each with a
check on the output text and a correction of the typed input. The runner (tools/qe/run.py) applies
the first handler that fires and records it in the job folder's corrections.json."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import ClassVar

from tools.qe.inputs import PwInput


class PwHandler(ABC):
    category: ClassVar[str]
    max_num_corrections: ClassVar[int] = 3

    @property
    def name(self) -> str:
        return type(self).__name__

    @abstractmethod
    def check(self, text: str) -> bool:
        """True when this failure shows in the pw.x output."""

    @abstractmethod
    def correct(self, inp: PwInput) -> tuple[PwInput, str] | None:
        """The corrected input and what changed; None when nothing is left to try."""


class ScfNotConverged(PwHandler):
    """'convergence NOT achieved': halve mixing_beta (down to 0.1) and allow more iterations."""

    category = "scf_convergence"

    def check(self, text: str) -> bool:
        return "convergence NOT achieved" in text

    def correct(self, inp: PwInput) -> tuple[PwInput, str] | None:
        if inp.mixing_beta <= 0.1:
            return None
        beta = max(0.1, round(inp.mixing_beta / 2, 4))
        steps = max(inp.electron_maxstep, 200)
        return (inp.model_copy(update={"mixing_beta": beta, "electron_maxstep": steps}),
                f"mixing_beta {inp.mixing_beta:g} -> {beta:g}, electron_maxstep -> {steps}")


class Diagonalization(PwHandler):
    """Cholesky / S matrix / eigenvector failures of Davidson: switch to conjugate gradients."""

    category = "diagonalization"
    max_num_corrections = 1
    # error messages only: the routine names alone also appear in pw.x's timing report
    SIGNS = ("Error in routine cdiaghg", "Error in routine rdiaghg", "S matrix not positive definite",
             "problems computing cholesky",
             "too many bands are not converged", "eigenvectors failed to converge")

    def check(self, text: str) -> bool:
        return any(sign in text for sign in self.SIGNS)

    def correct(self, inp: PwInput) -> tuple[PwInput, str] | None:
        if inp.diagonalization == "cg":
            return None
        return inp.model_copy(update={"diagonalization": "cg"}), f"diagonalization {inp.diagonalization} -> cg"


class TooFewBands(PwHandler):
    """'too few bands' (nbnd below the occupied states, or no empty band for smearing): +20 %, at least +4."""

    category = "bands"

    def check(self, text: str) -> bool:
        return bool(re.search(r"too few bands|nbnd too small|no empty bands", text, re.I))

    def correct(self, inp: PwInput) -> tuple[PwInput, str] | None:
        if inp.nbnd is None:
            return None
        nbnd = max(inp.nbnd + 4, round(inp.nbnd * 1.2))
        return inp.model_copy(update={"nbnd": nbnd}), f"nbnd {inp.nbnd} -> {nbnd}"


class Walltime(PwHandler):
    """pw.x stopped at max_seconds ('Maximum CPU time exceeded'): restart from its saved state."""

    category = "walltime"
    # each restart continues where the last run stopped (pw.x resumes inside the SCF, even mid k-point loop)
    max_num_corrections: ClassVar[int] = 10

    def check(self, text: str) -> bool:
        return "Maximum CPU time exceeded" in text

    def correct(self, inp: PwInput) -> tuple[PwInput, str] | None:
        return (inp.model_copy(update={"restart_mode": "restart"}),
                f"restart_mode {inp.restart_mode} -> restart (continue after max_seconds {inp.max_seconds:g} s)"
                if inp.max_seconds else f"restart_mode {inp.restart_mode} -> restart")


HANDLERS: tuple[type[PwHandler], ...] = (Walltime, Diagonalization, TooFewBands, ScfNotConverged)


def first_handler(text: str, used: dict[str, int]) -> PwHandler | None:
    for cls in HANDLERS:
        handler = cls()
        if handler.check(text) and used.get(handler.name, 0) < handler.max_num_corrections:
            return handler
    return None
