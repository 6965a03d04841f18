"""The decision-backend interface. Every agent decision is a pydantic model that either backend
(expert rules or an LLM endpoint) produces; code validates it the same way in both cases.
Unit conversion, defaults and physics stay in code, never in a backend."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Literal

from pydantic import BaseModel, Field

from simagent.models import TaskSpec


class ProtocolInfo(BaseModel):
    """What a backend is told about a protocol it may choose."""

    name: str
    properties: list[str]
    description: str


class ProtocolSelection(BaseModel):
    """Plan decision: which protocol answers which properties."""

    class Item(BaseModel):
        protocol: str
        properties: list[str]

    items: list[Item]
    rationale: str = ""


class ParameterOverride(BaseModel):
    parameter: str = Field(description="protocol parameter name")
    value: str = Field(description="new value, as text (validated against the protocol's schema)")


class ParameterOverrides(BaseModel):
    """Protocol-parameter decision, e.g. from reviewer feedback ('run 20000 steps')."""

    overrides: list[ParameterOverride] = Field(default_factory=list)
    not_understood: list[str] = Field(default_factory=list, description="feedback it could not apply")


class RepairAction(BaseModel):
    """Repair decision for a failed job, in the declarative action language of the error agent
    (simagent.handlers). Protocol jobs: "set"/"scale" a protocol parameter. Free-form inputs (a
    user's own file, no protocol parameters): "replace_line" (parameter = the exact current line,
    value = the new line), "delete_line" (parameter = the line, value ""), "insert_line" (value is
    inserted after the line given as parameter), in `file` (default: the main input)."""

    action: Literal["set", "scale", "give_up", "replace_line", "delete_line", "insert_line"]
    parameter: str | None = None
    value: str | None = None
    file: str | None = Field(default=None, description="input file for line actions (default: the main input)")
    reason: str = ""


class DecisionBackend(ABC):
    name: str

    @abstractmethod
    def task_spec(self, request: str) -> TaskSpec:
        """Read a request into a TaskSpec; list critical gaps in `missing` instead of guessing."""

    @abstractmethod
    def select_protocols(self, spec: TaskSpec, candidates: list[ProtocolInfo]) -> ProtocolSelection:
        """Choose among the applicable protocols (candidates) for the spec's properties."""

    @abstractmethod
    def parameter_overrides(
        self, feedback: str, protocol: str, current: dict, schema: dict
    ) -> ParameterOverrides:
        """Turn free-text reviewer feedback into parameter overrides for a protocol."""

    @abstractmethod
    def repair(self, diagnosis: str, protocol: str, current: dict, schema: dict) -> RepairAction:
        """Propose one repair for a failed job given the error agent's diagnosis."""
