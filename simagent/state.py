"""Graph state (checkpointed) and run context (not checkpointed: backend, executor, callbacks)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from simagent.backends.base import DecisionBackend
from simagent.config import Settings
from simagent.executor import Executor
from simagent.models import (
    Answer,
    Citation,
    Correction,
    Decision,
    DefaultApplied,
    Plan,
    Result,
    TaskSpec,
)


class RunState(BaseModel):
    """Everything a run needs to continue after a crash or an interrupt."""

    request: str
    thread_id: str
    root: str = Field(description="run folder: job folders, answer.json")
    spec: TaskSpec | None = None
    plan: Plan | None = None
    reviewed: bool = False
    defaults_applied: list[DefaultApplied] = Field(default_factory=list)
    corrections: list[Correction] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    results: list[Result] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list, description="why a job or a gate failed")
    problems: list[str] = Field(default_factory=list, description="pre-run check findings")
    repairs: int = 0
    repair_review: dict[str, Any] | None = Field(
        default=None, description="an LLM repair waiting for review: the plan before it, what changed"
    )
    question: str | None = None
    error: str | None = None
    knowledge: str | None = Field(default=None, description="answer from retrieved passages (no simulation)")
    citations: list[Citation] = Field(default_factory=list)
    screen: str | None = Field(default=None, description="report of a screening run (agents.screen): stages, "
                               "top N, file paths")
    answer: Answer | None = None


@dataclass
class RunContext:
    settings: Settings
    backend: DecisionBackend
    executor: Executor
    auto_approve: bool = True
    progress: Callable[[str, dict[str, Any]], None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def report(self, event: str, **info: Any) -> None:
        if self.progress:
            self.progress(event, info)

    @property
    def workdir(self) -> Path:
        return Path(self.settings.workdir)
