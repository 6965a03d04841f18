"""Read-only access to one run folder: a relative path is served only when it resolves (symlinks
followed) to a regular file inside the folder; archives stream the folder as a zip and skip
anything that leads outside it."""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

THREAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")
TEXT_SUFFIXES = {".lammps", ".in", ".data", ".json", ".csv", ".dat", ".txt", ".log", ".mdp", ".top", ".itp",
                 ".gro", ".def", ".cif", ".md", ".yaml", ".xyz", ".out", ".err", ".eam", ".alloy", ".fs",
                 ".pdb", ".input", ".ndx", ".tersoff", ".sw", ".meam", ".mol", ".xvg"}
MAX_LISTED = 500


class OutsideRunFolder(Exception):
    """The path does not name a file inside the run folder."""


def valid_thread_id(thread_id: str) -> bool:
    return bool(THREAD_ID.fullmatch(thread_id)) and ".." not in thread_id


def run_folder(workdir: Path, thread_id: str) -> Path:
    """workdir/<thread id>, resolved, and only if it lies inside workdir."""
    if not valid_thread_id(thread_id):
        raise OutsideRunFolder(thread_id)
    base = workdir.resolve()
    root = (base / thread_id).resolve()
    if root.parent != base:
        raise OutsideRunFolder(thread_id)
    return root


def inside(root: Path, candidate: Path) -> bool:
    try:
        candidate.resolve(strict=True).relative_to(root)
    except (OSError, ValueError, RuntimeError):
        return False
    return True


def safe_file(root: Path, relative: str) -> Path:
    """The regular file `relative` names inside root; OutsideRunFolder for anything else
    (absolute paths, '..', symlinks out of the folder, NUL bytes, folders, missing files)."""
    if not relative or "\x00" in relative or relative.startswith(("/", "\\")) or Path(relative).is_absolute():
        raise OutsideRunFolder(relative)
    if any(part == ".." for part in re.split(r"[\\/]", relative)):
        raise OutsideRunFolder(relative)
    path = root / relative
    if not inside(root, path):
        raise OutsideRunFolder(relative)
    resolved = path.resolve(strict=True)
    if not resolved.is_file():
        raise OutsideRunFolder(relative)
    return resolved


def media_type(path: Path) -> str:
    if path.suffix.lower() == ".png":
        return "image/png"
    return "text/plain; charset=utf-8"


def is_viewable(path: Path) -> bool:
    name = path.name.lower()
    return path.suffix.lower() in TEXT_SUFFIXES or path.suffix.lower() == ".png" or name.startswith(
        ("in.", "log.", "data.")) or "." not in name


def list_files(root: Path) -> list[str]:
    """Relative paths of the viewable files of the run folder (no symlinks leading out)."""
    found: list[str] = []
    if not root.is_dir():
        return found
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            if name.startswith(".") or not inside(root, path) or not is_viewable(path):
                continue
            found.append(path.relative_to(root).as_posix())
            if len(found) >= MAX_LISTED:
                return found
    return found


class _Sink:
    """A write-only file object whose bytes the archive generator hands out as they come."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.offset = 0

    def write(self, data: bytes) -> int:
        self.chunks.append(bytes(data))
        self.offset += len(data)
        return len(data)

    def tell(self) -> int:
        return self.offset

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        out = b"".join(self.chunks)
        self.chunks.clear()
        return out


def zip_stream(root: Path, prefix: str) -> Iterator[bytes]:
    """The run folder as a zip, streamed file by file (no temporary archive on disk). Symlinks
    and anything resolving outside the folder are left out."""
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as archive:  # type: ignore[arg-type]
        for folder, dirs, files in os.walk(root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not (Path(folder) / d).is_symlink())
            for name in sorted(files):
                path = Path(folder) / name
                if path.is_symlink() or not inside(root, path) or not path.is_file():
                    continue
                arcname = f"{prefix}/{path.relative_to(root).as_posix()}"
                with path.open("rb") as source, archive.open(arcname, "w", force_zip64=True) as target:
                    while chunk := source.read(1 << 16):
                        target.write(chunk)
                        if sink.chunks:
                            yield sink.take()
                yield sink.take()
    yield sink.take()
