"""High-throughput screening of CoRE MOF 2019 for the uptake of one gas: a declared funnel.

Stages (each reported with its rule, how many entries went in and out, and which it removed):
1. validity: the CoRE table gives LCD, PLD, void fraction and density, and the entry is not flagged
   as disordered;
2. geometry, `geometry` (values from `geometry_source`: "core-table", the CoRE MOF 2019 table's Zeo++ values
   of Chung et al. 2019; or "zeopp", a coarse-to-fine Zeo++ pass of our own on the entries,
   tools/zeopp/coarse_fine.py, reusing `zeopp_rows` of an earlier pass where they settle this cut, with the
   table as the fallback for entries Zeo++ fails on or does not settle; the stage names its source):
   - "cavity" (default): the largest cavity (LCD) holds the guest (LCD above its kinetic diameter) and the
     void fraction is at least `min_void_fraction`. The GCMC below treats the framework as rigid and does
     not block pockets, so it fills every cavity the guest fits in whatever the window size: a window cut
     would remove entries the ranking itself puts on top (HAKTAR_clean: PLD 3.27 A < 3.8 A, LCD 8.1 A,
     among the ten highest CH4 uptakes at 65 bar in benchmarks/results/screen_recall.json). Entries whose
     PLD is below the kinetic diameter are flagged in the table (`window_below_guest`): their uptake
     assumes the cages can be reached (framework flexibility), which a rigid model cannot tell;
   - "window": the previous cut, PLD above the kinetic diameter (the guest passes the narrowest window);
3. structure and size: the CIF reads and passes the structure checks, at most `max_atoms` atoms per
   unit cell;
   then, with `blocking` "zeopp", accessibility: a Zeo++ channel analysis (pore_geometry protocol,
   probe radius = half the kinetic diameter) of each entry; entries without a channel the guest can travel
   are removed, and the pockets it cannot reach are blocked in every GCMC/Widom run (RASPA BlockPockets,
   the spheres Zeo++ wrote). Default "none": no blocking, as in the recall reference runs;
4. pre-screen, `prescreen`:
   - "gcmc" (default): a short GCMC at the requested temperature and pressure for every entry left
     (`prescreen_init_cycles` + `prescreen_cycles`, its own seed); an entry goes on unless its short-run
     uptake is more than 2 combined standard errors below the N-th best short-run uptake (it cannot be
     excluded from the top N at ~95 %), at most `keep` entries (default 3 x top_n), at least top_n.
     Loading-aware at any pressure: at 65 bar K_H (a low-pressure affinity) is a poor predictor of
     methane uptake (benchmarks/results/screen_recall.json);
   - "henry": Widom insertion (raspa/widom protocol), K_H at the temperature; the `keep` highest go on
     (sound in the Henry regime, i.e. at low pressure);
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
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from simagent.errors import RequestError, SimagentError
from simagent.executor import Executor
from simagent.jobrun import PlanProgress, run_plan
from simagent.materials.structures import CORE_CITATION, CORE_LABEL, core_table, extract_core_cifs
from simagent.models import Conditions, Job, JobStatus, Plan, PropertyRequest, Quantity, Result, SystemSpec, TaskSpec

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
    geometry: Literal["cavity", "window"] = Field(
        default="cavity", description="cavity: LCD above the guest's kinetic diameter (what a rigid GCMC without "
        "pocket blocking can fill); window: PLD above it (the guest passes the narrowest window)")
    geometry_source: Literal["core-table", "zeopp"] = Field(
        default="core-table", description="core-table: the CoRE MOF 2019 table's Zeo++ values; zeopp: our own "
        "coarse-to-fine Zeo++ pass on the entries (the table only where Zeo++ fails or does not settle the cut)")
    zeopp_rows: str | None = Field(default=None, description="rows (JSON lines) of an earlier coarse-to-fine pass "
                                   "(benchmarks/zeopp_fsr_all.py) to reuse before computing; geometry_source zeopp")
    zeopp_workers: int = Field(default=1, ge=1, description="Zeo++ worker processes for geometry_source zeopp")
    blocking: Literal["none", "zeopp"] = Field(
        default="none", description="zeopp: block the pockets the guest cannot reach (Zeo++ channel analysis with a "
        "probe of the guest's kinetic radius) and remove entries with no channel; none: fill every cavity")
    geometry_cut: bool = Field(default=True, description="False: the geometry stage passes every entry "
                               "(exhaustive reference runs of benchmarks/screen_recall.py)")
    max_atoms: int = Field(default=1000, ge=1, description="atoms per unit cell")
    prescreen: Literal["gcmc", "henry"] = Field(
        default="gcmc", description="gcmc: short GCMC at the conditions; henry: Widom K_H (low pressure)")
    prescreen_init_cycles: int = Field(default=60, ge=0)
    prescreen_cycles: int = Field(default=30, ge=1)
    prescreen_z: float = Field(default=2.0, ge=0, description="a short-run uptake more than z combined standard "
                               "errors below the N-th best is cut")
    gcmc_keep: int | None = Field(default=None, ge=1, description="most entries passed from the pre-screen to "
                                  "GCMC (default 3 x top_n)")
    widom_cycles: int = Field(default=2000, ge=1)
    gcmc_init_cycles: int = Field(default=1000, ge=0)
    gcmc_cycles: int = Field(default=2000, ge=1)
    loading_unit: str = "cm3(STP)/cm3"

    @property
    def keep(self) -> int:
        return self.gcmc_keep or 3 * self.top_n


class Stage(BaseModel):
    name: str
    rule: str
    source: str = Field(default="", description="where the stage's values came from (geometry)")
    n_in: int
    n_out: int
    removed: list[str] = Field(default_factory=list, description="entries this stage removed (first 20)")


class Ranked(BaseModel):
    rank: int
    entry: str
    uptake: float
    uptake_error: float
    unit: str
    prescreen: str = Field(description="the pre-screen quantity: short-GCMC uptake or K_H")
    prescreen_value: float
    prescreen_error: float
    prescreen_unit: str
    lcd_A: float
    pld_A: float
    void_fraction: float
    window_below_guest: bool = Field(description="PLD below the guest's kinetic diameter: the uptake assumes "
                                     "the cages are reachable")
    gcmc_job: str
    prescreen_job: str


class Prescreened(BaseModel):
    """One entry's pre-screen value (short-GCMC uptake or K_H), whether or not it went on to GCMC."""

    entry: str
    value: float
    error: float
    unit: str
    job: str
    kept: bool


