"""The web front end: a FastAPI application over simagent.session.Session.

Endpoints (JSON unless said otherwise):
  GET  /                                  the page (static HTML + JS)
  POST /api/login                         {token} -> cookie (only when the server has a token)
  GET  /api/threads                       past threads with status, newest first
  POST /api/threads                       {request, auto_approve} -> {thread_id}; runs in the background
  GET  /api/threads/{id}                  request, status, pending question/review, plan, answer, files
  GET  /api/threads/{id}/events           live progress (server-sent events) until the worker stops
  POST /api/threads/{id}/reply            {reply}: answer the pending clarification question
  POST /api/threads/{id}/review           {action, files?, text?}: the pending review of inputs/repair
  POST /api/threads/{id}/resume           continue an interrupted (crashed or stopped) thread
  GET  /api/threads/{id}/files            the viewable files of the run folder
  GET  /api/threads/{id}/files/{path}     one file of the run folder, read-only (text or PNG)
  GET  /api/threads/{id}/archive          the run folder as a zip (streamed)

The review and reply go to the graph's interrupts exactly as `simagent resume` sends them, so the
same checks run and either front end can continue the other's thread."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from simagent.config import Settings
from simagent.errors import SimagentError
from simagent.session import Session, ThreadState, new_thread_id
from simagent.web.files import (
    OutsideRunFolder,
    list_files,
    media_type,
    run_folder,
    safe_file,
    valid_thread_id,
    zip_stream,
)
from simagent.web.runs import Busy, RunManager, TooMany
from simagent.web.security import TOKEN_COOKIE, Guard, token_matches
from simagent.web.views import thread_summary, thread_view

STATIC = Path(__file__).parent / "static"
MAX_TEXT = 4000
MAX_THREADS_LISTED = 200
SSE_POLL_S = 0.2
SSE_KEEPALIVE_S = 15.0


class NewThread(BaseModel):
    request: str = Field(min_length=1, max_length=MAX_TEXT)
    auto_approve: bool | None = Field(default=None, description="run without reviewing the inputs")


class Reply(BaseModel):
    reply: str = Field(min_length=1, max_length=MAX_TEXT)


class ReviewReply(BaseModel):
    action: Literal["approve", "edit", "feedback", "abort", "reject"]
    files: dict[str, dict[str, str]] = Field(default_factory=dict, description="edit: job id -> name -> text")
    text: str = Field(default="", max_length=MAX_TEXT, description="feedback, e.g. 'production_steps = 20000'")


class Login(BaseModel):
    token: str = Field(max_length=512)


def _not_found(thread_id: str) -> HTTPException:
    return HTTPException(404, f"no run with thread id {thread_id!r}")


def _start(call, *args) -> None:
    """Start a worker: 409 when the thread already runs, 429 when too many do."""
    try:
        call(*args)
    except Busy as exc:
        raise HTTPException(409, str(exc)) from None
    except TooMany as exc:
        raise HTTPException(429, str(exc)) from None


@dataclass
class _Runs:
    """The session, its background workers and the run folders, as the routes look threads up."""

    session: Session
    manager: RunManager
    workdir: Path

    def state_of(self, thread_id: str) -> ThreadState:
        if not valid_thread_id(thread_id):
            raise _not_found(thread_id)
        try:
            return self.session.state(thread_id)
        except SimagentError:
            raise _not_found(thread_id) from None

    def known(self, thread_id: str) -> None:
        """404 unless the thread has a checkpoint or a worker of this server."""
        if not valid_thread_id(thread_id):
            raise _not_found(thread_id)
        if not self.manager.running(thread_id):
            self.state_of(thread_id)

    def root_of(self, thread_id: str) -> Path:
        self.known(thread_id)
        try:
            return run_folder(self.workdir, thread_id)
        except OutsideRunFolder:
            raise _not_found(thread_id) from None

    def idle(self, thread_id: str) -> ThreadState:
        """The thread's state; 409 while a worker runs it."""
        state = self.state_of(thread_id)
        if self.manager.running(thread_id):
            raise HTTPException(409, f"thread {thread_id} is running")
        return state


def _add_page_routes(app: FastAPI, token: str | None) -> None:
    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.post("/api/login")
    def login(body: Login) -> JSONResponse:
        if token and not token_matches(token, body.token):
            raise HTTPException(401, "wrong token")
        response = JSONResponse({"ok": True})
        if token:
            response.set_cookie(TOKEN_COOKIE, body.token, httponly=True, samesite="strict")
        return response


def _add_thread_routes(app: FastAPI, runs: _Runs) -> None:
    session, manager, workdir = runs.session, runs.manager, runs.workdir

    @app.get("/api/threads")
    def threads() -> dict:
        items = []
        for thread_id in session.threads()[:MAX_THREADS_LISTED]:
            try:
                items.append(thread_summary(session.state(thread_id), manager.running(thread_id)))
            except SimagentError:
                continue
        return {"threads": items, "workdir": str(workdir)}

    @app.post("/api/threads", status_code=202)
    def new_thread(body: NewThread) -> dict:
        thread_id = new_thread_id()
        _start(manager.ask, body.request, thread_id, body.auto_approve)
        return {"thread_id": thread_id}

    @app.get("/api/threads/{thread_id}")
    def thread(thread_id: str) -> dict:
        if not valid_thread_id(thread_id):
            raise _not_found(thread_id)
        running = manager.running(thread_id)
        try:
            state = session.state(thread_id)
        except SimagentError:
            if not running:
                raise _not_found(thread_id) from None
            return {"thread_id": thread_id, "request": manager.request(thread_id), "status": "running"}
        try:
            root: Path | None = run_folder(workdir, thread_id)
        except OutsideRunFolder:
            root = None
        return thread_view(state, root, running)

    @app.get("/api/threads/{thread_id}/events")
    async def events(thread_id: str, request: Request, since: int = 0) -> StreamingResponse:
        runs.known(thread_id)
        last = request.headers.get("last-event-id")
        if last and last.isdigit():
            since = int(last) + 1
        return StreamingResponse(_event_stream(manager, thread_id, request, since), media_type="text/event-stream",
                                 headers={"cache-control": "no-cache", "x-accel-buffering": "no"})


