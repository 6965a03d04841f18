"""Protocol lammps/chain_conformation: radius of gyration and end-to-end distance of
Kremer-Grest bead-spring chains in a melt (reduced LJ units).

Model (Kremer & Grest, J. Chem. Phys. 92, 5057 (1990)): beads of mass m = 1 interact by the
purely repulsive LJ potential cut at 2^(1/6) sigma and shifted (WCA, eps = sigma = 1); bonded
neighbours are held by FENE springs with K = 30 eps/sigma^2 and R0 = 1.5 sigma. Dynamics: velocity
Verlet with a Langevin thermostat, Gamma = 0.5/tau (damping 2 tau), as in Kremer & Grest.

One job. `jobs()` writes the start configuration into the job folder as a LAMMPS data file (an
input of the job): M chains of N beads as random walks with bond length 0.97 sigma, no bead
closer than 1.02 sigma to its second neighbour along the chain (the walk of Kremer & Grest),
placed at random in a cubic box at the requested bead density. The overlaps between chains are
removed by a soft push-off, then the KG melt is equilibrated and sampled. Averages: per frame the
mean over chains of R_g^2 and R_ee^2 from the unwrapped trajectory (DCD), then the time series
after detected equilibration with Flyvbjerg-Petersen block errors (simagent.stats). Gates: bonds
intact (mean bond length near 0.97), LAMMPS' own compute gyration/chunk agrees with the trajectory
analysis, and <R_ee^2>/<R_g^2> lies near the Gaussian-chain value 6 N/(N + 1) (6 for long chains).
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, ReadError, RequestError
from simagent.models import Job, Quantity, Result, TaskSpec
from simagent.protocols import Protocol, register
from simagent.stats import block_average, detect_equilibration
from tools.lammps.inputs import render
from tools.lammps.protocols.fluid import REDUCED, check_temperature, norm_unit, plot, timestep_in
from tools.lammps.protocols.fluid_common import (
    as_params,
    check_averaged_properties,
    check_columns,
    check_full_production,
    finished_output,
    md_job,
)

RG = "radius_of_gyration"
REE = "end_to_end_distance"
CONFORMATION = frozenset({RG, REE})

WCA_CUTOFF = 2.0 ** (1.0 / 6.0)
DATA_FILE = "chains.data"
KG_1990 = "Kremer & Grest, J. Chem. Phys. 92, 5057 (1990)"
MAX_CHAIN_LENGTH = 100  # beyond N_e ~ 85 (KG melt) brute-force MD cannot equilibrate the chains

START_BOND_LENGTH = 0.97  # the mean KG bond length at T* = 1 (Kremer & Grest 1990)
START_MIN_SECOND_NEIGHBOUR = 1.02  # Kremer & Grest's random-walk start: no immediate back-folding
PUSHOFF_PREFACTOR = 60.0  # final amplitude of the soft repulsion (eps); beads end ~0.9 sigma apart
PUSHOFF_STEPS = 2000
RELAX_STEPS = 1000
MIN_BEADS = 1000  # fewest beads by default: enough chains for the chain average
# Rouse estimate of the slowest relaxation: tau_R ~ N^2 tau for the KG melt (order of magnitude
# from the Rouse model with the melt's monomer friction); equilibration and production scale with it
ROUSE_TAU_PER_N2 = 1.0


def chain_length_of(spec: TaskSpec) -> int | None:
    """Beads per chain: SystemSpec.chain_length (proposed field) or 'N beads' in SystemSpec.molecule."""
    system = spec.system
    if system is None:
        return None
    explicit = getattr(system, "chain_length", None)
    if explicit:
        return int(explicit)
    match = re.search(r"(\d+)\s*(?:beads?|monomers?|-mers?)\b", system.molecule or "")
    return int(match.group(1)) if match else None


def ideal_ratio(chain_length: int) -> float:
    """<R_ee^2>/<R_g^2> of a Gaussian (freely jointed) chain of N beads: 6 N / (N + 1)."""
    return 6.0 * chain_length / (chain_length + 1)


# ---------------------------------------------------------------------------------------------
# Start configuration (written into the job folder as a LAMMPS data file)
# ---------------------------------------------------------------------------------------------


def random_walk_chains(
    n_chains: int,
    chain_length: int,
    box: float,
    seed: int,
    bond: float = START_BOND_LENGTH,
    min_second: float = START_MIN_SECOND_NEIGHBOUR,
) -> np.ndarray:
    """Unwrapped bead positions (M, N, 3): random walks of fixed step `bond` starting at random
    points of the box, each bead at least `min_second` from the bead two positions back."""
    rng = np.random.default_rng(seed)
    chains = np.empty((n_chains, chain_length, 3))
    for m in range(n_chains):
        chains[m, 0] = rng.uniform(0.0, box, 3)
        for i in range(1, chain_length):
            for _ in range(1000):
                step = rng.normal(size=3)
                candidate = chains[m, i - 1] + bond * step / np.linalg.norm(step)
                if i < 2 or np.linalg.norm(candidate - chains[m, i - 2]) >= min_second:
                    break
            chains[m, i] = candidate
    return chains


def data_file_text(chains: np.ndarray, box: float, title: str) -> str:
    """LAMMPS data file (atom_style bond): atoms with molecule ids and image flags, one bond type."""
    n_chains, chain_length, _ = chains.shape
    n_atoms = n_chains * chain_length
    n_bonds = n_chains * (chain_length - 1)
    flat = chains.reshape(-1, 3)
    images = np.floor(flat / box).astype(int)
    wrapped = flat - images * box
    lines = [
        f"LAMMPS data file: {title}",
        "",
        f"{n_atoms} atoms",
        f"{n_bonds} bonds",
        "1 atom types",
        "1 bond types",
        "",
        f"0.0 {box:.12g} xlo xhi",
        f"0.0 {box:.12g} ylo yhi",
        f"0.0 {box:.12g} zlo zhi",
        "",
        "Masses",
        "",
        "1 1.0",
        "",
        "Atoms # bond",
        "",
    ]
    for k in range(n_atoms):
        x, y, z = wrapped[k]
        ix, iy, iz = images[k]
        lines.append(f"{k + 1} {k // chain_length + 1} 1 {x:.10f} {y:.10f} {z:.10f} {ix} {iy} {iz}")
    lines += ["", "Bonds", ""]
    bond_id = 0
    for m in range(n_chains):
        for i in range(chain_length - 1):
            bond_id += 1
            first = m * chain_length + i + 1
            lines.append(f"{bond_id} 1 {first} {first + 1}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------


class ChainMeltParams(BaseModel):
    """Kremer-Grest melt in reduced LJ units (eps = sigma = m = 1)."""

    # Kremer & Grest 1990 model and run settings, each with its reason (every one applied is reported)
    DEFAULTS: ClassVar[dict[str, Default]] = {
        "density": Default(0.85, "bead density of the Kremer-Grest melt (Kremer & Grest 1990)", KG_1990),
        "temperature": Default(1.0, "T* = 1 of the Kremer-Grest melt (Kremer & Grest 1990)", KG_1990),
        "timestep": Default(0.01, "0.01 tau: stable for FENE/WCA at T* = 1 (Kremer & Grest used 0.006-0.013)",
                            KG_1990),
        "langevin_damp": Default(2.0, "Gamma = 0.5/tau, the Langevin friction of Kremer & Grest (1990)", KG_1990),
        "pair_cutoff": Default(WCA_CUTOFF, "2^(1/6) sigma, shifted: purely repulsive WCA beads, a good-solvent melt "
                               "(Kremer & Grest 1990)", KG_1990, shown="{value:.6f} sigma"),
        "n_chains": Default(MIN_BEADS, f"at least {MIN_BEADS} beads, box edge > 2 x the expected end-to-end "
                            "distance (~{ree:.2g})", shown="{n_chains}"),
        "equilibration_steps": Default("2 Rouse times", "max(200 tau, 2 x the Rouse time estimate N^2 tau = "
                                       "{rouse:g} tau), then equilibration detection trims more", shown="{steps}"),
        "production_steps": Default("5 Rouse times", "max(500 tau, 5 Rouse times): chain averages to ~1-2 %",
                                    shown="{steps}"),
        "seed": Default(12345, "fixed seed for the random walks and the thermostat: reruns are reproducible"),
        "model": Default("Kremer-Grest", "FENE K = 30, R0 = 1.5; WCA eps = sigma = 1 (Kremer & Grest 1990)", KG_1990),
        "start": Default("random walks + soft push-off", f"bond {START_BOND_LENGTH}, second neighbours >= "
                         f"{START_MIN_SECOND_NEIGHBOUR} (Kremer & Grest 1990); soft push-off {PUSHOFF_STEPS} steps to "
                         f"A = {PUSHOFF_PREFACTOR:g} (after Auhl et al. 2003)",
                         "Kremer & Grest 1990; Auhl et al., J. Chem. Phys. 119, 12718 (2003)"),
    }

    chain_length: int = Field(ge=2, le=MAX_CHAIN_LENGTH)
    n_chains: int = Field(ge=1)
    density: float = Field(gt=0, lt=1.2, description="beads per sigma^3")
    temperature: float = Field(gt=0)
    bond_k: float = Field(default=30.0, gt=0)
    bond_r0: float = Field(default=1.5, gt=WCA_CUTOFF)
    epsilon: float = 1.0
    sigma: float = 1.0
    pair_cutoff: float = Field(default=WCA_CUTOFF, gt=0)
    skin: float = Field(default=0.4, gt=0)
    timestep: float = Field(gt=0)
    langevin_damp: float = Field(gt=0)
    pushoff_steps: int = Field(default=PUSHOFF_STEPS, ge=0)
    pushoff_prefactor: float = Field(default=PUSHOFF_PREFACTOR, gt=0)
    relax_steps: int = Field(default=RELAX_STEPS, ge=0)
    limit_distance: float = Field(default=0.05, gt=0, description="nve/limit cap per step (sigma)")
    equilibration_steps: int = Field(ge=0)
    production_steps: int = Field(gt=0)
    thermo_every: int = Field(default=100, gt=0)
    dump_every: int = Field(default=100, ge=0, description="trajectory frames (0: none)")
    seed: int = Field(default=12345, gt=0)
    temperature_tolerance: float = Field(default=0.05, gt=0)
    ratio_band: tuple[float, float] = Field(
        default=(0.75, 1.35), description="allowed <Ree^2>/<Rg^2> relative to the Gaussian 6N/(N+1)"
    )
    time_limit_s: float = Field(default=3600.0, gt=0)

    @property
    def n_atoms(self) -> int:
        return self.n_chains * self.chain_length

    @property
    def box(self) -> float:
        return (self.n_atoms / self.density) ** (1.0 / 3.0)

    @model_validator(mode="after")
    def _consistent(self) -> ChainMeltParams:
        if self.box < 2 * (self.pair_cutoff + self.skin):
            raise ValueError(f"box edge {self.box:.3g} too small for the pair cutoff: more chains")
        if self.dump_every and (self.production_steps % self.dump_every or self.dump_every % self.thermo_every):
            raise ValueError("production_steps must be a multiple of dump_every, dump_every of thermo_every")
        if self.production_steps % self.thermo_every:
            raise ValueError("production_steps must be a multiple of thermo_every")
        return self


def reduced_state_value(key: str, quantity: Quantity | None) -> float | None:
    """The melt's density or temperature as a positive reduced value (None: not given)."""
    if quantity is None:
        return None
    unit = norm_unit(quantity.unit)
    if unit not in REDUCED | {"sigma^-3", "rho*", "t*", "epsilon/k_b", "epsilon/kb"}:
        raise RequestError(f"give the bead-spring melt's {key} in reduced units, not {quantity.unit!r}")
    if quantity.value <= 0:
        raise RequestError(f"{key} must be positive, got {quantity}")
    return quantity.value


