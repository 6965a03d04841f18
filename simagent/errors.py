"""Error classes, split like ASE's: cannot start (setup/input), ran and failed, cannot parse.
Every error carries a message meant for the user; the CLI prints it without a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class SimagentError(Exception):
    """Base class: `str(err)` is a complete, user-facing explanation."""

    exit_code = 1


class RequestError(SimagentError):
    """The request (or task file) cannot be turned into a valid task: unknown element, T < 0 K..."""


class EngineNotFound(SimagentError):
    """A simulation engine is not installed; the message carries the install hint."""


class InputError(SimagentError):
    """Inputs for an engine could not be produced or are invalid/unsafe (nothing was run)."""


class CalculationFailed(SimagentError):
    """The engine ran and failed (error, crash, time limit) or failed a physics gate."""


class ReadError(SimagentError):
    """An engine's output could not be parsed."""


class BackendError(SimagentError):
    """A decision backend (LLM endpoint) failed or gave no valid output after retries."""


# A protocol's own set-point check (mean temperature or pressure off the thermostat/barostat target)
# fails the number in a free request. When the user's description prescribes the run (`solve`), the
# run is kept as prescribed: inside `set_point_findings()` a miss is recorded, not raised, and the
# caller reports it with the number.
_SET_POINT_FINDINGS: ContextVar[list[str] | None] = ContextVar("set_point_findings", default=None)


@contextmanager
def set_point_findings() -> Iterator[list[str]]:
    """Collect the set-point misses `set_point_missed` reports inside the block."""
    token = _SET_POINT_FINDINGS.set([])
    try:
        yield _SET_POINT_FINDINGS.get()
    finally:
        _SET_POINT_FINDINGS.reset(token)


def set_point_missed(message: str) -> None:
    """A run missed its set point: CalculationFailed, or a recorded finding inside `set_point_findings()`."""
    found = _SET_POINT_FINDINGS.get()
    if found is None:
        raise CalculationFailed(message)
    found.append(message)