class ScreenResult(BaseModel):
    spec: ScreenSpec
    source: str
    stages: list[Stage]
    prescreened: list[Prescreened] = Field(default_factory=list)
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


def _pass(stages: list[Stage], name: str, rule: str, before: list[str], after: list[str],
          source: str = "") -> list[str]:
    kept = set(after)
    stages.append(Stage(name=name, rule=rule, source=source, n_in=len(before), n_out=len(after),
                        removed=[e for e in before if e not in kept][:20]))
    if not after:
        raise EmptyScreen(f"no candidate left after the '{name}' stage ({rule}"
                          + (f"; values: {source}" if source else "") + f"): it removed all {len(before)}")
    return after


def geometry_passes(spec: ScreenSpec, kinetic: float, lcd: float, pld: float, vf: float | None) -> bool:
    """The geometry cut: the LCD (cavity) or PLD (window) above the kinetic diameter, and the void fraction."""
    return (lcd if spec.geometry == "cavity" else pld) > kinetic and vf is not None and vf >= spec.min_void_fraction


def zeopp_geometry(spec: ScreenSpec, entries: list[str], kinetic: float, out: Path,
                   say: ProgressFn) -> tuple[dict[str, dict], str]:
    """LCD, PLD and void fraction from a coarse-to-fine Zeo++ pass for the entries whose values settle this
    cut (rows of spec.zeopp_rows first, the rest computed here, resumable in out/geometry/): entry -> values,
    and the source sentence for the stage report. Entries missing from the result take the CoRE table."""
    from tools.zeopp import coarse_fine as cf

    key = "LCD" if spec.geometry == "cavity" else "PLD"

    def settled(rows: dict[str, dict]) -> dict[str, dict]:
        found = {e: cf.decisive(rows[e], kinetic, spec.min_void_fraction, key=key) for e in entries if e in rows}
        return {e: v for e, v in found.items() if v is not None}

    reused: dict[str, dict] = {}
    if spec.zeopp_rows:
        path = Path(spec.zeopp_rows).expanduser()
        if not path.is_file():
            raise RequestError(f"no Zeo++ pass rows at {path} (zeopp_rows)")
        reused = settled(cf.load_rows(path))
    todo = [e for e in entries if e not in reused]
    rows_path = out / "geometry" / f"zeopp_coarse_fine_{key}_{kinetic:g}A_vf{spec.min_void_fraction:g}.jsonl"
    computed: dict[str, dict] = {}
    if todo:
        say(f"geometry: Zeo++ coarse to fine on {len(todo)} entries ({spec.zeopp_workers} worker(s))")
        rows, _workers = cf.measure_all(extract_core_cifs(spec.dataset, todo), rows_path, kinetic,
                                        spec.min_void_fraction, workers=spec.zeopp_workers, refine=(key,))
        computed = settled(rows)
        failed = [e for e in todo if "error" in rows.get(e, {"error": "not run"})]
    else:
        failed = []
    values = reused | computed
    fine = sum(v["fine"] for v in values.values())
    table = len(entries) - len(values)
    source = (f"Zeo++ coarse to fine (tools/zeopp/coarse_fine.py) for {len(values)} of {len(entries)} entries "
              "(" + (f"{len(reused)} from {spec.zeopp_rows}, " if spec.zeopp_rows else "")
              + f"{len(computed)} computed in {rows_path.parent}; "
              f"{fine} needed the CoRE settings -ha DEF / 5000 samples; the {'PLD' if key == 'LCD' else 'LCD'} "
              "is the coarse value unless refined, within its band)")
    if table:
        source += (f"; {CORE_LABEL[spec.dataset]} table for {table} ({len(failed)} where Zeo++ failed, "
                   f"{table - len(failed)} where the coarse values do not settle this cut)")
    return values, source


