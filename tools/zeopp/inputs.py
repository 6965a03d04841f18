"""Zeo++ inputs: a plain P1 CIF that Zeo++'s reader accepts, and the worker's settings file.

Zeo++ aborts the whole process on a species with an oxidation state ("Unable to find radius for
Cu2+"), so the CIF carries element symbols only. The cell is used as given (re-symmetrising a CoRE
structure shifts PLD and AV slightly), symmetry is expanded by pymatgen (never reduced to a
primitive cell), and atoms are written in P1 with unique labels.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

CIF_NAME = "framework.cif"
SETTINGS_NAME = "zeopp.json"
# displacement that breaks exact Voronoi degeneracies of high-symmetry cells (a known Zeo++ trap)
NUDGE_ANGSTROM = 1e-3
NUDGE_SEED = 20190  # fixed: the nudged structure is reproducible


@dataclass
class P1Cell:
    name: str
    a: float
    b: float
    c: float
    alpha: float
    beta: float
    gamma: float
    symbols: list[str]
    frac: list[tuple[float, float, float]]


def from_structure(structure, name: str) -> P1Cell:
    """pymatgen Structure -> P1Cell with plain element symbols (oxidation states dropped)."""
    lattice = structure.lattice
    symbols = [site.specie.symbol if hasattr(site.specie, "symbol") else re.sub(r"[^A-Za-z]", "", str(site.specie))
               for site in structure]
    frac = [tuple(float(x) for x in site.frac_coords) for site in structure]
    return P1Cell(name, lattice.a, lattice.b, lattice.c, lattice.alpha, lattice.beta, lattice.gamma, symbols, frac)


def write_cif(cell: P1Cell) -> str:
    data_name = re.sub(r"[^A-Za-z0-9_.-]", "_", cell.name) or "framework"
    lines = [
        f"data_{data_name}",
        "_symmetry_space_group_name_H-M    'P 1'",
        "_symmetry_Int_Tables_number       1",
        f"_cell_length_a    {cell.a:.6f}",
        f"_cell_length_b    {cell.b:.6f}",
        f"_cell_length_c    {cell.c:.6f}",
        f"_cell_angle_alpha {cell.alpha:.6f}",
        f"_cell_angle_beta  {cell.beta:.6f}",
        f"_cell_angle_gamma {cell.gamma:.6f}",
        "loop_",
        "_symmetry_equiv_pos_as_xyz",
        "  x,y,z",
        "loop_",
        "_atom_site_label",
        "_atom_site_type_symbol",
        "_atom_site_fract_x",
        "_atom_site_fract_y",
        "_atom_site_fract_z",
    ]
    counts: dict[str, int] = {}
    for symbol, (x, y, z) in zip(cell.symbols, cell.frac, strict=True):
        counts[symbol] = counts.get(symbol, 0) + 1
        lines.append(f"{symbol}{counts[symbol]} {symbol} {x:.8f} {y:.8f} {z:.8f}")
    return "\n".join(lines) + "\n"


_TOKEN = re.compile(r"'[^']*'|\"[^\"]*\"|\S+")
_IDENTITY = {"x,y,z", "+x,+y,+z"}


def _number(token: str) -> float:
    return float(re.sub(r"\(\d*\)$", "", token))


def _cif_tags_and_loops(text: str) -> tuple[dict[str, str], list[tuple[list[str], list[str]]]]:
    """Plain tags and loops (headers, flat values) of the first data block; ';' text fields skipped."""
    tags: dict[str, str] = {}
    loops: list[tuple[list[str], list[str]]] = []
    headers: list[str] | None = None
    values: list[str] = []
    in_text_field = False
    blocks = 0

    def close() -> None:
        nonlocal headers, values
        if headers is not None:
            loops.append((headers, values))
        headers, values = None, []

    for raw in text.splitlines():
        if raw.startswith(";"):
            in_text_field = not in_text_field
            continue
        if in_text_field:
            continue
        line = raw.split("#", 1)[0].strip() if not raw.strip().startswith(("'", '"')) else raw.strip()
        if not line:
            continue
        if line.lower().startswith("data_"):
            blocks += 1
            if blocks > 1:
                break
            continue
        tokens = [t[1:-1] if t[0] in "'\"" and len(t) > 1 else t for t in _TOKEN.findall(line)]
        if tokens[0].lower() == "loop_":
            close()
            headers = []
            continue
        if tokens[0].startswith("_"):
            if headers is not None and not values:
                headers.append(tokens[0].lower())
                continue
            close()
            tags[tokens[0].lower()] = " ".join(tokens[1:])
            continue
        if headers is not None:
            values.extend(tokens)
    close()
    return tags, loops


def read_cif(text: str) -> P1Cell:
    """Cell and atoms of a P1 CIF (the worker needs no pymatgen). Raises ValueError when the file
    has symmetry operations besides the identity or lacks what Zeo++ needs."""
    tags, loops = _cif_tags_and_loops(text)
    for headers, values in loops:
        key = next((h for h in headers if h in ("_symmetry_equiv_pos_as_xyz", "_space_group_symop_operation_xyz")),
                   None)
        if key:
            column = headers.index(key)
            ops = {values[i].replace(" ", "").lower() for i in range(column, len(values), len(headers))}
            if ops - _IDENTITY:
                raise ValueError(f"{len(ops)} symmetry operations: not a P1 file")
    atoms = next(((h, v) for h, v in loops if "_atom_site_fract_x" in h), None)
    if atoms is None:
        raise ValueError("no _atom_site_fract_x loop")
    headers, values = atoms
    width = len(headers)
    if len(values) % width:
        raise ValueError("the atom loop has a ragged last row")
    x, y, z = (headers.index(f"_atom_site_fract_{c}") for c in "xyz")
    column = headers.index("_atom_site_type_symbol" if "_atom_site_type_symbol" in headers else "_atom_site_label")
    symbols, frac = [], []
    for start in range(0, len(values), width):
        row = values[start:start + width]
        element = re.match(r"[A-Za-z][a-z]?", row[column])
        if element is None:
            raise ValueError(f"no element in {row[column]!r}")
        symbols.append(element.group(0).capitalize())
        frac.append((_number(row[x]), _number(row[y]), _number(row[z])))
    name = next((line.strip()[5:] for line in text.splitlines() if line.strip().lower().startswith("data_")),
                "framework")
    cell = [_number(tags[f"_cell_{k}"]) for k in ("length_a", "length_b", "length_c", "angle_alpha", "angle_beta",
                                                   "angle_gamma")]
    return P1Cell(name, *cell, symbols, frac)


def verbatim_ok(text: str) -> tuple[bool, str]:
    """Whether Zeo++ can read a CIF exactly as given: P1, an _atom_site_type_symbol column of plain
    element symbols (no oxidation states, which abort Zeo++). Passing the file untouched keeps the
    atom order and digits, so Monte Carlo results repeat a database's own Zeo++ run."""
    from ase.data import chemical_symbols

    try:
        tags, loops = _cif_tags_and_loops(text)
        cell = read_cif(text)
    except (ValueError, KeyError, AttributeError) as err:
        return False, f"not readable as a plain P1 CIF ({err})"
    atoms = next(h for h, _v in loops if "_atom_site_fract_x" in h)
    if "_atom_site_type_symbol" not in atoms:
        return False, "no _atom_site_type_symbol column"
    headers, values = next((h, v) for h, v in loops if "_atom_site_fract_x" in h)
    column = headers.index("_atom_site_type_symbol")
    raw = [values[i] for i in range(column, len(values), len(headers))]
    odd = sorted({t for t in raw if t not in chemical_symbols[1:]})
    if odd:
        return False, f"type symbols {', '.join(odd[:4])} are not plain element symbols"
    if not cell.symbols:
        return False, "no atoms"
    return True, "P1 file passed to Zeo++ as given"


