"""Porous frameworks for LAMMPS: a checked P1 framework (simagent.materials.frameworks: the structure
agent's CoRE MOF entry or a CIF) -> a LAMMPS data file.

Two routes, both deterministic and recorded in the answer:
- rigid framework + single-site guests (`rigid_guest_system`): one atom type per framework element
  with UFF (or DREIDING) Lennard-Jones parameters from forcefields/framework_lj.json, guests from
  forcefields/guests.json, Lorentz-Berthelot pairs written explicitly, guests placed at random
  positions of favourable host-guest energy (no overlap, no isolated hot spots);
- flexible framework (`flexible_framework`): bonds, angles, torsions and inversions typed by
  lammps-interface (Boyd et al., J. Phys. Chem. Lett. 8, 357 (2017)) with UFF4MOF (Addicoat et al.,
  J. Chem. Theory Comput. 10, 4457 (2014); Coupry et al., J. Chem. Theory Comput. 12, 5215 (2016)),
  run as a pinned subprocess (the package is no longer maintained).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from ase.data import atomic_masses, atomic_numbers

from simagent.errors import CalculationFailed, InputError, RequestError
from simagent.materials import forcefields as raspa_ff
from simagent.materials.frameworks import FrameworkStructure, perpendicular_widths

KCAL_MOL_PER_K = 1.0 / raspa_ff.KCAL_PER_MOL_IN_K  # epsilon/k_B (K) -> kcal/mol (LAMMPS real units)
# lammps-interface is unmaintained (last release 0.2.2, 2021): the version is pinned and checked.
LAMMPS_INTERFACE_VERSION = "0.2.2"


# ---------------------------------------------------------------------------------------------
# Cell geometry
# ---------------------------------------------------------------------------------------------


def lammps_cell(cell: np.ndarray) -> np.ndarray:
    """The same lattice in LAMMPS' restricted triclinic orientation: a along x, b in the xy plane,
    rows a, b, c (lengths and angles unchanged)."""
    a, b, c = np.asarray(cell, dtype=float)
    la, lb, lc = (float(np.linalg.norm(v)) for v in (a, b, c))
    cos_alpha = float(np.dot(b, c) / (lb * lc))
    cos_beta = float(np.dot(a, c) / (la * lc))
    cos_gamma = float(np.dot(a, b) / (la * lb))
    xy = lb * cos_gamma
    ly = math.sqrt(lb**2 - xy**2)
    xz = lc * cos_beta
    yz = (lb * lc * cos_alpha - xy * xz) / ly
    lz = math.sqrt(lc**2 - xz**2 - yz**2)
    return np.array([[la, 0.0, 0.0], [xy, ly, 0.0], [xz, yz, lz]])


def box_line(cell: np.ndarray) -> str:
    """Header lines of a data file for a restricted triclinic cell (rows a, b, c)."""
    (lx, _, _), (xy, ly, _), (xz, yz, lz) = cell
    text = f"0.0 {lx:.8f} xlo xhi\n0.0 {ly:.8f} ylo yhi\n0.0 {lz:.8f} zlo zhi\n"
    if max(abs(xy), abs(xz), abs(yz)) > 1e-8:
        text += f"{xy:.8f} {xz:.8f} {yz:.8f} xy xz yz\n"
    return text


def supercell(structure: FrameworkStructure, counts: tuple[int, int, int]) -> tuple[np.ndarray, list[str], np.ndarray]:
    """(cell rows in LAMMPS orientation, symbols, Cartesian positions) of counts[0] x counts[1] x
    counts[2] unit cells."""
    cell = lammps_cell(structure.cell)
    shifts = np.array([[i, j, k] for i in range(counts[0]) for j in range(counts[1]) for k in range(counts[2])])
    frac = (structure.fractional[None, :, :] + shifts[:, None, :]).reshape(-1, 3) / np.array(counts)
    big = cell * np.array(counts)[:, None]
    return big, list(structure.symbols) * len(shifts), frac @ big


def _skew(cell: np.ndarray) -> float:
    """Largest |cos| between two cell vectors: 0 for an orthogonal box."""
    unit = cell / np.linalg.norm(cell, axis=1)[:, None]
    return float(max(abs(unit[0] @ unit[1]), abs(unit[0] @ unit[2]), abs(unit[1] @ unit[2])))


def simulation_cell(structure: FrameworkStructure, cutoff: float, max_det: int = 4
                    ) -> tuple[np.ndarray, tuple[int, int, int], str]:
    """(integer matrix M, replication counts, note): the simulation box is counts x (M @ cell).

    CoRE MOF CIFs often hold a primitive rhombohedral cell (bcc ZIF-8: 109.5 deg; fcc IRMOF-1:
    60 deg); replicated as is, its strongly tilted box makes LAMMPS' neighbour binning several
    times slower. Among integer cells M @ cell with entries -1..1 and 1 <= |det M| <= max_det
    (the conventional cubic cell of bcc/fcc lattices is one of them), the box with the fewest atoms
    whose replicas are at least 2 x cutoff wide is taken; ties go to the most orthogonal box."""
    cell = np.asarray(structure.cell, dtype=float)
    values = (-1, 0, 1)
    rows = np.array([[a, b, c] for a in values for b in values for c in values if (a, b, c) != (0, 0, 0)])
    index = np.array(np.meshgrid(*[np.arange(len(rows))] * 3, indexing="ij")).reshape(3, -1).T
    mats = rows[index]  # (n, 3, 3) integer matrices
    dets = np.rint(np.linalg.det(mats)).astype(int)
    mats, dets = mats[(dets >= 1) & (dets <= max_det)], dets[(dets >= 1) & (dets <= max_det)]
    cells = mats @ cell
    volume = np.abs(np.linalg.det(cells))
    widths = np.stack([volume / np.linalg.norm(np.cross(cells[:, 1], cells[:, 2]), axis=1),
                       volume / np.linalg.norm(np.cross(cells[:, 2], cells[:, 0]), axis=1),
                       volume / np.linalg.norm(np.cross(cells[:, 0], cells[:, 1]), axis=1)], axis=1)
    counts_all = np.maximum(1, np.ceil(2.0 * cutoff / widths - 1e-9)).astype(int)
    atoms = dets * counts_all.prod(axis=1)
    unit = cells / np.linalg.norm(cells, axis=2)[:, :, None]
    skew = np.max(np.abs(np.stack([np.einsum("ni,ni->n", unit[:, 0], unit[:, 1]),
                                   np.einsum("ni,ni->n", unit[:, 0], unit[:, 2]),
                                   np.einsum("ni,ni->n", unit[:, 1], unit[:, 2])], axis=1)), axis=1)
    order = np.lexsort((-np.trace(mats, axis1=1, axis2=2), np.round(skew, 3), atoms))
    best = (None, mats[order[0]], tuple(int(c) for c in counts_all[order[0]]))
    _, m, counts = best
    note = "unit cell as given" if np.array_equal(m, np.eye(3, dtype=int)) else (
        f"cell vectors {m.tolist()} x CIF cell (|det| {int(round(np.linalg.det(m)))}: a near-orthogonal cell of "
        f"the same lattice)")
    return m, counts, note


def transformed(structure: FrameworkStructure, m: np.ndarray) -> FrameworkStructure:
    """The same crystal in the cell M @ cell (|det M| copies of the atoms)."""
    det = int(round(abs(np.linalg.det(m))))
    new_cell = m @ structure.cell
    inv_m = np.linalg.inv(m)
    # lattice points of the old cell inside the new one: n = f_new @ M for integer n
    span = int(np.abs(m).sum(axis=0).max()) + 1
    grid = np.array([[a, b, c] for a in range(-span, span + 1) for b in range(-span, span + 1)
                     for c in range(-span, span + 1)])
    frac_old = (structure.fractional[None, :, :] + grid[:, None, :]).reshape(-1, 3)
    frac_new = frac_old @ inv_m
    keep = np.all((frac_new >= -1e-6) & (frac_new < 1 - 1e-6), axis=1)
    symbols = np.tile(np.array(structure.symbols), len(grid))[keep]
    frac_new = np.mod(frac_new[keep], 1.0)
    if len(symbols) != det * len(structure.symbols):
        raise InputError(f"cell transformation gave {len(symbols)} atoms, expected {det * len(structure.symbols)}")
    return FrameworkStructure(name=structure.name, cell=new_cell, symbols=list(symbols), fractional=frac_new,
                              charges=None)


# ---------------------------------------------------------------------------------------------
# Rigid framework with single-site guests
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RigidSystem:
    """What the data file holds and how it was made (for the answer)."""

    data: str  # the LAMMPS data file text
    type_names: list[str]  # per atom type (1-based in LAMMPS): element symbols, then the guest site
    pair_coeffs: list[tuple[int, int, float, float]]  # i, j, epsilon (kcal/mol), sigma (A), i <= j
    n_framework: int
    n_guests: int
    counts: tuple[int, int, int]
    cell: np.ndarray
    force_field_note: str
    insertion_note: str


def lj_parameters(force_field: str, elements: list[str]) -> tuple[dict[str, tuple[float, float]], str]:
    """{element: (epsilon/k_B in K, sigma in A)} and the citation, from framework_lj.json."""
    table = {}
    for element in elements:
        table[element], _source = raspa_ff.lj_from_table(force_field, element)
    citation = raspa_ff.load("framework_lj.json")["force_fields"][force_field]["citation"]
    return table, citation


def _minimum_image(delta_frac: np.ndarray) -> np.ndarray:
    return delta_frac - np.round(delta_frac)


def host_guest_energy_K(point: np.ndarray, frame_xyz: np.ndarray, inv_cell: np.ndarray, cell: np.ndarray,
                        eps_K: np.ndarray, sig_A: np.ndarray, cutoff: float) -> float:
    """Lennard-Jones energy (K) of one guest site at `point` with every framework atom (minimum
    image; the box is at least twice the cutoff wide)."""
    d = _minimum_image((frame_xyz - point) @ inv_cell) @ cell
    r2 = np.einsum("ij,ij->i", d, d)
    inside = r2 < cutoff**2
    sr6 = (sig_A[inside] ** 2 / r2[inside]) ** 3
    return float(np.sum(4.0 * eps_K[inside] * (sr6 * sr6 - sr6)))


def insert_guests(cell: np.ndarray, frame_xyz: np.ndarray, frame_eps: np.ndarray, frame_sig: np.ndarray,
                  guest_eps: float, guest_sig: float, n: int, seed: int, cutoff: float,
                  max_energy_K: float, max_tries: int = 200_000) -> tuple[np.ndarray, int]:
    """Random positions for n single-site guests: host-guest LJ energy (Lorentz-Berthelot) below
    max_energy_K (keeps guests out of the walls; a negative bound also keeps them out of nothing
    but the pores' attractive region), and no two guests closer than the guest sigma.
    Returns (positions, trials used)."""
    rng = np.random.default_rng(seed)
    inv = np.linalg.inv(cell)
    eps = np.sqrt(frame_eps * guest_eps)
    sig = 0.5 * (frame_sig + guest_sig)
    placed: list[np.ndarray] = []
    tries = 0
    while len(placed) < n:
        tries += 1
        if tries > max_tries:
            raise CalculationFailed(f"placed only {len(placed)} of {n} guests in {max_tries} random trials: the "
                                    "framework has too little accessible volume for this loading")
        point = rng.random(3) @ cell
        if placed:
            d = _minimum_image((np.array(placed) - point) @ inv) @ cell
            if np.min(np.einsum("ij,ij->i", d, d)) < guest_sig**2:
                continue
        if host_guest_energy_K(point, frame_xyz, inv, cell, eps, sig, cutoff) < max_energy_K:
            placed.append(point)
    return np.array(placed), tries


def rigid_guest_system(structure: FrameworkStructure, force_field: str, guest: raspa_ff.GuestModel,
                       molecules_per_cell: int, cutoff: float, seed: int, max_energy_K: float) -> RigidSystem:
    """Data file of a framework supercell (every perpendicular width >= 2 x cutoff) loaded with
    molecules_per_cell x (number of unit cells) single-site guests."""
    if len(guest.sites) != 1:
        raise RequestError(f"{guest.label} has {len(guest.sites)} sites; framework MD supports single-site "
                           "(united-atom) guests such as TraPPE CH4, Ar, Kr, Xe so far")
    site = guest.sites[0]
    matrix, counts, cell_note = simulation_cell(structure, cutoff)
    cells_in_box = int(round(abs(np.linalg.det(matrix)))) * int(np.prod(counts))
    cell, symbols, xyz = supercell(transformed(structure, matrix), counts)
    elements = sorted(set(symbols))
    lj, citation = lj_parameters(force_field, elements)
    type_of = {e: i + 1 for i, e in enumerate(elements)}
    guest_type = len(elements) + 1
    frame_eps = np.array([lj[s][0] for s in symbols])
    frame_sig = np.array([lj[s][1] for s in symbols])
    n_guests = molecules_per_cell * cells_in_box
    positions, tries = insert_guests(cell, xyz, frame_eps, frame_sig, site.epsilon_K, site.sigma_A, n_guests,
                                     seed, cutoff, max_energy_K)
    masses = [float(atomic_masses[atomic_numbers[e]]) for e in elements] + [site.mass]
    lines = [f"simagent tools.lammps.framework: {structure.name} {counts[0]}x{counts[1]}x{counts[2]} "
             f"({force_field}) + {n_guests} {guest.molecule}", "",
             f"{len(symbols) + n_guests} atoms", f"{guest_type} atom types", "", box_line(cell), "Masses", ""]
    lines += [f"{i + 1} {m:.5f} # {name}" for i, (m, name) in enumerate(zip(masses, [*elements, site.name],
                                                                         strict=True))]
    lines += ["", "Atoms # atomic", ""]
    atom_id = 0
    for symbol, (x, y, z) in zip(symbols, xyz, strict=True):
        atom_id += 1
        lines.append(f"{atom_id} {type_of[symbol]} {x:.6f} {y:.6f} {z:.6f}")
    for x, y, z in positions:
        atom_id += 1
        lines.append(f"{atom_id} {guest_type} {x:.6f} {y:.6f} {z:.6f}")
    # Lorentz-Berthelot, written pair by pair: guest-guest and framework-guest. Framework-framework
    # pairs are excluded from the neighbour list (rigid framework) and get zero coefficients.
    pairs = []
    for i, element in enumerate(elements, start=1):
        eps_K, sig = lj[element]
        for j in range(i, len(elements) + 1):
            pairs.append((i, j, 0.0, sig))
        pairs.append((i, guest_type, math.sqrt(eps_K * site.epsilon_K) * KCAL_MOL_PER_K, 0.5 * (sig + site.sigma_A)))
    pairs.append((guest_type, guest_type, site.epsilon_K * KCAL_MOL_PER_K, site.sigma_A))
    widths = perpendicular_widths(cell)
    framework_mass = float(sum(atomic_masses[atomic_numbers[e]] for e in symbols))  # g/mol of the whole box
    loading = 1000.0 * n_guests / framework_mass
    insertion = (f"{n_guests} {guest.molecule} ({molecules_per_cell} per CIF unit cell, {loading:.3g} mmol/g) at "
                 "random positions with "
                 f"host-guest LJ energy below {max_energy_K:g} K and no two guests closer than sigma "
                 f"{site.sigma_A:g} A ({tries} trials, seed {seed})")
    ff_note = (f"{force_field} Lennard-Jones for framework atoms ({citation}); {guest.label}: {guest.citation}; "
               f"Lorentz-Berthelot mixing; cutoff {cutoff:g} A, shifted; box {counts[0]}x{counts[1]}x{counts[2]} "
               f"of the {cell_note} = {cells_in_box} CIF unit cells (perpendicular widths "
               f"{', '.join(f'{w:.1f}' for w in widths)} A >= 2 x cutoff)")
    return RigidSystem(data="\n".join(lines) + "\n", type_names=[*elements, site.name], pair_coeffs=pairs,
                       n_framework=len(symbols), n_guests=n_guests, counts=counts, cell=cell,
                       force_field_note=ff_note, insertion_note=insertion)


# ---------------------------------------------------------------------------------------------
# Flexible framework typed by lammps-interface
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FlexibleFramework:
    data: str  # data file text
    styles: list[str]  # pair/bond/angle/dihedral/improper style, special_bonds, pair_modify lines
    n_atoms: int
    counts_note: str
    command: str


def lammps_interface_command() -> list[str] | None:
    """The pinned lammps-interface, run with this Python; None when it is not installed."""
    try:
        from importlib.metadata import PackageNotFoundError, version
        if version("lammps-interface") != LAMMPS_INTERFACE_VERSION:
            return None
    except PackageNotFoundError:
        return None
    return [sys.executable, "-c", "import sys; from lammps_interface.cli import main; sys.argv[0] = "
            "'lammps-interface'; main()"]


STYLE_COMMANDS = ("pair_style", "bond_style", "angle_style", "dihedral_style", "improper_style", "special_bonds",
                  "pair_modify", "kspace_style", "dielectric")


def conventional_cif(structure: FrameworkStructure, folder: Path, cutoff: float) -> Path:
    """A P1 CIF of the near-orthogonal cell `simulation_cell` picks for this cutoff (e.g. the cubic cell
    of a CoRE primitive cell), for strains along crystal axes; written once per structure into `folder`."""
    from simagent.materials.frameworks import p1_cif

    matrix, _counts, _note = simulation_cell(structure, cutoff)
    cell = transformed(structure, matrix)
    path = Path(folder) / f"{structure.name}_conventional.cif"
    if not path.is_file():
        path.write_text(p1_cif(cell, list(cell.symbols), np.zeros(len(cell.symbols))))
    return path


def flexible_framework(cif: Path, force_field: str = "UFF4MOF", cutoff: float = 12.5,
                       timeout_s: float = 300.0) -> FlexibleFramework:
    """lammps-interface typing of a CIF (cached per file version: jobs and checks ask again)."""
    stat = Path(cif).stat()
    return _flexible_framework(str(Path(cif).resolve()), stat.st_mtime_ns, force_field, cutoff, timeout_s)


@lru_cache(maxsize=8)
def _flexible_framework(cif_text: str, _mtime_ns: int, force_field: str, cutoff: float,
                        timeout_s: float) -> FlexibleFramework:
    """Type a P1 CIF with lammps-interface (bonds from covalent radii, UFF4MOF atom types) and
    return its data file and the style lines of its input (the input itself is not used: it needs
    the removed `box tilt` command of old LAMMPS versions)."""
    cif = Path(cif_text)
    base = lammps_interface_command()
    if base is None:
        raise RequestError(f"a flexible framework needs lammps-interface=={LAMMPS_INTERFACE_VERSION} "
                           f"(pip install --no-deps lammps-interface=={LAMMPS_INTERFACE_VERSION})")
    with tempfile.TemporaryDirectory(prefix="simagent-li-") as tmp:
        local = Path(tmp) / (Path(cif).stem + ".cif")
        shutil.copyfile(cif, local)
        args = [*base, "-ff", force_field, "--cutoff", f"{cutoff:g}", local.name]
        env = {**os.environ, "OMP_NUM_THREADS": "1", "GIT_DIR": "/nonexistent"}
        done = subprocess.run(args, cwd=tmp, capture_output=True, text=True, timeout=timeout_s, env=env)
        data_path, in_path = Path(tmp) / f"data.{local.stem}", Path(tmp) / f"in.{local.stem}"
        if done.returncode != 0 or not data_path.is_file() or not in_path.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise InputError(f"lammps-interface failed on {cif.name}: {' | '.join(tail)}")
        data = data_path.read_text()
        # in the order of STYLE_COMMANDS: lammps-interface writes special_bonds and pair_modify in an
        # order that changes from run to run, and the same framework must render the same input
        # (resume compares input digests; tests/test_replay.py compares the inputs with references)
        styles = sorted((" ".join(line.split()) for line in in_path.read_text().splitlines()
                         if line.split() and line.split()[0] in STYLE_COMMANDS),
                        key=lambda line: STYLE_COMMANDS.index(line.split()[0]))
        resized = next((line.strip() for line in done.stdout.splitlines() if line.startswith("Re-sizing")), "")
    n_atoms = int(next(line.split()[0] for line in data.splitlines() if line.strip().endswith("atoms")))
    if any(line.startswith("pair_style") and "coul" in line for line in styles):
        raise InputError("lammps-interface added charges; this protocol expects an uncharged UFF4MOF framework")
    return FlexibleFramework(data=data, styles=styles, n_atoms=n_atoms,
                             counts_note=resized or "unit cell already wide enough for the cutoff",
                             command=f"lammps-interface {LAMMPS_INTERFACE_VERSION} -ff {force_field} "
                                     f"--cutoff {cutoff:g} {local.name}")
