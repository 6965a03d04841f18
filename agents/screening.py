"""High-throughput screening of CoRE MOF 2019 for the uptake of one gas: a declared funnel.

Stages (each reported with its rule, how many entries went in and out, and which it removed):
1. validity: the CoRE table gives LCD, PLD, void fraction and density, and the entry is not flagged
   as disordered;
2. geometry (CoRE MOF table: Zeo++ values of Chung et al. 2019): PLD above the guest's kinetic diameter
   (the guest must pass the narrowest window) and void fraction at least `min_void_fraction`;
3. structure and size: the CIF reads and passes the structure checks, at most `max_atoms` atoms per
   unit cell;
4. Widom insertion (RASPA, raspa/widom protocol): Henry coefficient K_H at the temperature; the
   `henry_keep` entries with the highest K_H go on (K_H ranks low-pressure affinity; the cut is a
   knob, its recall at high pressure is measured by benchmarks/screen_recall.py);
5. GCMC (RASPA, raspa/gcmc_uptake protocol) at the requested temperature and pressure for those;
   ranked by absolute uptake with RASPA's block-error uncertainty.

Every RASPA job runs through simagent.jobrun in <out>/jobs/<job id>, so a killed screen resumes
without redoing finished jobs, and every ranked value names its job folder. Writes funnel.json,
results.csv (every GCMC'd entry, rank, uptake +/- error, K_H, geometry, job folders) and
uptake_vs_void_fraction.png (top N highlighted).

Simplifications, stated in funnel.json: framework atoms take UFF, guests TraPPE, no pocket blocking,
no framework charges (CH4, Kr, Xe, Ar, N2-free LJ guests are unaffected; for CO2 this is a limitation),
and the GCMC helium void fraction is the table's void fraction (only the excess loading depends on it,
and the ranking uses the absolute loading).
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from simagent.errors import RequestError, SimagentError
from simagent.executor import Executor
from simagent.jobrun import PlanProgress, run_plan
from simagent.materials.structures import CORE_CITATION, CORE_LABEL, core_table, extract_core_cifs
from simagent.models import Conditions, Job, JobStatus, Plan, PropertyRequest, Quantity, SystemSpec, TaskSpec

# Kinetic diameters in angstrom: D. W. Breck, Zeolite Molecular Sieves (Wiley, New York, 1974), Table 8.14.
KINETIC_DIAMETER_A = {"CH4": 3.8, "CO2": 3.3, "N2": 3.64, "H2": 2.89, "Ar": 3.4, "Kr": 3.6, "Xe": 3.96,
                      "O2": 3.46, "He": 2.6}
# RASPA guests here without framework charges: LJ-only models (see module docstring).
SCREEN_GUESTS = ("CH4", "Kr", "Xe", "Ar")


class ScreenSpec(BaseModel):
    """What to screen and the funnel's cuts."""

    guest: str = Field(default="CH4", description="adsorbing gas (canonical RASPA key)")
    temperature_K: float = Field(default=298.0, gt=0)
    pressure_bar: float = Field(default=65.0, gt=0)
    top_n: int = Field(default=10, ge=1)
    dataset: str = Field(default="2019-ASR", description="CoRE MOF 2019 dataset: 2019-ASR or 2019-FSR")
    entries: list[str] | None = Field(default=None, description="screen only these entries")
    sample: int | None = Field(default=None, ge=1, description="screen a random sample of this size")
    seed: int = 0
    min_void_fraction: float = Field(default=0.3, ge=0, le=1)
    geometry_cut: bool = Field(default=True, description="False: the geometry stage passes every entry "
                               "(exhaustive reference runs of benchmarks/screen_recall.py)")
    max_atoms: int = Field(default=1000, ge=1, description="atoms per unit cell")
    henry_keep: int | None = Field(default=None, ge=1, description="entries passed from Widom to GCMC "
                                   "(default 3 x top_n)")
    widom_cycles: int = Field(default=2000, ge=1)
    gcmc_init_cycles: int = Field(default=1000, ge=0)
    gcmc_cycles: int = Field(default=2000, ge=1)
    loading_unit: str = "cm3(STP)/cm3"

    @property
    def keep(self) -> int:
        return self.henry_keep or 3 * self.top_n


class Stage(BaseModel):
    name: str
    rule: str
    n_in: int
    n_out: int
    removed: list[str] = Field(default_factory=list, description="entries this stage removed (first 20)")