def cell_matrix(cell: P1Cell) -> list[list[float]]:
    """Rows: cell vectors, a along x and b in the xy plane (Zeo++'s orientation)."""
    ca, cb, cg = (math.cos(math.radians(x)) for x in (cell.alpha, cell.beta, cell.gamma))
    sg = math.sin(math.radians(cell.gamma))
    cy = (ca - cb * cg) / sg
    cz = math.sqrt(max(0.0, 1 - cb * cb - cy * cy))
    return [[cell.a, 0.0, 0.0], [cell.b * cg, cell.b * sg, 0.0], [cell.c * cb, cell.c * cy, cell.c * cz]]


def nudged(cell: P1Cell, distance: float = NUDGE_ANGSTROM, seed: int = NUDGE_SEED) -> P1Cell:
    """Every atom moved by `distance` angstrom in a random direction (fixed seed)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    steps = rng.normal(size=(len(cell.frac), 3))
    steps *= distance / np.linalg.norm(steps, axis=1, keepdims=True)
    moved = np.array(cell.frac) + steps @ np.linalg.inv(np.array(cell_matrix(cell)))
    return P1Cell(cell.name, cell.a, cell.b, cell.c, cell.alpha, cell.beta, cell.gamma, list(cell.symbols),
                  [tuple(float(x) for x in row) for row in moved])