def prescreen_keep(values: dict[str, tuple[float, float]], top_n: int, most: int, z: float) -> list[str]:
    """Entries the pre-screen sends on, best first: those whose value is within z combined standard errors of
    the top_n-th best (they cannot be excluded from the top N), at least top_n and at most `most`."""
    ordered = sorted(values, key=lambda e: values[e][0], reverse=True)
    if len(ordered) <= top_n:
        return ordered
    edge, edge_error = values[ordered[top_n - 1]]
    close = [e for e in ordered if values[e][0] + z * math.hypot(values[e][1], edge_error) >= edge]
    return close[:max(top_n, most)]


def _prescreen_cycles(spec: ScreenSpec) -> str:
    if spec.prescreen == "gcmc":
        return f"GCMC {spec.prescreen_init_cycles} + {spec.prescreen_cycles} cycles"
    return f"Widom {spec.widom_cycles} cycles"


def _run_jobs(jobs: dict[str, Job], root: Path, executor: Executor | None, say: ProgressFn, what: str,
              failed: dict[str, str]) -> dict[str, Path]:
    """Run the jobs (finished ones reused); entry -> job folder of those that succeeded."""
    say(f"{what}: {len(jobs)} job(s)")
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


def pocket_blocks(spec: ScreenSpec, n_atoms: dict[str, int], kinetic: float, root: Path, executor: Executor | None,
                  say: ProgressFn, failed: dict[str, str]) -> dict[str, dict]:
    """Zeo++ channel analysis (pore_geometry protocol's job, -ha DEF network) of each entry (entry -> atoms per
    cell, as the funnel's structure stage read it) with a probe of radius kinetic / 2, job folders
    root/zeopp-<entry>: entry -> channels, pockets, the RASPA .block file of the pockets and its sphere count;
    failures go to `failed`. The entries already passed the funnel's own structure checks."""
    import hashlib

    from simagent.materials.structures import REF_PREFIX, resolve
    from tools.zeopp.parse import read_results
    from tools.zeopp.protocols.geometry import FrameworkStructure, PoreGeometry, PoreGeometryParams

    geometry = PoreGeometry()
    jobs = {}
    for entry, atoms in n_atoms.items():
        resolved = resolve(f"{REF_PREFIX[spec.dataset]}:{entry}")
        # formula and density feed only the protocol's analyze() (its density gate), which is not used here:
        # the channel report is read from the job's results directly
        structure = FrameworkStructure(ref=resolved.ref, id=resolved.id, name=resolved.name, source=resolved.source,
                                       how=resolved.how, n_atoms=atoms, formula="", density_g_cm3=0.0,
                                       sha256=hashlib.sha256(Path(resolved.path).read_bytes()).hexdigest())
        (job,) = geometry.jobs(PoreGeometryParams(structures=[structure], properties=["channel_dimensionality"],
                                                  channel_probe_radius=kinetic / 2))
        job.id = _job_name("zeopp", entry)
        jobs[entry] = job
    found = {}
    for entry, job_dir in _run_jobs(jobs, root, executor, say, "Zeo++ channels and pockets", failed).items():
        try:
            data = read_results(job_dir)["channels"]
            found[entry] = {"channels": data["n_channels"], "pockets": data["n_pockets"],
                            "spheres": data["n_blocking_spheres"], "block_file": str(job_dir / data["block_file"]),
                            "job": str(job_dir)}
        except (SimagentError, KeyError) as exc:
            failed[_job_name("zeopp", entry)] = f"no channel analysis: {exc}"
    return found


