"""MOF-guest molecular dynamics and framework mechanics on LAMMPS.

lammps/framework_guest_md: guest self-diffusion (Einstein MSD of the guests' centres of mass in the
linear regime) and the mean MOF-guest interaction energy, for single-site guests (TraPPE CH4, noble
gases) in a rigid framework: the structure agent's entry (CoRE MOF 2019 by default) replicated so
every perpendicular width is at least twice the cutoff, UFF Lennard-Jones on framework atoms,
Lorentz-Berthelot mixing, guests inserted at random favourable positions, NVT with a Nose-Hoover
thermostat on the guests only (the framework atoms are not integrated: frozen).

lammps/framework_eos: bulk modulus of an empty flexible framework from a Birch-Murnaghan fit of the
minimised energy against volume (isotropic strains of a relaxed cell), with bonded UFF4MOF terms
typed by lammps-interface.

Every answer names the structure (database and entry), the force fields and the defaults applied.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, Field

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, ReadError, RequestError
from simagent.gates import MSD_SLOPE_RANGE, MSD_WINDOW
from simagent.materials import forcefields as raspa_ff
from simagent.materials import frameworks as rfw
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import Protocol, register
from simagent.stats import block_average, detect_equilibration, linear_fit
from simagent.units import convert, to_canonical
from tools.lammps import framework as lfw
from tools.lammps.parse import read_output

MAIN = "in.lammps"
DATA = "system.data"
KCAL_MOL_PER_A3_IN_GPA = 4184.0 / 6.02214076e23 / 1e-30 / 1e9  # 6.9477 GPa
# m^2/s per A^2/fs
M2S_PER_A2FS = 1e-20 / 1e-15

# --- guest MD defaults (each one applied is listed in the answer) ---
DEFAULT_FORCE_FIELD = "UFF"
# 12.8 A: the cutoff of the MOF adsorption work in this project (forcefields/framework_lj.json),
# so MD and GCMC share one host-guest potential.
DEFAULT_CUTOFF_A = 12.8
# Loading: 2 molecules per unit cell of the CIF. For ZIF-8 (CoRE primitive cell = one sodalite cage) that is
# 2 CH4 per cage, ~1.5 mmol/g: the low-loading range of the PFG NMR / QENS studies of CH4 in ZIF-8.
DEFAULT_MOLECULES_PER_CELL = 2
# 5 fs: single-site guests in a frozen framework have no intramolecular vibrations. Measured here
# (32 TraPPE CH4 in rigid UFF IRMOF-1, NVE, 5 fs, 40 ps): total energy constant to 0.05 % of N kT.
DEFAULT_TIMESTEP_FS = 5.0
DEFAULT_EQUILIBRATION_STEPS = 10_000  # 50 ps
DEFAULT_PRODUCTION_STEPS = 200_000  # 1 ns
DEFAULT_DUMP_EVERY = 200  # 1 ps between frames
DEFAULT_THERMO_EVERY = 1000
# Nose-Hoover damping 1 ps (~500 steps): weak coupling keeps the guests' dynamics nearly Newtonian
# while holding T (LAMMPS fix nh guidance: ~100 steps is the shortest sensible damping).
DEFAULT_TDAMP_FS = 1000.0
DEFAULT_SEED = 20240
# Insertion: accept a random point when its host-guest LJ energy is below 0 K (attractive), i.e.
# inside the pore space, never in a wall; guests closer than one sigma are rejected.
DEFAULT_MAX_INSERTION_ENERGY_K = 0.0
MSD_BLOCKS = 4
# The guests' unwrapped trajectory. Not named msd.dcd on purpose: the generic msd gate would ask for two
# doublings of a run whose guests never leave their cages (activated hopping through windows narrower
# than the guest needs 10-100x longer runs); analyze_diffusion applies the gate's own window and slope
# range (simagent.gates.MSD_WINDOW, MSD_SLOPE_RANGE) and, when they fail, says how far the guests moved
# and gives an upper bound on D instead.
TRAJECTORY = "guests.dcd"
RDF_FILE = "rdf.dat"
RDF_BINS = 128  # to the pair cutoff: 0.1 A bins at 12.8 A
RDF_BLOCKS = 5
RDF_SAMPLES_PER_BLOCK = 20
NEIGHBOR_SKIN_A = 4.0

# --- E-V defaults ---
DEFAULT_EOS_FORCE_FIELD = "UFF4MOF"
DEFAULT_EOS_CUTOFF_A = 12.5  # lammps-interface's default non-bonded cutoff
# +/-3 % in volume (+/-1 % in length), 7 points: small enough for the harmonic-plus-B' regime of a
# Birch-Murnaghan fit, large enough that minimiser noise (ftol) is negligible.
DEFAULT_VOLUME_STRAINS = (-0.03, -0.02, -0.01, 0.0, 0.01, 0.02, 0.03)
# Young's modulus: uniaxial strains along x of the near-orthogonal (cubic) cell, lateral box relaxed
# to zero stress at each strain (stress-strain with relaxation), linear fit of sigma_xx(eps_xx).
DEFAULT_UNIAXIAL_STRAINS = (-0.01, -0.005, 0.0, 0.005, 0.01)
ATM_IN_GPA = 101325.0 / 1e9
MIN_ETOL = 1e-10
MIN_FTOL = 1e-6  # kcal/mol/A


def _unit_for(spec: TaskSpec, name: str) -> str | None:
    return next((p.unit for p in spec.properties if p.name == name and p.unit), None)


def _framework_spec(spec: TaskSpec, properties: frozenset[str]) -> bool:
    return bool(spec.system and spec.system.kind == "framework" and spec.properties
                and {p.name for p in spec.properties} <= properties)


def _source(spec: TaskSpec, resolved: rfw.ResolvedFramework) -> str:
    """What the user called the framework and where the structure came from (database and entry)."""
    asked = spec.system.name if spec.system and spec.system.name else ""
    if asked and asked not in resolved.source:
        return f"{asked}: {resolved.source}"
    return resolved.source


def _resolve(spec: TaskSpec) -> tuple[rfw.ResolvedFramework, rfw.FrameworkStructure]:
    if not spec.system or not spec.system.structure:
        raise RequestError("say which framework (a name such as ZIF-8 or IRMOF-1, or a CIF path)")
    resolved = rfw.resolve(spec.system.structure)
    return resolved, rfw.read_cif(resolved.path, name=resolved.name)


# =============================================================================================
# lammps/framework_guest_md
# =============================================================================================


class GuestMDParams(BaseModel):
    # Defaults reported in the answer, each with its reason (values from the parameters, p; the
    # guest model's citation comes with the model, simagent.materials.forcefields)
    DEFAULTS: ClassVar[dict[str, Default]] = {
        "framework force field": Default(DEFAULT_FORCE_FIELD, "generic force field for any MOF element; the same "
                                         "host-guest potential as the GCMC protocols", shown="UFF Lennard-Jones"),
        "framework": Default("rigid", "the usual approximation for small guests; flexibility can raise D through "
                             "window breathing (e.g. ZIF-8)",
                             shown="rigid (frozen atoms, framework-framework pairs excluded)"),
        "loading": Default(DEFAULT_MOLECULES_PER_CELL, "low loading; for ZIF-8 2 CH4 per sodalite cage (the CoRE "
                           "primitive cell holds one cage), 1.5 mmol/g", shown="{p.molecules_per_cell} molecules per "
                           "CIF unit cell"),
        "cutoff": Default(DEFAULT_CUTOFF_A, "as in the GCMC protocols (forcefields/framework_lj.json)",
                          shown="{p.cutoff_A:g} A, shifted, no tail correction"),
        "thermostat": Default(DEFAULT_TDAMP_FS, "weak coupling; the frozen framework cannot exchange energy",
                              shown="Nose-Hoover on the guests only, damping {tdamp_ps:g} ps"),
        "timestep": Default(DEFAULT_TIMESTEP_FS, "single-site guest, frozen framework: NVE energy constant to 0.05 % "
                            "of N kT at 5 fs (measured, CH4 in IRMOF-1)", shown="{p.timestep_fs:g} fs"),
        "MD length": Default(DEFAULT_PRODUCTION_STEPS, "long enough for cage-to-cage hops of CH4-sized guests at D ~ "
                             "1e-10-1e-9 m^2/s", shown="{equilibration_ps:g} ps NVT equilibration + {production_ps:g} "
                             "ps production, frames every {frames_ps:g} ps"),
    }

    framework: str
    framework_cif: str
    framework_source: str = ""
    force_field: str = DEFAULT_FORCE_FIELD
    guest: str = "CH4"
    guest_model: str = "TraPPE"
    temperature_K: float = Field(gt=0)
    molecules_per_cell: int = Field(default=DEFAULT_MOLECULES_PER_CELL, gt=0)
    cutoff_A: float = Field(default=DEFAULT_CUTOFF_A, gt=0)
    timestep_fs: float = Field(default=DEFAULT_TIMESTEP_FS, gt=0)
    equilibration_steps: int = Field(default=DEFAULT_EQUILIBRATION_STEPS, ge=0)
    production_steps: int = Field(default=DEFAULT_PRODUCTION_STEPS, gt=0)
    dump_every: int = Field(default=DEFAULT_DUMP_EVERY, gt=0)
    thermo_every: int = Field(default=DEFAULT_THERMO_EVERY, gt=0)
    tdamp_fs: float = Field(default=DEFAULT_TDAMP_FS, gt=0)
    max_insertion_energy_K: float = DEFAULT_MAX_INSERTION_ENERGY_K
    seed: int = DEFAULT_SEED
    time_limit_s: float = 4 * 3600.0


def _md_controls(controls) -> dict:
    """GuestMDParams run fields: the request's, else the module defaults read at call time (tests
    shorten them with monkeypatch)."""
    extra: dict = {"timestep_fs": DEFAULT_TIMESTEP_FS, "equilibration_steps": DEFAULT_EQUILIBRATION_STEPS,
                   "production_steps": DEFAULT_PRODUCTION_STEPS, "dump_every": DEFAULT_DUMP_EVERY,
                   "thermo_every": DEFAULT_THERMO_EVERY, "molecules_per_cell": DEFAULT_MOLECULES_PER_CELL,
                   "cutoff_A": DEFAULT_CUTOFF_A}
    if controls.timestep is not None:
        unit = (controls.timestep.unit or "fs").lower()
        extra["timestep_fs"] = controls.timestep.value * {"fs": 1.0, "ps": 1000.0}.get(unit, 1.0)
    for name in ("equilibration_steps", "production_steps", "seed"):
        if getattr(controls, name) is not None:
            extra[name] = getattr(controls, name)
    if controls.n_atoms is not None:  # the expert reader puts 'N molecules per unit cell' here
        extra["molecules_per_cell"] = controls.n_atoms
    return extra


def _guest_md_defaults(spec: TaskSpec, p: GuestMDParams, model, log: DefaultsLog) -> None:
    """What the request left to GuestMDParams.DEFAULTS, reported with the values the parameters hold."""
    controls = spec.controls
    if not (spec.potential and spec.potential.force_field):
        log.report("framework force field")
    log.note("guest model", model.label, model.citation)
    log.report("framework")
    if controls.n_atoms is None:
        log.report("loading", p=p)
    log.report("cutoff", p=p)
    log.report("thermostat", tdamp_ps=p.tdamp_fs / 1000)
    if controls.timestep is None:
        log.report("timestep", p=p)
    if controls.production_steps is None:
        ps = p.timestep_fs / 1000
        log.report("MD length", equilibration_ps=p.equilibration_steps * ps, production_ps=p.production_steps * ps,
                   frames_ps=p.dump_every * ps)


def _guest_system(p: GuestMDParams) -> lfw.RigidSystem:
    structure = rfw.read_cif(Path(p.framework_cif), name=p.framework)
    model = raspa_ff.guest_model(p.guest, p.guest_model)
    return lfw.rigid_guest_system(structure, p.force_field, model, p.molecules_per_cell, p.cutoff_A, p.seed,
                                  p.max_insertion_energy_K)


def guest_md_input(p: GuestMDParams, system: lfw.RigidSystem) -> str:
    n_types = len(system.type_names)
    guest_type = n_types
    tdamp = p.tdamp_fs
    lines = [
        f"# lammps/framework_guest_md: {system.n_guests} {p.guest} in rigid {p.framework} at {p.temperature_K:g} K",
        "units real", "atom_style atomic", "boundary p p p",
        f"read_data {DATA}",
        f"group framework type 1:{n_types - 1}",
        f"group guest type {guest_type}",
        f"pair_style lj/cut {p.cutoff_A:g}",
        "pair_modify shift yes",
    ]
    for i, j, eps, sig in system.pair_coeffs:
        lines.append(f"pair_coeff {i} {j} {eps:.6f} {sig:.4f}")
    lines += [
        # a 4 A skin halves the (framework-dominated) neighbour-list builds against 2 A
        f"neighbor {NEIGHBOR_SKIN_A:g} bin",
        "neigh_modify every 1 delay 0 check yes exclude group framework framework",
        f"timestep {p.timestep_fs:g}",
        "velocity framework set 0.0 0.0 0.0",
        f"velocity guest create {p.temperature_K:g} {p.seed} dist gaussian mom yes",
        "compute tguest guest temp",
        "compute hostguest guest group/group framework",
        "variable ehg equal c_hostguest/count(guest)",
        f"thermo {p.thermo_every}",
        "thermo_style custom step temp pe ke c_hostguest v_ehg atoms",
        "thermo_modify temp tguest norm no flush yes",
        f"fix thermostat guest nvt temp {p.temperature_K:g} {p.temperature_K:g} {tdamp:g}",
        "fix_modify thermostat temp tguest",
    ]
    if p.equilibration_steps:
        lines += [f"run {p.equilibration_steps}", "reset_timestep 0"]
    # MOF-guest g(r): guest site with each framework element, averaged in RDF_BLOCKS blocks
    pairs = " ".join(f"{guest_type} {t}" for t in range(1, n_types))
    every = max(1, p.production_steps // (RDF_BLOCKS * RDF_SAMPLES_PER_BLOCK))
    repeat = max(1, p.production_steps // (RDF_BLOCKS * every))
    lines += [
        f"compute mofguest all rdf {RDF_BINS} {pairs}",
        f"fix rdf all ave/time {every} {repeat} {every * repeat} c_mofguest[*] file {RDF_FILE} mode vector",
        f"dump traj guest dcd {p.dump_every} {TRAJECTORY}",
        "dump_modify traj unwrap yes",
        f"run {p.production_steps}",
    ]
    return "\n".join(lines) + "\n"


def _msd_fft(positions: np.ndarray) -> np.ndarray:
    """Mean squared displacement over all time origins (FFT form of the Einstein relation, as in
    Calandrini et al., Collection SFN 12, 201 (2011)) for positions (frames, atoms, 3)."""
    n = positions.shape[0]
    squares = np.sum(positions**2, axis=2)  # frames x atoms
    zero = np.zeros((1, positions.shape[1]))
    d = np.concatenate([squares, zero])
    s1 = np.zeros((n, positions.shape[1]))
    q = 2.0 * squares.sum(axis=0)
    for m in range(n):
        q = q - d[m - 1] - d[n - m]
        s1[m] = q / (n - m)
    size = 2 * n
    f = np.fft.rfft(positions, n=size, axis=0)
    corr = np.fft.irfft(f * f.conj(), n=size, axis=0)[:n].sum(axis=2)
    s2 = corr / (n - np.arange(n))[:, None]
    return np.mean(s1 - 2.0 * s2, axis=1)


def analyze_diffusion(job_dir: Path, p: GuestMDParams, n_guests: int) -> dict:
    """D = slope/6 of the guests' MSD over the same lag window the msd gate judges (MSD_WINDOW of
    the trajectory span), error from MSD_BLOCKS consecutive blocks fitted over the same fraction
    of their span."""
    from tools.lammps.handlers import read_dcd

    dump = job_dir / TRAJECTORY
    if not dump.is_file():
        raise ReadError(f"{TRAJECTORY} (unwrapped guest coordinates) was not written")
    frames = np.array(read_dcd(dump))
    if frames.ndim != 3 or frames.shape[1] != n_guests:
        raise ReadError(f"{TRAJECTORY} holds {frames.shape[1] if frames.ndim == 3 else '?'} atoms per frame, "
                        f"expected {n_guests} guests")
    frame_fs = p.dump_every * p.timestep_fs

    def fit(block: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray]:
        msd = _msd_fft(block)
        t = np.arange(len(msd)) * frame_fs
        lo, hi = MSD_WINDOW[0] * t[-1], MSD_WINDOW[1] * t[-1]
        window = (t >= lo) & (t <= hi) & (t > 0)
        if window.sum() < 4:
            raise CalculationFailed("trajectory too short for an MSD fit: run a longer production")
        slope = linear_fit(t[window], msd[window])[0]
        alpha = linear_fit(np.log(t[window]), np.log(np.maximum(msd[window], 1e-12)))[0]
        return slope / 6.0, alpha, t, msd

    d_all, alpha, t, msd = fit(frames)
    if not MSD_SLOPE_RANGE[0] <= alpha <= MSD_SLOPE_RANGE[1]:
        # how far did the guests get? (confinement in cages shows as a plateau and short displacements)
        largest = float(np.max(np.linalg.norm(frames[-1] - frames[0], axis=1)))
        tail = slice(int(0.8 * len(msd)), len(msd))
        upper = float(np.mean(msd[tail]) / (6.0 * np.mean(t[tail]))) * M2S_PER_A2FS
        raise CalculationFailed(
            f"the guests' MSD is not diffusive over lag {MSD_WINDOW[0] * t[-1] / 1000:.3g}-"
            f"{MSD_WINDOW[1] * t[-1] / 1000:.3g} ps (log-log slope {alpha:.2f}, not {MSD_SLOPE_RANGE[0]}-"
            f"{MSD_SLOPE_RANGE[1]}); MSD {float(np.mean(msd[tail])):.3g} A^2 at {t[-1] / 1000:.4g} ps, largest guest "
            f"displacement {largest:.1f} A, so only a bound is known: D < MSD/(6t) = {upper:.2g} m^2/s. Run longer "
            "('with N production steps'); guests confined to cages whose windows are narrower than the guest in a "
            "rigid framework (e.g. CH4 in ZIF-8) need a flexible framework or a rare-event method")
    size = len(frames) // MSD_BLOCKS
    per_block = [fit(frames[b * size:(b + 1) * size])[0] for b in range(MSD_BLOCKS)]
    se = float(np.std(per_block, ddof=1) / math.sqrt(MSD_BLOCKS))
    table = job_dir / "msd.csv"
    np.savetxt(table, np.column_stack([t / 1000.0, msd]), delimiter=",", header="t_ps,msd_A2")
    return {"D": d_all * M2S_PER_A2FS, "D_se": se * M2S_PER_A2FS, "alpha": alpha, "frames": len(frames),
            "table": str(table), "t_lo": MSD_WINDOW[0] * t[-1] / 1000.0, "t_hi": MSD_WINDOW[1] * t[-1] / 1000.0}


@register
class FrameworkGuestMD(Protocol):
    name = "lammps/framework_guest_md"
    engine = "lammps"
    properties: ClassVar[frozenset[str]] = frozenset({"self_diffusion_coefficient", "interaction_energy", "rdf"})
    Params = GuestMDParams
    description = ("MD of single-site guests (CH4, noble gases) in a rigid MOF/zeolite (UFF + TraPPE, "
                   "Lorentz-Berthelot): guest self-diffusion from the centre-of-mass MSD in its linear regime, "
                   "the mean MOF-guest interaction energy and the MOF-guest g(r) (first peak per framework element)")

    def applies_to(self, spec: TaskSpec) -> bool:
        return _framework_spec(spec, self.properties) and bool(spec.system.guests)

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> GuestMDParams:
        resolved, _structure = _resolve(spec)
        guests = [raspa_ff.canonical_guest(g) for g in spec.system.guests]
        if len(guests) != 1:
            raise RequestError("lammps/framework_guest_md simulates one guest species; name one (e.g. CH4)")
        model = raspa_ff.guest_model(guests[0])
        if spec.conditions.temperature is None:
            raise RequestError("say the temperature of the MD run (e.g. 300 K)")
        temperature = to_canonical(spec.conditions.temperature, "temperature").value
        force_field = DEFAULT_FORCE_FIELD
        if spec.potential and spec.potential.force_field:
            force_field = raspa_ff.canonical_force_field(spec.potential.force_field)
            if force_field not in raspa_ff.GENERIC_FORCE_FIELDS:
                raise RequestError("framework MD supports the generic UFF or DREIDING Lennard-Jones parameters")
        params = GuestMDParams(framework=resolved.name, framework_cif=str(resolved.path),
                               framework_source=_source(spec, resolved), force_field=force_field, guest=guests[0],
                               guest_model=model.model, temperature_K=temperature, **_md_controls(spec.controls))
        _guest_md_defaults(spec, params, model, log)
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = GuestMDParams.model_validate(params.model_dump())
        system = _guest_system(p)
        return [Job(id="guest_md", protocol=self.name, engine="lammps", stage="nvt",
                    params={"production_steps": p.production_steps, "n_guests": system.n_guests},
                    inputs={MAIN: guest_md_input(p, system), DATA: system.data}, time_limit_s=p.time_limit_s)]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = GuestMDParams.model_validate(params.model_dump())
        job_dir = job_dirs["guest_md"]
        system = _guest_system(p)
        thermo = read_output(job_dir).last_run()
        temps = np.asarray(thermo["Temp"], dtype=float)
        t_mean, t_se = block_average(temps[len(temps) // 5:])
        head = (f"LAMMPS MD of {system.n_guests} {p.guest} in rigid {p.framework} ({p.framework_source}); "
                f"{system.force_field_note}; {system.insertion_note}; NVT {p.temperature_K:g} K (Nose-Hoover on "
                f"the guests, damping {p.tdamp_fs / 1000:g} ps; mean guest T {t_mean:.1f} +/- {t_se:.1f} K), "
                f"timestep {p.timestep_fs:g} fs, {p.equilibration_steps * p.timestep_fs / 1000:g} ps equilibration + "
                f"{p.production_steps * p.timestep_fs / 1000:g} ps production")
        wanted = {q.name for q in spec.properties}
        results = []
        log = str(job_dir / "log.lammps")
        if "self_diffusion_coefficient" in wanted:
            try:
                d = analyze_diffusion(job_dir, p, system.n_guests)
            except CalculationFailed as err:  # say which structure, models and run the bound is for
                raise CalculationFailed(f"{err} [{head}]") from None
            unit = _unit_for(spec, "self_diffusion_coefficient") or "m^2/s"
            value, error = convert(d["D"], "m^2/s", unit), convert(d["D_se"], "m^2/s", unit)
            results.append(Result(
                quantity="self_diffusion_coefficient", value=value, unit=unit, uncertainty=error,
                job="guest_md", log=log, data_file=d["table"],
                method=(f"{head}; D = MSD/(6t) of the guests' centres of mass (unwrapped, all time origins, FFT) "
                        f"fitted over lag {d['t_lo']:.3g}-{d['t_hi']:.3g} ps ({d['frames']} frames; log-log slope "
                        f"{d['alpha']:.2f}); error from {MSD_BLOCKS} consecutive blocks")))
        if "interaction_energy" in wanted:
            series = np.asarray(thermo["v_ehg"], dtype=float)
            t0 = detect_equilibration(series)
            mean, se = block_average(series[t0:])
            unit = _unit_for(spec, "interaction_energy") or "kJ/mol"
            value, error = convert(mean, "kcal/mol", unit), convert(se, "kcal/mol", unit)
            results.append(Result(
                quantity="interaction_energy", value=value, unit=unit, uncertainty=error, job="guest_md", log=log,
                method=(f"{head}; mean MOF-guest Lennard-Jones energy per guest molecule (compute group/group "
                        f"guest-framework), samples {t0}..{series.size - 1} after equilibration detection (Chodera "
                        "2016), Flyvbjerg-Petersen block error")))
        if "rdf" in wanted:
            results += analyze_rdf(job_dir, system, head)
        return results


def analyze_rdf(job_dir: Path, system: lfw.RigidSystem, head: str) -> list[Result]:
    """First peak of the guest-(framework element) g(r), averaged over the production blocks; the
    table (r, g and running coordination number per element) goes to mof_guest_rdf.csv."""

    path = job_dir / RDF_FILE
    text = [ln for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")] if path.is_file() \
        else []
    if not text:
        raise ReadError(f"{RDF_FILE} was not written")
    blocks, i = [], 0
    while i < len(text):  # fix ave/time mode vector: "step nrows", then rows "index r g1 cn1 g2 cn2 ..."
        n_rows = int(text[i].split()[1])
        blocks.append(np.array([[float(v) for v in ln.split()] for ln in text[i + 1:i + 1 + n_rows]]))
        i += 1 + n_rows

    mean = np.mean(blocks, axis=0)
    r = mean[:, 1]
    elements = system.type_names[:-1]
    guest = system.type_names[-1]
    table = job_dir / "mof_guest_rdf.csv"
    header = "r_A," + ",".join(f"g_{e},cn_{e}" for e in elements)
    np.savetxt(table, mean[:, 1:], delimiter=",", header=header)
    results = []
    dr = float(r[1] - r[0])
    for k, element in enumerate(elements):
        g = mean[:, 2 + 2 * k]
        smooth = np.convolve(g, np.ones(3) / 3, mode="same")
        peak = int(np.argmax(smooth))
        per_block = [float(r[int(np.argmax(np.convolve(b[:, 2 + 2 * k], np.ones(3) / 3, mode="same")))])
                     for b in blocks]
        spread = float(np.std(per_block, ddof=1) / math.sqrt(len(blocks))) if len(blocks) > 1 else 0.0
        results.append(Result(
            quantity=f"rdf_first_peak_{guest}-{element}", value=float(r[peak]), unit="angstrom",
            uncertainty=max(dr / 2, spread), job="guest_md", log=str(job_dir / "log.lammps"), data_file=str(table),
            method=(f"{head}; g(r) of {guest} with framework {element} (compute rdf, {RDF_BINS} bins to the cutoff, "
                    f"{len(blocks)} production blocks); first maximum of the 3-bin running mean, height "
                    f"{float(smooth[peak]):.2f}; error from the block spread, at least half a bin")))
    return results


# =============================================================================================
# lammps/framework_eos
# =============================================================================================


class FrameworkEOSParams(BaseModel):
    # Defaults reported in the answer, each with its reason (values from the parameters, p)
    DEFAULTS: ClassVar[dict[str, Default]] = {
        "force field": Default(DEFAULT_EOS_FORCE_FIELD, "UFF extended to MOF metal nodes (Addicoat et al. 2014; "
                               "Coupry et al. 2016), typed by lammps-interface (Boyd et al. 2017)",
                               shown="UFF4MOF (bonds, angles, torsions, inversions; UFF LJ)"),
        "temperature": Default(0.0, "E-V equation of state of the relaxed framework",
                               shown="0 K (static: minimised energies)"),
        "volume strains": Default(DEFAULT_VOLUME_STRAINS, "small isotropic strains around the relaxed cell; "
                                  "Birch-Murnaghan fit", shown="{strains}"),
        "cutoff": Default(DEFAULT_EOS_CUTOFF_A, "lammps-interface default", shown="{p.cutoff_A:g} A with tail "
                          "correction"),
    }

    framework: str
    framework_cif: str
    framework_source: str = ""
    force_field: str = DEFAULT_EOS_FORCE_FIELD
    cutoff_A: float = Field(default=DEFAULT_EOS_CUTOFF_A, gt=0)
    volume_strains: list[float] = Field(default_factory=lambda: list(DEFAULT_VOLUME_STRAINS), min_length=5)
    uniaxial_strains: list[float] = Field(default_factory=lambda: list(DEFAULT_UNIAXIAL_STRAINS), min_length=3)
    wanted: list[str] = Field(default_factory=lambda: ["bulk_modulus"], description="properties to compute")
    time_limit_s: float = 3600.0


def data_pair_coeffs(data: str) -> list[tuple[int, str, str]]:
    """(type, epsilon, sigma) rows of a data file's 'Pair Coeffs' section."""
    rows, inside = [], False
    for line in data.splitlines():
        words = line.split("#", 1)[0].split()
        if line.strip().startswith("Pair Coeffs"):
            inside = True
            continue
        if inside:
            if not words:
                if rows:
                    break
                continue
            if not words[0].isdigit():
                break
            rows.append((int(words[0]), words[1], words[2]))
    return rows


