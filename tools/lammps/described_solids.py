"""LAMMPS lines for the solid-state parts of a SimulationDescription (simagent.described.solids):
a many-body potential from its file, random type substitutions, lattice orientation, and a box
deformation with its stress-strain record.

The stress-strain record of a deformation stage: every `sample_every` steps, fix ave/time writes the
engineering strain of the deformed axis, (L - L0)/L0 with L0 the length at the stage's start, and
the stress along it, -p_axis (LAMMPS pressure is positive in compression), in the unit style's
pressure unit, to stress_strain.dat. The interval puts at least FIT_SAMPLES samples in the strain
window the Young's modulus is fitted over (tools.lammps.protocols.described).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from simagent.described.model import SimulationDescription, Stage
from simagent.described.solids import Deform, ShearFlow
from simagent.errors import CalculationFailed, ReadError
from simagent.materials.potentials import PotentialEntry, pair_commands
from simagent.models import Result
from tools.lammps.described_budget import BudgetStop

STRESS_STRAIN_FILE = "stress_strain.dat"
FIT_END = 0.005  # the modulus fit window ends at 0.5 % strain at the least (the tensile protocol's DEFAULT_FIT_END)
FIT_SAMPLES = 20  # samples at least inside [0, FIT_END] when the rate allows
SMALL_STRAIN = 0.01  # a modulus from samples too coarse for the linearity test is fitted within 1 % strain
# A fit whose standard error exceeds this fraction of its slope (thermal noise of a small box at a slow rate)
# doubles its window, up to SMALL_STRAIN, while the longer window passes the same linearity test.
NOISY_FIT = 0.05


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def lattice_suffix(desc: SimulationDescription) -> str:
    lat = desc.lattice
    if lat is None:
        return ""
    out = ""
    if lat.orient:
        out += "".join(f" orient {axis} {' '.join(map(str, v))}" for axis, v in zip("xyz", lat.orient, strict=True))
    if lat.origin:
        out += " origin " + " ".join(_fmt(v) for v in lat.origin)
    return out


def potential_lines(desc: SimulationDescription) -> list[str]:
    """pair_style and pair_coeff of the many-body potential (simagent.materials.potentials.pair_commands)."""
    pot = desc.potential
    assert pot is not None
    entry = PotentialEntry(file=pot.file, elements=pot.file_elements or pot.type_elements, pair_style=pot.style,
                           pair_style_args=pot.style_args, citation="", sha256="", keywords=[],
                           meam_library=pot.library, meam_labels=pot.labels)
    return pair_commands(entry, pot.type_elements)


def defect_lines(desc: SimulationDescription, index: int) -> list[str]:
    """Before the defect cell's minimisation: each stated atom added at its stated position
    (simagent.described.defects), in box or lattice units as stated."""
    d = desc.defect
    if d is None or index != d.defect_stage:
        return []
    return [f"create_atoms    {d.atom_type} single {' '.join(_fmt(x) for x in xyz)} units {d.position_units}"
            for xyz in d.positions]


def substitution_lines(desc: SimulationDescription) -> list[str]:
    return [f"set             {'group all' if s.among == 'all' else f'type {s.from_type}'} type/fraction {s.to_type} "
            f"{_fmt(s.fraction)} {s.seed}" for s in desc.substitutions]


SHEAR_TEMP = "temp_shear"  # the thermostatted group's temperature without the flow component


def shear_lines(desc: SimulationDescription, stage: Stage) -> list[str]:
    """At the start of a sheared stage: the moving layer's velocity, the ramp over the mobile atoms
    (the ramp added to their thermal velocities), and the partial temperature compute."""
    f = stage.shear
    assert f is not None
    v = [0.0, 0.0, 0.0]
    v["xyz".index(f.axis)] = f.velocity
    flags = " ".join("0" if a == f.axis else "1" for a in "xyz")
    return [f"velocity        {f.moving} set {' '.join(_fmt(c) for c in v)}",
            f"velocity        {f.ramp_group} ramp v{f.axis} {_fmt(f.ramp_velocity[0])} {_fmt(f.ramp_velocity[1])} "
            f"{f.gradient_axis} {_fmt(f.ramp_extent[0])} {_fmt(f.ramp_extent[1])} sum yes",
            f"compute         {SHEAR_TEMP} {f.ramp_group} temp/partial {flags}"]


def shear_component(flow: ShearFlow) -> str:
    """The thermo keyword of the flow's shear component of the pressure tensor (pxy, pxz, pyz)."""
    a, b = sorted((flow.axis, flow.gradient_axis))
    return f"p{a}{b}"


