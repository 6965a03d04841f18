"""vasp/relax and vasp/band_gap: one-element crystals with VASP, inputs from pymatgen's Materials
Project sets (MPRelaxSet: ISIF=3 relaxation -> lattice constant; MPStaticSet: static run on the
uniform mesh -> band gap from vasprun.xml). VASP is licensed: when no VASP command is configured
the request is refused with the reason and the alternative (Quantum ESPRESSO runs here)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, Field
from pymatgen.io.ase import AseAtomsAdaptor
from pymatgen.io.vasp.inputs import Incar

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, EngineNotFound, InputError, ReadError, RequestError
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import register
from tools import crystals
from tools.crystals import crystal
from tools.vasp import engine
from tools.vasp.check import incar_findings
from tools.vasp.inputs import input_set, input_texts, potcar_library
from tools.vasp.run import JOB_FILE, VaspJob

JOB_ID = "vasp"
# conventional cubic a from the primitive cell's volume: atoms per conventional cell
ATOMS_PER_CONVENTIONAL = {"fcc": 4, "bcc": 2, "diamond": 8, "sc": 1}


class VaspCrystalParams(BaseModel):
    # Defaults reported in the answer, each with its reason
    DEFAULTS: ClassVar[dict[str, Default]] = {
        "VASP inputs": Default("pymatgen input set", "the Materials Project's validated settings",
                               shown="pymatgen {input_set} (Materials Project)"),
        "POTCAR": Default("PMG_VASP_PSP_DIR", "the configured VASP pseudopotential library (PMG_VASP_PSP_DIR)",
                          shown="{symbols} from {library}"),
        "POTCAR (no library)": Default(None, "no VASP pseudopotential library is configured (PMG_VASP_PSP_DIR); VASP "
                                       "needs the POTCAR concatenated from these PAW datasets",
                                       shown="not written; POTCAR.spec lists {symbols}", parameter="POTCAR"),
    }

    element: str
    lattice: Literal["fcc", "bcc", "diamond", "sc"]
    a_initial: float = Field(gt=0)
    incar_overrides: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    kpoints_density: int | None = Field(default=None, description="k-points per reciprocal angstrom^3")
    time_limit_s: float = 86400.0


class VaspCrystalProtocol(crystals.NamedEngineCrystalProtocol):
    engine = "vasp"
    set_kind: ClassVar[str]
    Params = VaspCrystalParams

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> VaspCrystalParams:
        try:
            engine.vasp_command()
        except EngineNotFound as err:
            raise RequestError(f"{err}. simagent can compute this with Quantum ESPRESSO instead (ask again with "
                               "'Quantum ESPRESSO' or 'DFT' instead of 'VASP'); `simagent vasp-inputs REQUEST` "
                               "writes the VASP inputs it would use") from None
        return self.choose_inputs(spec, log)

    def choose_inputs(self, spec: TaskSpec, log: DefaultsLog) -> VaspCrystalParams:
        """`choose` without the check that VASP can run here (`simagent vasp-inputs` writes inputs only)."""
        choice = crystals.crystal_from_spec(spec, log)
        params = VaspCrystalParams(element=choice.element, lattice=choice.lattice, a_initial=choice.a_initial)
        vis = self.vasp_set(params)
        library, symbols = potcar_library(), " ".join(vis.potcar_symbols)
        log.report("VASP inputs", input_set=type(vis).__name__)
        log.report("POTCAR" if library else "POTCAR (no library)", symbols=symbols, library=library)
        return params

    def structure(self, p: VaspCrystalParams):
        return AseAtomsAdaptor.get_structure(crystal(p.element, p.lattice, p.a_initial))

    def vasp_set(self, p: VaspCrystalParams):
        return input_set(self.set_kind, self.structure(p), p.incar_overrides, p.kpoints_density)

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        vis = self.vasp_set(p)
        problems = incar_findings(vis.incar)
        if problems:
            raise InputError("the INCAR does not pass the checks: " + "; ".join(problems))
        texts, _ = input_texts(vis)
        texts[JOB_FILE] = VaspJob().model_dump_json(indent=1)
        return [Job(id=JOB_ID, protocol=self.name, engine="vasp", stage=self.set_kind,
                    params=p.model_dump(mode="json"), inputs=texts, time_limit_s=p.time_limit_s)]

    @staticmethod
    def vasprun(job_dir: Path):
        from pymatgen.io.vasp.outputs import Vasprun

        path = job_dir / "vasprun.xml"
        if not path.is_file():
            raise ReadError(f"{path}: VASP left no vasprun.xml")
        try:
            run = Vasprun(str(path), parse_potcar_file=False)
        except Exception as err:  # pymatgen raises many types on a truncated file
            raise ReadError(f"{path}: {err}") from None
        if not run.converged:
            raise CalculationFailed(f"VASP run in {job_dir} did not converge (electronic or ionic)")
        return run

    def settings_text(self, job_dir: Path) -> str:
        incar = Incar.from_file(job_dir / "INCAR")
        sets = {"relax": "MPRelaxSet", "static": "MPStaticSet"}
        return (f"VASP with pymatgen {sets[self.set_kind]} inputs: ENCUT {incar.get('ENCUT')} eV, "
                f"ISMEAR {incar.get('ISMEAR')}, SIGMA {incar.get('SIGMA')}, EDIFF {incar.get('EDIFF')}, "
                f"k-points {(job_dir / 'KPOINTS').read_text().splitlines()[3].strip()}, "
                f"{'PBE' if incar.get('GGA', 'PE') in ('PE', 'Pe') else incar.get('GGA')}")


@register
class VaspRelax(VaspCrystalProtocol):
    name = "vasp/relax"
    set_kind = "relax"
    properties: ClassVar[frozenset[str]] = frozenset({"lattice_constant"})
    description = "VASP lattice constant of a one-element cubic crystal: MPRelaxSet (ISIF=3) relaxation"

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        job_dir = job_dirs[JOB_ID]
        final = self.vasprun(job_dir).final_structure
        a = (final.volume / len(final) * ATOMS_PER_CONVENTIONAL[p.lattice]) ** (1 / 3)
        if not math.isfinite(a):
            raise CalculationFailed("relaxed cell has no finite volume")
        return [Result(quantity="lattice_constant", value=a, unit="angstrom", job=JOB_ID,
                       log=str(job_dir / "vasp.out"), data_file=str(job_dir / "vasprun.xml"),
                       method=f"conventional cubic a from the relaxed volume; {self.settings_text(job_dir)}")]


@register
class VaspBandGap(VaspCrystalProtocol):
    name = "vasp/band_gap"
    set_kind = "static"
    properties: ClassVar[frozenset[str]] = frozenset({"band_gap"})
    description = "VASP band gap of a one-element crystal: MPStaticSet run, gap from the eigenvalues (vasprun.xml)"

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        job_dir = job_dirs[JOB_ID]
        gap, cbm, vbm, direct = self.vasprun(job_dir).eigenvalue_band_properties
        return [Result(quantity="band_gap", value=float(gap), unit="eV", job=JOB_ID, log=str(job_dir / "vasp.out"),
                       data_file=str(job_dir / "vasprun.xml"),
                       method=f"{'direct' if direct else 'indirect'} gap on the uniform k mesh (CBM {cbm:.3f} eV, "
                       f"VBM {vbm:.3f} eV); {self.settings_text(job_dir)}")]
