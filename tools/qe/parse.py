"""pw.x output (QE 6.7 text format) to a typed summary: energies, convergence, eigenvalues, errors."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

from simagent.errors import ReadError
from tools.qe.inputs import RY_TO_EV

_FLOAT = r"-?\d+\.\d+(?:[eEdD][-+]?\d+)?"


class KBands(BaseModel):
    k_cart: tuple[float, float, float] = Field(description="cartesian, units of 2*pi/alat")
    energies_eV: list[float]


class PwOutput(BaseModel):
    job_done: bool = False
    scf_converged: bool = False
    scf_iterations: int = 0
    total_energy_eV: float | None = None
    fermi_eV: float | None = None
    homo_eV: float | None = None
    lumo_eV: float | None = None
    n_electrons: float | None = None
    natoms: int | None = None
    alat_bohr: float | None = None
    pressure_kbar: float | None = None
    wall_s: float | None = None
    bands: list[KBands] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    stopped_by_time: bool = False

    @property
    def energy_per_atom_eV(self) -> float | None:
        if self.total_energy_eV is None or not self.natoms:
            return None
        return self.total_energy_eV / self.natoms


def parse_text(text: str) -> PwOutput:
    out = PwOutput(job_done="JOB DONE." in text)
    out.scf_converged = "convergence has been achieved" in text or "End of band structure calculation" in text
    match = re.search(r"convergence has been achieved in\s+(\d+) iterations", text)
    if match:
        out.scf_iterations = int(match.group(1))
    energies = re.findall(rf"^!\s+total energy\s+=\s+({_FLOAT}) Ry", text, re.M)
    if energies:
        out.total_energy_eV = float(energies[-1]) * RY_TO_EV
    for pattern, key in ((rf"the Fermi energy is\s+({_FLOAT}) ev", "fermi_eV"),
                         (rf"number of electrons\s+=\s+({_FLOAT})", "n_electrons"),
                         (rf"lattice parameter \(alat\)\s+=\s+({_FLOAT})", "alat_bohr"),
                         (rf"P=\s*({_FLOAT})", "pressure_kbar")):
        found = re.findall(pattern, text)
        if found:
            setattr(out, key, float(found[-1]))
    match = re.search(r"number of atoms/cell\s+=\s+(\d+)", text)
    if match:
        out.natoms = int(match.group(1))
    match = re.findall(rf"highest occupied, lowest unoccupied level \(ev\):\s+({_FLOAT})\s+({_FLOAT})", text)
    if match:
        out.homo_eV, out.lumo_eV = float(match[-1][0]), float(match[-1][1])
    else:
        match = re.findall(rf"highest occupied level \(ev\):\s+({_FLOAT})", text)
        if match:
            out.homo_eV = float(match[-1])
    match = re.findall(r"PWSCF\s+:.*?([\d.]+)s WALL", text)
    if match:
        out.wall_s = float(match[-1])
    out.stopped_by_time = "Maximum CPU time exceeded" in text
    out.bands = _bands(text)
    out.errors = _errors(text)
    return out


def parse(path: Path) -> PwOutput:
    if not path.is_file():
        raise ReadError(f"{path}: no pw.x output")
    return parse_text(path.read_text(errors="replace"))


def _bands(text: str) -> list[KBands]:
    """Eigenvalues of the last 'End of ... calculation' block."""
    start = max(text.rfind("End of self-consistent calculation"), text.rfind("End of band structure calculation"))
    if start < 0:
        return []
    block = text[start:]
    stop = re.search(r"the Fermi energy|highest occupied|Writing output|!\s+total energy", block)
    block = block[: stop.start()] if stop else block
    found = []
    heads = list(re.finditer(rf"k =\s*({_FLOAT})\s*({_FLOAT})\s*({_FLOAT}).*?bands \(ev\):", block))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(block)
        body = block[head.end():end]
        body = body.split("occupation numbers")[0]
        values = [float(v) for v in re.findall(_FLOAT, body)]
        found.append(KBands(k_cart=tuple(float(head.group(j)) for j in (1, 2, 3)), energies_eV=values))
    return found


def _errors(text: str) -> list[str]:
    """The message of a %%%% error block, and named failures without one."""
    errors = []
    for block in re.findall(r"%{20,}\n(.*?)\n\s*%{20,}", text, re.S):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        errors.append(" ".join(lines))
    if "convergence NOT achieved" in text:
        errors.append(re.search(r"convergence NOT achieved.*", text).group(0).strip())
    return errors