def gcmc_jobs(spec: ScreenSpec, cifs: dict[str, Path], table: dict[str, dict[str, str]], *, kind: str,
              init_cycles: int, cycles: int, seed: int, blocks: dict[str, dict] | None = None) -> dict[str, tuple]:
    """The GCMC job (raspa/gcmc_uptake, id <kind>-<entry>) of each entry: entry -> (params, the protocol's own
    job id, job); with `blocks`, the entry's Zeo++ .block file blocks its unreachable pockets."""
    from simagent.materials import forcefields as ff
    from tools.raspa.protocols.adsorption import GCMCParams, GCMCUptake

    guest = ff.canonical_guest(spec.guest)
    gcmc = GCMCUptake()
    found = {}
    for entry, cif in cifs.items():
        params = GCMCParams(framework=entry, framework_cif=str(cif), precision="quick", guests=[guest],
                            guest_models=ff.default_guest_models("UFF", [guest]), force_field="UFF",
                            framework_charges="none", temperature_K=spec.temperature_K,
                            blocking="auto" if blocks else "none",
                            block_file=blocks[entry]["block_file"] if blocks else None,
                            initialization_cycles=init_cycles, production_cycles=cycles, seed=seed,
                            pressures_Pa=[spec.pressure_bar * 1e5], helium_void_fraction=_float(table[entry], "AV_VF"))
        (job,) = [j for j in gcmc.jobs(params) if j.stage == "gcmc"]
        local_id = job.id
        job.id = _job_name(kind, entry)
        found[entry] = (params, local_id, job)
    return found