def eos_input(p: FrameworkEOSParams, typed: lfw.FlexibleFramework) -> str:
    """Relax the cell (box/relax iso to 0 pressure), then for each volume strain scale the relaxed
    box isotropically (fractional coordinates kept), minimise the atoms and print volume and energy."""
    lines = ["# lammps/framework_eos: E(V) of a flexible framework", "units real", "atom_style full",
             "boundary p p p"]
    lines += typed.styles
    lines += [f"read_data {DATA}"]
    # the data file's Pair Coeffs, repeated as commands so the input states every LJ parameter
    lines += [f"pair_coeff {i} {i} {eps} {sig}" for i, eps, sig in data_pair_coeffs(typed.data)]
    lines += ["neighbor 2.0 bin", "neigh_modify every 1 delay 0 check yes",
              "thermo 100", "thermo_style custom step pe press vol lx ly lz", "min_style cg",
              f"minimize {MIN_ETOL:g} {MIN_FTOL:g} 20000 200000",
              "fix relax all box/relax tri 0.0 vmax 0.001", f"minimize {MIN_ETOL:g} {MIN_FTOL:g} 20000 200000",
              "unfix relax", f"minimize {MIN_ETOL:g} {MIN_FTOL:g} 20000 200000",
              'print "EV_REFERENCE $(vol:%.6f) $(pe:%.8f) $(press:%.3f)"',
              "variable lx0 equal $(lx:%.10f)", "variable ly0 equal $(ly:%.10f)", "variable lz0 equal $(lz:%.10f)",
              "variable xy0 equal $(xy:%.10f)", "variable xz0 equal $(xz:%.10f)", "variable yz0 equal $(yz:%.10f)"]
    for index, strain in enumerate(sorted(p.volume_strains)):
        s = (1.0 + strain) ** (1.0 / 3.0)
        lines += [
            f"# volume strain {strain:+g}: lengths x {s:.10f}",
            f"change_box all x final 0.0 $({s:.12f}*v_lx0) y final 0.0 $({s:.12f}*v_ly0) "
            f"z final 0.0 $({s:.12f}*v_lz0) xy final $({s:.12f}*v_xy0) xz final $({s:.12f}*v_xz0) "
            f"yz final $({s:.12f}*v_yz0) remap units box",
            f"minimize {MIN_ETOL:g} {MIN_FTOL:g} 20000 200000",
            f'print "EV_POINT {index} {strain:+.5f} $(vol:%.6f) $(pe:%.8f) $(press:%.3f)"',
        ]
    return "\n".join(lines) + "\n"


