"""Published LAMMPS parameter files as OpenKIM's Debian package embeds them (package openkim-models,
installed by `make setup`).

Each KIM item (a portable model MO_... or a simulator model SM_...) is one shared library under
/usr/lib/x86_64-linux-gnu/kim-api/{portable-models,simulator-models}/<item>/. Its build embeds the
item's original files as ELF data: a dynamic symbol named after the file (every character other
than a letter, digit or '_' turned into '_': Al99.eam.alloy -> Al99_eam_alloy) and `<symbol>_len`,
the file's length. The symbol `kimprovenance_edn` holds the item's history; its newest event lists
the original file names with their SHA-1 checksums, `kimspec_edn` the item's metadata (the source
citation), `kimcite_<id>_bib` its citation as BibTeX.

This module reads those symbols with pyelftools, mapping a symbol's address to a file offset
through the library's PT_LOAD segments; the libraries are never loaded (no code of theirs runs).
It indexes the embedded files by their original names (once per process), extracts one into a
folder with its SHA-1 verified (a mismatch is an error, never a file), and says where it came from.
`SIMAGENT_KIM_MODELS` points at another kim-api collection folder (one holding portable-models/
and/or simulator-models/).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

from simagent.errors import RequestError

KIM_ENV = "SIMAGENT_KIM_MODELS"
DEBIAN_KIM = Path("/usr/lib/x86_64-linux-gnu/kim-api")
KINDS = ("portable-models", "simulator-models")
_CACHE_VERSION = 1
PACKAGE = "openkim-models"
INSTALL_HINT = (f"install Debian's {PACKAGE} package (`make setup` does: apt-get install "
                f"--no-install-recommends {PACKAGE}), or set {KIM_ENV} to a kim-api collection folder")

_PAIR = re.compile(r'\s*"((?:[^"\\]|\\.)*)"\s+"((?:[^"\\]|\\.)*)"')  # "key" "value" of an EDN map
# Item files that are metadata, not parameter files (the build embeds kimspec.edn as kimspec_edn too)
_NOT_PARAMETERS = re.compile(r"^(CMakeLists\.txt|LICENSE.*|README.*|kimspec\.edn|kimprovenance\.edn|kimcite-.*\.bib)$")


class KimFileError(RequestError):
    """An embedded file that cannot be found or whose content does not match its published SHA-1."""


@dataclass(frozen=True)
class EmbeddedFile:
    """One original parameter file inside a KIM item's library."""

    name: str  # the original file name (Al99.eam.alloy)
    sha1: str  # its SHA-1 as the item's provenance records it
    size: int  # bytes
    item: str  # the KIM item (EAM_Dynamo_MishinFarkasMehl_1999_Al__MO_651801486679_005)
    library: Path
    symbol: str  # the ELF symbol holding it


@dataclass(frozen=True)
class KimProvenance:
    """Where an embedded file comes from: the KIM item, its package and the published source."""

    item: str
    kim_id: str  # MO_651801486679_005 / SM_...
    package: str  # "openkim-models 1:2021.01.28-2" (version when dpkg knows it)
    citation: str  # short: "Mishin et al., Physical Review B 59, 3393 (1999), doi:10.1103/PhysRevB.59.3393"
    bibtex: str  # the item's kimcite BibTeX ('' when the item has none)

    def line(self) -> str:
        return f"KIM item {self.item} ({self.package}); {self.citation}"


@dataclass(frozen=True)
class ExtractedFile:
    path: Path
    file: EmbeddedFile
    provenance: KimProvenance


def kim_models_dir() -> Path | None:
    """The kim-api collection folder ($SIMAGENT_KIM_MODELS, else Debian's), or None when neither holds models."""
    stated = os.environ.get(KIM_ENV)
    folder = Path(stated) if stated else DEBIAN_KIM
    return folder if any((folder / kind).is_dir() for kind in KINDS) else None


# ---------------------------------------------------------------------------------------------
# Reading a library's data symbols
# ---------------------------------------------------------------------------------------------


