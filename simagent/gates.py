"""Physics gates after each run: is the output trustworthy enough to report a number?

Each gate looks at the time series of one finished run (read by the engine's handler module,
`tools.<engine>.handlers.run_data`) and answers PASS, EXTEND (not converged yet: run longer,
bounded by the error agent) or FAIL (no number is reported; the answer says why). Gates are
generic per ensemble; protocol-specific checks stay in each protocol's analyze().

Gates: finite values; no lost atoms; the thermostat's and barostat's targets reached; equilibrium
reached before averaging (no trend in the averaged part); conservation of the total energy in
NVE; a linear (diffusive) MSD regime when an MSD is recorded; converged block averages for GCMC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import numpy as np

from simagent.models import Job
from simagent.stats import block_average, detect_equilibration, linear_fit

# Fewest thermo samples on which statistical gates judge a run; below it they do not apply.
MIN_SAMPLES = 20
# Thermostat target: mean temperature within 5 % (or 3 standard errors) of the target, as in
# lammps/fluid_md's own check.
TEMPERATURE_TOLERANCE = 0.05
# Barostat target: mean pressure within 3 standard errors or this absolute band (pressure
# fluctuations of small systems are hundreds of bar) or 5 % of the target.
PRESSURE_TOLERANCE = {"bar": 150.0, "atm": 150.0, "reduced": 0.15, "": 150.0}
# Equilibration: the two halves of the averaged part differ by more than 4 standard errors and by
# more than this fraction of kT per atom (energies) or relative amount (density, loading).
TREND_SIGMAS = 4.0
TREND_KT_FRACTION = 0.02
TREND_RELATIVE = 0.01
# NVE: total energy per atom may wander by at most 3 % of kT over the run. Measured here: LJ at
# 0.005 tau over 100 tau and argon at 10 fs over 100 ps wander by ~0.6 % kT; copper (EAM) at 1 fs by
# 0.03 %, at 20 fs by 7 %; 12 dangerous neighbor-list builds in an LJ run give 9 %.
ENERGY_DRIFT_LIMIT_KT = 0.03
# Diffusion: log-log slope of the MSD in the fitted window (20-60 % of the time span).
MSD_WINDOW = (0.2, 0.6)
MSD_SLOPE_RANGE = (0.85, 1.15)
# GCMC: relative standard error of the mean loading and first-vs-last block drift.
GCMC_MAX_RELATIVE_ERROR = 0.10
GCMC_BLOCKS = 5


class Outcome(str, Enum):  # noqa: UP042 - str values serialise as plain text
    PASS = "PASS"
    EXTEND = "EXTEND"
    FAIL = "FAIL"


_RANK = {Outcome.PASS: 0, Outcome.EXTEND: 1, Outcome.FAIL: 2}


@dataclass
class GateResult:
    gate: str
    outcome: Outcome
    reason: str = ""


@dataclass
class RunData:
    """What the gates need from one run, in the engine's units."""

    engine: str
    ensemble: str = "unknown"  # nve | nvt | npt | nph | minimize | gcmc | unknown
    kB: float = 1.0
    per_atom: bool = False  # energies already per atom
    n_atoms: int | None = None
    timestep: float | None = None
    time: np.ndarray | None = None
    series: dict[str, np.ndarray] = field(default_factory=dict)
    target_temperature: float | None = None
    target_pressure: float | None = None
    pressure_unit: str = ""
    msd_time: np.ndarray | None = None
    msd: np.ndarray | None = None
    blocks: dict[str, list[float]] = field(default_factory=dict)  # GCMC block averages per quantity
    errors: list[str] = field(default_factory=list)
    driven: str = ""  # what does external work on the atoms during the run ('' = nothing): no energy conservation


@dataclass
class GateReport:
    results: list[GateResult] = field(default_factory=list)

    @property
    def outcome(self) -> Outcome:
        return max((r.outcome for r in self.results), key=_RANK.__getitem__, default=Outcome.PASS)

    def reasons(self, outcome: Outcome | None = None) -> list[str]:
        wanted = outcome or self.outcome
        return [f"{r.gate}: {r.reason}" for r in self.results if r.outcome == wanted]

    def summary(self) -> str:
        if self.outcome == Outcome.PASS:
            return "all gates passed"
        return "; ".join(self.reasons())


