"""Framework structures for RASPA: where a CIF comes from, what it holds, how big the simulation cell
must be, and the P1 copy written into each job folder.

Every job gets its own P1 CIF whose atom labels are the pseudo-atom names of the chosen force field, so
RASPA never applies symmetry operations, label rules or oxidation-state parsing of its own."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from ase.data import atomic_masses, atomic_numbers

from simagent.errors import InputError, RequestError
from simagent.materials import structures

AVOGADRO = 6.02214076e23
# Two framework atoms closer than this are a broken CIF (duplicated sites, unremoved disorder).
MIN_ATOM_DISTANCE_A = 0.5
# Si/Al-O bonds in zeolites are ~1.6-1.75 A: an O within this distance of an Al is typed Oa.
AL_O_BOND_A = 2.0
# Charges summing to more than this (in e per unit cell) are not a neutral framework.
MAX_NET_CHARGE = 1e-3


@dataclass(frozen=True)
class FrameworkStructure:
    """A framework read from a CIF, expanded to P1, in the cell the file gives."""

    name: str
    cell: np.ndarray  # 3x3 rows a, b, c in angstrom
    symbols: list[str]
    fractional: np.ndarray  # N x 3
    charges: np.ndarray | None  # per atom (e), None when the CIF carries none

    @property
    def volume_A3(self) -> float:
        return float(abs(np.linalg.det(self.cell)))

    @property
    def mass_g_per_mol(self) -> float:
        """Mass of one unit cell (g/mol), from standard atomic masses."""
        return float(sum(atomic_masses[atomic_numbers[s]] for s in self.symbols))

    @property
    def density_g_cm3(self) -> float:
        return self.mass_g_per_mol / AVOGADRO / (self.volume_A3 * 1e-24)

    @property
    def elements(self) -> list[str]:
        return sorted(set(self.symbols))

    @property
    def has_charges(self) -> bool:
        return self.charges is not None and bool(np.any(np.abs(self.charges) > 1e-8))


def read_cif(path: Path, name: str | None = None) -> FrameworkStructure:
    """Read a CIF (any space group) with ASE and expand it to P1; partial charges come from
    `_atom_site_charge` when present (mapped through the symmetry expansion). Cached per file
    version: protocols read the same CIF for parameters, jobs and analysis."""
    path = Path(path)
    if not path.is_file():
        raise RequestError(f"framework file {path} does not exist")
    stat = path.stat()
    return _read_cif(str(path.resolve()), stat.st_mtime_ns, stat.st_size, name or path.stem)


@lru_cache(maxsize=32)
def _read_cif(path_text: str, _mtime_ns: int, _size: int, name: str) -> FrameworkStructure:
    import ase.io
    import ase.io.cif

    path = Path(path_text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ASE warns about crystal-system settings it does not use
        try:
            atoms = ase.io.read(path, format="cif")
            blocks = list(ase.io.cif.parse_cif(str(path)))
        except Exception as err:  # noqa: BLE001 - any parser failure means an unusable file
            raise InputError(f"could not read the CIF {path}: {err}") from None
    block = blocks[0][1] if isinstance(blocks[0], tuple) else blocks[0]
    occupancy = block.get("_atom_site_occupancy")
    if occupancy is not None and any(_number(o) < 0.999 for o in occupancy):
        raise InputError(f"{path.name} has partial occupancies; resolve the disorder first (a P1 CIF with "
                         "full sites is needed for adsorption simulations)")
    charges = None
    raw = block.get("_atom_site_charge")
    if raw is not None and "spacegroup_kinds" in atoms.arrays:
        per_site = np.array([_number(q) for q in raw], dtype=float)
        kinds = atoms.arrays["spacegroup_kinds"]
        if len(per_site) > int(kinds.max()):
            charges = per_site[kinds]
    structure = FrameworkStructure(
        name=name,
        cell=np.array(atoms.cell[:], dtype=float),
        symbols=list(atoms.get_chemical_symbols()),
        fractional=np.mod(atoms.get_scaled_positions(wrap=True), 1.0),
        charges=charges,
    )
    _check_geometry(structure, path)
    return structure


def _number(text: object) -> float:
    """CIF numbers may carry an uncertainty in brackets: '0.123(4)'."""
    if isinstance(text, int | float):
        return float(text)
    return float(str(text).split("(")[0])


def _check_geometry(structure: FrameworkStructure, path: Path) -> None:
    if not structure.symbols:
        raise InputError(f"{path.name} contains no atoms")
    if structure.volume_A3 < 1.0:
        raise InputError(f"{path.name} has a degenerate cell (volume {structure.volume_A3:.3g} A^3)")
    distance = shortest_distance(structure)
    if distance < MIN_ATOM_DISTANCE_A:
        raise InputError(f"{path.name}: two atoms are {distance:.2f} A apart (duplicated or disordered sites); "
                         "clean the structure first")


def shortest_distance(structure: FrameworkStructure) -> float:
    """Shortest interatomic distance under periodic boundaries (minimum image on a 3x3x3 grid)."""
    cart = structure.fractional @ structure.cell
    shifts = np.array([[i, j, k] for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1)]) @ structure.cell
    best = math.inf
    step = max(1, 2_000_000 // (27 * len(cart)))  # bounded memory for large frameworks
    for start in range(0, len(cart), step):
        chunk = cart[start:start + step]
        diff = chunk[:, None, None, :] - cart[None, :, None, :] + shifts[None, None, :, :]
        dist = np.linalg.norm(diff, axis=-1)
        for offset in range(len(chunk)):
            dist[offset, start + offset, 13] = math.inf  # the atom itself, zero shift
        best = min(best, float(dist.min()))
    return best


# ---------------------------------------------------------------------------------------------
# Cell size
# ---------------------------------------------------------------------------------------------


def perpendicular_widths(cell: np.ndarray) -> np.ndarray:
    """Distances between opposite faces of the cell: w_a = V / |b x c| and cyclic (angstrom)."""
    a, b, c = np.asarray(cell, dtype=float)
    volume = abs(float(np.dot(a, np.cross(b, c))))
    return np.array([volume / np.linalg.norm(np.cross(b, c)),
                     volume / np.linalg.norm(np.cross(c, a)),
                     volume / np.linalg.norm(np.cross(a, b))])


def unit_cells_for_cutoff(cell: np.ndarray, cutoff_A: float) -> tuple[int, int, int]:
    """Smallest replication with every perpendicular width at least twice the cutoff (minimum image
    convention for a spherical cutoff in a triclinic box)."""
    widths = perpendicular_widths(cell)
    counts = [max(1, math.ceil(2.0 * cutoff_A / w - 1e-9)) for w in widths]
    return counts[0], counts[1], counts[2]


# ---------------------------------------------------------------------------------------------
# Where a framework comes from
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedFramework:
    name: str
    path: Path
    source: str  # how it was found, for the answer's method string


def resolve(structure: str) -> ResolvedFramework:
    """A checked framework CIF for what the user named, by the structure library
    (simagent.materials.structures: CIF paths, 'RASPA:<name>', MOF names and synonyms, CoRE MOF 2019 entries,
    REFCODEs, RASPA's library; ambiguous or failing structures raise RequestError)."""
    resolved = structures.resolve(structure.strip())
    structures.checked(resolved)
    how = f"{resolved.name}; {resolved.how}" + (f" ({resolved.citation})" if resolved.citation else "")
    return ResolvedFramework(resolved.id, Path(resolved.path), how)


# ---------------------------------------------------------------------------------------------
# Atom types and the P1 copy
# ---------------------------------------------------------------------------------------------


def aluminium_oxygens(structure: FrameworkStructure) -> set[int]:
    """Indices of O atoms bonded to an Al (typed Oa in zeolite force fields)."""
    al = [i for i, s in enumerate(structure.symbols) if s == "Al"]
    if not al:
        return set()
    cart = structure.fractional @ structure.cell
    inverse = np.linalg.inv(structure.cell)
    found = set()
    for i, symbol in enumerate(structure.symbols):
        if symbol != "O":
            continue
        delta = (cart[al] - cart[i]) @ inverse
        delta -= np.round(delta)
        if np.min(np.linalg.norm(delta @ structure.cell, axis=1)) < AL_O_BOND_A:
            found.add(i)
    return found


def p1_cif(structure: FrameworkStructure, labels: list[str], charges: np.ndarray) -> str:
    """P1 CIF text whose labels are pseudo-atom names; charges are written per atom."""
    a, b, c = np.linalg.norm(structure.cell, axis=1)
    va, vb, vc = structure.cell
    alpha = math.degrees(math.acos(np.dot(vb, vc) / (b * c)))
    beta = math.degrees(math.acos(np.dot(va, vc) / (a * c)))
    gamma = math.degrees(math.acos(np.dot(va, vb) / (a * b)))
    lines = [
        f"data_{structure.name}",
        "_audit_creation_method 'simagent tools.raspa: P1 copy with force-field atom types as labels'",
        f"_cell_length_a    {a:.6f}",
        f"_cell_length_b    {b:.6f}",
        f"_cell_length_c    {c:.6f}",
        f"_cell_angle_alpha {alpha:.6f}",
        f"_cell_angle_beta  {beta:.6f}",
        f"_cell_angle_gamma {gamma:.6f}",
        f"_cell_volume      {structure.volume_A3:.4f}",
        "_symmetry_space_group_name_H-M 'P 1'",
        "_symmetry_Int_Tables_number 1",
        "loop_",
        "_symmetry_equiv_pos_as_xyz",
        "  'x,y,z'",
        "loop_",
        "_atom_site_label",
        "_atom_site_type_symbol",
        "_atom_site_fract_x",
        "_atom_site_fract_y",
        "_atom_site_fract_z",
        "_atom_site_charge",
    ]
    for label, symbol, (x, y, z), q in zip(labels, structure.symbols, structure.fractional, charges, strict=True):
        lines.append(f"{label:<8s} {symbol:<3s} {x:.6f} {y:.6f} {z:.6f} {q: .6f}")
    return "\n".join(lines) + "\n"


def check_neutral(charges: np.ndarray, what: str) -> None:
    net = float(np.sum(charges))
    if abs(net) > MAX_NET_CHARGE:
        raise InputError(f"{what}: framework charges sum to {net:+.4f} e per unit cell; Ewald summation needs a "
                         "neutral framework")


# ---------------------------------------------------------------------------------------------
# Blocking pockets
# ---------------------------------------------------------------------------------------------

BlockingSphere = tuple[float, float, float, float]  # fractional a, b, c and radius (angstrom)


def block_file(spheres: list[BlockingSphere]) -> str:
    """RASPA .block text: number of pockets, then 'fa fb fc radius' per pocket."""
    lines = [str(len(spheres))] + [f"{a:.6f} {b:.6f} {c:.6f} {r:.4f}" for a, b, c, r in spheres]
    return "\n".join(lines) + "\n"


def read_block_file(path: Path) -> list[BlockingSphere]:
    """Spheres of a RASPA .block file (RASPA's own or one written by Zeo++ via tools.zeopp)."""
    lines = [line.split() for line in Path(path).read_text().splitlines() if line.strip()]
    try:
        count = int(lines[0][0])
        spheres = [(float(a), float(b), float(c), float(r)) for a, b, c, r, *_ in lines[1:count + 1]]
    except (IndexError, ValueError):
        raise InputError(f"{path} is not a RASPA .block file (count, then 'fa fb fc radius' lines)") from None
    if len(spheres) != count:
        raise InputError(f"{path} announces {count} pockets but lists {len(spheres)}")
    return spheres