def gcmc_uptakes(spec: ScreenSpec, cifs: dict[str, Path], table: dict[str, dict[str, str]], root: Path,
                 executor: Executor | None, say: ProgressFn, failed: dict[str, str], *, kind: str,
                 init_cycles: int, cycles: int, seed: int,
                 blocks: dict[str, dict] | None = None) -> dict[str, tuple[Result, Path]]:
    """GCMC (raspa/gcmc_uptake) of spec.guest at the spec's conditions for each entry, job folders
    root/<kind>-<entry>: entry -> (absolute uptake, job folder); failures go to `failed`."""
    from simagent.materials import forcefields as ff
    from tools.raspa.protocols.adsorption import GCMCUptake

    guest = ff.canonical_guest(spec.guest)
    gcmc = GCMCUptake()
    uptake_spec = TaskSpec(request="screen", engine="raspa",
                           system=SystemSpec(name="screen", kind="framework", guests=[guest]),
                           properties=[PropertyRequest(name="uptake", unit=spec.loading_unit)],
                           conditions=Conditions(temperature=Quantity(value=spec.temperature_K, unit="K"),
                                                 pressure=Quantity(value=spec.pressure_bar, unit="bar")))
    params_by = gcmc_jobs(spec, cifs, table, kind=kind, init_cycles=init_cycles, cycles=cycles, seed=seed,
                          blocks=blocks)
    jobs = {entry: job for entry, (_params, _local, job) in params_by.items()}
    found = {}
    for entry, job_dir in _run_jobs(jobs, root, executor, say, f"GCMC ({init_cycles} + {cycles} cycles)",
                                    failed).items():
        params, local_id, _job = params_by[entry]
        try:
            results = gcmc.analyze(params, {local_id: job_dir}, uptake_spec)
        except SimagentError as exc:
            failed[_job_name(kind, entry)] = str(exc)
            continue
        found[entry] = (next(r for r in results if r.quantity == "uptake"), job_dir)
    return found


def _screen_guest(spec: ScreenSpec) -> str:
    """The guest's canonical name, once the guest and the dataset are known to be screenable."""
    from simagent.materials import forcefields as ff

    guest = ff.canonical_guest(spec.guest)
    if guest not in KINETIC_DIAMETER_A:
        raise RequestError(f"no kinetic diameter for {guest}; screening knows {', '.join(KINETIC_DIAMETER_A)}")
    if guest not in SCREEN_GUESTS:
        raise RequestError(f"screening without framework charges is only valid for LJ guests "
                           f"({', '.join(SCREEN_GUESTS)}); {guest} needs charges")
    if spec.dataset not in CORE_LABEL:
        raise RequestError(f"unknown CoRE dataset {spec.dataset!r}: 2019-ASR or 2019-FSR")
    return guest


def _screen_pool(spec: ScreenSpec, table: dict[str, dict[str, str]]) -> list[str]:
    """The entries the funnel starts from: those named, or the dataset (or a seeded sample of it)."""
    if spec.entries:
        unknown = [e for e in spec.entries if e not in table]
        if unknown:
            raise RequestError(f"not in {CORE_LABEL[spec.dataset]}: {', '.join(unknown[:5])}")
        return list(dict.fromkeys(spec.entries))
    pool = sorted(table)
    if spec.sample and spec.sample < len(pool):
        pool = sorted(random.Random(spec.seed).sample(pool, spec.sample))
    return pool


def _complete(row: dict[str, str]) -> bool:
    values = [_float(row, k) for k in ("LCD", "PLD", "AV_VF", "cm3_g")]
    return all(v is not None and v >= 0 for v in values) and row.get("DISORDER", "").strip() == ""


def _sized_structures(spec: ScreenSpec, entries: list[str], cifs: dict[str, Path]) -> dict:
    """The entries whose CIF passes the structure checks and has at most spec.max_atoms atoms per cell."""
    from simagent.materials import frameworks as fw

    structures = {}
    for entry in entries:
        try:
            structure = fw.read_cif(cifs[entry], name=entry)
        except SimagentError:
            continue
        if len(structure.symbols) <= spec.max_atoms:
            structures[entry] = structure
    return structures