def uniaxial_input(p: FrameworkEOSParams, typed: lfw.FlexibleFramework) -> str:
    """Relax the orthogonal cell (box/relax aniso), then per strain set lx = (1 + eps) lx0 and minimise
    with y and z relaxed to zero stress (couple none); print eps, ly, lz. The stresses are read from the
    last thermo row of each strain's final minimisation (immediate $(pxx) variables fail the dry run,
    which skips minimisations)."""
    lines = ["# lammps/framework_eos: uniaxial stress-strain with lateral relaxation", "units real",
             "atom_style full", "boundary p p p", *typed.styles, f"read_data {DATA}"]
    lines += [f"pair_coeff {i} {i} {eps} {sig}" for i, eps, sig in data_pair_coeffs(typed.data)]
    lines += ["neighbor 2.0 bin", "neigh_modify every 1 delay 0 check yes", "thermo 100",
              "thermo_style custom step pe pxx pyy pzz vol lx ly lz", "min_style cg",
              f"minimize {MIN_ETOL:g} {MIN_FTOL:g} 20000 200000",
              "fix relax all box/relax aniso 0.0 vmax 0.001", f"minimize {MIN_ETOL:g} {MIN_FTOL:g} 20000 200000",
              "unfix relax", f"minimize {MIN_ETOL:g} {MIN_FTOL:g} 20000 200000",
              'print "UNIAXIAL_REFERENCE $(lx:%.8f) $(ly:%.8f) $(lz:%.8f)"',
              "variable lx0 equal $(lx:%.10f)"]
    for index, strain in enumerate(sorted(p.uniaxial_strains)):
        lines += [
            f"# uniaxial strain {strain:+g}",
            f"change_box all x final 0.0 $({1.0 + strain:.12f}*v_lx0) remap units box",
            "fix lateral all box/relax y 0.0 z 0.0 couple none vmax 0.001",
            f"minimize {MIN_ETOL:g} {MIN_FTOL:g} 20000 200000",
            "unfix lateral",
            f"minimize {MIN_ETOL:g} {MIN_FTOL:g} 20000 200000",
            f'print "UNIAXIAL_POINT {index} {strain:+.5f} $(ly:%.8f) $(lz:%.8f)"',
        ]
    return "\n".join(lines) + "\n"


