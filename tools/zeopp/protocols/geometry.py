"""zeopp/pore_geometry: pore geometry of a framework with Zeo++ (pyzeo), one job per structure.

Defaults reproduce the CoRE MOF 2019 tables (Chung et al. 2019; the agreement is measured by
benchmarks/zeopp_core_agreement.py): the high-accuracy Voronoi network `-ha DEF`, Zeo++'s default
(CCDC) radii, surface area with a 1.655 A probe (half the TraPPE N2 sigma, 3.31 A) and 5000 samples
per atom, void fraction and accessible volume with a 0 A probe and 5000 samples per cell. A probe
radius in the request overrides every probe.
Equivalent command line: `network -ha DEF -res -sa 1.655 1.655 5000 -vol 0 0 5000`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, ReadError, RequestError
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import Protocol, register
from simagent.units import convert
from tools.zeopp import engine, inputs
from tools.zeopp.parse import read_results

# Probe radii and sample counts, with where they come from.
CORE_SA_PROBE = 1.655  # angstrom: sigma(N2, TraPPE, Potoff & Siepmann 2001) / 2 = 3.31 / 2; CoRE MOF 2019
CORE_VOL_PROBE = 0.0  # angstrom: CoRE MOF 2019 AV_VF / AV_cm3_g are geometric (point probe)
CORE_SA_SAMPLES_PER_ATOM = 5000
CORE_VOL_SAMPLES = 5000  # per unit cell (pyzeo's volume() takes the total)
PSD_SAMPLES = 20000  # per unit cell; the histogram's 0.1 A bins need more samples than a volume
N2_SIZED = "N2-sized probe, as for the surface area"
POV_SPACING = 0.2  # angstrom, grid of the probe-occupiable volume (tools/zeopp/pov.py)
MAX_ATOMS = 20000  # beyond this a DEF network takes tens of minutes; ask for a smaller cell

TASK_OF = {
    "largest_cavity_diameter": "free_sphere",
    "pore_limiting_diameter": "free_sphere",
    "largest_free_sphere": "free_sphere",
    "accessible_surface_area": "surface_area",
    "non_accessible_surface_area": "surface_area",
    "accessible_volume": "volume",
    "void_fraction": "volume",
    "pore_size_distribution": "psd",
    "channel_dimensionality": "channels",
    "probe_occupiable_volume": "pov",
    "density": "volume",  # crystal density, from the same Zeo++ run
}
TASK_ORDER = ["free_sphere", "surface_area", "volume", "psd", "channels", "pov"]
HighAccuracy = Literal["DEF", "HI", "MED", "LOW", "OCC", "FCC", "ACC", "AQC", "DDH", "TIH", "ICH", "ICC", "RIH",
                       "S4", "S10", "S20", "S30", "S40", "S50", "S100", "S500", "S1000", "S10000"]


class FrameworkStructure(BaseModel):
    """The structure a job runs on, as the structure agent resolved and checked it."""

    ref: str = Field(description="canonical reference (resolves again to the same file)")
    id: str
    name: str
    source: str
    how: str
    citation: str = ""
    sha256: str = Field(description="of the source CIF, so a changed file is noticed")
    n_atoms: int
    formula: str
    density_g_cm3: float
    reference_values: dict[str, float] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


class PoreGeometryParams(BaseModel):
    # The settings the answer reports, declared with their reasons (the values are the fields' defaults
    # below; the templates read them from the parameters built, `p`).
    DEFAULTS: ClassVar[dict[str, Default]] = {
        "network": Default("CoRE MOF 2019", "the settings behind the CoRE MOF 2019 tables (LCD/PLD match them to the "
                           "printed digit; without -ha only ~40 % within 1 %)", "CoRE MOF 2019",
                           shown="high accuracy -ha {p.high_accuracy}, Zeo++ default (CCDC) atomic radii, P1 cell as "
                           "given", parameter="Zeo++ network"),
        "sa_probe_radius": Default(CORE_SA_PROBE, "half the TraPPE N2 sigma (3.31 A), the CoRE MOF 2019 convention; "
                                   "ASA is 0 when the pore-limiting diameter is below 3.31 A", "CoRE MOF 2019",
                                   shown="{p.sa_probe_radius:g} angstrom (channel = probe; {p.sa_samples_per_atom} "
                                   "Monte Carlo samples per atom)", parameter="surface-area probe radius"),
        "vol_probe_radius": Default(CORE_VOL_PROBE, "geometric void fraction and pore volume (point probe), the CoRE "
                                    "MOF 2019 convention", "CoRE MOF 2019",
                                    shown="{p.vol_probe_radius:g} angstrom ({p.vol_samples} Monte Carlo samples per "
                                    "cell)", parameter="void-volume probe radius"),
        "psd_probe_radius": Default(CORE_SA_PROBE, N2_SIZED, shown="{p.psd_probe_radius:g} angstrom",
                                    parameter="pore-size distribution probe radius"),
        "channel_probe_radius": Default(CORE_SA_PROBE, N2_SIZED, shown="{p.channel_probe_radius:g} angstrom",
                                        parameter="channel probe radius"),
        "pov_probe_radius": Default(CORE_SA_PROBE, N2_SIZED, shown="{p.pov_probe_radius:g} angstrom",
                                    parameter="probe-occupiable volume probe radius"),
        "psd_samples": Default(PSD_SAMPLES, "0.1 A histogram bins (Zeo++ -psd); standard Voronoi network",
                               shown="{p.psd_samples}", parameter="pore-size distribution samples"),
        "pov_spacing": Default(POV_SPACING, "grid method, error ~1 % of the volume",
                               shown="{p.pov_spacing:g} angstrom spacing", parameter="probe-occupiable volume grid"),
    }

    structures: list[FrameworkStructure] = Field(min_length=1)
    properties: list[str] = Field(min_length=1)
    high_accuracy: HighAccuracy = "DEF"
    sa_probe_radius: float = Field(default=CORE_SA_PROBE, ge=0, le=10, description="angstrom; channel = probe")
    sa_samples_per_atom: int = Field(default=CORE_SA_SAMPLES_PER_ATOM, gt=0, le=100000)
    vol_probe_radius: float = Field(default=CORE_VOL_PROBE, ge=0, le=10, description="angstrom; channel = probe")
    vol_samples: int = Field(default=CORE_VOL_SAMPLES, gt=0, le=5_000_000)
    psd_probe_radius: float = Field(default=CORE_SA_PROBE, ge=0, le=10)
    psd_samples: int = Field(default=PSD_SAMPLES, gt=0, le=5_000_000)
    channel_probe_radius: float = Field(default=CORE_SA_PROBE, ge=0, le=10)
    pov_probe_radius: float = Field(default=CORE_SA_PROBE, ge=0, le=10)
    pov_spacing: float = Field(default=POV_SPACING, gt=0.02, le=1.0)
    probe_from_request: bool = False
    # physics gate: Zeo++'s density must match the structure's (same atoms read)
    density_tolerance: float = 0.01

    def tasks(self) -> list[str]:
        wanted = {TASK_OF[p] for p in self.properties if p in TASK_OF}
        return [t for t in TASK_ORDER if t in wanted]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _job_id(structure_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", structure_id)[:80] or "structure"


def _angstrom(q) -> float:
    unit = q.unit if q.unit not in ("", "reduced") else "angstrom"
    try:
        return convert(q.value, unit, "angstrom")
    except RequestError:
        raise RequestError(f"probe radius {q.value:g} {q.unit}: give it in angstrom or nm") from None


def structure_refs(spec: TaskSpec) -> list[tuple[str, str | None]]:
    """(reference, what the user called it) per structure; the expert reader writes canonical
    references separated by ';' into system.structure and the names, comma-separated, into name."""
    system = spec.system
    if system is None:
        return []
    if not system.structure:
        return [(system.name, None)] if system.name and system.name != "framework" else []
    refs = [part.strip() for part in system.structure.split(";") if part.strip()]
    names = [part.strip() for part in system.name.split(",")] if system.name else []
    return [(ref, names[i] if len(names) == len(refs) else None) for i, ref in enumerate(refs)]


def _resolve_with_provenance(ref: str, called: str | None):
    """The structure behind a reference, with the user's name and the rule that picked it when
    that name leads to the same structure (so the answer says 'HKUST-1 -> FIQCEN', not just the entry)."""
    from simagent.materials.structures import resolve

    resolved = resolve(ref)
    if called and called != ref:
        try:
            by_name = resolve(called, dataset=resolved.dataset.replace("2019-", "") if resolved.dataset else None,
                              fetch=False)
        except RequestError:
            return resolved
        if by_name.ref == resolved.ref:
            return resolved.model_copy(update={"name": by_name.name, "how": by_name.how, "query": called,
                                               "citation": by_name.citation, "candidates": by_name.candidates})
    return resolved


@register
class PoreGeometry(Protocol):
    name = "zeopp/pore_geometry"
    engine = "zeopp"
    properties: ClassVar[frozenset[str]] = frozenset(TASK_OF)
    Params = PoreGeometryParams
    description = (
        "pore geometry of a framework with Zeo++ (CoRE MOF 2019 settings: -ha DEF, CCDC radii): largest cavity "
        "and pore-limiting diameters, free sphere, accessible/non-accessible surface area and volume, void "
        "fraction, pore-size distribution, channel dimensionality, probe-occupiable volume"
    )

    def applies_to(self, spec: TaskSpec) -> bool:
        if spec.system is None or spec.system.kind != "framework" or not spec.properties:
            return False
        return {p.name for p in spec.properties} <= self.properties

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> PoreGeometryParams:
        from simagent.materials.structures import checked

        refs = structure_refs(spec)
        if not refs:
            raise RequestError("say which framework: a MOF name (e.g. HKUST-1), a CSD REFCODE, a CoRE MOF entry "
                               "or the path to a CIF file")
        structures = []
        for ref, called in refs:
            resolved = _resolve_with_provenance(ref, called)
            report, structure = checked(resolved, "geometry")
            if len(structure) > MAX_ATOMS:
                raise RequestError(f"{resolved.name} has {len(structure)} atoms in its cell; Zeo++'s high-accuracy "
                                   f"network would take very long above {MAX_ATOMS}: give a smaller (primitive) cell")
            structures.append(FrameworkStructure(
                ref=resolved.ref, id=resolved.id, name=resolved.name, source=resolved.source, how=resolved.how,
                citation=resolved.citation, sha256=_sha256(Path(resolved.path)), n_atoms=len(structure),
                formula=structure.composition.hill_formula, density_g_cm3=float(structure.density),
                reference_values=resolved.reference_values, warnings=report.warnings,
            ))
            formula = structure.composition.hill_formula
            alternatives = f"; other candidates: {', '.join(resolved.candidates[:4])}" if resolved.candidates else ""
            log.note(parameter="structure", value=f"{resolved.name}, {len(structure)} atoms, "
                                           f"{formula}",
                                           reason=f"{resolved.how}{alternatives}")
        names = [p.name for p in spec.properties]
        params = PoreGeometryParams(structures=structures, properties=names)
        tasks = set(params.tasks())
        probe = spec.conditions.probe_radius
        if probe is not None:
            r = _angstrom(probe)
            params = params.model_copy(update={
                "sa_probe_radius": r, "vol_probe_radius": r, "psd_probe_radius": r, "channel_probe_radius": r,
                "pov_probe_radius": r, "probe_from_request": True,
            })
        # a probe stated for one property (a point probe for the void fraction next to an N2 probe for
        # the surface area) sets the radius of that property's Zeo++ task
        own = {TASK_OF[r.name]: _angstrom(r.probe_radius) for r in spec.properties
               if r.probe_radius is not None and r.name in TASK_OF}
        radius_field = {"surface_area": "sa_probe_radius", "volume": "vol_probe_radius", "psd": "psd_probe_radius",
                        "channels": "channel_probe_radius", "pov": "pov_probe_radius"}
        if own:
            params = params.model_copy(update={radius_field[t]: r for t, r in own.items() if t in radius_field}
                                       | {"probe_from_request": True})
        params = PoreGeometryParams.model_validate(params.model_dump())
        log.report("network", p=params)
        if probe is None:  # each task's probe the request left unset
            for task, key in (("surface_area", "sa_probe_radius"), ("volume", "vol_probe_radius"),
                              ("psd", "psd_probe_radius"), ("channels", "channel_probe_radius"),
                              ("pov", "pov_probe_radius")):
                if task in tasks and task not in own:
                    log.report(key, p=params)
        for task, key in (("psd", "psd_samples"), ("pov", "pov_spacing")):
            if task in tasks:
                log.report(key, p=params)
        return params

    # -----------------------------------------------------------------------------------------

    def _cif_text(self, structure: FrameworkStructure) -> tuple[str, str]:
        """The CIF the job runs on, and how it was prepared. A P1 file with plain element symbols goes
        to Zeo++ untouched (same atom order and digits as the database's own run); anything else is
        expanded to P1 by pymatgen (never reduced to a primitive cell) with oxidation states removed."""
        from simagent.materials.structures import _read_structure, resolve

        resolved = resolve(structure.ref)
        path = Path(resolved.path)
        if _sha256(path) != structure.sha256:
            raise RequestError(f"{structure.name}: the CIF file changed since the plan was made ({path})")
        text = path.read_text(errors="replace")
        ok, why = inputs.verbatim_ok(text)
        if ok and len(inputs.read_cif(text).symbols) == structure.n_atoms:
            return text, f"{path.name} as given (P1)"
        parsed, _parser, _notes = _read_structure(path)
        return (inputs.write_cif(inputs.from_structure(parsed, structure.id)),
                f"{path.name} expanded to P1 by pymatgen, element symbols only ({why})")

    def jobs(self, params: BaseModel) -> list[Job]:
        p = PoreGeometryParams.model_validate(params.model_dump())
        tasks = p.tasks()
        jobs = []
        for structure in p.structures:
            cif_text, preparation = self._cif_text(structure)
            settings = {
                "cif": inputs.CIF_NAME,
                "structure": {"id": structure.id, "ref": structure.ref, "name": structure.name,
                              "cif_preparation": preparation},
                "tasks": tasks,
                "high_accuracy": p.high_accuracy,
                "surface_area": {"channel_radius": p.sa_probe_radius, "probe_radius": p.sa_probe_radius,
                                 "samples_per_atom": p.sa_samples_per_atom},
                "volume": {"channel_radius": p.vol_probe_radius, "probe_radius": p.vol_probe_radius,
                           "samples": p.vol_samples},
                "psd": {"channel_radius": p.psd_probe_radius, "probe_radius": p.psd_probe_radius,
                        "samples": p.psd_samples},
                "channels": {"probe_radius": p.channel_probe_radius},
                "pov": {"probe_radius": p.pov_probe_radius, "spacing": p.pov_spacing},
            }
            # wall time: the DEF network and surface sampling grow with the atom count
            limit = max(300.0, 0.3 * structure.n_atoms * len(tasks))
            jobs.append(Job(
                id=_job_id(structure.id), protocol=self.name, engine="zeopp", stage="pore_geometry",
                params={"structure": structure.ref, "tasks": tasks},
                inputs={inputs.CIF_NAME: cif_text,
                        inputs.SETTINGS_NAME: json.dumps(settings, indent=2) + "\n"},
                time_limit_s=limit,
            ))
        return jobs

    # -----------------------------------------------------------------------------------------

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = PoreGeometryParams.model_validate(params.model_dump())
        several = len(p.structures) > 1
        wanted = {r.name for r in spec.properties} or set(p.properties)
        results: list[Result] = []
        for structure in p.structures:
            job_id = _job_id(structure.id)
            job_dir = Path(job_dirs[job_id])
            data = read_results(job_dir)
            found = self._results(p, structure, data, job_id, job_dir)
            for result in found:
                if result.property not in wanted:
                    continue
                if several:
                    label = structure.id if result.label is None else f"{result.label}_{structure.id}"
                    result = result.model_copy(update={"quantity": f"{result.quantity}_{structure.id}", "label": label})
                results.append(result)
        return results

    def _results(self, p: PoreGeometryParams, s: FrameworkStructure, data: dict, job_id: str,
                 job_dir: Path) -> list[Result]:
        out = _ResultWriter(p, s, data, job_id, job_dir)
        _check_density(p, s, data)
        for block, write in (("free_sphere", out.free_sphere), ("surface_area", out.surface_area),
                             ("volume", out.volume), ("psd", out.psd), ("channels", out.channels), ("pov", out.pov)):
            if data.get(block) is not None:
                write(data[block])
        if not out.results:
            raise ReadError(f"no Zeo++ results in {job_dir / 'zeopp_results.json'}")
        return out.results


def _check_density(p: PoreGeometryParams, s: FrameworkStructure, data: dict) -> None:
    """Zeo++'s density of the framework (from the surface or volume run) against the structure's own."""
    density = None
    for block in ("surface_area", "volume"):
        if block in data and "Density" in data[block]:
            density = float(data[block]["Density"])
    if density is not None and abs(density - s.density_g_cm3) > p.density_tolerance * s.density_g_cm3:
        raise CalculationFailed(f"Zeo++ read {s.id} with density {density:.4f} g/cm3, the structure has "
                                f"{s.density_g_cm3:.4f}: atoms were lost or duplicated")


class _ResultWriter:
    """The Results of one structure's Zeo++ run, one method per block of zeopp_results.json; each
    method text names the run, the command it matches and, where comparable, the CoRE table value."""

    def __init__(self, p: PoreGeometryParams, s: FrameworkStructure, data: dict, job_id: str, job_dir: Path):
        version = data.get("pyzeo", engine.version())
        nudge = (f", atoms moved by {inputs.NUDGE_ANGSTROM:g} A to break a Voronoi degeneracy"
                 if data.get("nudged") else "")
        prepared = data.get("structure", {}).get("cif_preparation", "P1 cell as given")
        self.on = f"Zeo++ (pyzeo {version}) on {s.name} ({s.n_atoms} atoms, {s.formula}; {prepared}{nudge})"
        self.ha = f"high-accuracy network -ha {p.high_accuracy}, Zeo++ default (CCDC) radii"
        self.p, self.s, self.job_id, self.job_dir = p, s, job_id, job_dir
        self.results: list[Result] = []

    def table(self, key: str, unit: str) -> str:
        ref = self.s.reference_values
        if key not in ref or self.p.probe_from_request and key not in ("largest_cavity_diameter",
                                                                        "pore_limiting_diameter",
                                                                        "largest_free_sphere", "density"):
            return ""
        return f"; CoRE MOF 2019 table value {ref[key]:.6g} {unit}"

    def add(self, quantity: str, value: float, unit: str, method: str, log: str, data_file: str | None = None) -> None:
        if not math.isfinite(value):
            raise CalculationFailed(f"Zeo++ gave a non-finite {quantity} for {self.s.id}")
        self.results.append(Result(quantity=quantity, value=float(value), unit=unit, job=self.job_id, method=method,
                                   log=str(self.job_dir / log), data_file=data_file))

    def free_sphere(self, fs: dict) -> None:
        p, table = self.p, self.table
        di, df, dif = fs["Di"], fs["Df"], fs["Dif"]
        if not (di >= df - 1e-6 and di >= dif - 1e-6 and df >= 0):
            raise CalculationFailed(f"inconsistent free-sphere diameters for {self.s.id}: Di {di}, Df {df}, Dif {dif}")
        per_dir = ""
        if "Df_a" in fs:
            per_dir = (f"; along a/b/c: Df {fs['Df_a']:.4f}/{fs['Df_b']:.4f}/{fs['Df_c']:.4f} A, "
                       f"Dif {fs['Dif_a']:.4f}/{fs['Dif_b']:.4f}/{fs['Dif_c']:.4f} A")
        how = f"{self.on}: {self.ha}, as `network -ha {p.high_accuracy} -resex`{per_dir}; deterministic"
        self.add("largest_cavity_diameter", di, "angstrom", f"{how} (Di){table('largest_cavity_diameter', 'A')}",
                 "framework.res")
        self.add("pore_limiting_diameter", df, "angstrom", f"{how} (Df){table('pore_limiting_diameter', 'A')}",
                 "framework.res")
        self.add("largest_free_sphere", dif, "angstrom", f"{how} (Dif){table('largest_free_sphere', 'A')}",
                 "framework.res")

    def surface_area(self, sa: dict) -> None:
        p, r, n = self.p, sa["probe_radius"], sa["samples_per_atom"]
        how = (f"{self.on}: {self.ha}; Monte Carlo surface sampling with channel and probe radius {r:g} A, {n} "
               f"samples per atom, as `network -ha {p.high_accuracy} -sa {r:g} {r:g} {n}`; "
               f"{int(sa.get('Number_of_channels', 0))} channel(s), {int(sa.get('Number_of_pockets', 0))} "
               "pocket(s); Monte Carlo with Zeo++'s fixed seed")
        for key, quantity in (("ASA", "accessible_surface_area"), ("NASA", "non_accessible_surface_area")):
            if sa[f"{key}_m^2/g"] < 0:
                raise CalculationFailed(f"negative {key} for {self.s.id}")
            self.add(quantity, sa[f"{key}_m^2/g"], "m^2/g", how + self.table(quantity, "m^2/g"), "framework.sa")
            self.add(f"{quantity}_volumetric", sa[f"{key}_m^2/cm^3"], "m^2/cm^3",
                     how + self.table(f"{quantity}_volumetric", "m^2/cm^3"), "framework.sa")

    def volume(self, vol: dict) -> None:
        p, table, r, n = self.p, self.table, vol["probe_radius"], vol["samples"]
        fraction = vol["AV_Volume_fraction"]
        if not 0 <= fraction <= 1:
            raise CalculationFailed(f"void fraction {fraction} of {self.s.id} is outside [0, 1]")
        how = (f"{self.on}: {self.ha}; Monte Carlo volume sampling with channel and probe radius {r:g} A, {n} "
               f"samples per cell, as `network -ha {p.high_accuracy} -vol {r:g} {r:g} {n}`; non-accessible "
               f"{vol.get('NAV_cm^3/g', 0):.4g} cm^3/g")
        self.add("accessible_volume", vol["AV_cm^3/g"], "cm^3/g", how + table("accessible_volume", "cm^3/g"),
                 "framework.vol")
        self.add("accessible_volume_fraction", fraction, "dimensionless", how + table("void_fraction", ""),
                 "framework.vol")
        self.add("void_fraction", fraction, "dimensionless", how + table("void_fraction", ""), "framework.vol")
        self.add("density", vol["Density"], "g/cm^3", f"{self.on}: crystal density from the cell mass and volume "
                 f"(Zeo++ masses){table('density', 'g/cm^3')}", "framework.vol")

    def psd(self, psd: dict) -> None:
        job_dir = self.job_dir
        plot = f"; plot {job_dir / psd['png']}" if psd.get("png") else ""
        how = (f"{self.on}: standard Voronoi network, as `network -psd {psd['channel_radius']:g} "
               f"{psd['probe_radius']:g} {psd['samples']}` (0.1 A bins); value = most frequent pore diameter; "
               f"histogram {job_dir / psd['csv']}{plot}")
        self.add("pore_size_distribution", psd["mode_diameter_A"], "angstrom", how, "framework.psd_histo",
                 str(job_dir / psd["csv"]))

    def channels(self, chan: dict) -> None:
        if "error" in chan:
            raise CalculationFailed(f"channel analysis of {self.s.id} failed: {chan['error']}")
        dims = ", ".join(f"{d}D" for d in chan["channel_dimensionalities"]) or "none"
        how = (f"{self.on}: Voronoi network (-ha {self.p.high_accuracy}) nodes and edges wider than a "
               f"{chan['probe_radius']:g} A probe, periodic connectivity (rank of the lattice vectors of its "
               f"loops); {chan['n_channels']} channel system(s): {dims}; {chan['n_pockets']} inaccessible "
               "pocket(s); "
               f"{chan['n_blocking_spheres']} blocking sphere(s) in {self.job_dir / chan['block_file']} (RASPA format)")
        self.add("channel_dimensionality", chan["dimensionality"], "dimensionless", how, "framework.nt2")

    def pov(self, pov: dict) -> None:
        fraction = pov["POAV_fraction"]
        how = (f"{self.on}: probe-occupiable volume (Ongari et al., Langmuir 33, 14529 (2017)) of a "
               f"{pov['probe_radius']:g} A probe, grid {pov['spacing']:g} A with Zeo++ radii, channels only "
               f"(pockets add {pov['PONAV_fraction']:.4f} of the cell); simagent's grid method, tools/zeopp/pov.py")
        self.add("probe_occupiable_volume", fraction / self.s.density_g_cm3, "cm^3/g", how, "zeopp_results.json")
        self.add("probe_occupiable_volume_fraction", fraction, "dimensionless", how, "zeopp_results.json")
