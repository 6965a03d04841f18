"""The structure library: what the user calls a framework -> one checked, P1 crystal structure on disk.
Used by the engines (tools/) and the graph's nodes (agents/) alike.

A name is resolved, in this order, as: a path to the user's CIF; a canonical reference written by
this module ("CoRE2019-ASR:FIQCEN_clean", "RASPA:IRMOF-1"); a curated common name or synonym
(forcefields/mof_synonyms.json, e.g. HKUST-1 = Cu-BTC -> FIQCEN); a CoRE MOF 2019 entry name; a
CSD REFCODE; a structure shipped with RASPA. A name that fits several structures raises
AmbiguousStructure with the candidates (the graph asks instead of guessing); an unknown one raises
RequestError. Every structure passes `check_cif` before any engine sees it.

CoRE MOF 2019 (PyPI `core-mof`: ASR/FSR CIFs in two single-block tar.xz files plus CSV tables of
Zeo++ properties) is read lazily: the first look-up of a dataset builds a small name -> offset index
(one pass), later look-ups decompress only up to the requested member, and every CIF taken out is
cached under ~/.cache/simagent/coremof (or $SIMAGENT_CACHE/coremof).
"""

from __future__ import annotations

import csv
import difflib
import importlib.util
import json
import lzma
import os
import re
import tarfile
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from simagent import paths
from simagent.errors import RequestError
from simagent.paths import forcefields_dir

# ---------------------------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------------------------

CORE_DATASETS = {"ASR": "2019-ASR", "FSR": "2019-FSR"}
CORE_LABEL = {
    "2019-ASR": "CoRE MOF 2019 ASR (all solvent removed)",
    "2019-FSR": "CoRE MOF 2019 FSR (free solvent removed, bound solvent kept)",
}
CORE_CITATION = ("Chung et al., J. Chem. Eng. Data 64, 5985 (2019), doi:10.1021/acs.jced.9b00835; "
                 "PyPI core-mof 2019.1")
# Default dataset: ASR (solvent-free frameworks, open metal sites exposed) is the usual choice for
# pore geometry and adsorption screening; FSR only on request ("FSR", "with bound solvent").
DEFAULT_DATASET = "2019-ASR"
# Among several CoRE entries of one REFCODE in one dataset, prefer the curation with the least
# manual change: plain cleaning first (CoRE suffixes, Chung et al. 2019, SI section S1).
SUFFIX_PREFERENCE = ["clean", "freeONLY", "clean_h", "SL", "auto", "manual", "charged", "ion_b"]
REF_PREFIX = {"2019-ASR": "CoRE2019-ASR", "2019-FSR": "CoRE2019-FSR"}
REFCODE = re.compile(r"^[A-Z]{6}(\d{2})?$")

# Table columns of the CoRE CSV files -> our property names (units in the header of each column;
# the column "cm3_g" is the crystal density in g/cm3, despite its name).
CORE_COLUMNS = {
    "LCD": ("largest_cavity_diameter", "angstrom"),
    "PLD": ("pore_limiting_diameter", "angstrom"),
    "LFPD": ("largest_free_sphere", "angstrom"),
    "cm3_g": ("density", "g/cm^3"),
    "ASA_m2_cm3": ("accessible_surface_area_volumetric", "m^2/cm^3"),
    "ASA_m2_g": ("accessible_surface_area", "m^2/g"),
    "NASA_m2_cm3": ("non_accessible_surface_area_volumetric", "m^2/cm^3"),
    "NASA_m2_g": ("non_accessible_surface_area", "m^2/g"),
    "AV_VF": ("void_fraction", "dimensionless"),
    "AV_cm3_g": ("accessible_volume", "cm^3/g"),
    "NAV_cm3_g": ("non_accessible_volume", "cm^3/g"),
}


def cache_dir() -> Path:
    """Where extracted CIFs live (simagent.paths.cache_dir)."""
    return paths.cache_dir()


def core_data_dir() -> Path:
    spec = importlib.util.find_spec("CoRE_MOF")
    if spec is None or not spec.submodule_search_locations:
        raise RequestError("the CoRE MOF 2019 database is not installed: `pip install core-mof==2019.1` "
                           "in simagent's venv (or give the path to a CIF file)")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@cache