def read_uniaxial(job_dir: Path) -> tuple[tuple[float, ...], list[tuple[float, ...]]]:
    text = ""
    for name in ("stdout.txt", "log.lammps"):
        path = job_dir / name
        if path.is_file() and "UNIAXIAL_POINT" in path.read_text(errors="replace"):
            text = path.read_text(errors="replace")
            break
    reference, printed = None, []
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["UNIAXIAL_REFERENCE"] and len(words) == 4:
            reference = tuple(float(w) for w in words[1:])
        elif words[:1] == ["UNIAXIAL_POINT"] and len(words) == 5:
            printed.append(tuple(float(w) for w in words[2:]))
    if reference is None or len(printed) < 3:
        raise ReadError(f"{job_dir.name}: the stress-strain points were not printed (found {len(printed)})")
    runs = read_output(job_dir).runs  # 3 minimisations, then 2 per strain (lateral relaxation, final)
    if len(runs) != 3 + 2 * len(printed):
        raise ReadError(f"{job_dir.name}: {len(runs)} thermo blocks, expected {3 + 2 * len(printed)}")
    points = []
    for index, (strain, ly, lz) in enumerate(printed):
        final = runs[3 + 2 * index + 1]
        points.append((strain, float(final["Pxx"][-1]), float(final["Pyy"][-1]), float(final["Pzz"][-1]), ly, lz))
    return reference, points