def melt_parameters(spec: TaskSpec, name: str, record: DefaultsLog, need_trajectory: bool) -> ChainMeltParams:
    """Kremer-Grest melt parameters from a polymer spec (chain length required); the defaults are
    ChainMeltParams.DEFAULTS, reported to `record` when the request leaves them out."""
    record.declared = ChainMeltParams.DEFAULTS
    chain_length = _chain_length(spec, name)
    pair_cutoff = _pair_cutoff(spec.potential, record)
    cond, ctrl = spec.conditions, spec.controls
    values = {key: record.take(key, reduced_state_value(key, quantity))
              for key, quantity in (("density", cond.density), ("temperature", cond.temperature))}
    if cond.pressure is not None:
        record("conditions.pressure", "ignored", "fixed-density run: pressure is an output")
    if values["density"] >= 1.2:
        raise RequestError(f"bead density {values['density']:g} is beyond a liquid melt (KG: 0.85)")
    if ctrl.ensemble in ("npt", "nve"):
        raise RequestError("the Kremer-Grest protocol runs Langevin NVT (fixed density)")
    timestep = record.take("timestep", timestep_in(ctrl.timestep, "lj") if ctrl.timestep is not None else None)
    damp = record.take("langevin_damp")
    n_chains = _chain_count(ctrl.n_atoms, chain_length, values["density"], need_trajectory, record)
    thermo_every = 100
    equilibration, production = _run_lengths(ctrl, chain_length, timestep, thermo_every, record)
    seed = record.take("seed", ctrl.seed)
    record.report("model")
    record.report("start")
    return ChainMeltParams(
        chain_length=chain_length, n_chains=n_chains, density=values["density"],
        temperature=values["temperature"], pair_cutoff=pair_cutoff, timestep=timestep, langevin_damp=damp,
        equilibration_steps=equilibration, production_steps=production, thermo_every=thermo_every,
        dump_every=thermo_every if need_trajectory else 0, seed=seed,
    )  # fmt: skip


