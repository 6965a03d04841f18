"""lammps/elastic_constants: elastic constants C_ij by +/- strain, and the Voigt-Reuss-Hill moduli.

0 K (default): one job relaxes the crystal to zero stress, then applies each Voigt strain
+/-e (normal strains by scaling the box, shears by tilting it; atoms mapped affinely) and relaxes
the atoms at fixed box (internal relaxation), as in the LAMMPS ELASTIC example.
C_ij = -(P_i(+e_j) - P_i(-e_j)) / (2 e) (LAMMPS' pressure tensor P = -stress): central
differences, error O(e^2).
Finite T: a reference job equilibrates NPT at zero pressure and sets the box to its average; one
job per strain direction (in parallel) strains it +/-e and averages the stress over NVT runs;
standard errors by block averaging (simagent.stats), propagated to C_ij. These are isothermal
stress-strain coefficients at the thermally expanded volume (kinetic stress included).
Bulk, shear, Young's moduli and Poisson's ratio: Voigt-Reuss-Hill averages from pymatgen's
ElasticTensor (k_vrh, g_vrh, y_mod, homogeneous_poisson).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed
from simagent.models import CUBIC_POISSON_LABEL, CUBIC_SHEAR_LABELS, Job, Result, TaskSpec
from simagent.protocols import register
from simagent.stats import block_average
from tools.lammps.inputs import render
from tools.lammps.protocols.solid_common import (
    BAR_TO_GPA,
    CUBIC,
    DEFAULT_SEED,
    SolidMDBase,
    SolidProtocol,
    check_solid,
    check_temperature,
    cubic_repetitions,
    md_controls,
    need,
    pick,
    read_job,
    read_table,
    requested_temperature,
    solid_base,
)

PROPERTIES = frozenset({"elastic_constants", "bulk_modulus", "shear_modulus", "youngs_modulus", "poisson_ratio"})
STATIC_JOB = "static"
REFERENCE_JOB = "reference"
VOIGT = ("xx", "yy", "zz", "yz", "xz", "xy")
PRESSURE_KEYS = ("pxx_bar", "pyy_bar", "pzz_bar", "pyz_bar", "pxz_bar", "pxy_bar")
# Strain amplitudes. 0 K: 1e-4 is well inside the linear regime and still gives stress
# differences ~1e3 larger than the minimiser's residual stress (ftol 1e-10). Finite T: 1 % lifts
# the stress change (~2 GPa for C ~ 100 GPa) far above the thermal noise of the mean; the
# central difference cancels the quadratic (third-order-constant) term.
STATIC_STRAIN = 1e-4
THERMAL_STRAIN = 0.01
# Gates: Voigt-symmetry and cubic-symmetry violations beyond this (plus 5 standard errors)
# mean the strained states were not comparable (unrelaxed, transformed, or noise-dominated).
SYMMETRY_TOLERANCE_GPA = 1.0
MONTE_CARLO_SAMPLES = 400


class ElasticParams(SolidMDBase):
    # Defaults, each with its reason: a static (0 K) run unless a temperature is given, strains and
    # cells for each kind of run, and the minimiser or MD schedule the parameters fix
    DEFAULTS: ClassVar[dict[str, Default]] = {
        **SolidMDBase.DEFAULTS,
        "temperature": Default(0.0, "no temperature given: static elastic constants by minimisation",
                               shown="0 K (static)"),
        "supercell (static)": Default(3, "a perfect crystal needs only a few cells at 0 K (homogeneous strain)",
                                      shown="{cells} cells ({atoms} atoms)", parameter="supercell"),
        "supercell (thermal)": Default(4, "finite T: 256-atom fcc cell keeps the stress noise of 10 ps averages near "
                                       "1 % of C", shown="{cells} cells ({atoms} atoms)", parameter="supercell"),
        "strain (static)": Default(STATIC_STRAIN, "central differences; linear regime, far above minimiser noise",
                                   shown="+/-{value:g}", parameter="strain"),
        "strain (thermal)": Default(THERMAL_STRAIN, "central differences; large enough to beat thermal noise",
                                    shown="+/-{value:g}", parameter="strain"),
        "strain directions": Default((1, 4), "cubic symmetry: C11, C12 from the xx strain and C44 from the yz shear "
                                     "(2 jobs, not 6)", shown="xx and yz"),
        "MD schedule": Default("NPT, then NVT per strain", "LAMMPS fix nh guidance (damping ~100 / ~1000 steps); "
                               "block-averaged errors",
                               shown="NPT {p.npt_equilibration_steps}+{p.npt_average_steps} steps (box averaged), then "
                               "per strain NVT {p.nvt_equilibration_steps} + {p.production_steps} steps, stress every "
                               "{p.sample_every}; Nose-Hoover Tdamp {p.tdamp:g} ps, Pdamp {p.pdamp:g} ps"),
        "minimiser": Default("cg + box/relax", "tight force tolerance so stress differences at 1e-4 strain are exact "
                             "to ~1e-4 GPa", shown="cg, ftol {p.ftol:g} eV/A; box/relax {p.box_relax} 0 bar"),
    }

    repetitions: tuple[int, int, int]
    temperature: float = Field(default=0.0, ge=0, description="K; 0 = static (minimisation)")
    strain: float = Field(gt=0, le=0.05, description="Voigt strain amplitude e (engineering shear for 4-6)")
    strain_directions: list[int] = Field(description="Voigt directions strained (1..6)")
    box_relax: Literal["iso", "aniso"] = "iso"
    relax_passes: int = Field(default=2, ge=1, le=5)
    ftol: float = Field(default=1e-10, gt=0, description="minimiser force tolerance, eV/angstrom")
    maxiter: int = 10000
    maxeval: int = 100000
    max_force_eV_per_A: float = Field(default=1e-4, gt=0, description="gate on the largest force after relaxation")
    max_residual_stress_bar: float = Field(default=100.0, gt=0, description="gate on the 0 K reference stress")
    thermo_every: int = 500
    # finite temperature
    seed: int = DEFAULT_SEED
    npt_equilibration_steps: int = 5000
    npt_average_steps: int = 5000
    nvt_equilibration_steps: int = 1000
    production_steps: int = 5000
    sample_every: int = 10

    @model_validator(mode="after")
    def _directions(self) -> ElasticParams:
        dirs = sorted(set(self.strain_directions))
        if not dirs or dirs[0] < 1 or dirs[-1] > 6:
            raise ValueError("strain_directions must be Voigt indices 1..6")
        if dirs != [1, 2, 3, 4, 5, 6] and not (self.lattice in CUBIC and {1, 4} <= set(dirs)):
            raise ValueError("all six strain directions are needed (cubic lattices: at least 1 and 4)")
        if self.npt_average_steps % 10 or self.npt_average_steps < 100:
            raise ValueError("npt_average_steps must be a multiple of 10 and at least 100")
        return self



@register
class ElasticConstants(SolidProtocol):
    name = "lammps/elastic_constants"
    engine = "lammps"
    properties: ClassVar[frozenset[str]] = PROPERTIES
    Params = ElasticParams
    description = (
        "Elastic constants C_ij of a one-element crystal by +/- strain (0 K: minimisation at each strain; "
        "finite T: NVT stress averages), and Voigt-Reuss-Hill bulk, shear, Young's moduli and Poisson ratio"
    )

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> ElasticParams:
        fields = solid_base(spec, self.name, log)
        lattice = fields["lattice"]
        temperature = log.take("temperature", requested_temperature(spec))
        thermal = temperature > 0
        run = "thermal" if thermal else "static"
        reps = cubic_repetitions(spec, lattice, 4 if thermal else 3, log, f"supercell ({run})")
        strain = log.report(f"strain ({run})")
        directions = [1, 2, 3, 4, 5, 6]
        if thermal and lattice in CUBIC:
            directions = log.report("strain directions")
        extra = md_controls(spec, fields["mass"], log, "npt_equilibration_steps", "production_steps") \
            if thermal else {}
        params = ElasticParams(**fields, repetitions=reps, temperature=temperature, strain=strain,
                               strain_directions=directions, box_relax="aniso" if lattice == "hcp" else "iso", **extra)
        log.report("MD schedule" if thermal else "minimiser", p=params)
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        values = {**p.model_dump(), "tdamp": p.tdamp, "pdamp": p.pdamp}
        if p.temperature == 0:
            return [
                Job(
                    id=STATIC_JOB,
                    protocol=self.name,
                    stage="static",
                    params=p.model_dump(),
                    inputs={"in.lammps": render("elastic_constants_static.lmp.j2", **values)},
                    time_limit_s=600.0,
                )
            ]
        jobs = [
            Job(
                id=REFERENCE_JOB,
                protocol=self.name,
                stage="equilibrate",
                params=p.model_dump(),
                inputs={"in.lammps": render("elastic_constants_reference.lmp.j2", **values)},
                time_limit_s=3600.0,
            )
        ]
        for d in sorted(set(p.strain_directions)):
            jobs.append(
                Job(
                    id=f"strain_{d}",
                    protocol=self.name,
                    stage="strain",
                    params=p.model_dump(),
                    inputs={"in.lammps": render("elastic_constants_strain.lmp.j2", direction=d, **values)},
                    depends_on=[REFERENCE_JOB],
                    stage_in={REFERENCE_JOB: ["reference.data"]},
                    time_limit_s=3600.0,
                )
            )
        return jobs

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        if p.temperature == 0:
            columns, errors, how, home = _static_columns(p, job_dirs[STATIC_JOB])
        else:
            columns, errors, how, home = _thermal_columns(p, job_dirs)
        tensor, sigma = assemble(p, columns, errors)
        check_tensor(tensor, sigma)
        return results_from_tensor(p, tensor, sigma, how, home, spec)


# ---------------------------------------------------------------------------------------------
# Analysis
# ---------------------------------------------------------------------------------------------


def _static_columns(p: ElasticParams, job_dir: Path) -> tuple[dict, dict, str, Path]:
    _, lines, _ = read_job(job_dir, STATIC_JOB)
    ref = pick(lines, case="reference")
    natoms = need(ref, "natoms")[0]
    residual = max(abs(v) for v in need(ref, *PRESSURE_KEYS))
    if residual > p.max_residual_stress_bar:
        raise CalculationFailed(f"reference crystal not relaxed: residual stress {residual:.1f} bar")
    columns: dict[int, np.ndarray] = {}
    worst_force = need(ref, "fmax")[0]
    for d in p.strain_directions:
        plus, minus = pick(lines, case="strain", dir=d, sign=1), pick(lines, case="strain", dir=d, sign=-1)
        for line in (plus, minus):
            if need(line, "natoms")[0] != natoms:
                raise CalculationFailed(f"atoms lost in the strain {VOIGT[d - 1]} run")
            worst_force = max(worst_force, need(line, "fmax")[0])
        dp = np.array(need(plus, *PRESSURE_KEYS)) - np.array(need(minus, *PRESSURE_KEYS))
        columns[d] = -dp / (2 * p.strain) * BAR_TO_GPA
    if worst_force > p.max_force_eV_per_A:
        raise CalculationFailed(f"internal relaxation not converged: largest force {worst_force:.2e} eV/A")
    a = need(ref, "lx_A")[0] / p.repetitions[0]
    how = (
        f"0 K, {'x'.join(map(str, p.repetitions))} {p.lattice} supercell ({natoms:.0f} atoms) of {p.potential_text()} "
        f"relaxed to zero stress (a = {a:.5f} A, residual {residual:.2g} bar); Voigt strains +/-{p.strain:g} with "
        f"internal relaxation (cg, ftol {p.ftol:g}); C_ij = -dP_i/de_j by central differences; deterministic"
    )
    return columns, {}, how, job_dir


def _thermal_columns(p: ElasticParams, job_dirs: dict[str, Path]) -> tuple[dict, dict, str, Path]:
    ref_dir = job_dirs[REFERENCE_JOB]
    _, lines, _ = read_job(ref_dir, REFERENCE_JOB)
    avg = pick(lines, case="npt_average")
    ref = pick(lines, case="reference")
    natoms = need(ref, "natoms")[0]
    lx, ly, lz, t_npt = need(avg, "lx_A", "ly_A", "lz_A", "temp_K")
    box = need(ref, "lx_A", "ly_A", "lz_A")
    if max(abs(b - m) / m for b, m in zip(box, (lx, ly, lz), strict=True)) > 1e-6:
        raise CalculationFailed(f"the reference box {box} was not set to the NPT average ({lx}, {ly}, {lz})")
    columns, errors = {}, {}
    samples = 0
    for d in sorted(set(p.strain_directions)):
        job = f"strain_{d}"
        job_dir = job_dirs[job]
        _, slines, _ = read_job(job_dir, job)
        means, ses = [], []
        for sign, tag in ((1, "plus"), (-1, "minus")):
            line = pick(slines, case="strain", dir=d, sign=sign)
            if need(line, "natoms")[0] != natoms:
                raise CalculationFailed(f"atoms lost in job {job}")
            table = read_table(job_dir / f"stress_{tag}.dat")
            check_solid(float(table[-1, 8]), p.nn_distance, job)
            check_temperature(table[:, 7], p.temperature, job)
            stats = [block_average(table[:, 1 + k]) for k in range(6)]
            means.append(np.array([s[0] for s in stats]))
            ses.append(np.array([s[1] for s in stats]))
            samples = len(table)
        columns[d] = -(means[0] - means[1]) / (2 * p.strain) * BAR_TO_GPA
        errors[d] = np.sqrt(ses[0] ** 2 + ses[1] ** 2) / (2 * p.strain) * BAR_TO_GPA
    how = (
        f"{p.temperature:g} K, {'x'.join(map(str, p.repetitions))} {p.lattice} supercell ({natoms:.0f} atoms) of "
        f"{p.potential_text()}; NPT at 0 bar ({p.npt_equilibration_steps}+{p.npt_average_steps} steps, "
        f"<T> = {t_npt:.1f} K), box set to its average ({lx:.4f} x {ly:.4f} x {lz:.4f} A); Voigt strains "
        f"+/-{p.strain:g} along {', '.join(VOIGT[d - 1] for d in sorted(set(p.strain_directions)))}, each NVT "
        f"{p.nvt_equilibration_steps} steps then {p.production_steps} steps ({samples} stress samples, dt "
        f"{p.timestep:g} ps); C_ij = -d<P_i>/de_j by central differences; errors: block averages (Flyvbjerg-Petersen)"
    )
    return columns, errors, how, ref_dir


def assemble(
    p: ElasticParams, columns: dict[int, np.ndarray], errors: dict[int, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """6x6 Voigt tensor (GPa) and its standard errors from the measured columns C[:, j]."""
    tensor = np.zeros((6, 6))
    sigma = np.zeros((6, 6))
    if sorted(columns) == [1, 2, 3, 4, 5, 6]:
        for d, col in columns.items():
            tensor[:, d - 1] = col
            sigma[:, d - 1] = errors.get(d, np.zeros(6))
        # Voigt symmetry C_ij = C_ji holds for a hyperelastic crystal; average the two estimates
        return 0.5 * (tensor + tensor.T), 0.5 * np.sqrt(sigma**2 + sigma.T**2)
    # cubic crystal from the xx and yz strains only
    col1, col4 = columns[1], columns[4]
    e1, e4 = errors.get(1, np.zeros(6)), errors.get(4, np.zeros(6))
    c11, c12, c44 = col1[0], 0.5 * (col1[1] + col1[2]), col4[3]
    s11, s12, s44 = e1[0], 0.5 * math.hypot(e1[1], e1[2]), e4[3]
    return cubic_tensor(c11, c12, c44), cubic_tensor(s11, s12, s44)


def cubic_tensor(c11: float, c12: float, c44: float) -> np.ndarray:
    tensor = np.zeros((6, 6))
    tensor[:3, :3] = c12
    np.fill_diagonal(tensor[:3, :3], c11)
    tensor[3, 3] = tensor[4, 4] = tensor[5, 5] = c44
    return tensor


def check_tensor(tensor: np.ndarray, sigma: np.ndarray) -> None:
    """Born stability: the Voigt matrix must be positive definite."""
    eigenvalues = np.linalg.eigvalsh(tensor)
    if eigenvalues.min() <= 0:
        raise CalculationFailed(
            "elastic tensor is not positive definite (eigenvalues "
            f"{', '.join(f'{v:.1f}' for v in eigenvalues)} GPa): the crystal is mechanically unstable with this "
            "potential, or the strained states did not relax to the same structure"
        )


def independent_constants(p: ElasticParams, tensor: np.ndarray, sigma: np.ndarray) -> dict[str, tuple[float, float]]:
    """Symmetry-averaged independent constants, with a gate on symmetry violations."""

    def group(pairs: list[tuple[int, int]]) -> tuple[float, float, float]:
        vals = np.array([tensor[i - 1, j - 1] for i, j in pairs])
        errs = np.array([sigma[i - 1, j - 1] for i, j in pairs])
        return float(vals.mean()), float(np.sqrt((errs**2).sum()) / len(vals)), float(vals.max() - vals.min())

    if p.lattice in CUBIC:
        groups = {"C11": [(1, 1), (2, 2), (3, 3)], "C12": [(1, 2), (1, 3), (2, 3)], "C44": [(4, 4), (5, 5), (6, 6)]}
    else:  # hexagonal, c along z
        groups = {
            "C11": [(1, 1), (2, 2)],
            "C12": [(1, 2)],
            "C13": [(1, 3), (2, 3)],
            "C33": [(3, 3)],
            "C44": [(4, 4), (5, 5)],
            "C66": [(6, 6)],
        }
    # both symmetries: no coupling between normal and shear strains, nor between different shears
    zero = [(i, j) for i in range(1, 7) for j in range(i + 1, 7) if j >= 4]
    out = {}
    for name, pairs in groups.items():
        mean, err, spread = group(pairs)
        if spread > SYMMETRY_TOLERANCE_GPA + 5 * err * math.sqrt(len(pairs)):
            raise CalculationFailed(f"{p.lattice} symmetry broken: {name} entries differ by {spread:.2f} GPa")
        out[name] = (mean, err)
    for i, j in zero:
        if abs(tensor[i - 1, j - 1]) > SYMMETRY_TOLERANCE_GPA + 5 * sigma[i - 1, j - 1]:
            raise CalculationFailed(
                f"{p.lattice} symmetry broken: C{i}{j} = {tensor[i - 1, j - 1]:.2f} GPa should vanish"
            )
    return out


def vrh_moduli(tensor: np.ndarray) -> dict[str, float]:
    """Voigt-Reuss-Hill moduli (GPa) and Poisson's ratio from pymatgen's ElasticTensor."""
    from pymatgen.analysis.elasticity import ElasticTensor

    et = ElasticTensor.from_voigt(tensor)
    return {
        "bulk_modulus": float(et.k_vrh),
        "shear_modulus": float(et.g_vrh),
        "youngs_modulus": float(et.y_mod) / 1e9,  # pymatgen returns y_mod in Pa for a tensor in GPa
        "poisson_ratio": float(et.homogeneous_poisson),
        "bulk_voigt": float(et.k_voigt),
        "bulk_reuss": float(et.k_reuss),
        "shear_voigt": float(et.g_voigt),
        "shear_reuss": float(et.g_reuss),
    }


def results_from_tensor(
    p: ElasticParams, tensor: np.ndarray, sigma: np.ndarray, how: str, home: Path, spec: TaskSpec
) -> list[Result]:
    job = STATIC_JOB if p.temperature == 0 else REFERENCE_JOB
    constants = independent_constants(p, tensor, sigma)
    moduli = vrh_moduli(tensor)
    thermal = p.temperature > 0
    spread: dict[str, float] = {}
    if thermal:  # propagate the C_ij errors to the moduli by sampling (seeded, reproducible)
        rng = np.random.default_rng(p.seed)
        draws = []
        for _ in range(MONTE_CARLO_SAMPLES):
            noise = rng.normal(size=(6, 6)) * sigma
            sample = tensor + 0.5 * (noise + noise.T)
            if np.linalg.eigvalsh(sample).min() > 0:
                draws.append(vrh_moduli(sample))
        spread = {k: float(np.std([d[k] for d in draws], ddof=1)) for k in draws[0]} if len(draws) > 10 else {}
    table = home / "elastic_tensor.csv"
    header = "Voigt elastic tensor C_ij in GPa (rows: stress xx yy zz yz xz xy; columns: strain)"
    np.savetxt(table, tensor, delimiter=",", fmt="%.6f", header=header)
    if thermal:
        np.savetxt(
            home / "elastic_tensor_stderr.csv",
            sigma,
            delimiter=",",
            fmt="%.6f",
            header="standard errors of C_ij in GPa",
        )
    (home / "elastic_summary.json").write_text(
        json.dumps(
            {
                "temperature_K": p.temperature,
                "constants_GPa": {k: v[0] for k, v in constants.items()},
                "stderr_GPa": {k: v[1] for k, v in constants.items()},
                "moduli": moduli,
                "moduli_stderr": spread,
                "potential": p.potential_file,
            },
            indent=1,
        )
    )
    results: list[Result] = []
    wanted = {r.name for r in spec.properties} or set(PROPERTIES)
    if "elastic_constants" in wanted:
        for name, (value, err) in constants.items():
            results.append(
                Result(
                    quantity=f"elastic_constants_{name}",
                    value=value,
                    unit="GPa",
                    uncertainty=err if thermal else None,
                    job=job,
                    method=how,
                    data_file=str(table),
                )
            )
    vrh = (
        f"; Voigt-Reuss-Hill average of the tensor (pymatgen ElasticTensor: K_V {moduli['bulk_voigt']:.2f}, "
        f"K_R {moduli['bulk_reuss']:.2f}, G_V {moduli['shear_voigt']:.2f}, G_R {moduli['shear_reuss']:.2f} GPa)"
    )
    formulas = {
        "bulk_modulus": ("GPa", "K_VRH"),
        "shear_modulus": ("GPa", "G_VRH"),
        "youngs_modulus": ("GPa", "E = 9KG/(3K+G) with VRH K and G"),
        "poisson_ratio": ("", "nu = (3K-2G)/(2(3K+G)) with VRH K and G (isotropic polycrystal)"),
    }
    if "shear_modulus" in wanted and p.lattice in CUBIC:
        # the two cubic shear moduli, labelled as LAMMPS examples/ELASTIC prints them
        # ("Shear Modulus 1" = C44, "Shear Modulus 2" = (C11 - C12)/2)
        (c11, e11), (c12, e12), (c44, e44) = constants["C11"], constants["C12"], constants["C44"]
        for label, value, err in ((CUBIC_SHEAR_LABELS[0], c44, e44),
                                  (CUBIC_SHEAR_LABELS[1], (c11 - c12) / 2, math.hypot(e11, e12) / 2)):
            results.append(Result(quantity=f"shear_modulus ({label})", property="shear_modulus", label=label,
                                  value=value, unit="GPa", uncertainty=err if thermal else None, job=job,
                                  method=f"{how}; cubic shear modulus {label}", data_file=str(table)))
    if "poisson_ratio" in wanted and p.lattice in CUBIC:
        (c11, e11), (c12, e12) = constants["C11"], constants["C12"]
        nu = c12 / (c11 + c12)  # uniaxial stress along a cube axis; examples/ELASTIC's 'Poisson Ratio'
        nu_se = math.hypot(c12 * e11, c11 * e12) / (c11 + c12) ** 2
        results.append(Result(quantity=f"poisson_ratio ({CUBIC_POISSON_LABEL})", property="poisson_ratio",
                              label=CUBIC_POISSON_LABEL, value=nu, unit="", uncertainty=nu_se if thermal else None,
                              job=job, method=f"{how}; nu = C12/(C11 + C12) (cubic, stress along [100])",
                              data_file=str(table)))
    for name, (unit, formula) in formulas.items():
        if name in wanted:
            results.append(
                Result(
                    quantity=name,
                    value=moduli[name],
                    unit=unit,
                    uncertainty=spread.get(name) if thermal else None,
                    job=job,
                    method=f"{how}{vrh}; {formula}"
                    + ("; errors by sampling C_ij within their standard errors" if thermal else ""),
                    data_file=str(table),
                )
            )
    return results
