"""lammps/planar_defects: surface energies and (generalized) stacking-fault energies at 0 K.

Surface energy: a slab with (hkl) planes normal to z, periodic in x and y and free (shrink-wrapped)
in z, is relaxed at the bulk lattice constant; E_s = (E_slab - N e_bulk) / (2 A). One job per facet.
Stacking faults (fcc): a slab with x = [1-10], y = [11-2], z = [111]; the upper half is shifted
rigidly by u along [11-2] and the atoms relax only along z (normal to the fault), so
gamma(u) = (E(u) - E(0)) / A (the free surfaces cancel). The intrinsic fault is u = b_p = a/sqrt(6);
the unstable fault energy gamma_us is the maximum of the curve between 0 and b_p (refined by a
parabola through the highest point and its neighbours). The curve's points are split over
`gsf_chunks` independent jobs (run in parallel).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import register
from tools.lammps.inputs import render
from tools.lammps.protocols.solid_common import (
    ATOMS_PER_CELL,
    EV_PER_A2_TO_J_PER_M2,
    SolidBase,
    SolidProtocol,
    need,
    pick,
    plot_xy,
    read_job,
    solid_base,
    static_temperature_note,
)

SURFACE = "surface_energy"
SFE = "stacking_fault_energy"
GSFE = "generalized_stacking_fault_energy"
Facet = Literal["100", "110", "111"]
DEFAULT_FACET = "111"
# Orientations (x, y, z rows; z is the surface normal; right-handed) and the periodic lengths
# along x, y, z in units of a (shortest lattice vectors along those directions).
ORIENTATIONS: dict[str, dict[str, tuple]] = {
    "fcc": {
        "100": (((1, 0, 0), (0, 1, 0), (0, 0, 1)), (1.0, 1.0, 1.0)),
        "110": (((0, 0, 1), (1, -1, 0), (1, 1, 0)), (1.0, 1 / math.sqrt(2), 1 / math.sqrt(2))),
        "111": (((1, -1, 0), (1, 1, -2), (1, 1, 1)), (1 / math.sqrt(2), math.sqrt(6) / 2, math.sqrt(3))),
    },
    "bcc": {
        "100": (((1, 0, 0), (0, 1, 0), (0, 0, 1)), (1.0, 1.0, 1.0)),
        "110": (((0, 0, 1), (1, -1, 0), (1, 1, 0)), (1.0, math.sqrt(2), math.sqrt(2))),
        "111": (((1, -1, 0), (1, 1, -2), (1, 1, 1)), (math.sqrt(2), math.sqrt(6), math.sqrt(3) / 2)),
    },
}
# Slab sizes: in-plane >= 8 A (any size is exact for an unreconstructed periodic surface),
# thickness >= 30 A, i.e. > 4 cut-offs of usual EAM potentials: the two surfaces do not interact
# and the slab's middle is bulk-like.
MIN_IN_PLANE_A = 8.0
MIN_THICKNESS_A = 30.0
# Stacking-fault slab: 24 (111) layers (~55 A in Al), in-plane ~ 11 x 10 A.
SF_REPETITIONS = (4, 2, 8)
# Default gamma line: 0 to 1.2 b_p in steps of 0.05 b_p (covers gamma_us and the intrinsic fault,
# and both sides of the fault's minimum); stacking-fault energy alone: 0, 0.9, 1, 1.1 b_p.
GSF_LINE = tuple(round(0.05 * i, 4) for i in range(25))
SF_POINTS = (0.0, 0.9, 1.0, 1.1)
_FACET_TEXT = re.compile(r"[({]\s*(-?\d)\s*(-?\d)\s*(-?\d)\s*[)}]")


class PlanarParams(SolidBase):
    # Defaults, each with its reason: the surface, the fault shifts and slabs a request leaves out
    DEFAULTS: ClassVar[dict[str, Default]] = {
        **SolidBase.DEFAULTS,
        "surface (fcc)": Default(DEFAULT_FACET, "no (hkl) in the request; the close-packed fcc surface",
                                 shown="({value})", parameter="surface"),
        "surface": Default(DEFAULT_FACET, "no (hkl) in the request", shown="({value})"),
        "gamma line": Default(GSF_LINE, "covers the unstable maximum and the intrinsic fault (b_p = a/sqrt 6)",
                              shown="0 to 1.2 b_p along [11-2] in 0.05 b_p steps"),
        "fault shifts": Default(SF_POINTS, "intrinsic fault at b_p; neighbours check that it is a minimum",
                                shown="0, 0.9, 1.0, 1.1 b_p"),
        "slab": Default("at least MIN_THICKNESS_A thick", f">= {MIN_THICKNESS_A:g} A thick: surfaces do not interact",
                        shown="{periods} periods ({atoms} atoms), free surfaces (shrink-wrapped z)",
                        parameter="({facet}) slab"),
        "fault slab": Default("SF_REPETITIONS", "rigid in-plane shift, relaxed normal to the plane (standard gamma "
                              "line)", shown="{layers} (111) layers, relaxation along [111] only, free surfaces"),
        "minimiser": Default("cg", "energies converged well below 1 mJ/m^2", shown="cg, ftol {p.ftol:g} eV/A"),
    }

    bulk_repetitions: tuple[int, int, int] = (3, 3, 3)
    facets: list[Facet] = Field(default_factory=list, description="surfaces to compute (none: no surface job)")
    slab_repetitions: dict[str, tuple[int, int, int]] = Field(default_factory=dict)
    sf_repetitions: tuple[int, int, int] = SF_REPETITIONS
    gsf_shifts: list[float] = Field(default_factory=list, description="shifts along [11-2] in units of b_p = a/sqrt(6)")
    gsf_chunks: int = Field(default=2, ge=1, le=16, description="parallel jobs the shifts are split over")
    relax_passes: int = Field(default=2, ge=1, le=5)
    ftol: float = Field(default=1e-8, gt=0, description="minimiser force tolerance, eV/angstrom")
    maxiter: int = 20000
    maxeval: int = 200000
    thermo_every: int = 1000

    @model_validator(mode="after")
    def _consistent(self) -> PlanarParams:
        if self.lattice not in ORIENTATIONS:
            raise ValueError(f"planar defects are set up for fcc and bcc, not {self.lattice}")
        if self.gsf_shifts and self.lattice != "fcc":
            raise ValueError("stacking faults are set up for fcc (111) only")
        if self.gsf_shifts and 0.0 not in self.gsf_shifts:
            raise ValueError("gsf_shifts must include 0 (the reference)")
        if self.sf_repetitions[2] % 2:
            raise ValueError("sf_repetitions[2] must be even (fault between the middle layers)")
        missing = [f for f in self.facets if f not in self.slab_repetitions]
        if missing:
            raise ValueError(f"slab_repetitions missing for {missing}")
        return self

    def chunk(self, k: int) -> list[float]:
        """Shifts of GSF job k (each job also computes u = 0, its own reference)."""
        mine = [u for i, u in enumerate(sorted(self.gsf_shifts)) if i % self.gsf_chunks == k]
        return sorted(set(mine) | {0.0})



def facets_in_request(text: str) -> list[str]:
    """Miller indices written as (hkl) or {hkl} in the request, as families 100/110/111."""
    found = []
    for match in _FACET_TEXT.finditer(text or ""):
        family = "".join(sorted((str(abs(int(g))) for g in match.groups()), reverse=True))
        if family in ("100", "110", "111") and family not in found:
            found.append(family)
    return found


def slab_repetitions(lattice: str, facet: str, a: float) -> tuple[int, int, int]:
    periods = ORIENTATIONS[lattice][facet][1]
    return (
        max(1, math.ceil(MIN_IN_PLANE_A / (periods[0] * a))),
        max(1, math.ceil(MIN_IN_PLANE_A / (periods[1] * a))),
        max(2, math.ceil(MIN_THICKNESS_A / (periods[2] * a))),
    )


@register
class PlanarDefects(SolidProtocol):
    name = "lammps/planar_defects"
    engine = "lammps"
    properties: ClassVar[frozenset[str]] = frozenset({SURFACE, SFE, GSFE})
    Params = PlanarParams
    description = (
        "Surface energies of (100)/(110)/(111) slabs and fcc (111) stacking-fault energies at 0 K: intrinsic "
        "fault and the generalized stacking-fault (gamma) line along [11-2] with its unstable maximum"
    )

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> PlanarParams:
        wanted = {p.name for p in spec.properties} or {SURFACE}
        faults = bool(wanted & {SFE, GSFE})
        fields = solid_base(spec, self.name, log, lattices=("fcc",) if faults else ("fcc", "bcc"))
        lattice = fields["lattice"]
        static_temperature_note(spec, self.name, log)
        facets = self._facets(spec, lattice, log) if SURFACE in wanted else []
        slabs = {f: slab_repetitions(lattice, f, fields["a_initial"]) for f in facets}
        shifts: list[float] = []
        if GSFE in wanted:
            shifts = list(log.report("gamma line"))
        elif SFE in wanted:
            shifts = list(log.report("fault shifts"))
        params = PlanarParams(**fields, facets=facets, slab_repetitions=slabs, gsf_shifts=shifts,
                              gsf_chunks=2 if len(shifts) > len(SF_POINTS) else 1)
        for facet, reps in slabs.items():
            n = round(ATOMS_PER_CELL[lattice] * np.prod(ORIENTATIONS[lattice][facet][1]) * np.prod(reps))
            log.report("slab", facet=facet, periods="x".join(map(str, reps)), atoms=n)
        if shifts:
            log.report("fault slab", layers=3 * params.sf_repetitions[2])
        log.report("minimiser", p=params)
        return params

    @staticmethod
    def _facets(spec: TaskSpec, lattice: str, log: DefaultsLog) -> list[str]:
        """The (hkl) surfaces the request names (a typed field when the spec has one, proposed
        SystemSpec.facets, else '(hkl)' in its words), or the declared default facet."""
        given = getattr(spec.system, "facets", None) or []
        facets = facets_in_request(" ".join(f"({f})" for f in given)) if given else facets_in_request(spec.request)
        return facets or [log.report("surface (fcc)" if lattice == "fcc" else "surface")]

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        values = p.model_dump()
        jobs = []
        for facet in p.facets:
            orient, periods = ORIENTATIONS[p.lattice][facet]
            text = render(
                "planar_defects_surface.lmp.j2",
                facet=facet,
                orient=orient,
                periods=periods,
                slab_repetitions=p.slab_repetitions[facet],
                **{k: v for k, v in values.items() if k != "slab_repetitions"},
            )
            jobs.append(
                Job(
                    id=f"surface_{facet}",
                    protocol=self.name,
                    stage="surface",
                    params=values,
                    inputs={"in.lammps": text},
                    time_limit_s=1200.0,
                )
            )
        if p.gsf_shifts:
            for k in range(p.gsf_chunks):
                jobs.append(
                    Job(
                        id=f"gsf_{k}",
                        protocol=self.name,
                        stage="stacking_fault",
                        params=values,
                        inputs={"in.lammps": render("planar_defects_gsf.lmp.j2", shifts=p.chunk(k), **values)},
                        time_limit_s=1800.0,
                    )
                )
        return jobs

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        wanted = {r.name for r in spec.properties} or set(self.properties)
        results: list[Result] = []
        for facet in p.facets:
            results += _surface_results(p, facet, job_dirs[f"surface_{facet}"], single=len(p.facets) == 1)
        if p.gsf_shifts:
            results += _fault_results(p, job_dirs, wanted)
        return [r for r in results if r.property in wanted]


def _surface_results(p: PlanarParams, facet: str, job_dir: Path, single: bool) -> list[Result]:
    job = f"surface_{facet}"
    _, lines, _ = read_job(job_dir, job)
    bulk, slab = pick(lines, case="bulk"), pick(lines, case="slab")
    a0, e_bulk = need(bulk, "a_A", "e_atom_eV")
    n, e_slab, area, fmax = need(slab, "natoms", "pe_eV", "area_A2", "fmax")
    periods = ORIENTATIONS[p.lattice][facet][1]
    reps = p.slab_repetitions[facet]
    expected = ATOMS_PER_CELL[p.lattice] * float(np.prod(periods)) * float(np.prod(reps))
    if round(n) != round(expected):
        raise CalculationFailed(f"({facet}) slab has {n:.0f} atoms, expected {expected:.0f}")
    if fmax > 1e-3:
        raise CalculationFailed(f"({facet}) slab not relaxed: largest force {fmax:.2e} eV/A")
    gamma = (e_slab - n * e_bulk) / (2 * area)  # eV/A^2
    if gamma <= 0:
        raise CalculationFailed(f"({facet}) surface energy {gamma:.4f} eV/A^2 is not positive: the slab is unstable")
    method = (
        f"0 K slab of {n:.0f} atoms ({reps[2]} periods along the ({facet}) normal, {periods[2] * reps[2] * a0:.1f} A "
        f"thick; in-plane {reps[0]}x{reps[1]} periods, area {area:.2f} A^2) of {p.potential_text()} at the relaxed "
        f"bulk lattice constant a = {a0:.5f} A, free surfaces, all atoms relaxed (cg); E_s = (E_slab - N e_bulk)/(2A) "
        f"with e_bulk = {e_bulk:.6f} eV/atom; deterministic"
    )
    base = SURFACE if single else f"{SURFACE}_{facet}"
    log = str(job_dir / "log.lammps")
    return [
        Result(quantity=base, value=gamma * EV_PER_A2_TO_J_PER_M2, unit="J/m^2", job=job, method=method, log=log),
        Result(
            quantity=f"{base}_meV_per_A2", value=gamma * 1000, unit="meV/angstrom^2", job=job, method=method, log=log
        ),
    ]


def _fault_results(p: PlanarParams, job_dirs: dict[str, Path], wanted: set[str]) -> list[Result]:
    energies: dict[float, float] = {}
    area = bp = a0 = None
    for k in range(p.gsf_chunks):
        job = f"gsf_{k}"
        _, lines, _ = read_job(job_dirs[job], job)
        a0 = need(pick(lines, case="bulk"), "a_A")[0]
        points = [line for line in lines if line.get("case") == "gsf"]
        ref = next(line for line in points if float(line["shift"]) == 0.0)
        e0, area, bp = need(ref, "pe_eV", "area_A2", "bp_A")
        for line in points:
            natoms, energy, fmax = need(line, "natoms", "pe_eV", "fmax")
            if round(natoms) != round(need(ref, "natoms")[0]):
                raise CalculationFailed(f"{job}: atoms lost at shift {line['shift']}")
            if fmax > 1e-3:
                raise CalculationFailed(f"{job}: shift {line['shift']} b_p not relaxed (force {fmax:.2e} eV/A)")
            # each job's own u = 0 is its reference: mJ/m^2
            energies[float(line["shift"])] = (energy - e0) / area * EV_PER_A2_TO_J_PER_M2 * 1000
    shifts = np.array(sorted(energies))
    gamma = np.array([energies[u] for u in shifts])
    home = job_dirs["gsf_0"]
    table = home / "gsf_curve.csv"
    np.savetxt(
        table,
        np.column_stack([shifts, shifts * bp, gamma]),
        delimiter=",",
        fmt="%.6f",
        header="shift (units of b_p = a/sqrt(6)), shift (angstrom), gamma (mJ/m^2)",
    )
    isf = energies.get(1.0)
    if isf is None:
        raise CalculationFailed("the stacking-fault shifts do not include u = b_p")
    neighbours = [energies[u] for u in shifts if 0.85 <= u <= 1.15 and u != 1.0]
    if neighbours and isf > min(neighbours) + 0.05:
        raise CalculationFailed(
            f"the intrinsic stacking fault is not a local energy minimum with this potential "
            f"(gamma(b_p) = {isf:.1f} mJ/m^2, a neighbouring shift is lower)"
        )
    if isf <= 0:
        raise CalculationFailed(
            f"negative intrinsic stacking-fault energy ({isf:.1f} mJ/m^2): fcc is not stable "
            "against hcp with this potential"
        )
    setup = (
        f"0 K, fcc (111) slab of {3 * p.sf_repetitions[2]} layers (x [1-10], y [11-2], z [111], area {area:.2f} A^2) "
        f"of {p.potential_text()}, a = {a0:.5f} A; upper half shifted rigidly by u along [11-2], atoms relaxed "
        f"along [111] only (cg), free surfaces; gamma(u) = (E(u) - E(0))/A; b_p = a/sqrt(6) = {bp:.4f} A; "
        f"deterministic"
    )
    results = [
        Result(
            quantity=SFE,
            value=isf,
            unit="mJ/m^2",
            job="gsf_0",
            data_file=str(table),
            method=f"{setup}; intrinsic fault gamma_isf = gamma(b_p), a local minimum (checked at "
            f"{', '.join(f'{u:g}' for u in shifts if 0.85 <= u <= 1.15 and u != 1.0)} b_p)",
        )
    ]
    if GSFE in wanted:
        inside = (shifts > 0) & (shifts < 1.0)
        if inside.sum() < 3:
            raise CalculationFailed("too few shifts between 0 and b_p for the unstable fault energy")
        i = int(np.flatnonzero(inside)[np.argmax(gamma[inside])])
        us, u_us = float(gamma[i]), float(shifts[i])
        if 0 < i < len(shifts) - 1:  # parabola through the maximum and its neighbours
            x, y = shifts[i - 1 : i + 2], gamma[i - 1 : i + 2]
            c2, c1, c0 = np.polyfit(x, y, 2)
            if c2 < 0:
                u_us = float(-c1 / (2 * c2))
                us = float(c0 - c1**2 / (4 * c2))
        plot = home / "gsf_curve.png"
        plot_xy(
            plot,
            [(shifts, gamma, "o-", "")],
            "shift along [11-2] (units of b_p = a/sqrt 6)",
            "gamma (mJ/m^2)",
            f"{p.element} (111) generalized stacking fault, {p.potential_file}",
        )
        line_method = (
            f"{setup}; {len(shifts)} shifts from 0 to {shifts.max():g} b_p over {p.gsf_chunks} jobs; plot {plot.name}"
        )
        results += [
            Result(
                quantity=f"{GSFE}_unstable",
                value=us,
                unit="mJ/m^2",
                job="gsf_0",
                data_file=str(table),
                method=f"{line_method}; gamma_us = maximum between 0 and b_p at u = {u_us:.3f} b_p (parabola "
                "through the highest point and its neighbours)",
            ),
            Result(
                quantity=f"{GSFE}_intrinsic",
                value=isf,
                unit="mJ/m^2",
                job="gsf_0",
                data_file=str(table),
                method=f"{line_method}; gamma_isf = gamma(b_p)",
            ),
        ]
    return results