def _chain_length(spec: TaskSpec, name: str) -> int:
    """Beads per chain of a bead-spring polymer request in LJ units (required, 2..MAX_CHAIN_LENGTH)."""
    system = spec.system
    if system is None or system.kind != "polymer":
        raise RequestError(f"{name} needs a bead-spring polymer (kind 'polymer')")
    if spec.units_style not in (None, "lj"):
        raise RequestError("the Kremer-Grest model runs in reduced LJ units")
    chain_length = chain_length_of(spec)
    if chain_length is None:
        raise RequestError("give the chain length (beads per chain), e.g. 'chains of 20 beads'")
    if chain_length < 2:
        raise RequestError("a chain needs at least 2 beads")
    if chain_length > MAX_CHAIN_LENGTH:
        raise RequestError(
            f"chains of {chain_length} beads are entangled (N_e ~ 85 in the KG melt): plain MD cannot equilibrate "
            f"them; at most {MAX_CHAIN_LENGTH} beads"
        )
    return chain_length


def _pair_cutoff(pot, record: DefaultsLog) -> float:
    """The bead pair cutoff in sigma: the request's (not below the WCA minimum), else the WCA one."""
    if pot is not None and pot.family not in (None, "lj"):
        raise RequestError(f"the Kremer-Grest model uses LJ (WCA) and FENE, not {pot.family}")
    if pot is None or pot.cutoff is None:
        return record.report("pair_cutoff")
    if norm_unit(pot.cutoff.unit) not in REDUCED | {"sigma", "σ"}:
        raise RequestError(f"give the bead-spring pair cutoff in sigma, not {pot.cutoff.unit!r}")
    if pot.cutoff.value < WCA_CUTOFF - 1e-6:
        raise RequestError(f"a pair cutoff below 2^(1/6) sigma ({pot.cutoff.value:g}) cuts the repulsion")
    return pot.cutoff.value


