"""The web API (simagent/web) through FastAPI's TestClient: every endpoint, the same interrupts as
the CLI (each front end resumes the other's threads), and the security cases (paths outside the
run folder in every spelling, no CORS, size limits, same-origin JSON writes, token, bad thread ids).

Runs use the Foiles Ni EAM relaxation (real LAMMPS, under a second). Reference values: Foiles,
Baskes & Daw, Phys. Rev. B 33, 7983 (1986), Table I: Ni a0 = 3.52 angstrom, E_coh = 4.45 eV."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from simagent.protocols import get_protocol
from simagent.session import Session
from simagent.web.app import create_app
from simagent.web.security import check_bind

NICKEL = "Cohesive energy and lattice constant of fcc nickel with the Foiles (u3) EAM potential"
JOB = "crystal_relax-relax"
SIMAGENT = str(Path(sys.executable).parent / "simagent")
SECRET = "TOP-SECRET-OUTSIDE-THE-RUN-FOLDER"


@pytest.fixture
def client(settings):
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8765") as c:
        yield c


def until_idle(client: TestClient, thread_id: str, since: int = 0) -> list[dict]:
    """Read the thread's server-sent events until the server says the worker is idle."""
    events, idle = [], False
    with client.stream("GET", f"/api/threads/{thread_id}/events?since={since}") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        kind = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                if kind == "idle":
                    idle = True
                else:
                    events.append(json.loads(line[6:]))
                kind = None
    assert idle
    return events


def ask(client: TestClient, request: str, auto_approve: bool) -> tuple[str, list[dict], dict]:
    response = client.post("/api/threads", json={"request": request, "auto_approve": auto_approve})
    assert response.status_code == 202, response.text
    thread_id = response.json()["thread_id"]
    events = until_idle(client, thread_id)
    return thread_id, events, client.get(f"/api/threads/{thread_id}").json()


def result(view: dict, quantity: str) -> dict:
    return next(r for r in view["answer"]["answers"] if r["quantity"] == quantity)