class Ranked(BaseModel):
    rank: int
    entry: str
    uptake: float
    uptake_error: float
    unit: str
    henry: float
    henry_error: float
    henry_unit: str
    lcd_A: float
    pld_A: float
    void_fraction: float
    gcmc_job: str
    widom_job: str


class ScreenResult(BaseModel):
    spec: ScreenSpec
    source: str
    stages: list[Stage]
    ranking: list[Ranked]
    top: list[Ranked]
    failed_jobs: dict[str, str] = Field(default_factory=dict)
    simplifications: list[str]
    files: dict[str, str] = Field(default_factory=dict)


class EmptyScreen(SimagentError):
    """No candidate is left after a stage; the message names the stage and its rule."""


ProgressFn = Callable[[str], None]


def _float(row: dict[str, str], key: str) -> float | None:
    try:
        return float(row[key])
    except (KeyError, ValueError):
        return None


def _job_name(kind: str, entry: str) -> str:
    return f"{kind}-{entry}"


def _pass(stages: list[Stage], name: str, rule: str, before: list[str], after: list[str]) -> list[str]:
    kept = set(after)
    stages.append(Stage(name=name, rule=rule, n_in=len(before), n_out=len(after),
                        removed=[e for e in before if e not in kept][:20]))
    if not after:
        raise EmptyScreen(f"no candidate left after the '{name}' stage ({rule}): it removed all {len(before)}")
    return after


