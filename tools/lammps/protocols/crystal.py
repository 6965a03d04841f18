"""lammps/crystal_relax: lattice constant and cohesive energy of a one-element crystal at 0 K.

A perfect fcc/bcc/hcp/diamond/sc supercell is relaxed by conjugate-gradient minimisation with
fix box/relax (iso for cubic lattices, aniso for hcp so c/a relaxes), repeated until the box
settles. E_coh = E_isolated_atom - E/N, with the isolated-atom energy computed in the same input.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import ClassVar, Literal

from ase.data import atomic_numbers
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, ReadError, RequestError
from simagent.materials import potentials
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import Protocol, register
from tools.crystals import (  # noqa: F401 - NN_OVER_A is re-exported to the solid protocols
    CRYSTAL_DEFAULTS,
    NN_OVER_A,
    initial_lattice_constant,
    reference_lattice,
)
from tools.lammps.inputs import render
from tools.lammps.parse import read_output

Lattice = Literal["fcc", "bcc", "hcp", "diamond", "sc"]
TEMPLATE = "crystal_relax.lmp.j2"
JOB_ID = "relax"

# Supercells: ~100-250 atoms, seconds per run. hcp uses LAMMPS' orthogonal 4-atom cell
# (a, sqrt(3) a, c).
DEFAULT_REPETITIONS = {
    "fcc": (4, 4, 4),
    "bcc": (4, 4, 4),
    "sc": (5, 5, 5),
    "diamond": (3, 3, 3),
    "hcp": (4, 2, 2),
}
ATOMS_PER_CELL = {"fcc": 4, "bcc": 2, "sc": 1, "diamond": 8, "hcp": 4}
_VALUE = re.compile(r"(\w+)=(-?[0-9.eE+-]+|nan|-?inf)")


class CrystalRelaxParams(BaseModel):
    """Everything the input depends on; defaults documented per field."""

    # The defaults reported in the answer, each with its reason (templates filled by parameters())
    DEFAULTS: ClassVar[dict[str, Default]] = {
        **CRYSTAL_DEFAULTS,
        "supercell": Default("DEFAULT_REPETITIONS", "a perfect periodic crystal needs no more; small cells run in "
                             "seconds", shown="{reps[0]}x{reps[1]}x{reps[2]} cells ({atoms} atoms)"),
        "minimiser": Default("cg + fix box/relax", "tight force tolerance so the box converges; aniso for hcp so c/a "
                             "relaxes", shown="{p.min_style}, etol {p.etol:g}, ftol {p.ftol:g} eV/A, maxiter "
                             "{p.maxiter}, maxeval {p.maxeval}; fix box/relax {p.box_relax} 0 bar, vmax {p.vmax:g}, "
                             "{p.relax_passes} passes"),
    }

    element: str
    lattice: Lattice
    a_initial: float = Field(gt=0, description="starting lattice constant, angstrom")
    repetitions: tuple[int, int, int] = Field(description="supercell in conventional (hcp: orthogonal) cells")
    potential_file: str
    pair_style: str
    pair_lines: list[str]
    potential_citation: str = ""
    mass: float = Field(gt=0, description="g/mol")
    # Minimiser: CG with zero energy tolerance so the force criterion decides (LAMMPS `minimize`).
    min_style: Literal["cg", "sd", "fire"] = "cg"
    etol: float = Field(default=0.0, ge=0)
    ftol: float = Field(default=1e-10, gt=0, description="force tolerance, eV/angstrom")
    maxiter: int = Field(default=10000, gt=0)
    maxeval: int = Field(default=100000, gt=0)
    # fix box/relax: vmax 0.001 (max fractional volume change per iteration, the manual's example).
    box_relax: Literal["iso", "aniso"] = "iso"
    vmax: float = Field(default=0.001, gt=0)
    relax_passes: int = Field(default=2, ge=1, le=5)
    thermo_every: int = 50
    isolated_box: float = Field(default=20.0, gt=0, description="box edge for the isolated atom, angstrom")
    # Physics gates on the relaxed state.
    max_pressure_bar: float = 100.0
    max_force_eV_per_A: float = 1e-3

    @model_validator(mode="after")
    def _consistent(self) -> CrystalRelaxParams:
        if not any(self.potential_file in line for line in self.pair_lines if line.startswith("pair_coeff")):
            raise ValueError(f"pair_lines do not use the potential file {self.potential_file}")
        if min(self.repetitions) < 1:
            raise ValueError("repetitions must be positive")
        return self


def one_element(spec: TaskSpec, refusal: str) -> str:
    """The one element of a crystal request; RequestError (`refusal` formatted with elements) otherwise."""
    system = spec.system
    if system is None or not system.elements:
        raise RequestError("say which element the crystal is made of")
    if len(system.elements) != 1:
        raise RequestError(refusal.format(elements="-".join(system.elements)))
    element = system.elements[0].strip().capitalize()
    if element not in atomic_numbers or element == "X":
        raise RequestError(f"unknown chemical element {system.elements[0]!r}")
    return element


def metal_potential(spec: TaskSpec, element: str, protocol: str, log: DefaultsLog) -> potentials.PotentialEntry:
    """The shipped potential for the element (the request's family, name or file when it names one;
    a library default is reported with why it was chosen); metal units only."""
    pot = spec.potential
    entry = potentials.find_potential(
        [element], pot.family if pot else None, pot.name_hint if pot else None, pot.file if pot else None
    )
    if entry.units != "metal":
        raise RequestError(f"{entry.file} uses {entry.units} units; {protocol} runs in metal units")
    if entry.defaulted:
        log.note("potential", f"{entry.file} ({entry.citation})", entry.chosen_by)
    return entry


class SolidProtocol(Protocol):
    """A protocol for one-element crystals: it applies when the request is about a crystal and asks
    only for properties this protocol computes (the base of every solid protocol)."""

    def applies_to(self, spec: TaskSpec) -> bool:
        if spec.system is None or spec.system.kind != "crystal" or not spec.properties:
            return False
        return {p.name for p in spec.properties} <= self.properties


@register
class CrystalRelax(SolidProtocol):
    name = "lammps/crystal_relax"
    engine = "lammps"
    properties: ClassVar[frozenset[str]] = frozenset({"lattice_constant", "cohesive_energy"})
    Params = CrystalRelaxParams
    description = (
        "0 K lattice constant and cohesive energy of a one-element crystal: CG minimisation with "
        "fix box/relax of a perfect supercell, E_coh = E_atom - E/N"
    )

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> CrystalRelaxParams:
        element = one_element(spec, "crystal_relax handles one-element crystals; {elements} compounds are not "
                                    "supported yet")
        lattice = reference_lattice(element, spec.system.lattice, tuple(NN_OVER_A), log,
                                    "say which lattice to relax {element} in (fcc, bcc, hcp, diamond or sc); its "
                                    "reference structure ({symmetry}) is not one of these")
        if lattice not in NN_OVER_A:
            raise RequestError(f"lattice {lattice!r} is not supported (fcc, bcc, hcp, diamond, sc)")
        entry = metal_potential(spec, element, "crystal_relax", log)
        a_initial, _ = initial_lattice_constant(element, lattice, log)
        repetitions = DEFAULT_REPETITIONS[lattice]
        if spec.controls.n_atoms:
            # the default cell shape, scaled to hold at least the requested number of atoms
            scale = (spec.controls.n_atoms / (ATOMS_PER_CELL[lattice] * math.prod(repetitions))) ** (1 / 3)
            repetitions = tuple(max(1, math.ceil(r * scale - 1e-9)) for r in repetitions)
        else:
            log.report("supercell", reps=repetitions, atoms=ATOMS_PER_CELL[lattice] * math.prod(repetitions))
        params = CrystalRelaxParams(
            element=element, lattice=lattice, a_initial=a_initial, repetitions=repetitions,
            potential_file=entry.file, pair_style=entry.pair_style, potential_citation=entry.citation,
            pair_lines=potentials.pair_commands(entry, [element]), mass=potentials.mass(element),
            box_relax="aniso" if lattice == "hcp" else "iso",
        )
        log.report("minimiser", p=params)
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = CrystalRelaxParams.model_validate(params.model_dump())
        text = render(TEMPLATE, **p.model_dump())
        return [
            Job(
                id=JOB_ID,
                protocol=self.name,
                engine="lammps",
                stage="relax",
                params=p.model_dump(),
                inputs={"in.lammps": text},
                time_limit_s=300.0,
            )
        ]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = CrystalRelaxParams.model_validate(params.model_dump())
        job_dir = job_dirs[JOB_ID]
        out = read_output(job_dir)
        if out.errors:
            raise CalculationFailed(f"LAMMPS failed in job {JOB_ID}: {out.errors[0]}")
        if not out.finished:
            raise CalculationFailed(f"LAMMPS did not finish job {JOB_ID} (no 'Total wall time' in the log)")
        out.refuse_nonfinite()
        log = job_dir / "log.lammps"
        values, pass_a = _simagent_values(log.read_text(errors="replace"))
        needed = [
            "natoms",
            "energy_per_atom_eV",
            "lx_A",
            "ly_A",
            "lz_A",
            "pressure_bar",
            "pxx_bar",
            "pyy_bar",
            "pzz_bar",
            "fmax_eV_per_A",
            "isolated_atom_energy_eV",
        ]
        missing = [k for k in needed if k not in values]
        if missing:
            raise ReadError(f"{log}: missing SIMAGENT values {', '.join(missing)}")
        if not all(math.isfinite(v) for v in values.values()):
            raise CalculationFailed(f"non-finite values after relaxation in {log}")

        expected_atoms = ATOMS_PER_CELL[p.lattice] * math.prod(p.repetitions)
        if round(values["natoms"]) != expected_atoms:
            raise CalculationFailed(f"{values['natoms']:g} atoms in the box, expected {expected_atoms}")
        stresses = [values[k] for k in ("pxx_bar", "pyy_bar", "pzz_bar")]
        worst = max(abs(values["pressure_bar"]), *(abs(s) for s in stresses))
        if worst > p.max_pressure_bar:
            raise CalculationFailed(
                f"box not relaxed: residual stress {worst:.1f} bar > {p.max_pressure_bar:g} bar "
                f"(P = {values['pressure_bar']:.1f}, "
                f"pxx/pyy/pzz = {', '.join(f'{s:.1f}' for s in stresses)})"
            )
        if values["fmax_eV_per_A"] > p.max_force_eV_per_A:
            raise CalculationFailed(
                f"atoms not relaxed: max force {values['fmax_eV_per_A']:.2e} eV/A > {p.max_force_eV_per_A:g}"
            )
        nx, ny, nz = p.repetitions
        a = values["lx_A"] / nx
        if p.lattice != "hcp":
            cell = (values["lx_A"] / nx, values["ly_A"] / ny, values["lz_A"] / nz)
            if max(cell) - min(cell) > 1e-6 * a:
                raise CalculationFailed(f"cubic cell lost its shape: edges {cell} angstrom")
        else:
            b = values["ly_A"] / (ny * math.sqrt(3))  # orthogonal hcp cell: a, sqrt(3) a, c
            if abs(b - a) > 1e-3 * a:
                raise CalculationFailed(f"hcp basal plane distorted: a = {a:.5f} vs {b:.5f} angstrom")
        e_coh = values["isolated_atom_energy_eV"] - values["energy_per_atom_eV"]
        if e_coh <= 0:
            raise CalculationFailed(f"crystal is not bound: E_coh = {e_coh:.4f} eV/atom")

        relax = (
            f"0 K relaxation of a {'x'.join(map(str, p.repetitions))} {p.lattice} supercell "
            f"({expected_atoms} atoms) with {p.potential_file} "
            f"({p.pair_style}; {p.potential_citation}): {p.min_style} minimisation with "
            f"fix box/relax {p.box_relax} 0 bar, ftol {p.ftol:g} eV/A, "
            f"{p.relax_passes} passes; residual stress {worst:.2g} bar"
        )
        if len(pass_a) >= 2:
            relax += f"; a changed by {abs(pass_a[-1] - pass_a[-2]):.1e} A in the last pass"
        deterministic = "; deterministic, no statistical uncertainty"
        results = [
            Result(
                quantity="lattice_constant",
                value=a,
                unit="angstrom",
                job=JOB_ID,
                log=str(log),
                method=f"{relax}; a = L_x / {nx}{deterministic}",
            ),
        ]
        if p.lattice == "hcp":
            c = values["lz_A"] / nz
            results.append(
                Result(
                    quantity="lattice_constant_c",
                    value=c,
                    unit="angstrom",
                    job=JOB_ID,
                    log=str(log),
                    method=f"{relax}; c = L_z / {nz} (c/a = {c / a:.4f}){deterministic}",
                )
            )
        results.append(
            Result(
                quantity="cohesive_energy",
                value=e_coh,
                unit="eV/atom",
                job=JOB_ID,
                log=str(log),
                method=f"{relax}; E_coh = E_isolated_atom - E/N (E_isolated_atom = "
                f"{values['isolated_atom_energy_eV']:.6g} eV){deterministic}",
            )
        )
        wanted = {r.name for r in spec.properties} or set(self.properties)
        if "lattice_constant" in wanted:
            wanted.add("lattice_constant_c")
        return [r for r in results if r.property in wanted]


def _simagent_values(text: str) -> tuple[dict[str, float], list[float]]:
    """key=value pairs of the final 'SIMAGENT ...' print lines, and a after each relaxation pass."""
    values: dict[str, float] = {}
    pass_a: list[float] = []
    for line in text.splitlines():
        if not line.startswith("SIMAGENT "):
            continue
        pairs = {key: float(raw) for key, raw in _VALUE.findall(line)}
        if "pass" in pairs:
            pass_a.append(pairs.get("a_A", math.nan))
        else:
            values.update(pairs)
    return values, pass_a
