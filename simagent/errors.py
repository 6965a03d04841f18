"""Error classes, split like ASE's: cannot start (setup/input), ran and failed, cannot parse.
Every error carries a message meant for the user; the CLI prints it without a traceback."""


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