async def _event_stream(manager: RunManager, thread_id: str, request: Request, since: int):
    """Server-sent events of a thread from `since` on, until its worker stops or the client leaves."""
    quiet = 0.0
    yield "retry: 2000\n\n"
    while True:
        batch, running = manager.events(thread_id, since)
        for event in batch:
            since = event["seq"] + 1
            yield f"id: {event['seq']}\ndata: {json.dumps(event)}\n\n"
        if not running and not batch:
            yield "event: idle\ndata: {}\n\n"
            return
        if await request.is_disconnected():
            return
        await asyncio.sleep(SSE_POLL_S)
        quiet = 0.0 if batch else quiet + SSE_POLL_S
        if quiet >= SSE_KEEPALIVE_S:
            quiet = 0.0
            yield ": keep-alive\n\n"


def _review_reply(pending: dict, body: ReviewReply) -> dict:
    """The graph's reply to a pending review, as `simagent resume` sends it (422 on what it refuses)."""
    if body.action not in pending.get("actions", []):
        raise HTTPException(422, f"action {body.action!r} is not offered here; choose one of "
                                 f"{', '.join(pending.get('actions', []))}")
    reply: dict = {"action": body.action}
    if body.action == "edit":
        shown = pending.get("files", {})
        changed: dict[str, dict[str, str]] = {}
        for job_id, files in body.files.items():
            for name, text in files.items():
                if name not in shown.get(job_id, {}):
                    raise HTTPException(422, f"{job_id}/{name} is not one of the generated inputs")
                if text != shown[job_id][name]:
                    changed.setdefault(job_id, {})[name] = text
        reply["files"] = changed
    elif body.action == "feedback":
        if not body.text.strip():
            raise HTTPException(422, "feedback needs text, e.g. 'production_steps = 20000'")
        reply["text"] = body.text
    return reply


def _add_interrupt_routes(app: FastAPI, runs: _Runs) -> None:
    manager = runs.manager

    @app.post("/api/threads/{thread_id}/reply", status_code=202)
    def reply(thread_id: str, body: Reply) -> dict:
        state = runs.idle(thread_id)
        if not state.interrupt or state.interrupt.get("kind") != "clarification":
            raise HTTPException(409, f"thread {thread_id} is not waiting for an answer to a question")
        _start(manager.resume, thread_id, body.reply)
        return {"thread_id": thread_id}

    @app.post("/api/threads/{thread_id}/review", status_code=202)
    def review(thread_id: str, body: ReviewReply) -> dict:
        pending = runs.idle(thread_id).interrupt
        if not pending or pending.get("kind") != "review":
            raise HTTPException(409, f"thread {thread_id} is not waiting for a review")
        _start(manager.resume, thread_id, _review_reply(pending, body))
        return {"thread_id": thread_id}

    @app.post("/api/threads/{thread_id}/resume", status_code=202)
    def resume(thread_id: str) -> dict:
        state = runs.idle(thread_id)
        if state.interrupt is not None:
            raise HTTPException(409, f"thread {thread_id} is waiting for a {state.interrupt.get('kind')}: "
                                     "answer it instead")
        if not state.unfinished:
            raise HTTPException(409, f"thread {thread_id} has finished")
        _start(manager.resume, thread_id, None)
        return {"thread_id": thread_id}


def _add_file_routes(app: FastAPI, runs: _Runs) -> None:
    @app.get("/api/threads/{thread_id}/files")
    def files(thread_id: str) -> dict:
        return {"files": list_files(runs.root_of(thread_id))}

    @app.get("/api/threads/{thread_id}/files/{path:path}")
    def file(thread_id: str, path: str) -> FileResponse:
        root = runs.root_of(thread_id)
        try:
            target = safe_file(root, path)
        except OutsideRunFolder:
            raise HTTPException(404, "no such file in this run folder") from None
        return FileResponse(target, media_type=media_type(target), content_disposition_type="inline")

    @app.get("/api/threads/{thread_id}/archive")
    def archive(thread_id: str) -> StreamingResponse:
        root = runs.root_of(thread_id)
        if not root.is_dir():
            raise HTTPException(404, f"thread {thread_id} has no run folder yet")
        return StreamingResponse(zip_stream(root, thread_id), media_type="application/zip",
                                 headers={"content-disposition": f'attachment; filename="{thread_id}.zip"'})


def create_app(settings: Settings, token: str | None = None, auto_approve: bool = False,
               session: Session | None = None) -> FastAPI:
    """The application; it owns a Session (closed on shutdown) unless one is passed in. The routes are
    registered in the order of the module docstring."""
    own = session is None
    session = session or Session(settings, auto_approve=auto_approve)
    manager = RunManager(session, auto_approve=auto_approve)

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        yield
        if own:
            session.close()

    app = FastAPI(title="simagent", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.manager = manager
    app.state.session = session
    runs = _Runs(session, manager, session.workdir)
    _add_page_routes(app, token)
    _add_thread_routes(app, runs)
    _add_interrupt_routes(app, runs)
    _add_file_routes(app, runs)
    app.add_middleware(Guard, token=token)
    return app