@pytest.mark.engine
def test_request_is_answered_with_live_progress_plan_and_links(client):
    thread_id, events, view = ask(client, NICKEL, auto_approve=True)
    kinds = [(e["type"], e.get("name") or e.get("status")) for e in events]
    assert kinds[0] == ("status", "running") and kinds[-1] == ("status", "answered")
    assert ("stage", "query") in kinds and ("stage", "runner") in kinds and ("stage", "analysis") in kinds
    job_event = next(e for e in events if e["type"] == "job")
    assert job_event["id"] == JOB and job_event["status"] == "succeeded" and job_event["wall_s"] > 0
    assert [e["seq"] for e in events] == list(range(len(events)))

    assert view["status"] == "answered"
    a0, ecoh = result(view, "lattice_constant"), result(view, "cohesive_energy")
    assert abs(a0["value"] - 3.52) < 0.01 and a0["unit"] == "angstrom"  # Foiles 1986
    assert abs(abs(ecoh["value"]) - 4.45) < 0.01 and ecoh["unit"].startswith("eV")
    assert a0["job"] == JOB and a0["method"] and a0["log"] == f"jobs/{JOB}/log.lammps"
    plan = view["plan"]
    assert plan["runs"][0]["protocol"] == "lammps/crystal_relax" and plan["runs"][0]["jobs"] == [JOB]
    job = plan["jobs"][0]
    assert job["folder"] == f"jobs/{JOB}" and job["inputs"] == ["in.lammps"] and job["wall_s"] > 0
    assert any(d["parameter"] == "potential" and "Ni_u3.eam" in d["value"] and d["reason"]
               for d in view["defaults_applied"])
    assert f"jobs/{JOB}/in.lammps" in view["files"] and "answer.json" in view["files"]

    log = client.get(f"/api/threads/{thread_id}/files/{a0['log']}")
    assert log.status_code == 200 and log.headers["content-type"].startswith("text/plain")
    assert "Loop time" in log.text and log.headers["x-content-type-options"] == "nosniff"
    listed = client.get(f"/api/threads/{thread_id}/files").json()["files"]
    assert listed == view["files"]

    threads = client.get("/api/threads").json()["threads"]
    assert threads == [{"thread_id": thread_id, "request": NICKEL, "status": "answered"}]

    archive = client.get(f"/api/threads/{thread_id}/archive")
    assert archive.status_code == 200 and archive.headers["content-type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(archive.content)).namelist()
    assert f"{thread_id}/jobs/{JOB}/log.lammps" in names and f"{thread_id}/answer.json" in names
    assert all(n.startswith(f"{thread_id}/") and ".." not in n for n in names)


@pytest.mark.engine
def test_clarification_answered_in_place(client):
    thread_id, events, view = ask(client, "What is the lattice constant?", auto_approve=True)
    assert view["status"] == "clarification" and "material" in view["interrupt"]["question"]
    assert events[-1]["status"] == "clarification"
    # answering a review that is not pending is refused
    assert client.post(f"/api/threads/{thread_id}/review", json={"action": "approve"}).status_code == 409
    assert client.post(f"/api/threads/{thread_id}/resume", json={}).status_code == 409
    reply = client.post(f"/api/threads/{thread_id}/reply", json={"reply": "fcc nickel with the Foiles EAM potential"})
    assert reply.status_code == 202
    until_idle(client, thread_id, since=len(events))
    view = client.get(f"/api/threads/{thread_id}").json()
    assert view["status"] == "answered"
    assert view["request"].endswith("\nfcc nickel with the Foiles EAM potential")
    assert abs(result(view, "lattice_constant")["value"] - 3.52) < 0.01
    assert client.post(f"/api/threads/{thread_id}/reply", json={"reply": "again"}).status_code == 409


@pytest.mark.engine
def test_review_edit_lands_in_the_run(client, settings):
    thread_id, _, view = ask(client, NICKEL, auto_approve=False)
    assert view["status"] == "review" and view["interrupt"]["actions"] == ["approve", "edit", "feedback", "abort"]
    text = view["interrupt"]["files"][JOB]["in.lammps"]
    # not offered without a repair; unknown files are refused
    assert client.post(f"/api/threads/{thread_id}/review", json={"action": "reject"}).status_code == 422
    bad = client.post(f"/api/threads/{thread_id}/review",
                      json={"action": "edit", "files": {JOB: {"run.sh": "echo hi"}}})
    assert bad.status_code == 422
    assert client.post(f"/api/threads/{thread_id}/review", json={"action": "feedback"}).status_code == 422
    edited = text.replace("thermo          50\n", 'thermo          50\nprint           "SIMAGENT web edit"\n')
    assert edited != text
    response = client.post(f"/api/threads/{thread_id}/review",
                           json={"action": "edit", "files": {JOB: {"in.lammps": edited}}})
    assert response.status_code == 202
    until_idle(client, thread_id)
    view = client.get(f"/api/threads/{thread_id}").json()
    # as in the CLI: the edited inputs passed the pre-run check and are shown again for approval
    assert view["status"] == "review" and view["interrupt"]["files"][JOB]["in.lammps"] == edited
    client.post(f"/api/threads/{thread_id}/review", json={"action": "approve"})
    until_idle(client, thread_id)
    view = client.get(f"/api/threads/{thread_id}").json()
    assert view["status"] == "answered", view["error"]
    job_dir = settings.workdir.resolve() / thread_id / "jobs" / JOB
    assert "SIMAGENT web edit" in (job_dir / "in.lammps").read_text()
    assert "SIMAGENT web edit" in (job_dir / "log.lammps").read_text()  # LAMMPS ran the edited input
    assert any(c["handler"] == "reviewer" and "in.lammps" in c["action"] for c in view["answer"]["corrections"])


@pytest.mark.engine
def test_unsafe_edit_goes_through_the_same_checks_and_nothing_runs(client, settings):
    thread_id, _, view = ask(client, NICKEL, auto_approve=False)
    evil = view["interrupt"]["files"][JOB]["in.lammps"] + "\nshell rm -rf /tmp/something\n"
    client.post(f"/api/threads/{thread_id}/review", json={"action": "edit", "files": {JOB: {"in.lammps": evil}}})
    until_idle(client, thread_id)
    view = client.get(f"/api/threads/{thread_id}").json()
    assert view["status"] == "failed" and "shell" in view["answer"]["error"]
    assert not (settings.workdir.resolve() / thread_id / "jobs").exists()


@pytest.mark.engine
def test_feedback_then_abort(client):
    thread_id, _, view = ask(client, NICKEL, auto_approve=False)
    before = view["interrupt"]["files"][JOB]["in.lammps"]
    client.post(f"/api/threads/{thread_id}/review", json={"action": "feedback", "text": "use ftol = 1e-9 please"})
    until_idle(client, thread_id)
    view = client.get(f"/api/threads/{thread_id}").json()
    after = view["interrupt"]["files"][JOB]["in.lammps"]
    assert view["status"] == "review" and after != before and "1e-09" in after
    client.post(f"/api/threads/{thread_id}/review", json={"action": "abort"})
    until_idle(client, thread_id)
    view = client.get(f"/api/threads/{thread_id}").json()
    assert view["status"] == "failed" and "cancelled by the reviewer" in view["answer"]["error"]


def cli(args: list[str], settings, stdin: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_"))}
    env["SIMAGENT_CONFIG"] = os.environ["SIMAGENT_CONFIG"]
    env["SIMAGENT_BACKEND"] = "expert"  # the default would be the hybrid when the local model is installed
    return subprocess.run([SIMAGENT, *args, "--workdir", str(settings.workdir)], capture_output=True, text=True,
                          env=env, input=stdin, timeout=300)


@pytest.mark.slow  # two CLI processes (~20 s); the browser suite resumes a CLI thread in the fast suite
def test_web_and_cli_resume_each_others_threads(client, settings):
    # started in the CLI, waiting for an answer: answered in the web
    proc = cli(["ask", "--json", "--backend", "expert", "What is the lattice constant?"], settings)
    assert proc.returncode == 3, proc.stderr
    thread_id = json.loads(proc.stdout)["thread_id"]
    listed = {t["thread_id"]: t["status"] for t in client.get("/api/threads").json()["threads"]}
    assert listed == {thread_id: "clarification"}
    client.post(f"/api/threads/{thread_id}/reply", json={"reply": "fcc nickel with the Foiles EAM potential"})
    until_idle(client, thread_id)
    assert client.get(f"/api/threads/{thread_id}").json()["status"] == "review"  # the web reviews by default
    client.post(f"/api/threads/{thread_id}/review", json={"action": "approve"})
    until_idle(client, thread_id)
    assert client.get(f"/api/threads/{thread_id}").json()["status"] == "answered"

    # started in the web, waiting for review: approved by `simagent resume`
    web_thread, _, view = ask(client, NICKEL, auto_approve=False)
    assert view["status"] == "review"
    proc = cli(["resume", web_thread, "--yes", "--json", "--backend", "expert"], settings)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "answered"
    assert client.get(f"/api/threads/{web_thread}").json()["status"] == "answered"


@pytest.mark.engine
def test_interrupted_thread_is_resumed(client, monkeypatch):
    protocol = get_protocol("lammps/crystal_relax")
    original, calls = protocol.analyze, {"n": 0}

    def crash_once(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("simulated crash")
        return original(*args, **kwargs)

    monkeypatch.setattr(protocol, "analyze", crash_once)
    thread_id, events, view = ask(client, NICKEL, auto_approve=True)
    assert events[-1]["status"] == "failed" and "simulated crash" in events[-1]["error"]
    assert view["status"] == "interrupted"
    assert client.post(f"/api/threads/{thread_id}/resume", json={}).status_code == 202
    until_idle(client, thread_id, since=len(events))
    assert client.get(f"/api/threads/{thread_id}").json()["status"] == "answered"
    assert client.post(f"/api/threads/{thread_id}/resume", json={}).status_code == 409  # finished


def test_sessions_newest_first_and_a_cap_on_runs_at_once(client, settings):
    with Session(settings) as session:  # questions: checkpoints without engine runs
        first = session.ask("What is the lattice constant?").thread_id
        second = session.ask("What is the density?").thread_id
    listed = client.get("/api/threads").json()["threads"]
    assert [t["thread_id"] for t in listed] == [second, first]
    assert {t["status"] for t in listed} == {"clarification"}
    manager = client.app.state.manager
    manager.max_running = 0
    response = client.post(f"/api/threads/{first}/reply", json={"reply": "fcc nickel"})
    assert response.status_code == 429 and "runs are going on" in response.json()["detail"]
    assert not manager.running(first)


# ---------------------------------------------------------------------------------------------
# Security
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def finished(client, settings, tmp_path):
    """A thread with a run folder holding a file, a plot, and symlinks that lead outside it."""
    with Session(settings) as session:  # a question: a checkpoint and a run folder, no engine run
        outcome = session.ask("What is the lattice constant?")
    thread_id = outcome.thread_id
    root = settings.workdir.resolve() / thread_id
    (root / "jobs" / "a").mkdir(parents=True)
    (root / "jobs" / "a" / "in.lammps").write_text("units metal\n")
    (settings.workdir.resolve() / "secret.txt").write_text(SECRET)  # next to the run folder
    (tmp_path / "secret.txt").write_text(SECRET)
    (root / "link-out.txt").symlink_to(tmp_path / "secret.txt")
    (root / "dir-out").symlink_to(tmp_path)
    (root / "plot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    return thread_id


ESCAPES = [
    "../secret.txt", "..%2fsecret.txt", "%2e%2e/secret.txt", "%2e%2e%2fsecret.txt", "..%5csecret.txt",
    "%252e%252e%252fsecret.txt", "jobs/../../secret.txt", "jobs/%2e%2e/%2e%2e/secret.txt",
    "%2Fetc%2Fpasswd", "/etc/passwd", "//etc/passwd", "link-out.txt", "dir-out/secret.txt", "jobs",
    "secret.txt%00.png", "does-not-exist.txt", "",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_no_file_outside_the_run_folder_is_served(client, finished, path):
    response = client.get(f"/api/threads/{finished}/files/{path}")
    assert response.status_code == 404
    assert SECRET not in response.text and "root:" not in response.text


def test_files_inside_are_served_read_only_and_archive_skips_links(client, finished):
    png = client.get(f"/api/threads/{finished}/files/plot.png")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert client.get(f"/api/threads/{finished}/files/jobs/a/in.lammps").text == "units metal\n"
    assert client.get(f"/api/threads/{finished}/files/jobs%2Fa%2Fin.lammps").text == "units metal\n"
    listed = client.get(f"/api/threads/{finished}/files").json()["files"]
    assert "plot.png" in listed and "link-out.txt" not in listed and not any(f.startswith("dir-out") for f in listed)
    for method in ("put", "delete", "post"):  # read-only: no write method is routed
        response = client.request(method, f"/api/threads/{finished}/files/plot.png", json={})
        assert response.status_code == 405
    assert client.get(f"/api/threads/{finished}/files/plot.png").status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(client.get(f"/api/threads/{finished}/archive").content))
    assert "link-out.txt" not in " ".join(archive.namelist()) and "dir-out" not in " ".join(archive.namelist())
    assert all(SECRET.encode() not in archive.read(name) for name in archive.namelist())


def test_a_run_folder_that_is_a_symlink_out_is_not_served(client, settings, tmp_path):
    with Session(settings) as session:
        thread_id = session.ask("What is the lattice constant?").thread_id
    root = settings.workdir.resolve() / thread_id
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "answer.json").write_text(SECRET)
    for item in root.iterdir():
        item.unlink()
    root.rmdir()
    root.symlink_to(outside)
    for suffix in ("/files/answer.json", "/files", "/archive"):
        response = client.get(f"/api/threads/{thread_id}{suffix}")
        assert response.status_code == 404 and SECRET not in response.text
    assert client.get(f"/api/threads/{thread_id}").json()["files"] == []


BAD_IDS = ["nope", "..", "..%2f..", "%2e%2e", "t..x", ".hidden", "a" * 200]


@pytest.mark.parametrize("thread_id", BAD_IDS)
@pytest.mark.parametrize("method, suffix", [
    ("get", ""), ("get", "/events"), ("get", "/files"), ("get", "/files/answer.json"), ("get", "/archive"),
    ("post", "/reply"), ("post", "/review"), ("post", "/resume"),
])
def test_bad_thread_id_is_a_clear_404(client, thread_id, method, suffix):
    body = {"reply": "x"} if suffix == "/reply" else {"action": "approve"} if suffix == "/review" else {}
    kwargs = {"json": body} if method == "post" else {}
    response = getattr(client, method)(f"/api/threads/{thread_id}{suffix}", **kwargs)
    assert response.status_code == 404
    if thread_id in ("nope", "t..x"):
        assert response.json()["detail"] == f"no run with thread id {thread_id!r}"


def test_no_cors_and_same_origin_writes(client):
    evil = {"origin": "https://evil.example"}
    assert "access-control-allow-origin" not in client.get("/api/threads", headers=evil).headers
    preflight = client.options("/api/threads", headers={**evil, "access-control-request-method": "POST"})
    assert "access-control-allow-origin" not in preflight.headers
    assert client.post("/api/threads", json={"request": NICKEL}, headers=evil).status_code == 403
    # a form post (what a foreign page can send without a preflight) is refused
    form = client.post("/api/threads", content="request=x",
                       headers={"content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415
    assert client.get("/api/threads").json()["threads"] == []  # nothing started
    page = client.get("/")
    assert page.status_code == 200 and "simagent" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/static/../app.py").status_code == 404


def test_only_loopback_host_names_without_a_token(client, settings):
    """DNS rebinding: a foreign name pointed at 127.0.0.1 reaches the port but gets nothing."""
    for host in ("evil.example", "evil.example:8765", "127.0.0.1.evil.example"):
        response = client.get("/api/threads", headers={"host": host})
        assert response.status_code == 421 and "threads" not in response.text
    for host in ("localhost:8765", "[::1]:8765", "127.0.0.1"):
        assert client.get("/api/threads", headers={"host": host}).status_code == 200
    token = "a-long-enough-token-value"
    with TestClient(create_app(settings, token=token), base_url="http://simagent.lab.example") as c:
        assert c.get("/api/threads", headers={"authorization": f"Bearer {token}"}).status_code == 200


def test_request_size_limits(client):
    big = json.dumps({"request": "x" * (2 << 20)})
    assert client.post("/api/threads", content=big, headers={"content-type": "application/json"}).status_code == 413

    def chunks():  # no content-length: counted while read
        for _ in range(40):
            yield b"x" * 65536

    chunked = client.post("/api/threads", content=chunks(), headers={"content-type": "application/json"})
    assert chunked.status_code == 413
    too_long = client.post("/api/threads", json={"request": "x" * 5000})
    assert too_long.status_code == 422
    assert client.post("/api/threads", json={"request": ""}).status_code == 422
    assert client.get("/api/threads").json()["threads"] == []


def test_token_guards_the_api(settings):
    token = "correct-horse-battery-staple"
    with TestClient(create_app(settings, token=token), base_url="http://0.0.0.0:8765") as c:
        assert c.get("/api/threads").status_code == 401
        assert c.get("/api/threads", headers={"authorization": "Bearer wrong-token-wrong-token"}).status_code == 401
        assert c.get("/api/threads", headers={"authorization": f"Bearer {token}"}).status_code == 200
        assert c.get("/").status_code == 200  # the page itself asks for the token
        assert c.post("/api/login", json={"token": "nope"}).status_code == 401
        login = c.post("/api/login", json={"token": token})
        assert login.status_code == 200 and "httponly" in login.headers["set-cookie"].lower()
        assert c.get("/api/threads").status_code == 200  # the cookie now


def test_binding_beyond_loopback_needs_a_token():
    check_bind("127.0.0.1", None)
    check_bind("::1", None)
    check_bind("localhost", None)
    for host in ("0.0.0.0", "192.0.2.7", "::"):
        with pytest.raises(Exception, match="needs a token"):
            check_bind(host, None)
    with pytest.raises(Exception, match="at least 16"):
        check_bind("0.0.0.0", "short")
    check_bind("0.0.0.0", "a-long-enough-token-value")


def test_cli_web_refuses_a_public_bind_without_token(settings, monkeypatch, capsys):
    from simagent import cli as cli_module

    monkeypatch.delenv("SIMAGENT_WEB_TOKEN", raising=False)
    monkeypatch.setattr(sys, "argv", ["simagent", "web", "--host", "0.0.0.0", "--workdir", str(settings.workdir)])
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main()
    err = capsys.readouterr().err
    assert exit_info.value.code != 0 and "needs a token" in err and "Traceback" not in err


def test_cli_web_never_logs_the_token(settings):
    """A real server on loopback: the token works and appears in none of its output."""
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = "s3cret-token-that-must-not-leak"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_"))}
    env.update(SIMAGENT_CONFIG=os.environ["SIMAGENT_CONFIG"], SIMAGENT_WEB_TOKEN=token)
    server = subprocess.Popen([SIMAGENT, "web", "--port", str(port), "--workdir", str(settings.workdir),
                               "--backend", "expert"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(base + "/", timeout=2).read()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "server did not start"
                time.sleep(0.2)
        request = urllib.request.Request(f"{base}/api/threads?token={token}",
                                         headers={"authorization": f"Bearer {token}"})
        assert json.loads(urllib.request.urlopen(request, timeout=10).read())["threads"] == []
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/api/threads", timeout=10)
        assert refused.value.code == 401
    finally:
        server.terminate()
        out, err = server.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/" in err
    assert token not in out and token not in err
