"""Shared pieces of the solid-state protocols (elastic, tensile, defects, planar, expansion, minimize).

One element, one lattice, one potential from the shipped library: `solid_base` reads those from a
TaskSpec and reports every default to the protocol's DefaultsLog (each declared on the Params
model: SolidBase.DEFAULTS, SolidMDBase.DEFAULTS and the protocol's own); `read_job` checks a
finished LAMMPS job and returns its 'SIMAGENT key=value' lines; `minimization_stats` reads LAMMPS'
own minimiser summary; the rest are small helpers for temperatures, repetitions, plots and the
measurement method named in a request.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, ReadError, RequestError, set_point_missed
from simagent.materials import potentials
from simagent.models import Quantity, TaskSpec
from simagent.units import to_canonical
from tools.crystals import CRYSTAL_DEFAULTS, initial_lattice_constant, reference_lattice
from tools.lammps.parse import LammpsOutput, read_output
from tools.lammps.protocols.crystal import (  # noqa: F401 - SolidProtocol is re-exported
    ATOMS_PER_CELL,
    NN_OVER_A,
    SolidProtocol,
    metal_potential,
    one_element,
)

Lattice = Literal["fcc", "bcc", "hcp", "diamond", "sc"]
CUBIC = ("fcc", "bcc", "diamond", "sc")

# Unit conversions (CODATA 2018): 1 bar = 1e-4 GPa; 1 eV/A^2 = 16.021766 J/m^2 = 1000 meV/A^2.
BAR_TO_GPA = 1e-4
EV_PER_A2_TO_J_PER_M2 = 16.02176634
K_B_EV = 8.617333262e-5  # eV/K

# MD defaults shared by the finite-temperature protocols. LAMMPS' fix nh documentation recommends
# Tdamp ~ 100 timesteps and Pdamp ~ 1000 timesteps.
TDAMP_STEPS = 100
PDAMP_STEPS = 1000
DEFAULT_SEED = 4928459  # the LAMMPS examples' seed; any fixed seed makes runs reproducible
# Timestep: 2 fs resolves the vibrations of metals heavier than ~20 u (period >= ~100 fs at their
# Debye frequencies); lighter elements get 1 fs.
LIGHT_MASS_U = 20.0

# Lindemann-type gate: in a crystal the root-mean-square displacement stays ~0.1 of the
# nearest-neighbour distance up to melting (Lindemann criterion); 0.3 only happens when atoms
# diffuse (melted, amorphised or transformed).
MAX_RMS_DISPLACEMENT_OVER_NN = 0.3

_SIMAGENT = re.compile(r"(\w+)=(\S+)")


class SolidBase(BaseModel):
    """What every solid protocol needs to build the crystal and its potential."""

    # Defaults every solid protocol may report (its own Params add theirs): the crystal's, and a
    # temperature a 0 K protocol does not simulate
    DEFAULTS: ClassVar[dict[str, Default]] = {
        **CRYSTAL_DEFAULTS,
        "static temperature": Default(0.0, "{protocol} computes 0 K energies; the requested {t:g} K is not simulated",
                                      shown="0 K (static relaxation)", parameter="temperature"),
    }

    element: str
    lattice: Lattice
    a_initial: float = Field(gt=0, description="starting lattice constant, angstrom")
    potential_file: str
    pair_style: str
    pair_lines: list[str]
    potential_citation: str = ""
    mass: float = Field(gt=0, description="g/mol")

    @model_validator(mode="after")
    def _pair_lines_use_the_file(self) -> SolidBase:
        if not any(self.potential_file in line for line in self.pair_lines if line.startswith("pair_coeff")):
            raise ValueError(f"pair_lines do not use the potential file {self.potential_file}")
        return self

    @property
    def nn_distance(self) -> float:
        return self.a_initial * NN_OVER_A[self.lattice]

    def potential_text(self) -> str:
        return f"{self.potential_file} ({self.pair_style}; {self.potential_citation})"


class SolidMDBase(SolidBase):
    """Solid protocols that also run MD: Nose-Hoover damping in units of the timestep."""

    DEFAULTS: ClassVar[dict[str, Default]] = {
        **SolidBase.DEFAULTS,
        "timestep": Default(0.002, "2 fs: resolves lattice vibrations of elements heavier than {light:g} u",
                            shown="{value} ps"),
        "timestep (light)": Default(0.001, "1 fs for a light element (below {light:g} u)", shown="{value} ps",
                                    parameter="timestep"),
    }

    timestep: float = Field(default=0.002, gt=0, description="ps")

    @property
    def tdamp(self) -> float:
        return TDAMP_STEPS * self.timestep

    @property
    def pdamp(self) -> float:
        return PDAMP_STEPS * self.timestep




def solid_base(
    spec: TaskSpec, protocol: str, log: DefaultsLog, lattices: tuple[str, ...] = ("fcc", "bcc", "hcp", "diamond", "sc")
) -> dict:
    """Element, lattice, starting lattice constant and potential for a one-element crystal, as the
    SolidBase fields (protocols extend them); the defaults go to `log`."""
    system = spec.system
    if system is None or system.kind != "crystal":
        raise RequestError(f"{protocol} simulates crystals; say which crystal (element and lattice)")
    element = one_element(spec, f"{protocol} handles one-element crystals; {{elements}} is not supported yet")
    lattice = reference_lattice(element, system.lattice, lattices, log, f"say which lattice {{element}} should have "
                                f"for {protocol} ({{lattices}}); its reference structure ({{symmetry}}) is not one of "
                                "these")
    if lattice not in lattices:
        raise RequestError(f"{protocol} supports {', '.join(lattices)} lattices, not {lattice}")
    entry = metal_potential(spec, element, protocol, log)
    a_initial, _ = initial_lattice_constant(element, lattice, log)
    return {
        "element": element,
        "lattice": lattice,
        "a_initial": a_initial,
        "potential_file": entry.file,
        "pair_style": entry.pair_style,
        "pair_lines": potentials.pair_commands(entry, [element]),
        "potential_citation": entry.citation,
        "mass": potentials.mass(element),
    }


def cubic_repetitions(spec: TaskSpec, lattice: str, default: int, log: DefaultsLog,
                      declared: str = "supercell") -> tuple[int, int, int]:
    """Supercell (conventional cells; hcp: LAMMPS' orthogonal 4-atom cell, doubled along x so the
    cell is roughly cubic) from controls.n_atoms, or `default` cells a side (the declared default
    `declared` reported)."""
    shape = (2, 1, 1) if lattice == "hcp" else (1, 1, 1)
    per_cell = ATOMS_PER_CELL[lattice]
    if spec.controls.n_atoms:
        n = max(1, math.ceil((spec.controls.n_atoms / (per_cell * math.prod(shape))) ** (1 / 3) - 1e-9))
        return tuple(s * n for s in shape)  # type: ignore[return-value]
    reps = tuple(s * default for s in shape)
    log.report(declared, cells="x".join(map(str, reps)), atoms=per_cell * math.prod(reps))
    return reps  # type: ignore[return-value]


def kelvin(q: Quantity) -> float:
    value = to_canonical(q, "temperature").value
    if value < 0:
        raise RequestError(f"temperature {q} is below absolute zero")
    return value


def requested_temperature(spec: TaskSpec) -> float | None:
    """The single temperature of the request in K, or None."""
    t = spec.conditions.temperature
    return kelvin(t) if t is not None else None


def static_temperature_note(spec: TaskSpec, protocol: str, log: DefaultsLog) -> None:
    """A 0 K protocol given a temperature says so in the answer instead of ignoring it silently."""
    t = requested_temperature(spec)
    if t is not None and t != 0:
        log.report("static temperature", protocol=protocol, t=t)


_TIME_UNITS_PS = {
    "ps": 1.0,
    "picosecond": 1.0,
    "picoseconds": 1.0,
    "fs": 1e-3,
    "femtosecond": 1e-3,
    "femtoseconds": 1e-3,
    "ns": 1e3,
}


def md_controls(spec: TaskSpec, mass: float, log: DefaultsLog,
                equilibration: str = "equilibration_steps", production: str | None = None) -> dict:
    """The MD settings a request fixes, as Params fields: timestep (the default is reported),
    equilibration and production steps (under the protocol's field names) and the velocity seed."""
    controls = spec.controls
    fields: dict = {"timestep": md_timestep(spec, mass, log)}
    if controls.equilibration_steps:
        fields[equilibration] = controls.equilibration_steps
    if production and controls.production_steps:
        fields[production] = controls.production_steps
    if controls.seed is not None:
        fields["seed"] = controls.seed
    return fields


def md_timestep(spec: TaskSpec, mass: float, log: DefaultsLog) -> float:
    """MD timestep in ps (metal units): the request's (fs or ps), else the default for the mass (reported)."""
    q = spec.controls.timestep
    if q is None:
        return log.report("timestep" if mass >= LIGHT_MASS_U else "timestep (light)", light=LIGHT_MASS_U)
    factor = _TIME_UNITS_PS.get(q.unit.strip().lower())
    if factor is None or q.value <= 0:
        raise RequestError(f"timestep {q} is not a positive time in fs or ps")
    return q.value * factor


# ---------------------------------------------------------------------------------------------
# Which measurement the request names (routing between protocols that answer the same property)
# ---------------------------------------------------------------------------------------------

_TENSILE_WORDS = re.compile(r"tensile|tension|compressi(?:ve|on)|stress[- ]?strain|uniaxial|strain rate|pulling", re.I)
_COMPRESSIVE_WORDS = re.compile(r"compressi(?:ve|on)", re.I)


def requested_method(spec: TaskSpec) -> str | None:
    """'tensile' or 'compressive' when the request asks for a stress-strain test, else None.

    Reads an explicit method hint when the spec has one (proposed `SimulationControls.method`),
    otherwise the words of the request."""
    hint = getattr(spec.controls, "method", None)
    text = str(hint) if hint else spec.request
    if not _TENSILE_WORDS.search(text or ""):
        return None
    return (
        "compressive"
        if _COMPRESSIVE_WORDS.search(text) and not re.search(r"tensile|tension", text, re.I)
        else "tensile"
    )


# ---------------------------------------------------------------------------------------------
# Reading finished jobs
# ---------------------------------------------------------------------------------------------


def _number(raw: str) -> float | str:
    try:
        return float(raw)
    except ValueError:
        return raw


def simagent_lines(text: str) -> list[dict[str, float | str]]:
    """Each 'SIMAGENT key=value ...' line of a log as a dict (numbers as floats, tags as text)."""
    return [
        {key: _number(raw) for key, raw in _SIMAGENT.findall(line)}
        for line in text.splitlines()
        if line.startswith("SIMAGENT ")
    ]


def read_job(job_dir: Path, job_id: str) -> tuple[LammpsOutput, list[dict[str, float | str]], str]:
    """Output, SIMAGENT lines and log text of a finished job; raises when LAMMPS failed."""
    out = read_output(job_dir)
    if out.errors:
        raise CalculationFailed(f"LAMMPS failed in job {job_id}: {out.errors[0]}")
    if not out.finished:
        raise CalculationFailed(f"LAMMPS did not finish job {job_id} (no 'Total wall time' in the log)")
    out.refuse_nonfinite()
    text = (job_dir / "log.lammps").read_text(errors="replace")
    lines = simagent_lines(text)
    if not lines:
        raise ReadError(f"{job_dir / 'log.lammps'}: no SIMAGENT lines")
    return out, lines, text


def pick(lines: list[dict], **match: object) -> dict:
    """The last SIMAGENT line whose tags equal `match` (e.g. case='vacancy')."""
    for line in reversed(lines):
        if all(line.get(k) == v for k, v in match.items()):
            return line
    raise ReadError(f"no SIMAGENT line with {match}")


def need(line: dict, *keys: str) -> list[float]:
    missing = [k for k in keys if k not in line]
    if missing:
        raise ReadError(f"SIMAGENT line lacks {', '.join(missing)}: {line}")
    values = [float(line[k]) for k in keys]
    if not all(math.isfinite(v) for v in values):
        raise CalculationFailed(f"non-finite values in {line}")
    return values


_MIN_STOP = re.compile(r"^\s*Stopping criterion = (.+?)\s*$")
_MIN_ITER = re.compile(r"^\s*Iterations, force evaluations = (\d+) (\d+)")
_MIN_FNORM = re.compile(r"^\s*Force two-norm initial, final = (\S+) (\S+)")
_MIN_FMAX = re.compile(r"^\s*Force max component initial, final = (\S+) (\S+)")
_MIN_ENERGY = re.compile(r"^\s*Energy initial, next-to-last, final =\s*$")


def minimization_stats(log_text: str) -> list[dict]:
    """LAMMPS' 'Minimization stats' blocks in order: stopping criterion, iterations, force
    evaluations, final energy, force two-norm and max component."""
    blocks: list[dict] = []
    lines = log_text.splitlines()
    for i, line in enumerate(lines):
        if (m := _MIN_STOP.match(line)) and "Minimization stats" in "".join(lines[max(0, i - 2) : i]):
            blocks.append({"stop": m.group(1)})
        elif not blocks:
            continue
        elif m := _MIN_ITER.match(line):
            blocks[-1].update(iterations=int(m.group(1)), evaluations=int(m.group(2)))
        elif m := _MIN_FNORM.match(line):
            blocks[-1]["fnorm"] = float(m.group(2))
        elif m := _MIN_FMAX.match(line):
            blocks[-1]["fmax"] = float(m.group(2))
        elif _MIN_ENERGY.match(line) and i + 1 < len(lines):
            blocks[-1]["energy"] = float(lines[i + 1].split()[-1])
    return blocks


def check_minimization(stats: dict, max_force: float, what: str) -> None:
    """Unconverged minimisation gate: the force criterion was met, or the largest force component
    is below max_force (CG may stop on 'linesearch alpha is zero' at machine precision)."""
    if "fmax" not in stats:
        raise ReadError(f"{what}: no minimisation summary in the log")
    if stats["fmax"] > max_force:
        raise CalculationFailed(
            f"{what}: minimisation did not converge ({stats['stop']}; largest force component "
            f"{stats['fmax']:.2e} eV/A > {max_force:g} eV/A after {stats.get('iterations', '?')} iterations)"
        )


def read_table(path: Path) -> np.ndarray:
    """Numbers of a LAMMPS fix ave/time file (comment lines start with #)."""
    if not path.is_file():
        raise ReadError(f"{path.name} was not written")
    try:
        data = np.loadtxt(path, comments="#", ndmin=2)
    except ValueError as exc:
        raise ReadError(f"cannot parse {path}: {exc}") from None
    if data.size == 0:
        raise ReadError(f"{path} is empty")
    return data


def check_solid(msd: float, nn_distance: float, job_id: str) -> None:
    """Melting / transformation gate on the final mean-square displacement (Lindemann-type)."""
    if not math.isfinite(msd):
        raise CalculationFailed(f"job {job_id}: non-finite mean-square displacement")
    ratio = math.sqrt(max(msd, 0.0)) / nn_distance
    if ratio > MAX_RMS_DISPLACEMENT_OVER_NN:
        raise CalculationFailed(
            f"job {job_id}: atoms moved {ratio:.2f} nearest-neighbour distances (rms); the crystal melted or "
            f"transformed (a solid stays near 0.1)"
        )


def check_temperature(temps: np.ndarray, target: float, job_id: str, tolerance: float = 0.05) -> float:
    mean = float(np.mean(temps))
    if target > 0 and abs(mean - target) > tolerance * target + 1.0:
        set_point_missed(f"job {job_id}: mean temperature {mean:.1f} K, thermostat target {target:g} K")
    return mean


def plot_xy(path: Path, curves: list[tuple], xlabel: str, ylabel: str, title: str = "") -> None:
    """A small PNG: curves are (x, y, style, label[, yerr]) (matplotlib object API, no pyplot)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3.6))
    ax = fig.add_subplot()
    for curve in curves:
        x, y, style, label = curve[:4]
        if len(curve) > 4 and curve[4] is not None:
            ax.errorbar(x, y, yerr=curve[4], fmt=style, label=label, capsize=2)
        else:
            ax.plot(x, y, style, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=9)
    if any(c[3] for c in curves):
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