def run_screen(spec: ScreenSpec, out: Path, executor: Executor | None = None,
               say: ProgressFn | None = None) -> ScreenResult:
    """Run the funnel; finished jobs in out/jobs are reused (resume)."""
    from simagent.materials import forcefields as ff
    from simagent.materials import frameworks as fw
    from tools.raspa.protocols.adsorption import GCMCParams, GCMCUptake, WidomInsertion, WidomParams

    say = say or (lambda _text: None)
    guest = ff.canonical_guest(spec.guest)
    if guest not in KINETIC_DIAMETER_A:
        raise RequestError(f"no kinetic diameter for {guest}; screening knows {', '.join(KINETIC_DIAMETER_A)}")
    if guest not in SCREEN_GUESTS:
        raise RequestError(f"screening without framework charges is only valid for LJ guests "
                           f"({', '.join(SCREEN_GUESTS)}); {guest} needs charges")
    if spec.dataset not in CORE_LABEL:
        raise RequestError(f"unknown CoRE dataset {spec.dataset!r}: 2019-ASR or 2019-FSR")
    out.mkdir(parents=True, exist_ok=True)
    table = core_table(spec.dataset)
    stages: list[Stage] = []
    if spec.entries:
        unknown = [e for e in spec.entries if e not in table]
        if unknown:
            raise RequestError(f"not in {CORE_LABEL[spec.dataset]}: {', '.join(unknown[:5])}")
        pool = list(dict.fromkeys(spec.entries))
    else:
        pool = sorted(table)
        if spec.sample and spec.sample < len(pool):
            pool = sorted(random.Random(spec.seed).sample(pool, spec.sample))

    def complete(entry: str) -> bool:
        row = table[entry]
        values = [_float(row, k) for k in ("LCD", "PLD", "AV_VF", "cm3_g")]
        return all(v is not None and v >= 0 for v in values) and row.get("DISORDER", "").strip() == ""

    valid = _pass(stages, "validity", "LCD, PLD, void fraction and density in the CoRE table; not flagged "
                  "DISORDER", pool, [e for e in pool if complete(e)])
    kinetic = KINETIC_DIAMETER_A[guest]
    cut_rule = (f"PLD > {kinetic:g} A (kinetic diameter of {guest}, Breck 1974) and void fraction >= "
                f"{spec.min_void_fraction:g} (CoRE MOF 2019 table, Zeo++)")
    geometric = _pass(
        stages, "geometry", cut_rule if spec.geometry_cut else "not applied (geometry_cut = false)", valid,
        [e for e in valid if not spec.geometry_cut
         or (_float(table[e], "PLD") > kinetic and _float(table[e], "AV_VF") >= spec.min_void_fraction)])
    say(f"geometry: {len(geometric)} of {len(pool)} entries pass; reading their CIFs")
    cifs = extract_core_cifs(spec.dataset, geometric)
    structures, problems = {}, {}
    for entry in geometric:
        try:
            structure = fw.read_cif(cifs[entry], name=entry)
        except SimagentError as exc:
            problems[entry] = str(exc)
            continue
        if len(structure.symbols) <= spec.max_atoms:
            structures[entry] = structure
        else:
            problems[entry] = f"{len(structure.symbols)} atoms per unit cell"
    sized = _pass(stages, "structure and size", f"CIF passes the structure checks; at most {spec.max_atoms} atoms "
                  "per unit cell", geometric, [e for e in geometric if e in structures])

    guest_models = ff.default_guest_models("UFF", [guest])
    common = {"guests": [guest], "guest_models": guest_models, "force_field": "UFF", "framework_charges": "none",
              "temperature_K": spec.temperature_K, "blocking": "none", "seed": spec.seed + 1}
    root = out / "jobs"
    failed: dict[str, str] = {}

    def run(jobs: dict[str, Job], what: str) -> dict[str, Path]:
        say(f"{what}: {len(jobs)} RASPA job(s)")
        records = run_plan(Plan(jobs=list(jobs.values())), root, executor,
                           status=lambda p: say(f"{what}: {p.line()}"), notice=say)
        done = {}
        for entry, job in jobs.items():
            record = records[job.id]
            if record.status == JobStatus.succeeded:
                done[entry] = root / job.id
            else:
                failed[job.id] = record.message or record.status.value
        return done

    # Widom
    widom = WidomInsertion()
    widom_params, widom_jobs = {}, {}
    for entry in sized:
        params = WidomParams(framework=entry, framework_cif=str(cifs[entry]), precision="quick",
                             production_cycles=spec.widom_cycles, helium_void_fraction=1.0, **common)
        (job,) = widom.jobs(params)
        job.id = _job_name("widom", entry)
        widom_params[entry], widom_jobs[entry] = params, job
    widom_dirs = run(widom_jobs, "Widom")
    henry_spec = TaskSpec(request="screen", engine="raspa", system=SystemSpec(name="screen", kind="framework",
                          guests=[guest]), properties=[PropertyRequest(name="henry_coefficient")])
    henry = {}
    for entry, job_dir in widom_dirs.items():
        try:
            (result,) = widom.analyze(widom_params[entry], {"widom": job_dir}, henry_spec)
        except SimagentError as exc:
            failed[_job_name("widom", entry)] = str(exc)
            continue
        henry[entry] = result
    ordered = sorted(henry, key=lambda e: henry[e].value, reverse=True)
    kept = _pass(stages, "Henry coefficient", f"Widom K_H of {guest} at {spec.temperature_K:g} K "
                 f"({spec.widom_cycles} cycles): the {spec.keep} highest go on", sized, ordered[:spec.keep])

    # GCMC
    gcmc = GCMCUptake()
    gcmc_params, gcmc_jobs = {}, {}
    for entry in kept:
        params = GCMCParams(framework=entry, framework_cif=str(cifs[entry]), precision="quick",
                            initialization_cycles=spec.gcmc_init_cycles, production_cycles=spec.gcmc_cycles,
                            pressures_Pa=[spec.pressure_bar * 1e5],
                            helium_void_fraction=_float(table[entry], "AV_VF"), **common)
        (job,) = [j for j in gcmc.jobs(params) if j.stage == "gcmc"]
        gcmc_params[entry] = (params, job.id)
        job.id = _job_name("gcmc", entry)
        gcmc_jobs[entry] = job
    gcmc_dirs = run(gcmc_jobs, "GCMC")
    uptake_spec = TaskSpec(request="screen", engine="raspa",
                           system=SystemSpec(name="screen", kind="framework", guests=[guest]),
                           properties=[PropertyRequest(name="uptake", unit=spec.loading_unit)],
                           conditions=Conditions(temperature=Quantity(value=spec.temperature_K, unit="K"),
                                                 pressure=Quantity(value=spec.pressure_bar, unit="bar")))
    rows = []
    for entry, job_dir in gcmc_dirs.items():
        params, local_id = gcmc_params[entry]
        try:
            results = gcmc.analyze(params, {local_id: job_dir}, uptake_spec)
        except SimagentError as exc:
            failed[_job_name("gcmc", entry)] = str(exc)
            continue
        absolute = next(r for r in results if r.quantity == "uptake")
        row = table[entry]
        rows.append(Ranked(rank=0, entry=entry, uptake=absolute.value, uptake_error=absolute.uncertainty or 0.0,
                           unit=absolute.unit, henry=henry[entry].value, henry_error=henry[entry].uncertainty or 0.0,
                           henry_unit=henry[entry].unit, lcd_A=_float(row, "LCD"), pld_A=_float(row, "PLD"),
                           void_fraction=_float(row, "AV_VF"), gcmc_job=str(job_dir),
                           widom_job=str(widom_dirs[entry])))
    rows.sort(key=lambda r: r.uptake, reverse=True)
    for index, row in enumerate(rows, 1):
        row.rank = index
    _pass(stages, "GCMC", f"absolute uptake of {guest} at {spec.temperature_K:g} K and {spec.pressure_bar:g} bar "
          f"({spec.gcmc_init_cycles} + {spec.gcmc_cycles} cycles) computed", kept, [r.entry for r in rows])
    result = ScreenResult(
        spec=spec, source=f"{CORE_LABEL[spec.dataset]}; {CORE_CITATION}", stages=stages, ranking=rows,
        top=rows[:spec.top_n], failed_jobs=failed,
        simplifications=["framework: UFF Lennard-Jones, no charges; guest: TraPPE "
                         f"({guest_models[guest]}), Lorentz-Berthelot mixing",
                         "no blocking of inaccessible pockets",
                         "GCMC helium void fraction = the CoRE table's void fraction (affects the excess "
                         "loading only; the ranking uses the absolute loading)",
                         f"short runs for screening: {spec.widom_cycles} Widom cycles, {spec.gcmc_init_cycles} + "
                         f"{spec.gcmc_cycles} GCMC cycles; uncertainties are RASPA block errors"])
    result.files = write_outputs(result, out)
    return result


