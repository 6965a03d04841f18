"""Background runs of the web front end: one worker thread per graph thread at a time, and the
live progress events (stages, jobs, wall times, status changes) that the page reads by
server-sent events.

Every run goes through simagent.session.Session (the same graph, interrupts and checkpoints as
the CLI), so a thread started here can be resumed by `simagent resume` and the other way round.
Events live in memory: a thread started elsewhere shows its state from the checkpoint, and its
live events from the moment this server drives it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from simagent.errors import SimagentError
from simagent.session import Outcome, Session

log = logging.getLogger("simagent.web")

MAX_EVENTS = 2000  # per thread; older events are dropped (the state endpoint has the full picture)


@dataclass
class ThreadEvents:
    """The events of one thread: a growing list with sequence numbers, and whether a worker runs."""

    events: list[dict[str, Any]] = field(default_factory=list)
    first_seq: int = 0
    running: bool = False
    started: float = field(default_factory=time.monotonic)

    def since(self, seq: int) -> list[dict[str, Any]]:
        return self.events[max(0, seq - self.first_seq):]

    @property
    def next_seq(self) -> int:
        return self.first_seq + len(self.events)


class Busy(Exception):
    """The thread already has a running worker."""


class TooMany(Exception):
    """As many runs as allowed are running already."""


class RunManager:
    """Starts session calls (ask, resume) in background threads and records their events."""

    def __init__(self, session: Session, auto_approve: bool = False, max_running: int = 4) -> None:
        self.session = session
        self.max_running = max_running
        self.auto_approve = auto_approve
        self._lock = threading.Lock()
        self._threads: dict[str, ThreadEvents] = {}
        self._review: dict[str, bool] = {}  # thread -> auto-approve chosen when it was asked
        self._requests: dict[str, str] = {}

    # -- events ---------------------------------------------------------------------------------

    def _record(self, thread_id: str, event: dict[str, Any], done: bool = False) -> None:
        """Append an event; `done` also marks the worker finished, in the same step, so a reader
        never sees the worker stopped before its last event."""
        with self._lock:
            entry = self._threads.setdefault(thread_id, ThreadEvents())
            if done:
                entry.running = False
            event = {**event, "seq": entry.next_seq, "t": round(time.monotonic() - entry.started, 3)}
            entry.events.append(event)
            if len(entry.events) > MAX_EVENTS:
                drop = len(entry.events) - MAX_EVENTS
                del entry.events[:drop]
                entry.first_seq += drop

    def events(self, thread_id: str, since: int = 0) -> tuple[list[dict[str, Any]], bool]:
        """Events with seq >= since, and whether a worker is still running for the thread."""
        with self._lock:
            entry = self._threads.get(thread_id)
            if entry is None:
                return [], False
            return entry.since(since), entry.running

    def running(self, thread_id: str) -> bool:
        with self._lock:
            entry = self._threads.get(thread_id)
            return bool(entry and entry.running)

    def _progress(self, thread_id: str) -> Callable[[str, dict], None]:
        def report(event: str, info: dict[str, Any]) -> None:
            self._record(thread_id, {"type": event, **_plain(info)})
        return report

    # -- runs -----------------------------------------------------------------------------------

    def _start(self, thread_id: str, call: Callable[[], Outcome], what: str) -> None:
        with self._lock:
            entry = self._threads.setdefault(thread_id, ThreadEvents())
            if entry.running:
                raise Busy(f"thread {thread_id} is already running")
            if sum(e.running for e in self._threads.values()) >= self.max_running:
                raise TooMany(f"{self.max_running} runs are going on already; try again when one has finished")
            entry.running = True
        self._record(thread_id, {"type": "status", "status": "running", "detail": what})
        worker = threading.Thread(target=self._work, args=(thread_id, call), name=f"simagent-web-{thread_id}",
                                  daemon=True)
        worker.start()

    def _work(self, thread_id: str, call: Callable[[], Outcome]) -> None:
        final: dict[str, Any]
        try:
            outcome = call()
            if outcome.interrupt is not None:
                final = {"type": "status", "status": outcome.interrupt.get("kind", "interrupt")}
            elif outcome.answer is not None:
                final = {"type": "status", "status": outcome.answer.status}
            else:
                final = {"type": "status", "status": "stopped"}
        except SimagentError as exc:
            final = {"type": "status", "status": "failed", "error": str(exc)}
        except Exception as exc:  # a bug must not kill the server; the page gets one line
            log.exception("run of thread %s failed", thread_id)
            final = {"type": "status", "status": "failed", "error": f"internal error: {type(exc).__name__}: {exc}"}
        self._record(thread_id, final, done=True)

    def _context(self, thread_id: str):
        auto = self._review.get(thread_id, self.auto_approve)
        return self.session.context_for(progress=self._progress(thread_id), auto_approve=auto)

    def request(self, thread_id: str) -> str:
        return self._requests.get(thread_id, "")

    def ask(self, request: str, thread_id: str, auto_approve: bool | None = None) -> None:
        self._requests[thread_id] = request
        self._review[thread_id] = self.auto_approve if auto_approve is None else auto_approve
        context = self._context(thread_id)
        self._start(thread_id, lambda: self.session.ask(request, thread_id=thread_id, context=context), "asked")

    def resume(self, thread_id: str, reply: Any = None) -> None:
        context = self._context(thread_id)
        self._start(thread_id, lambda: self.session.resume(thread_id, reply, context=context), "resumed")

    def wait(self, thread_id: str, timeout: float = 60.0) -> bool:
        """Block until the thread's worker ends (tests and shutdown); False on timeout."""
        deadline = time.monotonic() + timeout
        while self.running(thread_id):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True


def _plain(info: dict[str, Any]) -> dict[str, Any]:
    """JSON-safe copy of a progress payload."""
    out = {}
    for key, value in info.items():
        out[key] = value if isinstance(value, str | int | float | bool | type(None)) else str(value)
    return out