class _Library:
    """The dynamic data symbols of one shared library (read lazily, never loaded)."""

    def __init__(self, path: Path, handle: BinaryIO) -> None:
        from elftools.elf.elffile import ELFFile

        self.path = path
        self.handle = handle
        self.elf = ELFFile(handle)
        table = self.elf.get_section_by_name(".dynsym")
        self.symbols = {s.name: s for s in table.iter_symbols() if s.name} if table is not None else {}
        self.loads = [(s["p_vaddr"], s["p_filesz"], s["p_offset"]) for s in self.elf.iter_segments()
                      if s["p_type"] == "PT_LOAD"]

    def _bytes_at(self, address: int, size: int) -> bytes:
        for vaddr, filesz, offset in self.loads:
            if vaddr <= address and address + size <= vaddr + filesz:
                self.handle.seek(offset + address - vaddr)
                data = self.handle.read(size)
                if len(data) == size:
                    return data
        raise KimFileError(f"{self.path}: {size} bytes at 0x{address:x} lie outside its loaded segments")

    def length(self, name: str) -> int | None:
        """The value of `<name>_len` (little-endian), or None when the library has no such symbol."""
        sym = self.symbols.get(name + "_len")
        if sym is None or name not in self.symbols:
            return None
        return int.from_bytes(self._bytes_at(sym["st_value"], sym["st_size"]), "little")

    def data(self, name: str) -> bytes | None:
        size = self.length(name)
        return None if size is None else self._bytes_at(self.symbols[name]["st_value"], size)

    def text(self, name: str) -> str:
        data = self.data(name)
        return data.decode("utf-8", errors="replace") if data else ""


def symbol_name(file: str) -> str:
    """The ELF symbol the KIM build gives an embedded file: Al99.eam.alloy -> Al99_eam_alloy."""
    return re.sub(r"[^0-9A-Za-z_]", "_", file)


def edn_strings(text: str, opening: str) -> dict[str, str]:
    """The string-to-string pairs of the first EDN map that follows `opening` (a regex ending at
    its '{'), read pair by pair up to its first entry that is not a string pair."""
    start = re.search(opening, text)
    if start is None:
        return {}
    pairs, pos = {}, start.end()
    while hit := _PAIR.match(text, pos):
        pairs[hit.group(1)] = hit.group(2)
        pos = hit.end()
    return pairs


def newest_checksums(provenance: str) -> dict[str, str]:
    """{file name: SHA-1} of the newest event of a kimprovenance.edn (events are listed newest first)."""
    return edn_strings(provenance, r'"checksums"\s*\{')


def _library_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("lib*.so"))


def _embedded(path: Path) -> list[EmbeddedFile]:
    """The parameter files one library embeds: the newest provenance event's files that have a symbol."""
    out = []
    with open(path, "rb") as handle:
        try:
            lib = _Library(path, handle)
            checksums = newest_checksums(lib.text("kimprovenance_edn"))
            for name, sha in checksums.items():
                symbol = symbol_name(name)
                size = lib.length(symbol)
                if size is not None and not _NOT_PARAMETERS.match(name):
                    out.append(EmbeddedFile(name=name, sha1=sha.lower(), size=size, item=path.parent.name,
                                            library=path, symbol=symbol))
        except Exception:  # noqa: BLE001 - not an ELF library (or a damaged one): it embeds nothing usable
            return []
    return out


def _stamp(path: Path) -> list[int]:
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns]


def _cache_file(root: Path) -> Path:
    from simagent.paths import cache_dir

    return cache_dir() / "kim" / f"index-{hashlib.sha1(str(root).encode()).hexdigest()[:12]}.json"


def _read_cache(path: Path) -> dict[str, dict]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data.get("libraries", {}) if data.get("version") == _CACHE_VERSION else {}


def _write_cache(path: Path, libraries: dict[str, dict]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps({"version": _CACHE_VERSION, "libraries": libraries}))
        partial.replace(path)
    except OSError:
        pass  # a read-only cache folder: the index is rebuilt next time


@lru_cache(maxsize=4)
def _index(root: Path) -> dict[str, tuple[EmbeddedFile, ...]]:
    """Reading every library's symbols takes seconds (pyelftools parses each header in Python), so
    each library's entries are kept in the cache folder with its size and mtime and re-read only
    when the library changed."""
    cache = _cache_file(root)
    cached = _read_cache(cache)
    libraries: dict[str, dict] = {}
    found: dict[str, list[EmbeddedFile]] = {}
    for kind in KINDS:
        folder = root / kind
        if not folder.is_dir():
            continue
        for item_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            for path in _library_files(item_dir):
                key, stamp = str(path), _stamp(path)
                known = cached.get(key)
                if known is None or known.get("stamp") != stamp:
                    known = {"stamp": stamp, "files": [[e.name, e.sha1, e.size, e.symbol] for e in _embedded(path)]}
                libraries[key] = known
                for name, sha, size, symbol in known["files"]:
                    found.setdefault(name, []).append(EmbeddedFile(name=name, sha1=sha, size=size, item=item_dir.name,
                                                                   library=path, symbol=symbol))
    if libraries != cached:
        _write_cache(cache, libraries)
    return {name: tuple(entries) for name, entries in found.items()}


def embedded_files() -> dict[str, tuple[EmbeddedFile, ...]]:
    """Every embedded parameter file of the installed collection by its original name (several
    items may embed a file of the same name); empty when no collection is installed. Built once
    per process and collection folder, from the cache folder's copy for libraries that did not change."""
    root = kim_models_dir()
    return _index(root.resolve()) if root is not None else {}


