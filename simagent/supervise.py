"""A small supervisor per job: the engine dies with the process that owns it.

Every engine command runs as `python -m simagent.supervise JOB_DIR [--owner PID:START] -- CMD...`
in its own process group (the executor's preexec makes the supervisor a session leader). The
supervisor

- asks the kernel for SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG) and, with --owner,
  also watches an owner that is not its parent (a Parsl worker pool started by a batch system);
- records itself in JOB_DIR/process.json (pid, start time in clock ticks since boot, boot id, host,
  owner) and refreshes JOB_DIR/process.heartbeat every HEARTBEAT_S, so a later `simagent resume`,
  on this host or another one sharing the folder, can tell whether the job's process is still alive;
- on SIGTERM/SIGINT/SIGHUP or owner death stops the whole process group (engine, MPI ranks, the
  GROMACS driver's mdrun), and after a normal exit kills strays left in the group;
- exits like the engine did (same code, or the same signal), so the executor's record is unchanged.

Standard library only and no simagent imports: it starts in a few tens of milliseconds.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

PROCESS_FILE = "process.json"
HEARTBEAT_FILE = "process.heartbeat"
HEARTBEAT_S = 2.0
POLL_S = 0.25
PR_SET_PDEATHSIG = 1
GRACE_S = 5.0


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def start_ticks(pid: int) -> int | None:
    """Start time of a process in clock ticks after boot (/proc/PID/stat field 22); None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    if fields[0] == b"Z":  # a zombie has finished
        return None
    return int(fields[19])


def same_process_alive(pid: int, ticks: int | None) -> bool:
    """True when process `pid` exists and is the one that started at `ticks` (not a reused pid)."""
    now = start_ticks(pid)
    return now is not None and (ticks is None or now == ticks)


def _set_parent_death_signal(sig: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the owner watch below still applies
        pass


def group_processes(pgid: int) -> dict[int, list[bytes]]:
    """pid -> /proc/PID/stat fields after the command name (state, ppid, pgrp, ...) of the group's
    processes."""
    found = {}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            found[int(name)] = fields
    return found


def _group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of the group other than this one."""
    return [pid for pid, fields in group_processes(pgid).items() if pid != os.getpid() and fields[0] != b"Z"]


def _stop_group(pgid: int, grace_s: float = GRACE_S) -> None:
    """SIGTERM to everything in the group but us, then SIGKILL to what is left after grace_s."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 0.0)):
        members = _group_members(pgid)
        if not members:
            return
        for pid in members:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _group_members(pgid):
            time.sleep(0.05)


def _parse_owner(text: str | None) -> tuple[int, int | None] | None:
    if not text:
        return None
    pid, _, ticks = text.partition(":")
    return int(pid), (int(ticks) if ticks else None)


def main(argv: list[str]) -> int:
    if "--" not in argv or len(argv) < 3:
        print("usage: python -m simagent.supervise JOB_DIR [--owner PID[:START]] -- CMD ...", file=sys.stderr)
        return 2
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    job_dir = Path(options[0])
    owner = _parse_owner(options[options.index("--owner") + 1]) if "--owner" in options else None
    parent = os.getppid()
    _set_parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent or (owner and not same_process_alive(*owner)):
        return 128 + signal.SIGTERM  # the owner died before we were set up: start nothing
    if os.getpgid(0) != os.getpid():
        os.setpgid(0, 0)  # started without the executor's preexec: lead a group of our own
    pgid = os.getpgid(0)

    stopping: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        stopping.append(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        child = subprocess.Popen(command)  # same group, inherits the job's stdout/stderr files
    except OSError as exc:
        print(f"simagent.supervise: could not start {command[0]}: {exc}", file=sys.stderr)
        return 127
    owner_pid, owner_ticks = owner if owner else (parent, start_ticks(parent))
    record = {"supervisor_pid": os.getpid(), "supervisor_start": start_ticks(os.getpid()), "pgid": pgid,
              "engine_pid": child.pid, "boot_id": boot_id(), "host": socket.gethostname(),
              "owner_pid": owner_pid, "owner_start": owner_ticks, "command": command,
              "started": time.time()}
    tmp = job_dir / (PROCESS_FILE + ".tmp")
    tmp.write_text(json.dumps(record, indent=2))
    tmp.replace(job_dir / PROCESS_FILE)
    heartbeat = job_dir / HEARTBEAT_FILE
    code: int | None = None
    last_beat = 0.0
    while code is None:
        if time.monotonic() - last_beat >= HEARTBEAT_S:
            heartbeat.touch()
            last_beat = time.monotonic()
        if stopping or (owner and not same_process_alive(owner_pid, owner_ticks)):
            _stop_group(pgid)
            code = child.wait()
            break
        try:
            code = child.wait(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            continue
    _stop_group(pgid, grace_s=1.0)  # strays the engine left in the group
    try:
        heartbeat.unlink()
    except OSError:
        pass
    if code < 0:  # die of the same signal, so the owner's record reads like the engine's
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        time.sleep(1.0)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