def _chain_count(n_atoms: int | None, chain_length: int, density: float, need_trajectory: bool,
                 record: DefaultsLog) -> int:
    """Enough chains for the average and a box wider than twice the expected end-to-end distance
    (Kremer & Grest: <R^2> ~ 1.7 (N - 1) for long chains), so a chain does not meet its own image."""
    expected_ree = math.sqrt(1.7 * (chain_length - 1))
    min_for_box = math.ceil(density * (2 * expected_ree) ** 3 / chain_length)
    if n_atoms is not None:
        n_chains = max(1, round(n_atoms / chain_length))
        if n_chains * chain_length != n_atoms:
            record("n_atoms", n_chains * chain_length, f"a whole number of {chain_length}-bead chains")
    else:
        n_chains = max(math.ceil(MIN_BEADS / chain_length), min_for_box)
        record.report("n_chains", n_chains=n_chains, ree=expected_ree)
    if n_chains < min_for_box and need_trajectory:
        record(
            "n_chains",
            n_chains,
            f"WARNING: box edge below 2 x the expected end-to-end distance "
            f"{expected_ree:.2g}; chains may feel their periodic images (use >= {min_for_box} chains)",
        )
    return n_chains


def _run_lengths(ctrl, chain_length: int, timestep: float, thermo_every: int, record: DefaultsLog) -> tuple[int, int]:
    """Equilibration and production steps: the request's (production rounded up to whole thermo
    intervals), else multiples of the Rouse time estimate N^2 tau."""
    rouse = ROUSE_TAU_PER_N2 * chain_length**2
    equilibration = ctrl.equilibration_steps
    if equilibration is None:
        equilibration = thermo_every * math.ceil(max(200.0, 2 * rouse) / timestep / thermo_every)
        record.report("equilibration_steps", steps=equilibration, rouse=rouse)
    if ctrl.production_steps is not None:
        production = thermo_every * max(1, math.ceil(ctrl.production_steps / thermo_every))
        if production != ctrl.production_steps:
            record("production_steps", production, f"rounded up to a multiple of {thermo_every}")
    else:
        production = thermo_every * math.ceil(max(500.0, 5 * rouse) / timestep / thermo_every)
        record.report("production_steps", steps=production)
    return equilibration, production