def core_table(dataset: str) -> dict[str, dict[str, str]]:
    """CoRE CSV rows by entry name (file name without .cif), as strings."""
    path = core_data_dir() / f"{dataset}.csv"
    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        rows = {}
        for row in reader:
            if row and row[0]:
                rows[row[0]] = {key: value.strip() for key, value in zip(header, row, strict=False) if key}
    return rows


@cache
def _lower_names() -> dict[str, list[tuple[str, str]]]:
    """lower-case entry name -> [(dataset, exact name)] over both datasets."""
    names: dict[str, list[tuple[str, str]]] = {}
    for dataset in CORE_DATASETS.values():
        for name in core_table(dataset):
            names.setdefault(name.lower(), []).append((dataset, name))
    return names


def core_reference_values(dataset: str, entry: str) -> dict[str, float]:
    """The database's own Zeo++ values for an entry, keyed by our property names (see CORE_COLUMNS)."""
    row = core_table(dataset).get(entry, {})
    values = {}
    for column, (name, _unit) in CORE_COLUMNS.items():
        try:
            values[name] = float(row[column])
        except (KeyError, ValueError):
            continue
    return values


# -- lazy extraction from the tar.xz ---------------------------------------------------------------


def _archive(dataset: str) -> Path:
    return core_data_dir() / f"{dataset}.tar.xz"


def _index_path(dataset: str) -> Path:
    return cache_dir() / "coremof" / f"{dataset}.index.json"


def _cached_cif(dataset: str, entry: str) -> Path:
    return cache_dir() / "coremof" / dataset / f"{entry}.cif"


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def _archive_stamp(dataset: str) -> list[int]:
    stat = _archive(dataset).stat()
    return [stat.st_size, int(stat.st_mtime)]


def _load_index(dataset: str) -> dict[str, list[int]] | None:
    path = _index_path(dataset)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return None
    if data.get("archive") != _archive_stamp(dataset):
        return None  # a different core-mof build: rebuild
    return data["members"]


def _build_index(dataset: str, wanted: set[str]) -> dict[str, list[int]]:
    """One streaming pass over the archive: entry -> [offset, size] in the uncompressed tar; the
    wanted entries are written to the cache on the way."""
    members: dict[str, list[int]] = {}
    with tarfile.open(_archive(dataset), "r|xz") as tar:
        for member in tar:
            if not member.isfile() or not member.name.endswith(".cif"):
                continue
            entry = Path(member.name).name[: -len(".cif")]
            if entry.startswith("."):
                continue
            members[entry] = [member.offset_data, member.size]
            if entry in wanted:
                handle = tar.extractfile(member)
                if handle is not None:
                    _write_atomic(_cached_cif(dataset, entry), handle.read())
    path = _index_path(dataset)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"archive": _archive_stamp(dataset), "members": members}))
    tmp.replace(path)
    return members


def extract_core_cifs(dataset: str, entries: Iterable[str]) -> dict[str, Path]:
    """Cached CIF paths of CoRE entries; missing ones are taken out of the archive in one pass that
    stops after the last requested member (xz streams cannot seek, so this is the cheapest way)."""
    entries = list(dict.fromkeys(entries))
    paths = {e: _cached_cif(dataset, e) for e in entries}
    todo = {e for e, p in paths.items() if not p.is_file()}
    if not todo:
        return paths
    index = _load_index(dataset)
    if index is None:
        index = _build_index(dataset, todo)
        todo = {e for e in todo if not paths[e].is_file()}
    unknown = sorted(e for e in todo if e not in index)
    if unknown:
        raise RequestError(f"no CIF for {', '.join(unknown)} in the {CORE_LABEL[dataset]} archive")
    spans = sorted((index[e][0], index[e][1], e) for e in todo)
    position, chunk = 0, 1 << 22  # position: offset of buffer[0] in the uncompressed tar
    with lzma.open(_archive(dataset)) as stream:
        buffer = b""
        for offset, size, entry in spans:
            while position + len(buffer) < offset + size:
                data = stream.read(chunk)
                if not data:
                    raise RequestError(f"the {dataset} archive ended before {entry}.cif (corrupt install?)")
                drop = min(len(buffer), max(0, offset - position))  # members are sorted: never needed again
                buffer = buffer[drop:] + data
                position += drop
            start = offset - position
            _write_atomic(paths[entry], buffer[start:start + size])
    return paths


# -- RASPA's structure library (optional: only when the raspa2 wheel is installed) ------------------