def shear_thermostat(fixes: list[str]) -> list[str]:
    """The thermostat fix of a sheared stage reads the partial temperature; so does the thermo output."""
    ids = [f.split()[1] for f in fixes if f.startswith("fix ") and re.search(r" (?:temp/rescale|temp/berendsen|"
                                                                              r"langevin|nvt) ", f)]
    return [f"fix_modify      {i} temp {SHEAR_TEMP}" for i in ids] + [f"thermo_modify   temp {SHEAR_TEMP}"]


def sample_every(desc: SimulationDescription, stage: Stage) -> int:
    """Steps between stress-strain samples: the stated averaging window, else FIT_SAMPLES inside the fit
    window, at least one step."""
    assert stage.deform is not None and desc.timestep
    if stage.deform.average_every is not None:
        return stage.deform.average_every
    strain_per_step = abs(stage.deform.rate) * desc.timestep
    return max(1, math.floor(FIT_END / strain_per_step / FIT_SAMPLES))


def deform_lines(desc: SimulationDescription, stage: Stage) -> list[str]:
    """fix deform on the stage's axis (every step, atoms remapped) and the stress-strain record."""
    d = stage.deform
    assert d is not None
    every = sample_every(desc, stage)
    length = f"l{d.axis}"
    lines = [f"fix             deform all deform 1 {d.axis} {d.style} {_fmt(d.rate)} remap x",
             f"variable        ssL0 equal $({length})",
             f"variable        ssstrain equal ({length}-v_ssL0)/v_ssL0"]
    if d.thickness is not None:  # a sheet's stress: its per-atom stresses over its area times the stated thickness
        k = "xyz".index(d.axis) + 1
        lines += ["compute         ssatom all stress/atom NULL", f"compute         sssum all reduce sum c_ssatom[{k}]",
                  f"variable        ssstress equal c_sssum/(lx*ly*{_fmt(d.thickness)})"]
    else:
        lines.append(f"variable        ssstress equal -p{d.axis}{d.axis}")
    window = f"1 {every} {every}" if d.average_every is not None else f"{every} 1 {every}"  # stated: the mean of each
    return lines + [f"fix             sscurve all ave/time {window} v_ssstrain v_ssstress file {STRESS_STRAIN_FILE}"]


# ---------------------------------------------------------------------------------------------
# Analysis: Young's modulus from the stress-strain record
# ---------------------------------------------------------------------------------------------

TO_GPA = {"metal": 1e-4, "real": 1.01325e-4}  # bar, atm -> GPa
LINEARITY_TOLERANCE = 0.05  # slopes of the fit window's halves agree within 5 % (tensile protocol's default)


def read_stress_strain(path: Path) -> tuple[np.ndarray, np.ndarray]:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    table = np.array([[float(x) for x in r[1:3]] for r in rows if len(r) == 3])
    if table.size == 0:
        raise ReadError(f"{path} holds no stress-strain rows")
    return table[:, 0], table[:, 1]


def _loading(desc: SimulationDescription) -> range:
    """The stages of the last loading: its last deformation stage and the ones before it that it continues
    (one fix deform and one stress-strain record over several run commands)."""
    last = max(i for i, s in enumerate(desc.stages) if s.deform is not None)
    first = last
    while first > 0 and (d := desc.stages[first].deform) is not None and d.continued:
        first -= 1
    return range(first, last + 1)


def _curve(job_dir: Path, desc: SimulationDescription) -> tuple[int, Stage, np.ndarray, np.ndarray]:
    """The last deformation stage and its stress-strain record (stress in GPa, or reduced units;
    a compression's signs flipped so that loading is positive)."""
    index = _loading(desc)[0]  # the loading's record starts at its first stage (later run commands continue it)
    stage = desc.stages[index]
    assert stage.deform is not None
    path = job_dir / STRESS_STRAIN_FILE
    if not path.is_file():
        raise ReadError(f"no {STRESS_STRAIN_FILE} in {job_dir}")
    strain, stress = read_stress_strain(path)
    assert desc.timestep
    strain, stress = force_strain(strain, stress, stage.deform, desc.timestep)
    sign = 1.0 if stage.deform.rate > 0 else -1.0
    return index, stage, sign * strain, sign * stress * TO_GPA.get(desc.units or "lj", 1.0)