def melt_job(protocol: str, p: ChainMeltParams) -> Job:
    """The single MD job; the data file is generated here, into the job's own inputs."""
    title = f"{p.n_chains} chains of {p.chain_length} beads, rho* = {p.density:g}, T* = {p.temperature:g}"
    chains = random_walk_chains(p.n_chains, p.chain_length, p.box, p.seed)
    text = render(
        "kremer_grest_melt.lmp.j2", protocol=protocol, title=title, data_file=DATA_FILE, bond_k=p.bond_k,
        bond_r0=p.bond_r0, epsilon=p.epsilon, sigma=p.sigma, temperature=p.temperature, skin=p.skin,
        comm_cutoff=max(p.bond_r0, p.pair_cutoff) + p.skin, timestep=p.timestep, thermo_every=p.thermo_every,
        seed=p.seed, langevin_damp=p.langevin_damp, pushoff_steps=p.pushoff_steps,
        pushoff_prefactor=p.pushoff_prefactor, pair_cutoff=p.pair_cutoff, pushoff_cutoff=WCA_CUTOFF,
        limit_distance=p.limit_distance,
        relax_steps=p.relax_steps, equilibration_steps=p.equilibration_steps, production_steps=p.production_steps,
        dump_every=p.dump_every,
    )  # fmt: skip
    inputs = {"in.lammps": text, DATA_FILE: data_file_text(chains, p.box, f"Kremer-Grest melt, {title}")}
    return md_job(protocol, p, inputs, p.time_limit_s)


def melt_thermo(job_dir: Path, p: ChainMeltParams) -> dict[str, np.ndarray]:
    """Production thermo columns after the run-level gates."""
    thermo = finished_output(job_dir).last_run()
    check_columns(thermo, ("Step", "Temp", "PotEng", "E_bond", "E_vdwl", "Atoms", "v_rg2_mean"))
    check_full_production(thermo, p.n_atoms, p.production_steps, lost="beads were lost (broken bonds?)")
    check_temperature(thermo["Temp"], p.temperature, p.temperature_tolerance)
    return thermo