def read_ev(job_dir: Path) -> tuple[tuple[float, float, float], list[tuple[float, float, float]]]:
    """(reference volume, energy, pressure) and the (volume, energy, pressure) points printed by the input."""
    text = ""
    for name in ("stdout.txt", "log.lammps"):
        path = job_dir / name
        if path.is_file():
            text = path.read_text(errors="replace")
            if "EV_POINT" in text:
                break
    reference, points = None, []
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["EV_REFERENCE"] and len(words) == 4:
            reference = tuple(float(w) for w in words[1:4])
        elif words[:1] == ["EV_POINT"] and len(words) == 6:
            points.append(tuple(float(w) for w in words[3:6]))
    if reference is None or len(points) < 5:
        raise ReadError(f"{job_dir.name}: the E(V) points were not printed (found {len(points)})")
    return reference, points


def birch_murnaghan(volumes: np.ndarray, energies: np.ndarray) -> tuple[float, float, float, float]:
    """(V0, E0, B0, B0') of a third-order Birch-Murnaghan fit (ase.eos, energies in kcal/mol,
    volumes in A^3; B0 in kcal/mol/A^3)."""
    from ase.eos import EquationOfState

    eos = EquationOfState(volumes, energies, eos="birchmurnaghan")
    v0, e0, b0 = eos.fit()
    bprime = float(eos.eos_parameters[2]) if getattr(eos, "eos_parameters", None) is not None else float("nan")
    return float(v0), float(e0), float(b0), bprime