def force_strain(strain: np.ndarray, stress: np.ndarray, deform: Deform, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's stress paired with the strain it was computed at. fix deform moves the box at
    the end of a step, after that step's forces (and virial), and the sample is taken after it: every
    sample's pressure belongs to the box one deformation step (dt) before its recorded strain. All
    samples shift alike (the slope would not change) except the record's first, taken before the box
    first moved, which is dropped: off the line of the others, it would pull a small-strain fit's slope
    down (by half with three samples 0.5 % strain apart)."""
    step = deform.rate * dt
    if deform.style == "trate":  # L = L0 exp(rate t)
        earlier = (1.0 + strain) * math.exp(-step) - 1.0
    else:  # L = L0 (1 + rate t)
        earlier = strain - step
    if strain.size > 1 and abs(strain[0]) < 0.5 * abs(step):
        return earlier[1:], stress[1:]
    return earlier, stress


class WindowNotRecorded(CalculationFailed):
    """A record cut short (its run stopped by the time budget) does not decide a window that the fit of the
    complete record would read: it ends inside the window, or its highest stress so far lies inside it (the
    fit refuses a curve that peaks inside its window; whether the complete curve does is then not known).
    `end`, the window's end; `recorded`, the strain the record reached; `peak`, the strain of its highest stress."""

    def __init__(self, end: float, recorded: float, peak: float) -> None:
        self.end, self.recorded, self.peak = end, recorded, peak
        where = f"it ends at strain {recorded:.4g}" if recorded < end else \
            f"its highest stress so far, at strain {peak:.4g}, lies inside the window"
        super().__init__(f"the record does not decide the fit window [0, {end:.4g}] the complete run's record would "
                         f"be fitted over: {where}")


def _modulus_fit(desc: SimulationDescription, stage: Stage, strain: np.ndarray, stress: np.ndarray,
                 reach: float | None = None) -> dict:
    """The fit of the record's initial linear part. `reach`: for a record cut short, the strain the
    complete record would have reached; every window the complete record's fit would read must then be
    decided by what was recorded, else WindowNotRecorded. The decisions below read the samples inside the
    windows they test, and whether the curve's maximum lies inside the window: on a cut record that holds
    the window and whose highest stress so far lies beyond it, both are the complete record's (a later,
    higher stress lies beyond it too)."""
    from tools.lammps.protocols.tensile import (  # the protocols import this module
        MIN_POINTS,
        NoLinearRegion,
        fit_linear_region,
    )

    assert stage.deform is not None and desc.timestep
    recorded = float(strain.max())
    complete = recorded if reach is None else max(reach, recorded)
    peak = float(strain[int(np.argmax(stress))])

    def covered(end: float) -> None:
        """WindowNotRecorded unless the record decides the window [0, end] as the complete record would."""
        if reach is None:
            return
        end = min(end, complete)
        if recorded < end * (1 - 1e-9) or peak < end * (1 - 1e-9):
            raise WindowNotRecorded(end, recorded, peak)

    small = (strain >= 0.0) & (strain <= SMALL_STRAIN * (1 + 1e-6))
    if np.count_nonzero(small) < MIN_POINTS:
        covered(SMALL_STRAIN)  # more samples within the limit would have come, and the fit takes them all
        return _coarse_fit(strain, stress, small)
    per_sample = abs(stage.deform.rate) * desc.timestep * sample_every(desc, stage)
    end = max(FIT_END, 2 * MIN_POINTS * per_sample)
    min_window = max(0.001, MIN_POINTS * per_sample)
    covered(end)
    try:
        fit = fit_linear_region(strain, stress, 0.0, end, min_window=min_window, tolerance=LINEARITY_TOLERANCE)
    except NoLinearRegion as bent:
        covered(SMALL_STRAIN)
        return _bent_fit(strain, stress, small, str(bent))
    while fit["se"] > NOISY_FIT * fit["slope"] and fit["end"] < SMALL_STRAIN * (1 - 1e-9) and \
            not fit["shrunk"] and complete >= min(2 * fit["end"], SMALL_STRAIN):
        covered(min(2 * fit["end"], SMALL_STRAIN))
        try:  # thermal noise: a longer window within the small-strain limit, if it is linear too
            longer = fit_linear_region(strain, stress, 0.0, min(2 * fit["end"], SMALL_STRAIN), min_window=min_window,
                                       tolerance=LINEARITY_TOLERANCE)
        except CalculationFailed:
            break
        if longer["shrunk"] or longer["se"] >= fit["se"]:
            break
        fit = {**longer, "extended_from": fit.get("extended_from", (fit["end"], fit["se"] / fit["slope"]))}
    return fit


def _coarse_fit(strain: np.ndarray, stress: np.ndarray, small: np.ndarray) -> dict:
    """The stated rate leaves fewer than MIN_POINTS samples up to the small-strain limit (a sample per
    step already spans 0.5 % strain at 5e12 /s and 1 fs): the window cannot be halved and tested for
    linearity, so the slope is the least-squares line through the samples within SMALL_STRAIN."""
    from simagent.stats import linear_fit

    points = int(np.count_nonzero(small))
    if points < 3:
        raise CalculationFailed(f"only {points} stress-strain samples within {SMALL_STRAIN:.0%} strain: too few for "
                                "a slope with an error (the stated rate moves the strain too far per sample)")
    slope, intercept, se = linear_fit(strain[small], stress[small])
    if slope <= 0:
        raise CalculationFailed(f"stress does not rise with strain (slope {slope:.2f} GPa)")
    if float(strain[int(np.argmax(stress))]) < float(strain[small].max()):
        raise CalculationFailed("the stress peaks inside the small-strain window: the crystal yielded or transformed")
    return {"slope": slope, "intercept": intercept, "se": se, "points": points, "start": 0.0,
            "end": float(strain[small].max()), "shrunk": False, "half_slopes": None,
            "coarse": float(np.median(np.diff(np.sort(strain[small]))))}


def _bent_fit(strain: np.ndarray, stress: np.ndarray, small: np.ndarray, finding: str) -> dict:
    """The prescribed loading bends within the small-strain limit (at a very high stated rate the halves
    of every window down to the smallest disagree): a prescribed protocol is not refused for it. The
    slope is the least-squares line over the samples within SMALL_STRAIN, as for a coarse record, and
    the finding (the halves' slopes) goes with it as a warning."""
    from simagent.stats import linear_fit

    fit = _coarse_fit(strain, stress, small)
    middle = SMALL_STRAIN / 2
    halves = [strain[small] <= middle, strain[small] >= middle]
    slopes = tuple(linear_fit(strain[small][h], stress[small][h])[0] for h in halves)
    return {**fit, "coarse": None, "half_slopes": slopes,
            "bent": (f"{finding.split(' (', 1)[0]}: the slopes of the halves of [0, {SMALL_STRAIN:g}] are "
                     f"{slopes[0]:.4g} and {slopes[1]:.4g}; the number is the least-squares line over the whole "
                     f"[0, {SMALL_STRAIN:g}] (the small-strain convention), kept because the loading is the one "
                     "the description prescribes")}


def _fit_words(fit: dict) -> str:
    from tools.lammps.protocols.tensile import MIN_POINTS  # the protocols import this module

    if fit.get("bent"):
        return (f"fit window strain {fit['start']:g} to {fit['end']:.4g} ({fit['points']} samples; {fit['bent']})")
    if fit.get("coarse"):
        return (f"fit window strain {fit['start']:g} to {fit['end']:.4g} ({fit['points']} samples, "
                f"{fit['coarse']:.3g} strain apart: fewer than {MIN_POINTS} within the small-strain limit "
                f"{SMALL_STRAIN:g}, so the window's linearity was not tested)")
    shrunk = ", shrunk until its halves agree within 5 %" if fit["shrunk"] else ""
    if "extended_from" in fit:
        first_end, first_se = fit["extended_from"]
        shrunk = (f", extended from {first_end:.4g}, where the slope's standard error was {first_se:.1%} (over "
                  f"{NOISY_FIT:.0%}): windows double up to {SMALL_STRAIN:g} strain while their halves agree")
    return (f"fit window strain {fit['start']:g} to {fit['end']:.4g} ({fit['points']} samples{shrunk}; half-window "
            f"slopes {fit['half_slopes'][0]:.4g} and {fit['half_slopes'][1]:.4g})")


def _planned_reach(desc: SimulationDescription, loading: range) -> float:
    """The force strain (loading positive) of the loading's last step as prescribed (its stages continue one
    fix deform at one rate)."""
    d = desc.stages[loading[0]].deform
    assert d is not None and desc.timestep
    total = d.rate * desc.timestep * sum(desc.stages[i].steps for i in loading)
    final = math.expm1(total) if d.style == "trate" else total
    earlier, _ = force_strain(np.array([final]), np.zeros(1), d, desc.timestep)
    return abs(float(earlier[-1]))


def youngs_modulus(job_dir: Path, desc: SimulationDescription, job: str, stop: BudgetStop | None = None) -> Result:
    """E: slope of the stress-strain curve of the last deformation stage over its initial linear
    part (tools.lammps.protocols.tensile.fit_linear_region: the window [0, end] halves until its two
    halves' slopes agree), in GPa (or reduced units).

    `stop`: the time budget ended the run early (tools.lammps.described_budget). The number is then
    taken only when the record covers every window the complete record's fit would read (a stop after
    the deformation stage leaves its record whole); it carries the stop as a warning and in its method.
    Otherwise CalculationFailed says the stop came before the fit window's end."""
    loading = _loading(desc)
    if stop is not None and stop.stage < loading[0]:
        raise CalculationFailed(f"{stop.words(desc)}, before the deformation (stage {loading[0] + 1}) began: no "
                                "stress-strain record")
    cut = stop is not None and stop.stage in loading
    try:
        index, stage, strain, stress = _curve(job_dir, desc)
    except ReadError:
        if not cut:
            raise
        assert stop is not None
        raise CalculationFailed(f"{stop.words(desc)}, before the stress-strain record held a sample") from None
    try:
        fit = _modulus_fit(desc, stage, strain, stress, reach=_planned_reach(desc, loading) if cut else None)
    except WindowNotRecorded as short:
        assert stop is not None
        window = f"the fit window (strain 0 to {short.end:.4g}) the complete run's record would be fitted over"
        why = f"before the end of {window}" if short.recorded < short.end else (
            f"past {window}, but with its highest stress so far inside it (at strain {short.peak:.4g}): whether the "
            "complete curve peaks there (the fit refuses a window the curve peaks in) is not known")
        raise CalculationFailed(f"{stop.words(desc)}, at strain {short.recorded:.4g}, {why}; no Young's modulus is "
                                "taken from it") from None
    d = stage.deform
    assert d is not None
    warnings, provenance = ([fit["bent"]] if fit.get("bent") else []), ""
    if stop is not None:
        reached = f", at strain {float(strain.max()):.4g} of the deformation's {_planned_reach(desc, loading):.4g}" \
            if cut else ""
        warning = (f"{stop.words(desc)}{reached}, after the fit window: MD is causal, so the steps that did not "
                   "run cannot change the recorded rows this number is fitted to; the rest of the prescribed run was "
                   "not done")
        warnings, provenance = [*warnings, warning], f"; NOT the complete prescribed run: {warning}"
    return Result(quantity="youngs_modulus", value=fit["slope"], unit="GPa" if desc.units in TO_GPA else "reduced",
                  uncertainty=fit["se"], job=job, data_file=STRESS_STRAIN_FILE, log="log.lammps", warnings=warnings,
                  method=(f"least-squares slope of engineering stress (-p{d.axis}{d.axis}) against engineering strain "
                          f"of stage {index + 1} ({d.style} {d.rate:g} along {d.axis}), each stress paired with the "
                          f"strain its forces were computed at (one deformation step before the sample: fix deform "
                          f"moves the box after the forces), {_fit_words(fit)}; ± is the slope's standard error "
                          f"inflated by the residuals' correlation{provenance}"))


PEAK_DROP = 0.05  # an ultimate stress needs the curve to fall this far (relative) after its maximum
YIELD_OFFSET = 0.002  # the 0.2 % offset of the usual engineering yield definition


def ultimate_point(strain: np.ndarray, stress: np.ndarray) -> tuple[float, float]:
    """(strain, stress) at the curve's maximum; CalculationFailed unless the stress then falls by
    PEAK_DROP of it (else the loading stopped before the peak)."""
    k = int(np.argmax(stress))
    peak = float(stress[k])
    if peak <= 0 or not np.any(stress[k:] < (1 - PEAK_DROP) * peak):
        raise CalculationFailed(f"the stress still rises at the end of the loading (strain {strain[-1]:.4g}): no "
                                "ultimate stress was reached")
    return float(strain[k]), peak


def offset_yield(strain: np.ndarray, stress: np.ndarray, modulus: float,
                 offset: float = YIELD_OFFSET) -> tuple[float, float]:
    """(strain, stress) where the curve first falls below the line E (strain - offset), linearly
    interpolated between samples; CalculationFailed when it never does."""
    gap = stress - modulus * (strain - offset)
    below = np.flatnonzero((gap <= 0) & (strain > offset))
    if below.size == 0 or below[0] == 0:
        raise CalculationFailed(f"the curve never falls below the {offset:.1%} offset line: no yield point")
    k = int(below[0])
    t = gap[k - 1] / (gap[k - 1] - gap[k])
    return (float(strain[k - 1] + t * (strain[k] - strain[k - 1])),
            float(stress[k - 1] + t * (stress[k] - stress[k - 1])))


def strength(job_dir: Path, desc: SimulationDescription, job: str, which: str) -> Result:
    """`ultimate_stress`: the maximum engineering stress of the last deformation stage; `yield_stress`:
    the 0.2 % offset yield stress, with E from the same fit as youngs_modulus."""
    index, stage, strain, stress = _curve(job_dir, desc)
    d = stage.deform
    assert d is not None
    where = f"stage {index + 1} ({d.style} {d.rate:g} along {d.axis})"
    unit = "GPa" if desc.units in TO_GPA else "reduced"
    if which == "ultimate_stress":
        at, value = ultimate_point(strain, stress)
        how = (f"maximum engineering stress (-p{d.axis}{d.axis}) of {where}, at strain {at:.4g} (the stress then "
               f"falls by more than {PEAK_DROP:.0%})")
    else:
        fit = _modulus_fit(desc, stage, strain, stress)
        at, value = offset_yield(strain, stress, fit["slope"])
        how = (f"0.2 % offset yield stress of {where}: where the curve crosses E (strain - 0.002), at strain "
               f"{at:.4g}; E = {fit['slope']:.4g} from the {_fit_words(fit)}")
    return Result(quantity=which, value=value, unit=unit, job=job, data_file=STRESS_STRAIN_FILE, log="log.lammps",
                  method=how)


def shear_stress(block: dict[str, np.ndarray], desc: SimulationDescription, job: str) -> Result:
    """The shear stress of the stage the metrics average: the mean of -P_ab over its thermo rows,
    ab the flow and gradient axes (the sign of LAMMPS compute stress/atom, S = -P V: positive when
    the layers drag the flow forward), with a block-average standard error."""
    from simagent.stats import block_average

    index = desc.average_stage if desc.average_stage is not None else desc.run_stages()[-1]
    stage = desc.stages[index]
    if stage.shear is None:
        raise ReadError(f"stage {index + 1} imposes no shear flow whose stress could be measured")
    column = shear_component(stage.shear)
    name = column[0].upper() + column[1:]
    if name not in block:
        raise ReadError(f"thermo column {name} missing")
    series = -block[name]
    grid = ""
    every = desc.thermo_every
    if every and "Step" in block and desc.origin.get("thermo_every", None) is not None:
        # the stress is recorded at the stated interval: LAMMPS also prints a run's first and last step
        # (off that interval when the stage starts at step 100, say), which are no samples of the record
        on = np.asarray(block["Step"]).astype(int) % every == 0
        if on.sum() >= 2 and not on.all():
            series, grid = series[on], f" on the stated interval (steps that are multiples of {every})"
    mean, err = block_average(series)
    unit = {"metal": "bar", "real": "atm"}.get(desc.units or "lj", "reduced")
    return Result(quantity="shear_stress", value=mean, unit=unit, uncertainty=err, job=job, log="log.lammps",
                  method=f"average of -{name} (stress = -pressure, the sign of compute stress/atom) over stage "
                         f"{index + 1} ({stage.name}, {stage.steps} steps, the shear run), {series.size} "
                         f"thermo rows{grid}; standard error by block averaging")