# ---------------------------------------------------------------------------------------------
# The protocol
# ---------------------------------------------------------------------------------------------


@register
class ChainConformation(Protocol):
    name = "lammps/chain_conformation"
    engine = "lammps"
    properties = CONFORMATION
    Params = ChainMeltParams
    description = (
        "Radius of gyration and end-to-end distance of Kremer-Grest bead-spring chains in a melt: "
        "random-walk start written as a data file, soft push-off, Langevin MD; chain and time "
        "averages with block errors and a <Ree^2>/<Rg^2> sanity gate"
    )

    def applies_to(self, spec: TaskSpec) -> bool:
        if spec.system is None or spec.system.kind != "polymer" or spec.units_style not in (None, "lj"):
            return False
        return bool(spec.properties) and {p.name for p in spec.properties} <= self.properties

    def choose(self, spec: TaskSpec, record: DefaultsLog) -> ChainMeltParams:
        check_averaged_properties(spec, self.name, self.properties, "an average over chains and time")
        for prop in spec.properties:
            if norm_unit(prop.unit) not in REDUCED | {"sigma"}:
                raise RequestError(f"bead-spring chains report lengths in sigma (reduced), not {prop.unit!r}")
        return melt_parameters(spec, self.name, record, need_trajectory=True)

    def jobs(self, params: BaseModel) -> list[Job]:
        p = as_params(ChainMeltParams, params)
        return [melt_job(self.name, p)]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = as_params(ChainMeltParams, params)
        job_dir = Path(job_dirs["md"])
        thermo = melt_thermo(job_dir, p)
        frames = read_unwrapped(job_dir / "chains.dcd", p.n_atoms)
        expected = p.production_steps // p.dump_every + 1
        if frames.shape[0] != expected:
            raise ReadError(f"chains.dcd holds {frames.shape[0]} frames, expected {expected}")
        metrics = chain_metrics(frames, p.chain_length)
        # gate: LAMMPS' compute gyration/chunk on the same frames must agree (molecule ids, unwrapping)
        lammps_rg2 = thermo["v_rg2_mean"][:: p.dump_every // p.thermo_every]
        if lammps_rg2.size != metrics["rg2"].size or not np.allclose(lammps_rg2, metrics["rg2"], rtol=1e-4):
            raise CalculationFailed(
                "the trajectory's R_g^2 disagrees with LAMMPS' compute gyration/chunk: "
                "chains are not read as written (molecule ids or unwrapping)"
            )
        check_bonds(metrics["bond"])
        t0 = detect_equilibration(metrics["rg2"])
        rg2, rg2_se = block_average(metrics["rg2"][t0:])
        ree2, ree2_se = block_average(metrics["ree2"][t0:])
        ratio = ree2 / rg2
        ideal = ideal_ratio(p.chain_length)
        lo, hi = p.ratio_band
        if not lo * ideal <= ratio <= hi * ideal:
            raise CalculationFailed(
                f"<R_ee^2>/<R_g^2> = {ratio:.3g} is far from the Gaussian-chain value 6N/(N+1) = {ideal:.3g} "
                f"(allowed {lo:g}-{hi:g} x): chains collapsed, stretched or not equilibrated"
            )
        times = np.arange(metrics["rg2"].size) * p.dump_every * p.timestep
        table = job_dir / "chain_conformation.csv"
        np.savetxt(
            table,
            np.column_stack([times, metrics["rg2"], metrics["ree2"], metrics["bond"]]),
            delimiter=",",
            header="t,rg2_mean,ree2_mean,bond_length_mean",
        )
        plot(job_dir / "chain_conformation.png", times, metrics["rg2"], "t", "<R_g^2>", vline=times[t0])
        how = (
            f"{p.n_chains} Kremer-Grest chains of {p.chain_length} beads (rho* = {p.density:g}, T* = "
            f"{p.temperature:g}); chain average per frame of the unwrapped trajectory ({metrics['rg2'].size} frames "
            f"every {p.dump_every * p.timestep:g} tau), time average from frame {t0} (equilibration detection, "
            f"Chodera 2016), Flyvbjerg-Petersen block errors; <R_ee^2>/<R_g^2> = {ratio:.3g} (Gaussian "
            f"6N/(N+1) = {ideal:.3g}); mean bond length {metrics['bond'][t0:].mean():.4g}"
        )
        results = []
        for prop in spec.properties:
            if prop.name == RG:
                pairs = [
                    (RG, math.sqrt(rg2), rg2_se / (2 * math.sqrt(rg2)), "root mean square"),
                    (f"{RG}_squared", rg2, rg2_se, "mean square"),
                ]
            else:
                pairs = [
                    (REE, math.sqrt(ree2), ree2_se / (2 * math.sqrt(ree2)), "root mean square"),
                    (f"{REE}_squared", ree2, ree2_se, "mean square"),
                    (
                        f"{REE}_squared_over_{RG}_squared",
                        ratio,
                        ratio * math.hypot(rg2_se / rg2, ree2_se / ree2),
                        "ratio of mean squares",
                    ),
                ]
            for quantity, value, se, what in pairs:
                results.append(
                    Result(
                        quantity=quantity,
                        value=value,
                        unit="reduced",
                        uncertainty=se,
                        job="md",
                        method=f"{what}; {how}",
                        log=str(job_dir / "log.lammps"),
                        data_file=str(table),
                    )
                )
        return results


# ---------------------------------------------------------------------------------------------
# Analysis helpers (module level so tests can feed them synthetic data)
# ---------------------------------------------------------------------------------------------


def read_unwrapped(path: Path, n_atoms: int) -> np.ndarray:
    """Frames (F, n_atoms, 3) of a DCD written with `dump_modify unwrap yes sort id`."""
    import MDAnalysis as mda

    if not path.is_file():
        raise ReadError(f"{path.name} (unwrapped trajectory) was not written")
    universe = mda.Universe.empty(n_atoms, trajectory=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        universe.load_new(str(path), format="DCD", in_memory=True)
    return np.asarray(universe.trajectory.coordinate_array, dtype=float)


def chain_metrics(frames: np.ndarray, chain_length: int) -> dict[str, np.ndarray]:
    """Per frame, averaged over chains: R_g^2 = (1/N) sum |r_i - r_cm|^2, R_ee^2 = |r_N - r_1|^2,
    and the mean bond length. Atoms are ordered chain by chain (unwrapped coordinates)."""
    x = np.asarray(frames, dtype=float)
    if x.ndim == 2:
        x = x[None]
    n_frames, n_atoms, _ = x.shape
    if n_atoms % chain_length:
        raise ReadError(f"{n_atoms} atoms do not form chains of {chain_length}")
    chains = x.reshape(n_frames, n_atoms // chain_length, chain_length, 3)
    centred = chains - chains.mean(axis=2, keepdims=True)
    rg2 = np.einsum("fmnk,fmnk->fm", centred, centred) / chain_length
    ends = chains[:, :, -1] - chains[:, :, 0]
    ree2 = np.einsum("fmk,fmk->fm", ends, ends)
    bonds = np.linalg.norm(np.diff(chains, axis=2), axis=-1)
    return {
        "rg2": rg2.mean(axis=1),
        "ree2": ree2.mean(axis=1),
        "bond": bonds.mean(axis=(1, 2)),
        "rg2_per_chain": rg2,
        "ree2_per_chain": ree2,
    }


def check_bonds(bond_means: np.ndarray, expected: float = START_BOND_LENGTH, tolerance: float = 0.05) -> None:
    """Gate: the mean FENE bond length stays near 0.97 sigma (Kremer & Grest 1990); far from it the
    chains were torn (unwrapping errors give bonds of a box length) or compressed."""
    mean = float(np.mean(bond_means))
    if abs(mean - expected) > tolerance * expected:
        raise CalculationFailed(
            f"mean bond length {mean:.3g} is not near {expected} sigma: bonds broken or the trajectory is not unwrapped"
        )
