"""Running a request through the graph: new runs, clarification and review interrupts, resume.

Front ends (CLI, harness) call these; they never touch LangGraph directly."""

from __future__ import annotations

import dataclasses
import secrets
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.types import Command

from agents.response import write_answer
from simagent.backends import get_backend
from simagent.cluster import executor_for
from simagent.config import Settings
from simagent.errors import SimagentError
from simagent.graph import compile_graph
from simagent.models import Answer
from simagent.state import RunContext, RunState

CHECKPOINTS = "checkpoints.sqlite"


@dataclass
class Outcome:
    """Either a final answer or a pending interrupt (clarification question or review)."""

    thread_id: str
    answer: Answer | None = None
    interrupt: dict[str, Any] | None = None


@dataclass
class ThreadState:
    """A thread's last checkpoint: the run state, its pending interrupt, whether nodes remain."""

    thread_id: str
    values: dict[str, Any]
    interrupt: dict[str, Any] | None
    unfinished: bool


def new_thread_id() -> str:
    return time.strftime("t%Y%m%d-%H%M%S-") + secrets.token_hex(3)


class Session:
    def __init__(self, settings: Settings, auto_approve: bool = True,
                 progress: Callable[[str, dict], None] | None = None) -> None:
        self.settings = settings
        self.workdir = Path(settings.workdir).resolve()
        self.backend = get_backend(settings)
        self.executor = executor_for(settings)
        self.context = RunContext(settings=settings, backend=self.backend, executor=self.executor,
                                  auto_approve=auto_approve, progress=progress)
        self.app = compile_graph(self.workdir / CHECKPOINTS)

    def close(self) -> None:
        self.executor.shutdown()
        close_backend = getattr(self.backend, "close", None)  # stops a local LLM server
        if callable(close_backend):
            close_backend()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def context_for(self, progress: Callable[[str, dict], None] | None = None,
                    auto_approve: bool | None = None) -> RunContext:
        """This session's run context with another progress callback or review setting (a front
        end that drives several threads at once gives each its own)."""
        changes: dict[str, Any] = {"progress": progress} if progress is not None else {}
        if auto_approve is not None:
            changes["auto_approve"] = auto_approve
        return dataclasses.replace(self.context, **changes) if changes else self.context

    def _config(self, thread_id: str) -> dict:
        return {"configurable": {"thread_id": thread_id}, "recursion_limit": 60}

    def _outcome(self, thread_id: str, result: dict) -> Outcome:
        interrupts = result.get("__interrupt__") if isinstance(result, dict) else None
        if interrupts:
            payload = interrupts[0].value
            if payload.get("kind") == "clarification":
                root = self.workdir / thread_id
                answer = Answer(status="needs_clarification", request=result.get("request", ""),
                                question=payload["question"], thread_id=thread_id,
                                summary=f"More information is needed: {payload['question']}")
                write_answer(answer, root)
                return Outcome(thread_id, answer=answer, interrupt=payload)
            return Outcome(thread_id, interrupt=payload)
        answer = result.get("answer")
        if isinstance(answer, dict):
            answer = Answer.model_validate(answer)
        return Outcome(thread_id, answer=answer)

    def ask(self, request: str, thread_id: str | None = None, context: RunContext | None = None) -> Outcome:
        thread_id = thread_id or new_thread_id()
        root = self.workdir / thread_id
        initial = RunState(request=request, thread_id=thread_id, root=str(root))
        result = self.app.invoke(initial, self._config(thread_id), context=context or self.context)
        return self._outcome(thread_id, result)

    def state(self, thread_id: str) -> ThreadState:
        snapshot = self.app.get_state(self._config(thread_id))
        if not snapshot.values:
            raise SimagentError(f"no run with thread id {thread_id!r} in {self.workdir}")
        interrupt = snapshot.interrupts[0].value if snapshot.interrupts else None
        return ThreadState(thread_id, dict(snapshot.values), interrupt, bool(snapshot.next))

    def threads(self) -> list[str]:
        """Thread ids with a checkpoint in this run folder, most recently active first."""
        saver = self.app.checkpointer
        try:  # one query over SqliteSaver's table (checkpoint ids are time-ordered UUIDv6)
            with saver.lock:
                rows = saver.conn.execute(
                    "SELECT thread_id, MAX(checkpoint_id) FROM checkpoints GROUP BY thread_id").fetchall()
            return [thread for thread, _ in sorted(rows, key=lambda row: row[1], reverse=True)]
        except (AttributeError, sqlite3.Error):  # another saver: walk its checkpoints
            seen: dict[str, None] = {}
            for item in saver.list(None):
                seen.setdefault(item.config["configurable"]["thread_id"], None)
            return list(seen)

    def pending(self, thread_id: str) -> dict | None:
        snapshot = self.app.get_state(self._config(thread_id))
        if not snapshot.values:
            raise SimagentError(f"no run with thread id {thread_id!r} in {self.workdir}")
        return snapshot.interrupts[0].value if snapshot.interrupts else None

    def resume(self, thread_id: str, reply: Any = None, context: RunContext | None = None) -> Outcome:
        """Continue a thread: answer its pending interrupt, or re-run from the last checkpoint
        after a crash (finished jobs are not run again)."""
        snapshot = self.app.get_state(self._config(thread_id))
        if not snapshot.values:
            raise SimagentError(f"no run with thread id {thread_id!r} in {self.workdir}")
        if snapshot.interrupts:
            if reply is None:
                raise SimagentError(f"thread {thread_id} is waiting for a reply: "
                                    f"{snapshot.interrupts[0].value.get('question', 'review of inputs')}")
            result = self.app.invoke(Command(resume=reply), self._config(thread_id), context=context or self.context)
        elif snapshot.next:
            result = self.app.invoke(None, self._config(thread_id), context=context or self.context)
        else:
            result = dict(snapshot.values)
        return self._outcome(thread_id, result)
