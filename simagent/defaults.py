"""Defaults of protocol parameters: declared on the parameter models, reported in every answer.

The one way a protocol records what it chose that the request did not say:
- a parameter model declares its defaults as data, `DEFAULTS: ClassVar[...]` of `Default(value,
  reason, source)` (per variant where the value depends on one, e.g. the units style);
- `DefaultsLog.take(name, given)` returns the request's value, or the declared default, and then
  reports that default with its declared reason: what is reported is computed from what the
  request did not set, never typed again at the call site;
- `DefaultsLog.note(parameter, value, reason)` (also `log(parameter, value, reason)`) reports a
  decision derived from the request, e.g. a box enlarged so the cutoff fits.
Declared so far: lammps/fluid_md (FluidMDParams), gromacs/liquid_md (LiquidParams) and the
Kremer-Grest melt (ChainMeltParams); the other protocols still note their defaults by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simagent.models import DefaultApplied


@dataclass(frozen=True)
class Default:
    """A parameter's default: its value, why it is right, and the published source when it has one
    (the reason names the source in words; `source` keeps it as data)."""

    value: Any
    reason: str
    source: str | None = None


class DefaultsLog:
    """The defaults and derived decisions one protocol's parameters applied, in the order applied."""

    def __init__(self, declared: Mapping[str, Default | tuple] | None = None) -> None:
        self.declared = declared or {}
        self.applied: list[DefaultApplied] = []

    def note(self, parameter: str, value: object, reason: str) -> None:
        self.applied.append(DefaultApplied(parameter=parameter, value=str(value), reason=reason))

    __call__ = note  # a log is the `record(parameter, value, reason)` callable helpers take

    def default(self, name: str) -> Default:
        """The declared default of `name` (a plain (value, reason) pair also works: tests shorten tables)."""
        declared = self.declared[name]
        return declared if isinstance(declared, Default) else Default(*declared)

    def take(self, name: str, given: object = None) -> Any:
        """The request's value when it gave one; else the declared default, reported with its reason."""
        if given is not None:
            return given
        declared = self.default(name)
        self.note(name, declared.value, declared.reason)
        return declared.value

    def drop(self, *parameters: str) -> None:
        """Withdraw reported defaults that turned out not to apply (e.g. a thermostat's, in NVE)."""
        self.applied[:] = [d for d in self.applied if d.parameter not in parameters]
