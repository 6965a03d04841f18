"""Defaults of protocol parameters: declared on the parameter models, reported in every answer.

The one way a protocol records what it chose that the request did not say:
- a parameter model declares its defaults as data, `DEFAULTS: ClassVar[...]` of `Default(value,
  reason, source)` (per variant where the value depends on one, e.g. the units style);
- `DefaultsLog.take(name, given)` returns the request's value, or the declared default, and then
  reports that default with its declared reason: what is reported is computed from what the
  request did not set, never typed again at the call site;
- `DefaultsLog.report(name, **fields)` reports a declared setting the protocol always applies (a
  minimiser, an MD schedule): its value text is the declared `shown` template filled from the
  parameters the protocol built, its reason the declared one;
- `DefaultsLog.note(parameter, value, reason)` (also `log(parameter, value, reason)`) reports a
  decision derived from the request, e.g. a box enlarged so the cutoff fits.
A `Default`'s `shown` and `reason` are format templates over `value` and the fields the protocol
passes, so one declaration serves every request (e.g. "{value:g} K", "reference structure of
{element}", "cg, ftol {p.ftol:g} eV/A" with p the parameters built); `parameter` names the
answer's entry when several declared variants report one parameter (e.g. the strain of a static
and of a finite-temperature run).
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
    shown: str | None = None  # how the value reads in the answer: a template over `value` and fields
    parameter: str | None = None  # the answer's name for it (a template too), when it is not the declared key

    def applied(self, name: str, **fields: Any) -> DefaultApplied:
        """The answer's entry for this default, its templates filled from `fields`."""
        value = self.shown.format(value=self.value, **fields) if self.shown else str(self.value)
        if not fields:
            return DefaultApplied(parameter=self.parameter or name, value=value, reason=self.reason)
        return DefaultApplied(parameter=(self.parameter or name).format(**fields), value=value,
                              reason=self.reason.format(value=self.value, **fields))


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

    def take(self, name: str, given: object = None, **fields: Any) -> Any:
        """The request's value when it gave one; else the declared default, reported with its reason."""
        if given is not None:
            return given
        return self.report(name, **fields)

    def report(self, name: str, **fields: Any) -> Any:
        """Report the declared default `name` as applied (templates filled from `fields`); its value."""
        declared = self.default(name)
        self.applied.append(declared.applied(name, **fields))
        return declared.value

    def drop(self, *parameters: str) -> None:
        """Withdraw reported defaults that turned out not to apply (e.g. a thermostat's, in NVE)."""
        self.applied[:] = [d for d in self.applied if d.parameter not in parameters]
