"""Systems for GROMACS: the molecule models simagent knows (water models, OPLS-AA alcohols,
Lennard-Jones argon), boxes built from them, and systems supplied as .gro/.top(/.itp) files.

Built boxes: by default molecules are placed on a cubic grid (an fcc lattice for a monatomic fluid
with N = 4 k^3) with random orientations from a fixed seed, in a box of the requested density, so
N is exact and the build is reproducible; energy minimisation removes the close contacts. For
water `gmx solvate` with GROMACS's equilibrated boxes (spc216.gro, tip4p.gro) is the alternative;
then the driver rewrites the topology counts from what solvate placed (`sync_molecules`).

Topologies either #include force fields GROMACS ships (/usr/share/gromacs/top: oplsaa.ff) or are
written into the job folder (TIP4P/2005 from forcefields/gromacs, argon from its LJ parameters).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simagent.errors import InputError

AVOGADRO = 6.02214076e23  # 1/mol, CODATA 2018 exact
R_KJ_PER_MOL_K = 0.0083144626  # kJ/(mol K), k_B N_A
FORCEFIELDS = Path(__file__).resolve().parents[2] / "forcefields" / "gromacs"


@dataclass(frozen=True)
class MoleculeModel:
    """A molecule with a named force field, as GROMACS runs it."""

    key: str  # e.g. 'tip4p2005'
    label: str  # e.g. 'TIP4P/2005 water'
    molecule: str  # 'water', 'methanol', 'ethanol', 'argon'
    residue: str  # residue and [ moleculetype ] name
    atoms: tuple[str, ...]  # atom names in topology order
    template_angstrom: tuple[tuple[float, float, float], ...]  # one molecule, topology order
    molar_mass: float  # g/mol
    includes: tuple[str, ...] = ()  # GROMACS library includes, in order
    local_itp: str | None = None  # file from forcefields/gromacs written into the job folder
    site: str = ""  # atom used for g(r) and the MSD (e.g. the water oxygen)
    real_atoms: int = 0  # atoms with mass (virtual sites excluded)
    solvate_box: str | None = None  # GROMACS equilibrated box for gmx solvate
    has_hydrogen: bool = True
    citation: str = ""
    start_density: float = 1.0  # g/cm^3, liquid near ambient conditions (starting box of NPT runs)
    aliases: tuple[str, ...] = field(default=())


def _water(d_oh: float, angle_deg: float, d_om: float | None = None) -> tuple[tuple[float, float, float], ...]:
    half = math.radians(angle_deg) / 2
    sites = [(0.0, 0.0, 0.0), (d_oh * math.sin(half), d_oh * math.cos(half), 0.0),
             (-d_oh * math.sin(half), d_oh * math.cos(half), 0.0)]
    if d_om is not None:
        sites.append((0.0, d_om, 0.0))
    return tuple(sites)


_WATER_MASS = 15.9994 + 2 * 1.008
_OPLS = "oplsaa.ff/forcefield.itp"

MODELS: dict[str, MoleculeModel] = {m.key: m for m in [
    MoleculeModel(
        key="spce", label="SPC/E water", molecule="water", residue="SOL", atoms=("OW", "HW1", "HW2"),
        template_angstrom=_water(1.0, 109.47), molar_mass=_WATER_MASS,
        includes=(_OPLS, "oplsaa.ff/spce.itp"), site="OW", real_atoms=3, solvate_box="spc216.gro",
        citation="Berendsen, Grigera, Straatsma, J. Phys. Chem. 91, 6269 (1987); GROMACS oplsaa.ff/spce.itp",
        aliases=("spc/e", "spce"),
    ),
    MoleculeModel(
        key="spc", label="SPC water", molecule="water", residue="SOL", atoms=("OW", "HW1", "HW2"),
        template_angstrom=_water(1.0, 109.47), molar_mass=_WATER_MASS,
        includes=(_OPLS, "oplsaa.ff/spc.itp"), site="OW", real_atoms=3, solvate_box="spc216.gro",
        citation="Berendsen et al., in Intermolecular Forces (Reidel, 1981); GROMACS oplsaa.ff/spc.itp",
        aliases=("spc",),
    ),
    MoleculeModel(
        key="tip3p", label="TIP3P water", molecule="water", residue="SOL", atoms=("OW", "HW1", "HW2"),
        template_angstrom=_water(0.9572, 104.52), molar_mass=_WATER_MASS,
        includes=(_OPLS, "oplsaa.ff/tip3p.itp"), site="OW", real_atoms=3, solvate_box="spc216.gro",
        citation="Jorgensen et al., J. Chem. Phys. 79, 926 (1983); GROMACS oplsaa.ff/tip3p.itp",
        aliases=("tip3p",),
    ),
    MoleculeModel(
        key="tip4p", label="TIP4P water", molecule="water", residue="SOL", atoms=("OW", "HW1", "HW2", "MW"),
        template_angstrom=_water(0.9572, 104.52, 0.15), molar_mass=_WATER_MASS,
        includes=(_OPLS, "oplsaa.ff/tip4p.itp"), site="OW", real_atoms=3, solvate_box="tip4p.gro",
        citation="Jorgensen et al., J. Chem. Phys. 79, 926 (1983); GROMACS oplsaa.ff/tip4p.itp",
        aliases=("tip4p",),
    ),
    MoleculeModel(
        key="tip4p2005", label="TIP4P/2005 water", molecule="water", residue="SOL",
        atoms=("OW", "HW1", "HW2", "MW"), template_angstrom=_water(0.9572, 104.52, 0.1546),
        molar_mass=_WATER_MASS, local_itp="tip4p2005.itp", site="OW", real_atoms=3, solvate_box="tip4p.gro",
        citation="Abascal & Vega, J. Chem. Phys. 123, 234505 (2005); forcefields/gromacs/tip4p2005.itp",
        aliases=("tip4p/2005", "tip4p2005"),
    ),
    MoleculeModel(
        key="methanol-oplsaa", label="OPLS-AA methanol", molecule="methanol", residue="MET",
        atoms=("C", "H", "H", "H", "OA", "HO"),  # names as in oplsaa.ff/methanol.itp
        template_angstrom=((-0.047, 0.664, 0.0), (-1.093, 0.97, 0.0), (0.437, 1.08, 0.892),
                           (0.437, 1.08, -0.892), (-0.047, -0.759, 0.0), (0.879, -1.048, 0.0)),
        molar_mass=12.011 + 4 * 1.008 + 15.9994, includes=(_OPLS, "oplsaa.ff/methanol.itp"), site="OA",
        real_atoms=6, citation="Jorgensen, Maxwell, Tirado-Rives, JACS 118, 11225 (1996); oplsaa.ff/methanol.itp",
        start_density=0.79, aliases=("opls-aa", "oplsaa", "opls"),
    ),
    MoleculeModel(
        key="ethanol-oplsaa", label="OPLS-AA ethanol", molecule="ethanol", residue="ETH",
        atoms=("C", "H", "H", "H", "C", "H", "H", "OA", "HO"),  # as in oplsaa.ff/ethanol.itp
        template_angstrom=((1.168, -0.4, 0.0), (2.116, 0.145, 0.0), (1.129, -1.037, 0.886),
                           (1.129, -1.037, -0.886), (0.0, 0.559, 0.0), (0.043, 1.208, 0.887),
                           (0.043, 1.208, -0.887), (-1.19, -0.228, 0.0), (-1.947, 0.382, 0.0)),
        molar_mass=2 * 12.011 + 6 * 1.008 + 15.9994, includes=(_OPLS, "oplsaa.ff/ethanol.itp"), site="OA",
        real_atoms=9, citation="Jorgensen, Maxwell, Tirado-Rives, JACS 118, 11225 (1996); oplsaa.ff/ethanol.itp",
        start_density=0.79, aliases=("opls-aa", "oplsaa", "opls"),
    ),
    MoleculeModel(
        key="argon-lj", label="Lennard-Jones argon", molecule="argon", residue="AR", atoms=("Ar",),
        template_angstrom=((0.0, 0.0, 0.0),), molar_mass=39.948, local_itp=None, site="Ar", real_atoms=1,
        has_hydrogen=False, citation="Rahman, Phys. Rev. 136, A405 (1964): eps/kB = 120 K, sigma = 3.4 A",
        start_density=1.374, aliases=("lj", "lennard-jones"),
    ),
]}

WATER_MODELS = ("spce", "spc", "tip3p", "tip4p", "tip4p2005")
DEFAULT_WATER_MODEL = "tip4p2005"


def model_for(molecule: str, force_field: str | None) -> MoleculeModel:
    """The model for a molecule and a named force field (None: the default for that molecule)."""
    molecule = molecule.lower().strip()
    ff = (force_field or "").lower().replace(" ", "")
    candidates = [m for m in MODELS.values() if m.molecule == molecule]
    if not candidates:
        known = sorted({m.molecule for m in MODELS.values()})
        raise InputError(f"no GROMACS model for {molecule!r}; simagent knows {', '.join(known)}")
    if not ff:
        if molecule == "water":
            return MODELS[DEFAULT_WATER_MODEL]
        return candidates[0]
    for model in candidates:
        if ff == model.key or ff in model.aliases:
            return model
    names = ", ".join(a for m in candidates for a in m.aliases[:1])
    raise InputError(f"no {molecule} model called {force_field!r} in simagent's GROMACS library (known: {names})")


# ---------------------------------------------------------------------------------------------
# Topologies
# ---------------------------------------------------------------------------------------------


def argon_itp(sigma_nm: float, epsilon_kj: float, mass: float) -> str:
    """A self-contained LJ monatomic topology (Lorentz-Berthelot sigma/epsilon form, no charges)."""
    return (
        "; Lennard-Jones monatomic fluid written by simagent (sigma in nm, epsilon in kJ/mol)\n"
        "[ defaults ]\n; nbfunc  comb-rule  gen-pairs  fudgeLJ  fudgeQQ\n"
        "  1       2          no         1.0      1.0\n\n"
        "[ atomtypes ]\n; name  at.num  mass  charge  ptype  sigma  epsilon\n"
        f"  Ar      18      {mass:.4f}  0.0  A  {sigma_nm:.8g}  {epsilon_kj:.8g}\n\n"
        "[ moleculetype ]\n; molname  nrexcl\n  AR       1\n\n"
        "[ atoms ]\n; nr  type  resnr  residue  atom  cgnr  charge  mass\n"
        f"  1   Ar    1      AR       Ar    1     0.0     {mass:.4f}\n"
    )


def topology(model: MoleculeModel, n_molecules: int | None, title: str) -> str:
    """topol.top for a pure liquid of `model`; n_molecules None leaves [ molecules ] for a builder."""
    lines = [f"; {title}", f"; model: {model.label} ({model.citation})"]
    lines += [f'#include "{inc}"' for inc in model.includes]
    if model.local_itp or model.key == "argon-lj":
        lines.append(f'#include "{local_itp_name(model)}"')
    lines += ["", "[ system ]", title, "", "[ molecules ]"]
    if n_molecules is not None:
        lines.append(f"{model.residue:<16}{n_molecules}")
    return "\n".join(lines) + "\n"


def local_itp_name(model: MoleculeModel) -> str:
    return model.local_itp or f"{model.residue.lower()}.itp"


def local_files(model: MoleculeModel, sigma_nm: float | None = None, epsilon_kj: float | None = None) -> dict[str, str]:
    """Topology files written into the job folder (besides topol.top)."""
    if model.key == "argon-lj":
        if sigma_nm is None or epsilon_kj is None:
            raise InputError("argon needs LJ sigma and epsilon")
        return {local_itp_name(model): argon_itp(sigma_nm, epsilon_kj, model.molar_mass)}
    if model.local_itp:
        path = FORCEFIELDS / model.local_itp
        if not path.is_file():
            raise InputError(f"force-field file {path} is missing from the installation")
        return {model.local_itp: path.read_text()}
    return {}


# ---------------------------------------------------------------------------------------------
# Boxes
# ---------------------------------------------------------------------------------------------


def box_edge_nm(n_molecules: int, molar_mass: float, density_g_cm3: float) -> float:
    """Cubic box edge holding n molecules at a mass density: V = n M / (rho N_A)."""
    volume_cm3 = n_molecules * molar_mass / (density_g_cm3 * AVOGADRO)
    return volume_cm3 ** (1.0 / 3.0) * 1e7


def _random_rotations(n: int, rng: np.random.Generator) -> np.ndarray:
    """n rotation matrices uniform on SO(3) (from uniform unit quaternions, Shoemake 1992)."""
    u1, u2, u3 = rng.random((3, n))
    q = np.stack([np.sqrt(1 - u1) * np.sin(2 * np.pi * u2), np.sqrt(1 - u1) * np.cos(2 * np.pi * u2),
                  np.sqrt(u1) * np.sin(2 * np.pi * u3), np.sqrt(u1) * np.cos(2 * np.pi * u3)], axis=1)
    x, y, z, w = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=1),
    ], axis=1)


def lattice_sites(n: int, box_nm: float, rng: np.random.Generator, monatomic: bool) -> np.ndarray:
    """Molecule centres: an fcc lattice when monatomic and n = 4 k^3, else n sites chosen at random
    from the smallest cubic grid with at least n sites."""
    k = round((n / 4) ** (1 / 3))
    if monatomic and 4 * k**3 == n:
        a = box_nm / k
        basis = np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]])
        cells = np.array([[i, j, m] for i in range(k) for j in range(k) for m in range(k)], dtype=float)
        return ((cells[:, None, :] + basis[None, :, :]).reshape(-1, 3) + 0.25) * a
    m = math.ceil(n ** (1 / 3) - 1e-9)
    spacing = box_nm / m
    grid = np.array([[i, j, k2] for i in range(m) for j in range(m) for k2 in range(m)], dtype=float)
    chosen = np.sort(rng.choice(len(grid), size=n, replace=False))
    return (grid[chosen] + 0.5) * spacing


def lattice_box(model: MoleculeModel, n_molecules: int, box_nm: float, seed: int) -> str:
    """A .gro with n molecules of the model on a lattice in a cubic box, random orientations."""
    if n_molecules < 1:
        raise InputError("need at least one molecule")
    rng = np.random.default_rng(seed)
    template = np.asarray(model.template_angstrom) * 0.1
    template = template - template.mean(axis=0)
    monatomic = len(model.atoms) == 1
    centres = lattice_sites(n_molecules, box_nm, rng, monatomic)
    if monatomic:
        coords = centres[:, None, :]
    else:
        rotations = _random_rotations(n_molecules, rng)
        coords = centres[:, None, :] + np.einsum("nij,aj->nai", rotations, template)
    residues = [(model.residue, model.atoms)] * n_molecules
    return write_gro(f"{model.label}, {n_molecules} molecules, lattice start (simagent)", residues,
                     coords.reshape(-1, 3), (box_nm, box_nm, box_nm))


def write_gro(title: str, residues: list[tuple[str, tuple[str, ...]]], coords_nm: np.ndarray,
              box_nm: tuple[float, float, float]) -> str:
    """GROMACS .gro text (fixed columns; residue and atom numbers wrap at 100000)."""
    lines = [title, f"{len(coords_nm):5d}"]
    atom = 0
    for resid, (resname, names) in enumerate(residues, start=1):
        for name in names:
            x, y, z = coords_nm[atom]
            atom += 1
            lines.append(f"{resid % 100000:5d}{resname:<5.5s}{name:>5.5s}{atom % 100000:5d}{x:8.3f}{y:8.3f}{z:8.3f}")
    if atom != len(coords_nm):
        raise InputError("coordinates and residue atoms differ in number")
    lines.append(f"{box_nm[0]:10.5f}{box_nm[1]:10.5f}{box_nm[2]:10.5f}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Supplied systems
# ---------------------------------------------------------------------------------------------

_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"', re.M)


@dataclass
class SuppliedSystem:
    files: dict[str, str]  # name -> text, all written into the job folder
    n_atoms: int
    molecules: list[tuple[str, int]]
    box_nm: tuple[float, float, float]


def molecules_section(top_text: str) -> list[tuple[str, int]]:
    match = re.search(r"(?im)^\s*\[\s*molecules\s*\]\s*$", top_text)
    if match is None:
        return []
    found = []
    for line in top_text[match.end():].splitlines():
        line = line.split(";", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            break
        name, count = line.split()[:2]
        found.append((name, int(count)))
    return found


def read_gro_header(text: str) -> tuple[int, tuple[float, float, float]]:
    lines = text.splitlines()
    n_atoms = int(lines[1].split()[0])
    box = tuple(float(v) for v in lines[2 + n_atoms].split()[:3])
    return n_atoms, box  # type: ignore[return-value]


def supplied_system(gro: Path, top: Path) -> SuppliedSystem:
    """A user's .gro and .top (plus .itp files the topology includes from its own folder).

    Includes that are not next to the topology must come from GROMACS's library (e.g.
    "oplsaa.ff/forcefield.itp"); absolute paths and '..' are refused (files stay in the job)."""
    for path in (gro, top):
        if not path.is_file():
            raise InputError(f"{path} does not exist")
    files = {"conf.gro": gro.read_text(), "topol.top": top.read_text()}
    pending = [files["topol.top"]]
    while pending:
        for name in _INCLUDE.findall(pending.pop()):
            if name.startswith("/") or ".." in Path(name).parts:
                raise InputError(f"#include \"{name}\" leaves the job folder; copy the file next to the topology")
            local = top.parent / name
            if local.is_file() and name not in files:
                if "/" in name:
                    raise InputError(f"#include \"{name}\": included files must sit next to the topology")
                files[name] = local.read_text()
                pending.append(files[name])
    n_atoms, box = read_gro_header(files["conf.gro"])
    return SuppliedSystem(files=files, n_atoms=n_atoms, molecules=molecules_section(files["topol.top"]), box_nm=box)