def write_outputs(result: ScreenResult, out: Path) -> dict[str, str]:
    files = {"funnel": out / "funnel.json", "table": out / "results.csv", "plot": out / "uptake_vs_void_fraction.png"}
    with open(files["table"], "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["rank", "entry", "uptake", "uptake_error", "uptake_unit", "henry", "henry_error",
                         "henry_unit", "LCD_A", "PLD_A", "void_fraction", "top_n", "gcmc_job", "widom_job"])
        for r in result.ranking:
            writer.writerow([r.rank, r.entry, f"{r.uptake:.6g}", f"{r.uptake_error:.3g}", r.unit, f"{r.henry:.6g}",
                             f"{r.henry_error:.3g}", r.henry_unit, r.lcd_A, r.pld_A, r.void_fraction,
                             r.rank <= result.spec.top_n, r.gcmc_job, r.widom_job])
    _plot(result, files["plot"])
    payload = result.model_dump(mode="json")
    payload["files"] = {k: str(v) for k, v in files.items()}
    files["funnel"].write_text(json.dumps(payload, indent=2))
    return {k: str(v) for k, v in files.items()}


def _plot(result: ScreenResult, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    top = {r.entry for r in result.top}
    rest = [r for r in result.ranking if r.entry not in top]
    best = [r for r in result.ranking if r.entry in top]
    ax.errorbar([r.void_fraction for r in rest], [r.uptake for r in rest], yerr=[r.uptake_error for r in rest],
                fmt="o", color="0.6", ms=4, label="screened (GCMC)")
    ax.errorbar([r.void_fraction for r in best], [r.uptake for r in best], yerr=[r.uptake_error for r in best],
                fmt="o", color="tab:red", ms=5, label=f"top {len(best)}")
    for r in best:
        ax.annotate(r.entry.split("_")[0], (r.void_fraction, r.uptake), fontsize=6, xytext=(3, 3),
                    textcoords="offset points")
    spec = result.spec
    ax.set_xlabel("void fraction (CoRE MOF 2019 table)")
    ax.set_ylabel(f"{spec.guest} uptake ({result.ranking[0].unit if result.ranking else spec.loading_unit})")
    ax.set_title(f"{spec.guest} at {spec.temperature_K:g} K, {spec.pressure_bar:g} bar (absolute, GCMC)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def summary_lines(result: ScreenResult) -> list[str]:
    lines = [f"source: {result.source}"]
    for stage in result.stages:
        lines.append(f"  {stage.name:<20} {stage.n_in:>6} -> {stage.n_out:<6} {stage.rule}")
    lines.append(f"top {len(result.top)} by absolute uptake ({result.top[0].unit if result.top else ''}):")
    for r in result.top:
        lines.append(f"  {r.rank:>3}. {r.entry:<40} {r.uptake:10.4g} +/- {r.uptake_error:.2g}   job {r.gcmc_job}")
    if result.failed_jobs:
        lines.append(f"{len(result.failed_jobs)} job(s) failed: " + "; ".join(
            f"{k}: {v}" for k, v in list(result.failed_jobs.items())[:5]))
    return lines


__all__ = ["EmptyScreen", "PlanProgress", "ScreenResult", "ScreenSpec", "run_screen", "summary_lines"]