def _widom_prescreen(spec: ScreenSpec, guest: str, entries: list[str], cifs: dict[str, Path],
                     blocks: dict[str, dict] | None, common: dict, run: Callable[[dict[str, Job], str], dict],
                     failed: dict[str, str]) -> dict[str, tuple[Result, Path]]:
    """Widom K_H of the guest in each entry: {entry: (result, job folder)}; failed analyses go to `failed`."""
    from tools.raspa.protocols.adsorption import WidomInsertion, WidomParams

    widom = WidomInsertion()
    widom_params, widom_jobs = {}, {}
    for entry in entries:
        params = WidomParams(framework=entry, framework_cif=str(cifs[entry]), precision="quick",
                             production_cycles=spec.widom_cycles, helium_void_fraction=1.0,
                             seed=spec.seed + 1, blocking="auto" if blocks else "none",
                             block_file=blocks[entry]["block_file"] if blocks else None, **common)
        (job,) = widom.jobs(params)
        job.id = _job_name("widom", entry)
        widom_params[entry], widom_jobs[entry] = params, job
    henry_spec = TaskSpec(request="screen", engine="raspa", system=SystemSpec(
        name="screen", kind="framework", guests=[guest]), properties=[PropertyRequest(name="henry_coefficient")])
    pre = {}
    for entry, job_dir in run(widom_jobs, "Widom").items():
        try:
            (result,) = widom.analyze(widom_params[entry], {"widom": job_dir}, henry_spec)
        except SimagentError as exc:
            failed[_job_name("widom", entry)] = str(exc)
            continue
        pre[entry] = (result, job_dir)
    return pre


def _ranked(full: dict[str, tuple[Result, Path]], pre: dict[str, tuple[Result, Path]], pre_name: str,
            geometry_of: Callable[[str], tuple], table: dict[str, dict[str, str]], kinetic: float) -> list[Ranked]:
    """The GCMC uptakes ranked, highest first, each with its pre-screen value and pore geometry."""
    rows = []
    for entry, (absolute, job_dir) in full.items():
        lcd, pld, vf = geometry_of(entry)
        first, first_dir = pre[entry]
        rows.append(Ranked(rank=0, entry=entry, uptake=absolute.value, uptake_error=absolute.uncertainty or 0.0,
                           unit=absolute.unit, prescreen=pre_name, prescreen_value=first.value,
                           prescreen_error=first.uncertainty or 0.0, prescreen_unit=first.unit,
                           lcd_A=lcd, pld_A=pld, void_fraction=vf if vf is not None else _float(table[entry], "AV_VF"),
                           window_below_guest=pld <= kinetic, gcmc_job=str(job_dir),
                           prescreen_job=str(first_dir)))
    rows.sort(key=lambda r: r.uptake, reverse=True)
    for index, row in enumerate(rows, 1):
        row.rank = index
    return rows


def _simplifications(spec: ScreenSpec, guest: str, guest_model: str, kinetic: float, blocks: dict | None,
                     rows: list[Ranked]) -> list[str]:
    blocked = [r.entry for r in rows[:spec.top_n] if r.window_below_guest]
    return ["framework: UFF Lennard-Jones, no charges, rigid; guest: TraPPE "
            f"({guest_model}), Lorentz-Berthelot mixing",
            (f"pockets {guest} cannot reach from a channel are blocked (Zeo++ channel analysis, probe "
             f"radius {kinetic / 2:g} A; {sum(blocks[r.entry]['spheres'] for r in rows)} blocking "
             f"spheres over the {len(rows)} ranked entries)" if blocks else
             "no blocking of inaccessible pockets: every cavity the guest fits in is filled"
             + (f"; in the top {spec.top_n}, {', '.join(blocked)} have a PLD below {guest}'s kinetic "
                f"diameter ({kinetic:g} A), so their uptake assumes the cages are reachable"
                if blocked else "")),
            "GCMC helium void fraction = the CoRE table's void fraction (affects the excess "
            "loading only; the ranking uses the absolute loading)",
            f"short runs for screening: pre-screen {_prescreen_cycles(spec)}, {spec.gcmc_init_cycles} + "
            f"{spec.gcmc_cycles} GCMC cycles; uncertainties are RASPA block errors"]