# ---------------------------------------------------------------------------------------------
# Gates
# ---------------------------------------------------------------------------------------------


def finite_gate(data: RunData) -> GateResult:
    for name, values in data.series.items():
        values = np.asarray(values, dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            where = ""
            if "step" in data.series and len(data.series["step"]) == len(values):
                where = f" from step {data.series['step'][np.argmax(bad)]:g}"
            return GateResult("finite", Outcome.FAIL, f"NaN or infinite {name}{where}: the dynamics diverged")
    return GateResult("finite", Outcome.PASS)


def atoms_gate(data: RunData) -> GateResult:
    atoms = data.series.get("atoms")
    if data.ensemble == "gcmc" or atoms is None or len(atoms) == 0:
        return GateResult("atoms", Outcome.PASS)
    atoms = np.asarray(atoms, dtype=float)
    # a count that only grows is an insertion the input prescribes (fix deposit, pour); a drop is a loss
    if np.all(np.isfinite(atoms)) and np.any(np.diff(atoms) < 0):
        return GateResult("atoms", Outcome.FAIL, f"atoms were lost: {atoms[0]:g} -> {atoms.min():g}")
    return GateResult("atoms", Outcome.PASS)


def _equilibrated(values: np.ndarray) -> tuple[np.ndarray, int]:
    t0 = detect_equilibration(values)
    return values[t0:], t0


def _trend(values: np.ndarray, floor: float) -> tuple[bool, str]:
    """True when the first and second half of the series differ beyond noise and `floor`."""
    half = len(values) // 2
    if half < 4:
        return False, ""
    m1, s1 = block_average(values[:half])
    m2, s2 = block_average(values[half:])
    diff = m2 - m1
    sigma = float(np.hypot(s1, s2))
    if abs(diff) > TREND_SIGMAS * sigma and abs(diff) > floor:
        return True, f"still drifting ({m1:.5g} -> {m2:.5g} between the halves, noise {sigma:.2g})"
    return False, ""


def _kT_per_atom(data: RunData) -> float | None:
    temps = data.series.get("temperature")
    if temps is None or len(temps) == 0 or not np.all(np.isfinite(temps)):
        return None
    temperature = float(np.mean(temps))
    return data.kB * temperature if temperature > 0 else None


def _per_atom(data: RunData, values: np.ndarray) -> np.ndarray:
    if data.per_atom or not data.n_atoms:
        return values
    return values / data.n_atoms


def equilibration_gate(data: RunData) -> GateResult:
    """The averaged part (after the detected equilibration) must show no trend."""
    energy = data.series.get("potential_energy")
    if data.ensemble in ("minimize", "unknown") or energy is None or len(energy) < MIN_SAMPLES:
        return GateResult("equilibration", Outcome.PASS, "not judged (no dynamics or too few samples)")
    energy = _per_atom(data, np.asarray(energy, dtype=float))
    if not np.all(np.isfinite(energy)):
        return GateResult("equilibration", Outcome.PASS, "not judged (non-finite values)")
    kT = _kT_per_atom(data)
    tail, t0 = _equilibrated(energy)
    floor = TREND_KT_FRACTION * kT if kT else TREND_RELATIVE * abs(float(np.mean(tail)))
    drifting, why = _trend(tail, floor)
    if drifting:
        return GateResult("equilibration", Outcome.EXTEND, f"potential energy per atom {why}")
    if data.ensemble in ("npt", "nph"):
        for name in ("density", "volume"):
            series = data.series.get(name)
            if series is not None and len(series) >= MIN_SAMPLES and np.all(np.isfinite(series)):
                tail = np.asarray(series, dtype=float)[t0:]
                drifting, why = _trend(tail, TREND_RELATIVE * abs(float(np.mean(tail))))
                if drifting:
                    return GateResult("equilibration", Outcome.EXTEND, f"{name} {why}")
                break
    return GateResult("equilibration", Outcome.PASS)


def temperature_gate(data: RunData) -> GateResult:
    temps = data.series.get("temperature")
    target = data.target_temperature
    if target is None or target <= 0 or temps is None or len(temps) < MIN_SAMPLES:
        return GateResult("temperature", Outcome.PASS, "no thermostat target")
    temps = np.asarray(temps, dtype=float)
    if not np.all(np.isfinite(temps)):
        return GateResult("temperature", Outcome.FAIL, "non-finite temperature")
    tail, _ = _equilibrated(temps)
    mean, se = block_average(tail)
    off = abs(mean - target)
    if off > TEMPERATURE_TOLERANCE * target and off > 3 * se:
        # Not at the target yet: run longer (the error agent bounds the extensions and turns a
        # thermostat that never reaches its target into a failure).
        return GateResult("temperature", Outcome.EXTEND,
                          f"mean temperature {mean:.4g} +/- {se:.2g} misses the target {target:g} by "
                          f"{100 * off / target:.1f} % (limit {100 * TEMPERATURE_TOLERANCE:g} %): not equilibrated")
    return GateResult("temperature", Outcome.PASS)


def pressure_gate(data: RunData) -> GateResult:
    press = data.series.get("pressure")
    target = data.target_pressure
    if data.ensemble not in ("npt", "nph") or target is None or press is None or len(press) < MIN_SAMPLES:
        return GateResult("pressure", Outcome.PASS, "no barostat target")
    press = np.asarray(press, dtype=float)
    if not np.all(np.isfinite(press)):
        return GateResult("pressure", Outcome.FAIL, "non-finite pressure")
    tail, t0 = _equilibrated(press)
    mean, se = block_average(tail)
    band = max(PRESSURE_TOLERANCE.get(data.pressure_unit, 150.0), 0.05 * abs(target), 3 * se)
    if abs(mean - target) > band:
        why = f"mean pressure {mean:.4g} +/- {se:.2g} {data.pressure_unit} misses the target {target:g}"
        return GateResult("pressure", Outcome.EXTEND, why + "; the box is still relaxing")
    return GateResult("pressure", Outcome.PASS)


def energy_drift_gate(data: RunData) -> GateResult:
    """NVE: the total energy is a constant of motion; its wandering measures integration error."""
    energy = data.series.get("total_energy")
    if data.ensemble != "nve" or energy is None or len(energy) < 3:
        return GateResult("energy drift", Outcome.PASS, "not an NVE run")
    if data.driven:
        return GateResult("energy drift", Outcome.PASS, f"driven run ({data.driven}): external work changes the "
                          "total energy, which is then no measure of integration error")
    energy = _per_atom(data, np.asarray(energy, dtype=float))
    if not np.all(np.isfinite(energy)):
        return GateResult("energy drift", Outcome.FAIL, "non-finite total energy")
    kT = _kT_per_atom(data)
    if not kT:
        return GateResult("energy drift", Outcome.PASS, "no temperature to scale by")
    wander = float(np.max(np.abs(energy - energy[0])))
    ratio = wander / kT
    if ratio > ENERGY_DRIFT_LIMIT_KT:
        return GateResult("energy drift", Outcome.FAIL,
                          f"NVE total energy per atom wandered by {wander:.3g} = {ratio:.3g} kT "
                          f"(limit {ENERGY_DRIFT_LIMIT_KT:g} kT): timestep too large for accurate integration")
    return GateResult("energy drift", Outcome.PASS)


def msd_gate(data: RunData) -> GateResult:
    """Diffusion needs a linear regime, MSD ~ t: log-log slope near 1 in the fitted window."""
    if data.msd is None or data.msd_time is None or len(data.msd) < 8:
        return GateResult("msd", Outcome.PASS, "no MSD recorded")
    t, msd = np.asarray(data.msd_time, dtype=float), np.asarray(data.msd, dtype=float)
    lo, hi = MSD_WINDOW[0] * t[-1], MSD_WINDOW[1] * t[-1]
    window = (t >= lo) & (t <= hi) & (msd > 0) & (t > 0)
    if window.sum() < 4 or not np.all(np.isfinite(msd)):
        return GateResult("msd", Outcome.EXTEND, "too few MSD points in the fit window")
    slope, _, _ = linear_fit(np.log(t[window]), np.log(msd[window]))
    low, high = MSD_SLOPE_RANGE
    if slope > high:
        return GateResult("msd", Outcome.EXTEND,
                          f"MSD still ballistic (log-log slope {slope:.2f} > {high}): run longer")
    if slope < low:
        return GateResult("msd", Outcome.EXTEND,
                          f"MSD sub-diffusive (log-log slope {slope:.2f} < {low}): caged or solid on this time scale")
    return GateResult("msd", Outcome.PASS)


def gcmc_gate(data: RunData) -> GateResult:
    """Block averages of the loading: small relative error, no drift from the first to the last block."""
    blocks = dict(data.blocks)
    atoms = data.series.get("atoms")
    if not blocks and data.ensemble == "gcmc" and atoms is not None and len(atoms) >= MIN_SAMPLES:
        tail, _ = _equilibrated(np.asarray(atoms, dtype=float))
        size = len(tail) // GCMC_BLOCKS
        if size:
            blocks["atoms"] = [float(np.mean(tail[i * size:(i + 1) * size])) for i in range(GCMC_BLOCKS)]
    for name, values in blocks.items():
        values = np.asarray(values, dtype=float)
        if len(values) < 3 or not np.all(np.isfinite(values)):
            continue
        mean = float(values.mean())
        se = float(values.std(ddof=1) / np.sqrt(len(values)))
        if mean != 0 and se / abs(mean) > GCMC_MAX_RELATIVE_ERROR:
            return GateResult("gcmc blocks", Outcome.EXTEND,
                              f"{name}: block error {100 * se / abs(mean):.0f} % of the mean (limit "
                              f"{100 * GCMC_MAX_RELATIVE_ERROR:g} %): more cycles needed")
        spread = float(values.std(ddof=1))
        if spread > 0 and abs(values[-1] - values[0]) > 3 * spread and abs(values[-1] - values[0]) > 0.02 * abs(mean):
            return GateResult("gcmc blocks", Outcome.EXTEND,
                              f"{name}: blocks drift from {values[0]:.4g} to {values[-1]:.4g}: not equilibrated")
    return GateResult("gcmc blocks", Outcome.PASS)


GATES = [finite_gate, atoms_gate, energy_drift_gate, temperature_gate, pressure_gate, equilibration_gate,
         msd_gate, gcmc_gate]


def run_gates(data: RunData) -> GateReport:
    report = GateReport()
    for gate in GATES:
        result = gate(data)
        report.results.append(result)
        if gate in (finite_gate,) and result.outcome == Outcome.FAIL:
            break  # the statistics of a diverged run mean nothing
    return report


def evaluate(job_dir: Path, job: Job) -> GateReport:
    """Gates for one finished job (PASS when the engine gives nothing to judge)."""
    from simagent.engines import get_engine

    adapter = get_engine(job.engine)
    message = adapter.output_problem(job_dir, job)
    if message:
        return GateReport([GateResult("output", Outcome.FAIL, message)])
    data = adapter.run_data(job_dir, job)
    if data is None:
        return GateReport([GateResult("output", Outcome.PASS, "no time series to judge")])
    return run_gates(data)


# ---------------------------------------------------------------------------------------------
# Helpers for engine readers
# ---------------------------------------------------------------------------------------------


def msd_from_frames(times: np.ndarray, frames: list[np.ndarray],
                    max_origins: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Mean squared displacement of unwrapped positions, averaged over up to `max_origins` time
    origins (frames equally spaced in time)."""
    positions = np.stack(frames)  # (frames, atoms, 3)
    n = len(frames)
    lags = np.arange(n)
    msd = np.zeros(n)
    counts = np.zeros(n)
    for origin in np.unique(np.linspace(0, n - 2, min(max_origins, n - 1)).astype(int)):
        disp = positions[origin:] - positions[origin]
        msd[: n - origin] += np.mean(np.sum(disp**2, axis=2), axis=1)
        counts[: n - origin] += 1
    valid = counts > 0
    return (times[lags] - times[0])[valid], msd[valid] / counts[valid]