@register
class FrameworkEOS(Protocol):
    name = "lammps/framework_eos"
    engine = "lammps"
    properties: ClassVar[frozenset[str]] = frozenset({"bulk_modulus", "youngs_modulus", "poisson_ratio"})
    Params = FrameworkEOSParams
    description = ("bulk modulus of an empty flexible MOF from a Birch-Murnaghan fit of E(V): isotropic strains of "
                   "the relaxed cell, energy minimised at each volume (UFF4MOF bonded terms via lammps-interface)")

    def applies_to(self, spec: TaskSpec) -> bool:
        return _framework_spec(spec, self.properties)

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> FrameworkEOSParams:
        resolved, _structure = _resolve(spec)
        if spec.conditions.temperature is not None and to_canonical(spec.conditions.temperature,
                                                                    "temperature").value > 1.0:
            raise RequestError("lammps/framework_eos gives the static (0 K) bulk modulus; finite-temperature "
                               "moduli of frameworks are not implemented yet")
        if spec.potential and spec.potential.force_field and \
                spec.potential.force_field.replace("-", "").upper() not in ("UFF4MOF", "UFF"):
            raise RequestError("the framework E(V) protocol types bonded terms with UFF4MOF (lammps-interface) only")
        if lfw.lammps_interface_command() is None:
            raise RequestError(f"the bulk modulus of a framework needs lammps-interface=="
                               f"{lfw.LAMMPS_INTERFACE_VERSION} for bonded typing; it is not installed")
        params = FrameworkEOSParams(framework=resolved.name, framework_cif=str(resolved.path),
                                    framework_source=_source(spec, resolved),
                                    wanted=sorted({q.name for q in spec.properties}))
        for name in ("force field", "temperature", "volume strains", "cutoff"):
            log.report(name, p=params, strains=", ".join(f"{s:+g}" for s in params.volume_strains))
        return params

    def _typed(self, p: FrameworkEOSParams) -> lfw.FlexibleFramework:
        return lfw.flexible_framework(Path(p.framework_cif), p.force_field, p.cutoff_A)

    def _typed_orthogonal(self, p: FrameworkEOSParams) -> lfw.FlexibleFramework:
        from simagent.materials.structures import cache_dir

        structure = rfw.read_cif(Path(p.framework_cif), name=p.framework)
        folder = cache_dir() / "framework_md"
        folder.mkdir(parents=True, exist_ok=True)
        return lfw.flexible_framework(lfw.conventional_cif(structure, folder, p.cutoff_A), p.force_field, p.cutoff_A)

    def jobs(self, params: BaseModel) -> list[Job]:
        p = FrameworkEOSParams.model_validate(params.model_dump())
        jobs = []
        if "bulk_modulus" in p.wanted:
            typed = self._typed(p)
            jobs.append(Job(id="eos", protocol=self.name, engine="lammps", stage="minimize",
                            params={"n_atoms": typed.n_atoms},
                            inputs={MAIN: eos_input(p, typed), DATA: typed.data}, time_limit_s=p.time_limit_s))
        if {"youngs_modulus", "poisson_ratio"} & set(p.wanted):
            typed = self._typed_orthogonal(p)
            jobs.append(Job(id="uniaxial", protocol=self.name, engine="lammps", stage="minimize",
                            params={"n_atoms": typed.n_atoms},
                            inputs={MAIN: uniaxial_input(p, typed), DATA: typed.data}, time_limit_s=p.time_limit_s))
        return jobs

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = FrameworkEOSParams.model_validate(params.model_dump())
        results = self._bulk(p, job_dirs, spec) if "eos" in job_dirs else []
        if "uniaxial" in job_dirs:
            results += self._uniaxial(p, job_dirs["uniaxial"], spec)
        return results

    def _uniaxial(self, p: FrameworkEOSParams, job_dir: Path, spec: TaskSpec) -> list[Result]:
        reference, points = read_uniaxial(job_dir)
        strain = np.array([pt[0] for pt in points])
        stress_gpa = -np.array([pt[1] for pt in points]) * ATM_IN_GPA  # sigma = -P (tension positive)
        young, _, young_se = linear_fit(strain, stress_gpa)
        lateral = (np.array([pt[4] for pt in points]) + np.array([pt[5] for pt in points])) / 2.0
        ref_lateral = (reference[1] + reference[2]) / 2.0
        nu, _, nu_se = linear_fit(strain, -(lateral / ref_lateral - 1.0))
        residual_gpa = max(abs(pt[2]) + abs(pt[3]) for pt in points) * ATM_IN_GPA
        method = (f"LAMMPS energy minimisation of empty {p.framework} ({p.framework_source}) in its near-orthogonal "
                  f"cell ({reference[0]:.3f} x {reference[1]:.3f} x {reference[2]:.3f} A after relaxation to zero "
                  f"stress); {p.force_field} bonded and Lennard-Jones terms typed by lammps-interface "
                  f"{lfw.LAMMPS_INTERFACE_VERSION} (Boyd et al. 2017; Addicoat et al. 2014), cutoff {p.cutoff_A:g} A, "
                  f"no charges; uniaxial strains {', '.join(f'{s:+g}' for s in sorted(p.uniaxial_strains))} along x "
                  f"with y and z relaxed to zero stress (largest residual lateral stress {residual_gpa:.2g} GPa); "
                  "linear fit of sigma_xx(eps_xx), 0 K; error = standard error of the slope")
        wanted = {q.name for q in spec.properties}
        results = []
        if "youngs_modulus" in wanted:
            unit = _unit_for(spec, "youngs_modulus") or "GPa"
            results.append(Result(quantity="youngs_modulus", value=convert(young, "GPa", unit), unit=unit,
                                  uncertainty=convert(young_se, "GPa", unit), job="uniaxial",
                                  log=str(job_dir / "log.lammps"), method=f"{method}; E along the x cell axis"))
        if "poisson_ratio" in wanted:
            results.append(Result(quantity="poisson_ratio", value=nu, unit="", uncertainty=nu_se, job="uniaxial",
                                  log=str(job_dir / "log.lammps"),
                                  method=f"{method}; nu = -(lateral strain)/(axial strain), mean of y and z"))
        return results

    def _bulk(self, p: FrameworkEOSParams, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        job_dir = job_dirs["eos"]
        reference, points = read_ev(job_dir)
        volumes = np.array([v for v, _e, _p in points])
        energies = np.array([e for _v, e, _p in points])
        if int(np.argmin(energies)) in (0, len(energies) - 1):
            raise CalculationFailed("the E(V) minimum lies at the edge of the strain range: the cell did not relax")
        v0, _e0, b0, bprime = birch_murnaghan(volumes, energies)
        b_gpa = b0 * KCAL_MOL_PER_A3_IN_GPA
        # fit uncertainty: spread of the fit when the outermost pair of points is dropped
        inner = slice(1, -1)
        b_inner = birch_murnaghan(volumes[inner], energies[inner])[2] * KCAL_MOL_PER_A3_IN_GPA
        if b_gpa <= 0:
            raise CalculationFailed(f"negative bulk modulus {b_gpa:.3g} GPa from the E(V) fit")
        # check: B from the pressures of the strained cells, -V dP/dV at the reference
        pressures_gpa = np.array([pp for _v, _e, pp in points]) * 101325.0 / 1e9  # atm -> GPa
        slope = linear_fit(volumes, pressures_gpa)[0]
        b_pv = -reference[0] * slope
        unit = _unit_for(spec, "bulk_modulus") or "GPa"
        value = convert(b_gpa, "GPa", unit)
        error = convert(abs(b_gpa - b_inner), "GPa", unit)
        method = (f"LAMMPS energy minimisation of empty {p.framework} ({p.framework_source}); {p.force_field} bonded "
                  f"and Lennard-Jones terms typed by lammps-interface {lfw.LAMMPS_INTERFACE_VERSION} (Boyd et al., "
                  f"J. Phys. Chem. Lett. 8, 357 (2017); Addicoat et al., JCTC 10, 4457 (2014)), cutoff "
                  f"{p.cutoff_A:g} A, no charges; cell relaxed to zero stress (V0 = {reference[0]:.1f} A^3), then "
                  f"{len(points)} isotropic volume strains {min(p.volume_strains):+g}..{max(p.volume_strains):+g} "
                  f"with atoms minimised at fixed cell; third-order Birch-Murnaghan fit (ase.eos): V0 = {v0:.1f} "
                  f"A^3, B' = {bprime:.2f}; uncertainty = change of B when the outermost points are dropped; "
                  f"check from the virial pressures -V dP/dV = {b_pv:.2f} GPa")
        return [Result(quantity="bulk_modulus", value=value, unit=unit, uncertainty=error, job="eos",
                       log=str(job_dir / "log.lammps"), method=method)]