def run_screen(spec: ScreenSpec, out: Path, executor: Executor | None = None,
               say: ProgressFn | None = None) -> ScreenResult:
    """Run the funnel; finished jobs in out/jobs are reused (resume)."""
    from simagent.materials import forcefields as ff

    say = say or (lambda _text: None)
    guest = _screen_guest(spec)
    out.mkdir(parents=True, exist_ok=True)
    table = core_table(spec.dataset)
    stages: list[Stage] = []
    pool = _screen_pool(spec, table)
    valid = _pass(stages, "validity", "LCD, PLD, void fraction and density in the CoRE table; not flagged "
                  "DISORDER", pool, [e for e in pool if _complete(table[e])])
    kinetic = KINETIC_DIAMETER_A[guest]
    geo_source = f"{CORE_LABEL[spec.dataset]} table (Zeo++, Chung et al. 2019)"
    zeo: dict[str, dict] = {}
    if spec.geometry_source == "zeopp" and spec.geometry_cut:
        zeo, geo_source = zeopp_geometry(spec, valid, kinetic, out, say)

    def geometry_of(entry: str) -> tuple[float, float, float | None]:
        """LCD, PLD and void fraction from the stage's source (None: not computed, the LCD is below the cut)."""
        if entry in zeo:
            return zeo[entry]["LCD"], zeo[entry]["PLD"], zeo[entry]["VF"]
        row = table[entry]
        return _float(row, "LCD"), _float(row, "PLD"), _float(row, "AV_VF")

    size_rule = (f"LCD > {kinetic:g} A (the largest cavity holds {guest}, kinetic diameter, Breck 1974)"
                 if spec.geometry == "cavity" else
                 f"PLD > {kinetic:g} A ({guest} passes the narrowest window, kinetic diameter, Breck 1974)")
    cut_rule = f"{size_rule} and void fraction >= {spec.min_void_fraction:g}"
    geometric = _pass(
        stages, "geometry", cut_rule if spec.geometry_cut else "not applied (geometry_cut = false)", valid,
        [e for e in valid if not spec.geometry_cut or geometry_passes(spec, kinetic, *geometry_of(e))],
        geo_source if spec.geometry_cut else "")
    say(f"geometry: {len(geometric)} of {len(pool)} entries pass; reading their CIFs")
    cifs = extract_core_cifs(spec.dataset, geometric)
    structures = _sized_structures(spec, geometric, cifs)
    sized = _pass(stages, "structure and size", f"CIF passes the structure checks; at most {spec.max_atoms} atoms "
                  "per unit cell", geometric, [e for e in geometric if e in structures])

    guest_models = ff.default_guest_models("UFF", [guest])
    common = {"guests": [guest], "guest_models": guest_models, "force_field": "UFF", "framework_charges": "none",
              "temperature_K": spec.temperature_K}
    root = out / "jobs"
    failed: dict[str, str] = {}
    blocks: dict[str, dict] | None = None
    if spec.blocking == "zeopp":
        blocks = pocket_blocks(spec, {e: len(structures[e].symbols) for e in sized}, kinetic, root, executor, say,
                               failed)
        sized = _pass(stages, "accessibility", f"a channel {guest} can travel (Zeo++ channel analysis, probe radius "
                      f"{kinetic / 2:g} A = half the kinetic diameter); its unreachable pockets are blocked in RASPA",
                      sized, [e for e in sized if e in blocks and blocks[e]["channels"] > 0])

    def run(jobs: dict[str, Job], what: str) -> dict[str, Path]:
        return _run_jobs(jobs, root, executor, say, what, failed)

    def uptakes(entries: list[str], kind: str, init: int, cycles: int, seed: int) -> dict[str, tuple[Result, Path]]:
        return gcmc_uptakes(spec, {e: cifs[e] for e in entries}, table, root, executor, say, failed,
                            kind=kind, init_cycles=init, cycles=cycles, seed=seed, blocks=blocks)

    # pre-screen: short GCMC at the conditions, or Widom K_H
    if spec.prescreen == "gcmc":
        pre = uptakes(sized, "pregcmc", spec.prescreen_init_cycles, spec.prescreen_cycles, spec.seed + 2)
        kept_entries = prescreen_keep({e: (r.value, r.uncertainty or 0.0) for e, (r, _) in pre.items()},
                                      spec.top_n, spec.keep, spec.prescreen_z)
        pre_rule = (f"short GCMC of {guest} at {spec.temperature_K:g} K and {spec.pressure_bar:g} bar "
                    f"({spec.prescreen_init_cycles} + {spec.prescreen_cycles} cycles): cut when more than "
                    f"{spec.prescreen_z:g} combined standard errors below the {spec.top_n}-th best; at most "
                    f"{spec.keep} go on")
        pre_name = "short GCMC"
    else:
        pre = _widom_prescreen(spec, guest, sized, cifs, blocks, common, run, failed)
        kept_entries = sorted(pre, key=lambda e: pre[e][0].value, reverse=True)[:spec.keep]
        pre_rule = f"Widom K_H of {guest} at {spec.temperature_K:g} K ({spec.widom_cycles} cycles): the " \
                   f"{spec.keep} highest go on"
        pre_name = "Henry coefficient"
    kept = _pass(stages, pre_name, pre_rule, sized, kept_entries)
    prescreened = [Prescreened(entry=e, value=r.value, error=r.uncertainty or 0.0, unit=r.unit, job=str(d),
                               kept=e in kept) for e, (r, d) in sorted(pre.items(), key=lambda i: -i[1][0].value)]

    # GCMC for those
    full = uptakes(kept, "gcmc", spec.gcmc_init_cycles, spec.gcmc_cycles, spec.seed + 1)
    rows = _ranked(full, pre, pre_name, geometry_of, table, kinetic)
    _pass(stages, "GCMC", f"absolute uptake of {guest} at {spec.temperature_K:g} K and {spec.pressure_bar:g} bar "
          f"({spec.gcmc_init_cycles} + {spec.gcmc_cycles} cycles) computed", kept, [r.entry for r in rows])
    result = ScreenResult(
        spec=spec, source=f"{CORE_LABEL[spec.dataset]}; {CORE_CITATION}", stages=stages, prescreened=prescreened,
        ranking=rows, top=rows[:spec.top_n], failed_jobs=failed,
        simplifications=_simplifications(spec, guest, guest_models[guest], kinetic, blocks, rows))
    result.files = write_outputs(result, out)
    return result


