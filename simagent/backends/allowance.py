"""The time a language model may take: a bounded share of a task's wall-clock budget.

`solve` gives the hybrid backend's LLM an allowance (simagent.solve.LLM_BUDGET_SHARE of the task's
budget). Every wall-clock second spent starting the local server or waiting for a completion is
counted against it; a request gets at most what is left as its timeout, and once nothing is left
the LLM is not asked again. When it runs out the rules' reading stands, and the BackendError the
caller gets says so in words report.md shows ("not asked" / "cut short").
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from simagent.errors import BackendError

MIN_CALL_S = 2.0  # less than this left: not worth a request (a reply takes seconds even when short)


@dataclass
class TimeAllowance:
    """`seconds` of LLM wall time in all, out of a budget of `budget_s` (for the messages)."""

    seconds: float
    budget_s: float | None = None
    spent: float = 0.0

    def left(self) -> float:
        return max(0.0, self.seconds - self.spent)

    def what(self) -> str:
        share = f" of the task's {self.budget_s:g} s time budget" if self.budget_s else ""
        return f"the language model's share ({self.seconds:.0f} s{share})"

    def check(self, doing: str) -> float:
        """The seconds `doing` may take; BackendError when too little is left to start it."""
        left = self.left()
        if left < MIN_CALL_S:
            raise BackendError(f"not asked ({doing}): {self.what()} is used up ({self.spent:.0f} s spent); "
                               "the rules' reading stands")
        return left

    def cut_short(self, doing: str) -> BackendError:
        return BackendError(f"cut short ({doing}) after {self.spent:.0f} s: {self.what()} ran out; "
                            "the rules' reading stands")

    @contextmanager
    def timing(self) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.spent += time.perf_counter() - began