@lru_cache(maxsize=1)
def raspa_package_dir() -> Path | None:
    """The installed RASPA2 package folder (found without importing it: the import loads nothing we
    need and prints warnings when Open Babel is missing)."""
    spec = importlib.util.find_spec("RASPA2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def raspa_share_dir() -> Path | None:
    """RASPA's data folder (share/raspa: structures/cif, structures/block, forcefield, molecules):
    $RASPA_DIR/share/raspa (RASPA's own variable) if it exists, else the RASPA2 package's. The one
    place it is looked up (tools.raspa.engine uses it too)."""
    candidates = [Path(os.environ["RASPA_DIR"]) / "share" / "raspa"] if os.environ.get("RASPA_DIR") else []
    root = raspa_package_dir()
    if root is not None:
        candidates.append(root / "share" / "raspa")
    return next((c for c in candidates if c.is_dir()), None)


def raspa_structure_dir() -> Path | None:
    share = raspa_share_dir()
    folder = share / "structures" / "cif" if share is not None else None
    return folder if folder is not None and folder.is_dir() else None


def _raspa_cif(name: str) -> Path | None:
    """A CIF of RASPA's library by file name; a three-letter IZA zeolite code ('MFI') also finds the
    all-silica form RASPA ships ('MFI_SI')."""
    folder = raspa_structure_dir()
    if folder is None:
        return None
    wanted = {_key(name)} | ({_key(name) + "si"} if re.fullmatch(r"[A-Za-z]{3}", name) else set())
    for path in sorted(folder.glob("*.cif")):
        if path.stem == name or _key(path.stem) in wanted:
            return path
    return None


# Material names of all-silica zeolites -> their IZA framework code (RASPA ships the all-silica
# forms, e.g. MFI_SI). Only names that mean the all-silica material: ZSM-5 (an aluminosilicate MFI)
# is not Silicalite-1.
ZEOLITE_MATERIALS = {"silicalite-1": "MFI", "silicalite": "MFI"}

# Words that describe a framework without naming it: 'the all-silica zeolite MFI' names MFI.
DESCRIPTIVE = re.compile(r"^(?:the|a|an)\s+|\b(?:all|pure)[- ]silica\b|\bsiliceous\b|\bzeolite\b|\bframework\b",
                         re.IGNORECASE)


# ---------------------------------------------------------------------------------------------
# Curated names
# ---------------------------------------------------------------------------------------------


def _key(name: str) -> str:
    """Comparison key: lower case, letters and digits only ('Cu-BTC', 'cu btc', 'CuBTC' -> 'cubtc')."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


@lru_cache(maxsize=1)
def synonyms_table() -> dict:
    return json.loads((forcefields_dir() / "mof_synonyms.json").read_text())


@lru_cache(maxsize=1)
def _synonym_index() -> dict[str, dict]:
    index = {}
    for record in synonyms_table()["frameworks"]:
        for name in [record["name"], *record.get("synonyms", [])]:
            index[_key(name)] = record
    return index


def framework_names() -> list[str]:
    """Every curated name and synonym (for recognising frameworks in request text)."""
    names = []
    for record in synonyms_table()["frameworks"]:
        names += [record["name"], *record.get("synonyms", [])]
    return names + list(ZEOLITE_MATERIALS)


# ---------------------------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------------------------


class ResolvedStructure(BaseModel):
    """One structure, ready for the checks and the engines, and how it was chosen."""

    query: str = Field(description="what the user called it")
    id: str = Field(description="structure ID: the CIF file name without .cif (never data_)")
    ref: str = Field(description="canonical reference that resolves to this structure again")
    name: str = Field(description="display name, e.g. 'HKUST-1 (CoRE MOF 2019 ASR FIQCEN_clean)'")
    source: str
    dataset: str | None = None
    refcode: str | None = None
    path: str
    how: str = Field(description="the rule that chose it")
    candidates: list[str] = Field(default_factory=list, description="other structures that also fit")
    citation: str = ""
    reference_values: dict[str, float] = Field(
        default_factory=dict, description="the database's own Zeo++ values (CoRE columns), for comparison"
    )


class AmbiguousStructure(RequestError):
    """A name that fits several structures; the candidates make the clarification question."""

    def __init__(self, query: str, candidates: list[str], hint: str = "") -> None:
        self.query = query
        self.candidates = candidates
        listing = "; ".join(candidates)
        super().__init__(f"'{query}' is ambiguous: it can mean {listing}. {hint}".strip())


def _dataset_from(prefer: str | None) -> str | None:
    if prefer is None:
        return None
    key = prefer.upper().replace("2019-", "")
    if key not in CORE_DATASETS:
        raise RequestError(f"unknown CoRE MOF dataset {prefer!r}: use ASR or FSR")
    return CORE_DATASETS[key]


def _core_resolution(query: str, dataset: str, entry: str, how: str, *, common: str | None = None,
                     candidates: list[str] | None = None, citation: str = "", fetch: bool = True) -> ResolvedStructure:
    path = extract_core_cifs(dataset, [entry])[entry] if fetch else _cached_cif(dataset, entry)
    refcode = entry[:6] if REFCODE.match(entry.split("_")[0]) else None
    label = CORE_LABEL[dataset].split(" (")[0]
    name = f"{common} ({label} entry {entry})" if common else f"{label} entry {entry}"
    return ResolvedStructure(
        query=query, id=entry, ref=f"{REF_PREFIX[dataset]}:{entry}", name=name, source=CORE_LABEL[dataset],
        dataset=dataset, refcode=refcode, path=str(path), how=how, candidates=candidates or [],
        citation="; ".join(c for c in (citation, CORE_CITATION) if c),
        reference_values=core_reference_values(dataset, entry),
    )


def _suffix_rank(entry: str, refcode: str) -> int:
    suffix = entry[len(refcode) + 1:]
    return SUFFIX_PREFERENCE.index(suffix) if suffix in SUFFIX_PREFERENCE else len(SUFFIX_PREFERENCE)


def refcode_entries(refcode: str) -> dict[str, list[str]]:
    """CoRE entries whose name is the REFCODE followed by '_' + a curation suffix, per dataset."""
    found: dict[str, list[str]] = {}
    for dataset in CORE_DATASETS.values():
        hits = [name for name in core_table(dataset) if name.startswith(refcode + "_")]
        if hits:
            found[dataset] = sorted(hits, key=lambda e: (_suffix_rank(e, refcode), e))
    return found


def numbered_variants(refcode: str) -> list[str]:
    """Entries of later CSD determinations of the same compound: REFCODE01_..., REFCODE02_..."""
    pattern = re.compile(rf"^{refcode}\d\d_")
    seen = []
    for dataset in CORE_DATASETS.values():
        seen += [name for name in core_table(dataset) if pattern.match(name) and name not in seen]
    return sorted(seen)


def _by_refcode(query: str, refcode: str, dataset: str | None, fetch: bool = True) -> ResolvedStructure | None:
    """Rule: entries named exactly REFCODE_<suffix>; dataset ASR unless asked; then the suffix order
    of SUFFIX_PREFERENCE. Without an exact entry, several numbered re-determinations are ambiguous."""
    found = refcode_entries(refcode)
    order = [dataset] if dataset else [DEFAULT_DATASET, *[d for d in CORE_DATASETS.values() if d != DEFAULT_DATASET]]
    for ds in order:
        if ds in found:
            entry = found[ds][0]
            others = [f"{REF_PREFIX[d]}:{e}" for d, es in found.items() for e in es if (d, e) != (ds, entry)]
            how = (f"CSD REFCODE {refcode}: CoRE entry named {refcode}_<suffix> in "
                   f"{CORE_LABEL[ds].split(' (')[0]} (rule: ASR before FSR unless asked, then suffix order "
                   f"{', '.join(SUFFIX_PREFERENCE[:4])}...)")
            return _core_resolution(query, ds, entry, how, candidates=others, fetch=fetch)
    variants = numbered_variants(refcode)
    if len(variants) == 1:
        entry = variants[0]
        ds = next(d for d in CORE_DATASETS.values() if entry in core_table(d))
        return _core_resolution(query, ds, entry, f"CSD REFCODE {refcode}: its only CoRE entry", fetch=fetch)
    if variants:
        raise AmbiguousStructure(query, variants[:12], "Give one of these CoRE entry names.")
    return None


def _from_record(query: str, record: dict, dataset: str | None, fetch: bool = True) -> ResolvedStructure:
    if record.get("ambiguous"):
        options = [f"{v['name']} ({v['entry']})" for v in record.get("variants", [])]
        raise AmbiguousStructure(query, options, record.get("note", "Say which one you mean."))
    entries = record["entries"]
    ds = dataset or (DEFAULT_DATASET if DEFAULT_DATASET in entries else next(iter(entries)))
    if ds not in entries:
        raise RequestError(f"{record['name']} has no {ds} entry in CoRE MOF 2019; available: "
                           f"{', '.join(entries)}")
    entry = entries[ds]
    others = [f"{REF_PREFIX[d]}:{e}" for d, e in entries.items() if d != ds]
    others += [c for c in record.get("other_entries", []) if c not in others]
    how = f"common name {record['name']} -> CSD REFCODE {record['refcode']} (curated table " \
          f"forcefields/mof_synonyms.json: {record.get('rule', 'default entry')})"
    return _core_resolution(query, ds, entry, how, common=record["name"], candidates=others,
                            citation=record.get("citation", ""), fetch=fetch)


def resolve(query: str, dataset: str | None = None, fetch: bool = True) -> ResolvedStructure:
    """The structure a name, REFCODE, CoRE entry, canonical reference or CIF path stands for.

    dataset: "ASR" or "FSR" to prefer one CoRE dataset. fetch=False decides without taking the CIF
    out of the archive (`path` is where it will be cached). Raises AmbiguousStructure (several
    candidates) or RequestError (unknown, unreadable)."""
    text = (query or "").strip().strip("'\"")
    if not text:
        raise RequestError("no framework given: name a MOF (e.g. HKUST-1), a CSD REFCODE, a CoRE MOF entry "
                           "or the path to a CIF file")
    ds = _dataset_from(dataset)

    # 1. a file
    if text.lower().endswith(".cif") or os.sep in text:
        path = Path(text).expanduser()
        if not path.is_file():
            raise RequestError(f"no CIF file at {path}")
        path = path.resolve()
        return ResolvedStructure(query=query, id=path.stem, ref=str(path), name=f"{path.stem} (user CIF {path})",
                                 source="user CIF", path=str(path), how="path to a CIF file given in the request")

    # 2. canonical references written by this module
    prefix, _, rest = text.partition(":")
    if rest:
        upper = prefix.upper()
        for ds_name, ref_prefix in REF_PREFIX.items():
            if upper == ref_prefix.upper():
                if rest not in core_table(ds_name):
                    raise RequestError(f"no entry {rest!r} in {CORE_LABEL[ds_name]}")
                return _core_resolution(query, ds_name, rest, "canonical CoRE reference", fetch=fetch)
        if upper == "RASPA":
            path = _raspa_cif(rest)
            if path is None:
                raise RequestError(f"no structure {rest!r} in RASPA's library"
                                   + ("" if raspa_structure_dir() else " (the raspa2 package is not installed)"))
            return ResolvedStructure(query=query, id=path.stem, ref=f"RASPA:{path.stem}", name=f"{path.stem} (RASPA)",
                                     source="RASPA2 structure library", path=str(path),
                                     how="structure shipped with RASPA2", citation="RASPA 2.0.4 share/raspa/structures")

    # 3. curated common names and synonyms
    record = _synonym_index().get(_key(text))
    if record is not None:
        return _from_record(query, record, ds, fetch=fetch)

    # 3b. all-silica zeolite materials by name (Silicalite-1 is MFI)
    code = next((c for name, c in ZEOLITE_MATERIALS.items() if _key(name) == _key(text)), None)
    path = _raspa_cif(code) if code else None
    if path is not None:
        return ResolvedStructure(query=query, id=path.stem, ref=f"RASPA:{path.stem}", name=f"{path.stem} (RASPA)",
                                 source="RASPA2 structure library", path=str(path),
                                 how=f"{text} is the all-silica form of the {code} framework (IZA code); "
                                     "structure shipped with RASPA2", citation="RASPA 2.0.4 share/raspa/structures")

    # 4. exact CoRE entry name (case-insensitive)
    hits = _lower_names().get(text.lower(), [])
    if hits:
        pick = next(((d, e) for d, e in hits if d == ds), None) or next(
            ((d, e) for d, e in hits if d == DEFAULT_DATASET), hits[0])
        others = [f"{REF_PREFIX[d]}:{e}" for d, e in hits if (d, e) != pick]
        return _core_resolution(query, pick[0], pick[1], "CoRE MOF 2019 entry name", candidates=others, fetch=fetch)

    # 5. CSD REFCODE
    if REFCODE.match(text.upper()):
        found = _by_refcode(query, text.upper(), ds, fetch=fetch)
        if found is not None:
            return found

    # 6. RASPA's library
    path = _raspa_cif(text)
    if path is not None:
        return ResolvedStructure(query=query, id=path.stem, ref=f"RASPA:{path.stem}", name=f"{path.stem} (RASPA)",
                                 source="RASPA2 structure library", path=str(path),
                                 how="structure shipped with RASPA2", citation="RASPA 2.0.4 share/raspa/structures")

    core = re.sub(r"\s+", " ", DESCRIPTIVE.sub(" ", text)).strip()
    if core and core != text:
        return resolve(core, dataset, fetch)

    close = difflib.get_close_matches(text, framework_names(), n=4, cutoff=0.6)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise RequestError(
        f"unknown framework '{text}': not a known MOF name, CSD REFCODE, CoRE MOF 2019 entry or CIF file."
        f"{hint} Known names include {', '.join(n['name'] for n in synonyms_table()['frameworks'][:8])}; "
        "or give the path to a CIF file."
    )


# ---------------------------------------------------------------------------------------------
# Recognising frameworks in request text (used by the expert reader)
# ---------------------------------------------------------------------------------------------


@dataclass
class Mention:
    text: str
    start: int
    end: int
    kind: str  # "name", "cif", "core_entry", "refcode", "reference"
    candidates: list[str] = field(default_factory=list)


def _name_pattern(name: str) -> str:
    tokens = re.findall(r"[A-Za-z]+|\d+", name)
    body = r"[\s\-_()]*".join(re.escape(t.lower()) for t in tokens)
    closing = r"\)?" if name.rstrip().endswith(")") else ""
    return rf"(?<![a-z0-9]){body}{closing}(?![a-z0-9])"


@lru_cache(maxsize=1)
def _name_regex() -> re.Pattern[str]:
    names = sorted(set(framework_names()), key=lambda n: -len(_key(n)))
    return re.compile("|".join(f"({_name_pattern(n)})" for n in names))


def find_mentions(text: str) -> list[Mention]:
    """Framework mentions in free text: CIF paths, canonical references, curated names, CoRE entry
    names and REFCODEs that exist in CoRE MOF 2019. Ordered by position."""
    found: list[Mention] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    for match in re.finditer(r"(?<![\w/.~-])((?:~|\.{1,2})?[\w./~-]*[\w-]\.cif)\b", text, flags=re.IGNORECASE):
        found.append(Mention(match.group(1), match.start(1), match.end(1), "cif"))
        taken.append(match.span(1))
    for match in re.finditer(r"\b((?:CoRE2019-(?:ASR|FSR)|RASPA):[\w().+-]+)", text, flags=re.IGNORECASE):
        if free(*match.span(1)):
            found.append(Mention(match.group(1), match.start(1), match.end(1), "reference"))
            taken.append(match.span(1))
    low = text.lower()
    for match in _name_regex().finditer(low):
        start, end = match.span()
        if "(" in low[start:end] and ")" not in low[start:end] and low[end:end + 1] == ")":
            end += 1  # 'MIL-53(Al)' matched by the synonym 'MIL-53-Al': keep the closing parenthesis
        if free(start, end):
            found.append(Mention(text[start:end], start, end, "name"))
            taken.append((start, end))
    try:
        names = _lower_names()
    except RequestError:  # CoRE MOF not installed: names and CIF paths only
        return sorted(found, key=lambda m: m.start)
    for match in re.finditer(r"\b([A-Za-z0-9][\w.+-]*_[\w.+-]+)\b", text):
        if free(*match.span(1)) and match.group(1).lower() in names:
            found.append(Mention(match.group(1), match.start(1), match.end(1), "core_entry"))
            taken.append(match.span(1))
    for match in re.finditer(r"\b([A-Z]{6}(?:\d\d)?)\b", text):
        code = match.group(1)
        if free(*match.span(1)) and (refcode_entries(code) or numbered_variants(code)):
            found.append(Mention(code, match.start(1), match.end(1), "refcode"))
            taken.append(match.span(1))
    return sorted(found, key=lambda m: m.start)


# ---------------------------------------------------------------------------------------------
# CIF checks
# ---------------------------------------------------------------------------------------------

OVERLAP_DISTANCE = 0.5  # angstrom: closer atoms are duplicates or a disorder model, never bonds
TRIPLE_BOND_MAX = 1.25  # angstrom: C-N/C-C/C-O shorter than this is a triple bond (cyanide, alkyne, CO)
BOND_TOLERANCE = 1.15  # bonded if d < 1.15 (r_cov,i + r_cov,j) (ase covalent radii, Cordero 2008)
CHARGE_TOLERANCE = 1e-2  # e per cell


class CifCheck(BaseModel):
    """What `check_cif` found. Problems stop a run; warnings are reported with the answer."""

    path: str
    id: str
    formula: str = ""
    n_atoms: int = 0
    problems: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    energy_problems: list[str] = Field(
        default_factory=list, description="problems that stop energy-based runs (adsorption, MD) but not pure "
        "geometry, e.g. overlapping atoms of a disorder model: Zeo++ measures the pores the CIF describes")

    @property
    def ok(self) -> bool:
        return not self.problems


def _read_structure(path: Path):
    """pymatgen structure (symmetry expanded, conventional: never primitive) or a readable error."""
    from pymatgen.io.cif import CifParser

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            parser = CifParser(str(path), occupancy_tolerance=1.0)
            structures = parser.parse_structures(primitive=False)
        except Exception as err:  # noqa: BLE001 - any parser failure means an unreadable file
            detail = str(err).strip() or type(err).__name__
            messages = "; ".join(m for m in dict.fromkeys(str(w.message).splitlines()[0] for w in caught)
                                 if m not in detail and "Issues encountered" not in m)
            raise RequestError(f"{path.name} is not a readable CIF: {detail}"
                               + (f" ({messages})" if messages else "")) from None
    if not structures:
        raise RequestError(f"{path.name} is not a readable CIF: no structure in it")
    notes = [str(w.message).splitlines()[0] for w in caught]
    return structures[0], parser, notes


def _cif_charges(parser) -> dict[str, float]:
    """Label -> charge from _atom_site_charge (empty when the CIF carries no charges)."""
    charges = {}
    for block in parser._cif.data.values():  # noqa: SLF001 - pymatgen keeps the parsed CIF here
        data = block.data
        if "_atom_site_charge" in data and "_atom_site_label" in data:
            for label, charge in zip(data["_atom_site_label"], data["_atom_site_charge"], strict=False):
                try:
                    charges[label] = float(re.sub(r"\(.*\)", "", charge))
                except ValueError:
                    continue
    return charges


def check_cif(path: str | Path) -> tuple[CifCheck, object | None]:
    """Checks before any run; returns the report and the pymatgen Structure (None if unreadable).

    Problems: unreadable file, no atoms, overlapping atoms (< OVERLAP_DISTANCE), partial
    occupancies, a net charge when charges are given, carbon that looks like it lacks hydrogens
    (C with < 3 bonded neighbours, not in a triple bond, while the structure has no H at all)."""
    from ase.data import atomic_numbers, covalent_radii

    path = Path(path)
    report = CifCheck(path=str(path), id=path.stem)
    if not path.is_file():
        report.problems.append(f"no file at {path}")
        return report, None
    try:
        structure, parser, notes = _read_structure(path)
    except RequestError as err:
        report.problems.append(str(err))
        return report, None
    report.n_atoms = len(structure)
    report.formula = structure.composition.hill_formula if len(structure) else ""
    if not len(structure):
        report.problems.append(f"{path.name}: no atoms")
        return report, structure
    report.warnings += [f"pymatgen: {n}" for n in dict.fromkeys(notes)
                        if "fractional coordinates" not in n and "stoichiometry check" not in n]

    if not structure.is_ordered:
        report.problems.append(f"{path.name}: partial occupancies (a disorder model); keep one "
                               "configuration before computing pore geometry or adsorption")
        return report, structure

    centres, neighbours, _images, distances = structure.get_neighbor_list(OVERLAP_DISTANCE)
    pairs = sorted({(min(i, j), max(i, j), round(float(d), 3)) for i, j, d in zip(centres, neighbours, distances,
                                                                                  strict=True)})
    if pairs:
        def label(i: int) -> str:
            return getattr(structure[i], "label", None) or f"{structure[i].specie}{i + 1}"

        shown = ", ".join(f"{label(i)}-{label(j)} {d:.2f} A" for i, j, d in pairs[:5])
        report.energy_problems.append(f"{path.name}: {len(pairs)} pair(s) of overlapping atoms closer than "
                                      f"{OVERLAP_DISTANCE} A ({shown}); duplicated atoms or an unresolved disorder "
                                      "model")

    symbols = {el.symbol for el in structure.composition.elements}
    if "C" in symbols and "H" not in symbols:
        radii = {s: float(covalent_radii[atomic_numbers[s]]) for s in symbols}
        cutoff = BOND_TOLERANCE * 2 * max(radii.values())
        c_idx, n_idx, _im, dist = structure.get_neighbor_list(cutoff)
        bonded: dict[int, int] = {}
        triple: set[int] = set()
        for i, j, d in zip(c_idx, n_idx, dist, strict=True):
            si, sj = structure[i].specie.symbol, structure[j].specie.symbol
            if si != "C":
                continue
            if d < BOND_TOLERANCE * (radii[si] + radii[sj]):
                bonded[i] = bonded.get(i, 0) + 1
                if d < TRIPLE_BOND_MAX and sj in ("C", "N", "O"):
                    triple.add(i)
        carbons = [i for i, site in enumerate(structure) if site.specie.symbol == "C"]
        under = [i for i in carbons if bonded.get(i, 0) < 3 and i not in triple]
        if under:
            report.problems.append(
                f"{path.name}: no hydrogen atoms, and {len(under)} of {len(carbons)} carbon atoms have fewer "
                "than 3 bonded neighbours: the hydrogens are probably missing (X-ray structures often omit "
                "them); add them before computing pore geometry or adsorption"
            )

    charges = _cif_charges(parser)
    if charges:
        total, unknown = 0.0, 0
        for site in structure:
            label = getattr(site, "label", None)
            if label in charges:
                total += charges[label]
            else:
                unknown += 1
        if unknown:
            report.warnings.append(f"{path.name}: {unknown} atoms without a charge in _atom_site_charge")
        elif abs(total) > CHARGE_TOLERANCE:
            report.problems.append(f"{path.name}: the framework charges sum to {total:+.4f} e per cell, not 0")
    return report, structure


Purpose = Literal["energy", "geometry"]


def checked(resolved: ResolvedStructure, purpose: Purpose = "energy") -> tuple[CifCheck, object]:
    """check_cif on a resolved structure; raises RequestError (naming the structure) on problems.

    purpose 'geometry' (Zeo++ pore geometry, what the CoRE tables themselves report) lets the
    energy problems through as warnings; 'energy' (adsorption, MD: overlapping atoms give absurd
    energies) refuses them and names what to use instead."""
    report, structure = check_cif(resolved.path)
    if report.problems:
        raise RequestError(f"{resolved.name} did not pass the structure checks: " + "; ".join(report.problems))
    if report.energy_problems and purpose == "geometry":
        report.warnings += [f"{p}; the pore geometry is computed for the structure as the CIF gives it"
                            for p in report.energy_problems]
    elif report.energy_problems:
        raise RequestError(f"{resolved.name} did not pass the structure checks for an energy-based run: "
                           + "; ".join(report.energy_problems) + ". " + cleaner_structure_hint(resolved)
                           + " Pure pore geometry (Zeo++) of this CIF can still be computed.")
    return report, structure


def cleaner_structure_hint(resolved: ResolvedStructure) -> str:
    """What to use instead of a structure with a disorder model: the CoRE FSR entry of the same
    REFCODE when there is one, else a cleaned CIF."""
    if resolved.refcode:
        fsr = refcode_entries(resolved.refcode).get(CORE_DATASETS["FSR"], [])
        others = [e for e in fsr if e != resolved.id]
        if others:
            return (f"Try the CoRE MOF 2019 FSR entry {REF_PREFIX[CORE_DATASETS['FSR']]}:{others[0]}, or give a "
                    "cleaned CIF (one configuration of the disorder kept).")
        return (f"CoRE MOF 2019 FSR has no other entry for {resolved.refcode}: give a cleaned CIF (one "
                "configuration of the disorder kept).")
    return "Give a cleaned CIF (one configuration of the disorder kept, duplicated atoms removed)."


def structure_question(name: str | None) -> str:
    """Clarification question for an ambiguous or missing framework, listing the candidates."""
    generic = ("Which framework do you mean? Give a MOF name (e.g. HKUST-1, UiO-66, ZIF-8), a CSD REFCODE, a "
               "CoRE MOF 2019 entry name (e.g. FIQCEN_clean) or the path to a CIF file.")
    if not name:
        return generic
    try:
        resolve(name, fetch=False)
    except AmbiguousStructure as err:
        return f"'{name}' can mean several structures: {'; '.join(err.candidates)}. Which one?"
    except RequestError as err:
        return f"{err} {generic}"
    return generic