def write_outputs(result: ScreenResult, out: Path) -> dict[str, str]:
    files = {"funnel": out / "funnel.json", "table": out / "results.csv", "plot": out / "uptake_vs_void_fraction.png"}
    with open(files["table"], "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["rank", "entry", "uptake", "uptake_error", "uptake_unit", "prescreen", "prescreen_value",
                         "prescreen_error", "prescreen_unit", "LCD_A", "PLD_A", "void_fraction", "window_below_guest",
                         "top_n", "gcmc_job", "prescreen_job"])
        for r in result.ranking:
            writer.writerow([r.rank, r.entry, f"{r.uptake:.6g}", f"{r.uptake_error:.3g}", r.unit, r.prescreen,
                             f"{r.prescreen_value:.6g}", f"{r.prescreen_error:.3g}", r.prescreen_unit, r.lcd_A,
                             r.pld_A, r.void_fraction, r.window_below_guest, r.rank <= result.spec.top_n, r.gcmc_job,
                             r.prescreen_job])
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
    geometry = next((s.source for s in result.stages if s.name == "geometry" and s.source), "")
    ax.set_xlabel("void fraction (" + ("Zeo++ pass" if geometry.startswith("Zeo++") else "CoRE MOF 2019 table") + ")")
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
        if stage.source:
            lines.append(f"  {'':<36}values: {stage.source}")
    lines.append(f"top {len(result.top)} by absolute uptake ({result.top[0].unit if result.top else ''}):")
    for r in result.top:
        lines.append(f"  {r.rank:>3}. {r.entry:<40} {r.uptake:10.4g} +/- {r.uptake_error:.2g}   job {r.gcmc_job}")
    if result.failed_jobs:
        lines.append(f"{len(result.failed_jobs)} job(s) failed: " + "; ".join(
            f"{k}: {v}" for k, v in list(result.failed_jobs.items())[:5]))
    return lines


__all__ = ["EmptyScreen", "PlanProgress", "Prescreened", "ScreenResult", "ScreenSpec", "prescreen_keep", "run_screen",
           "summary_lines", "geometry_passes", "zeopp_geometry"]
