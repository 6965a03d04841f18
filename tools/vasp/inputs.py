"""VASP inputs from pymatgen's Materials Project input sets, with user overrides.

POTCARs need the licensed VASP pseudopotential library: when pymatgen's PMG_VASP_PSP_DIR is
configured the POTCAR is written, otherwise POTCAR.spec (the symbols pymatgen would use) and the
caller says so."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pymatgen.core import SETTINGS, Structure
from pymatgen.io.vasp.sets import MPNonSCFSet, MPRelaxSet, MPStaticSet, VaspInputSet

SetKind = Literal["relax", "static", "bands", "dos"]
SETS: dict[str, type[VaspInputSet]] = {"relax": MPRelaxSet, "static": MPStaticSet, "bands": MPNonSCFSet,
                                      "dos": MPNonSCFSet}
# MPNonSCFSet modes: k-points along the high-symmetry lines (band structure), or a dense uniform mesh (DOS)
NSCF_MODES = {"bands": "line", "dos": "uniform"}
# The non-self-consistent runs read the static run's charge density (ICHARG = 11)
BAND_STRUCTURE_STEPS: tuple[SetKind, ...] = ("static", "bands", "dos")
POTCAR_SPEC = "POTCAR.spec"


def potcar_library() -> Path | None:
    """The configured VASP pseudopotential folder (pymatgen's PMG_VASP_PSP_DIR), None when absent."""
    folder = SETTINGS.get("PMG_VASP_PSP_DIR")
    return Path(folder) if folder and Path(folder).is_dir() else None


def input_set(kind: SetKind, structure: Structure, incar_overrides: dict | None = None,
              kpoints_density: int | None = None) -> VaspInputSet:
    """The Materials Project set of this kind (bands/dos: MPNonSCFSet along lines / on a uniform mesh,
    after the static run); overrides go through pymatgen's user_incar_settings
    (a value None removes the tag) and user_kpoints_settings (reciprocal_density)."""
    kwargs: dict = {"user_incar_settings": dict(incar_overrides or {})}
    if kpoints_density:
        kwargs["user_kpoints_settings"] = {"reciprocal_density": kpoints_density}
    if kind in NSCF_MODES:
        kwargs["mode"] = NSCF_MODES[kind]
    return SETS[kind](structure, **kwargs)


def input_texts(vis: VaspInputSet) -> tuple[dict[str, str], bool]:
    """{file name: text} of the set, and whether a real POTCAR is included (else POTCAR.spec)."""
    texts = {"INCAR": str(vis.incar), "KPOINTS": str(vis.kpoints), "POSCAR": str(vis.poscar)}
    if potcar_library() is not None:
        texts["POTCAR"] = str(vis.potcar)
        return texts, True
    texts[POTCAR_SPEC] = "\n".join(vis.potcar_symbols) + "\n"
    return texts, False


def write_inputs(vis: VaspInputSet, folder: Path) -> bool:
    """Write the set into folder (pymatgen's writer); True when a POTCAR was written."""
    has_potcar = potcar_library() is not None
    vis.write_input(str(folder), potcar_spec=not has_potcar)
    return has_potcar