def find(name: str) -> EmbeddedFile | None:
    """The embedded file of this name (exact spelling, else the only one that matches in any case).
    Several items may embed it: when they agree on its SHA-1 the first is taken (portable models
    before simulator models, then by item name); when their contents differ, a name alone does not
    say which is meant and KimFileError says which items hold it."""
    index = embedded_files()
    entries = index.get(name)
    if entries is None:
        matches = [k for k in index if k.lower() == name.lower()]
        if len(matches) != 1:
            return None
        entries = index[matches[0]]
    if len({e.sha1 for e in entries}) > 1:
        held = "; ".join(f"{e.item} (SHA-1 {e.sha1})" for e in entries)
        raise KimFileError(f"{name} is embedded with different contents in several KIM items: {held}")
    return entries[0]


def require_collection() -> Path:
    root = kim_models_dir()
    if root is None:
        where = os.environ.get(KIM_ENV) or str(DEBIAN_KIM)
        raise KimFileError(f"no OpenKIM model collection at {where}: {INSTALL_HINT}")
    return root


def extract(name: str, folder: Path) -> ExtractedFile:
    """Write the embedded file `name` into `folder` under its original name, its SHA-1 checked
    against the item's provenance. Raises KimFileError when the collection is not installed, no
    item embeds the file, or the bytes do not match (then nothing is written)."""
    require_collection()
    entry = find(name)
    if entry is None:
        raise KimFileError(f"no installed OpenKIM item embeds a file named {name}")
    with open(entry.library, "rb") as handle:
        try:
            data = _Library(entry.library, handle).data(entry.symbol)
        except KimFileError:
            raise
        except Exception as err:  # noqa: BLE001 - a damaged library
            raise KimFileError(f"{entry.library} cannot be read as an ELF library: {err}") from err
    if data is None:
        raise KimFileError(f"{entry.library} no longer holds the symbol {entry.symbol} ({name})")
    digest = hashlib.sha1(data).hexdigest()
    if digest != entry.sha1:
        raise KimFileError(f"{name} in {entry.library} has SHA-1 {digest}, but the item's provenance "
                           f"records {entry.sha1}: the library was altered; not written")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / entry.name
    partial = folder / f".{entry.name}.partial"
    partial.write_bytes(data)
    shutil.move(partial, target)
    return ExtractedFile(path=target, file=entry, provenance=provenance(entry))


def sha1_of(path: Path) -> str:
    return hashlib.sha1(Path(path).read_bytes()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Provenance
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def package_version() -> str | None:
    """openkim-models' Debian version, when dpkg knows it (None for a collection elsewhere)."""
    if os.environ.get(KIM_ENV) or not shutil.which("dpkg-query"):
        return None
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", PACKAGE], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _kim_id(item: str) -> str:
    hit = re.search(r"__((?:MO|SM)_\d{12}_\d{3})$", item)
    return hit.group(1) if hit else item


def _source_citation(spec: str) -> str:
    """'First author et al., Journal volume, first page (year), doi:...' from kimspec.edn's first source citation."""
    fields = edn_strings(spec, r'"source-citations"\s*\[\s*\{')
    if not fields:
        return ""
    authors = [a.strip() for a in fields.get("author", "").split(" and ") if a.strip()]
    first = authors[0].split(",")[0].strip() if authors else ""
    who = f"{first} et al." if len(authors) > 2 else " and ".join(a.split(",")[0].strip() for a in authors)
    where = " ".join(x for x in (fields.get("journal", ""), fields.get("volume", "")) if x)
    page = fields.get("pages", "").split("-")[0].strip()
    text = ", ".join(x for x in (who, where, page) if x)
    if fields.get("year"):
        text += f" ({fields['year']})"
    if fields.get("doi"):
        text += f", doi:{fields['doi']}"
    return text


def provenance(entry: EmbeddedFile) -> KimProvenance:
    """The KIM item of an embedded file, the package and the item's published source."""
    kim_id = _kim_id(entry.item)
    with open(entry.library, "rb") as handle:
        lib = _Library(entry.library, handle)
        spec = lib.text("kimspec_edn")
        bib_symbol = next((s for s in lib.symbols if s.startswith("kimcite_") and s.endswith("_bib")), None)
        bibtex = lib.text(bib_symbol) if bib_symbol else ""
    version = package_version()
    package = f"{PACKAGE} {version}" if version else PACKAGE
    title = re.search(r'"title"\s+"((?:[^"\\]|\\.)*)"\s*\}\s*$', spec)
    citation = _source_citation(spec) or (title.group(1) if title else entry.item)
    return KimProvenance(item=entry.item, kim_id=kim_id, package=package, citation=citation, bibtex=bibtex)
