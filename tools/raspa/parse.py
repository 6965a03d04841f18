"""Reading RASPA2 output (Output/System_0/*.data): block averages and their errors.

RASPA prints each average over 5 blocks as 'value +/- error', where the error is its estimate of the
statistical error of the mean from those blocks (RASPA manual, 'Output'). Parsed here:
- loadings per component, absolute and excess, in every unit RASPA prints (molecules/cell,
  molecules/uc, mol/kg, mg/g, cm3(STP)/g, cm3(STP)/cm3);
- the bulk-gas data of each component (partial pressure, fugacity coefficient, compressibility, bulk
  density, 'Amount of excess molecules' = bulk-gas molecules in the helium-accessible volume of the box);
- Widom insertion: Rosenbluth weight, excess chemical potential, Henry coefficient [mol/kg/Pa] and the
  adsorption energy <U_gh>_1 - <U_h>_0 [K];
- the enthalpy of adsorption from GCMC fluctuations [K and kJ/mol];
- framework mass and density, unit cells, cycles, CPU time, whether the run finished.
Errors on stderr (RASPA prints 'Cannot open ...' and exits) are collected from the job folder."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

from simagent.errors import ReadError

FLOAT = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf"
_PM = re.compile(rf"({FLOAT})\s*\+/-\s*({FLOAT})")
# RASPA's unit labels -> simagent unit names
LOADING_UNITS = {
    "": "molecules/cell",
    "molecules/unit cell": "molecules/uc",
    "mol/kg framework": "mol/kg",
    "milligram/gram framework": "mg/g",
    "cm^3 (STP)/gr framework": "cm3(STP)/g",
    "cm^3 (STP)/cm^3 framework": "cm3(STP)/cm3",
}
_LOADING = re.compile(r"Average loading (absolute|excess)\s*(?:\[([^\]]*)\])?\s+(" + FLOAT + r")\s*\+/-\s*("
                      + FLOAT + r")")
_COMPONENT = re.compile(r"^Component (\d+) \[(.+?)\]")
_BRACKETED = re.compile(r"^\s*\[(.+?)\] (.*)$")
ERROR_MARKERS = ("Cannot open", "Error", "ERROR", "error:", "not found", "Segmentation", "Aborted")


class Average(BaseModel):
    """A block average and RASPA's statistical error of it (same unit)."""

    value: float
    error: float


class ComponentOutput(BaseModel):
    index: int
    name: str
    absolute: dict[str, Average] = Field(default_factory=dict, description="unit -> loading")
    excess: dict[str, Average] = Field(default_factory=dict, description="unit -> RASPA's excess loading")
    mol_fraction: float | None = None
    partial_pressure_Pa: float | None = None
    fugacity_coefficient: float | None = None
    compressibility: float | None = None
    bulk_density_kg_m3: float | None = None
    bulk_molecules_in_box: float | None = Field(
        default=None, description="'Amount of excess molecules': bulk gas in helium void fraction x box volume")
    widom_rosenbluth_weight: Average | None = None
    widom_excess_chemical_potential_K: Average | None = None
    henry_mol_kg_Pa: Average | None = None
    widom_energy_K: Average | None = Field(default=None, description="<U_gh>_1 - <U_h>_0 from Widom insertion")
    enthalpy_K: Average | None = Field(default=None, description="GCMC fluctuation enthalpy of this component")


class RaspaOutput(BaseModel):
    path: str
    finished: bool
    warnings: int | None = None
    errors: list[str] = Field(default_factory=list)
    cycles: int | None = None
    initialization_cycles: int | None = None
    unit_cells: tuple[int, int, int] | None = None
    framework_mass_g_mol: float | None = None
    framework_density_kg_m3: float | None = None
    helium_void_fraction: float | None = None
    temperature_K: float | None = None
    total_enthalpy_K: Average | None = None
    cpu_time_s: float | None = None
    production_cpu_time_s: float | None = None
    components: dict[str, ComponentOutput] = Field(default_factory=dict)

    def component(self, name: str) -> ComponentOutput:
        try:
            return self.components[name]
        except KeyError:
            raise ReadError(f"{self.path}: no component {name!r} (found {', '.join(self.components)})") from None

    @property
    def n_cells(self) -> int:
        if self.unit_cells is None:
            return 1
        a, b, c = self.unit_cells
        return a * b * c


def output_file(job_dir: Path) -> Path | None:
    found = sorted((Path(job_dir) / "Output").glob("System_0/*.data"))
    return found[0] if found else None


def stderr_errors(job_dir: Path) -> list[str]:
    """Error lines RASPA (or the runner) printed to the job's stderr/stdout files."""
    lines: list[str] = []
    for name in ("stderr.txt", "stdout.txt"):
        path = Path(job_dir) / name
        if path.is_file():
            for line in path.read_text(errors="replace").splitlines():
                if any(marker in line for marker in ERROR_MARKERS) and line.strip() not in lines:
                    lines.append(line.strip())
    return lines


def read_output(job_dir: Path) -> RaspaOutput:
    """Parse the RASPA output of a job folder. A missing output file is not an exception here: the
    result says finished=False and carries the error lines, for diagnosis."""
    path = output_file(job_dir)
    errors = stderr_errors(job_dir)
    if path is None:
        return RaspaOutput(path=str(Path(job_dir) / "Output"), finished=False,
                           errors=errors or ["RASPA wrote no Output/System_0/*.data file"])
    result = parse_text(path.read_text(errors="replace"), str(path))
    result.errors = errors + result.errors
    return result


def parse_text(text: str, path: str = "<text>") -> RaspaOutput:
    out = RaspaOutput(path=path, finished="Simulation finished" in text)
    lines = text.splitlines()
    match = re.search(r"Simulation finished,\s+(\d+) warnings", text)
    if match:
        out.warnings = int(match.group(1))
    out.cycles = _int_after(text, r"^Number of cycles:\s*(\d+)")
    out.initialization_cycles = _int_after(text, r"^Number of initializing cycles:\s*(\d+)")
    cells = [_int_after(text, rf"^Number of unitcells \[{axis}\]:\s*(\d+)") for axis in "abc"]
    if all(c is not None for c in cells):
        out.unit_cells = (cells[0], cells[1], cells[2])
    out.framework_mass_g_mol = _float_after(text, r"^Framework Mass:\s*(" + FLOAT + ")")
    out.framework_density_kg_m3 = _float_after(text, r"^Framework Density:\s*(" + FLOAT + ")")
    out.helium_void_fraction = _float_after(text, r"^Helium void fraction:\s*(" + FLOAT + ")")
    out.temperature_K = _float_after(text, r"External temperature:\s*(" + FLOAT + r")")
    out.cpu_time_s = _float_after(text, r"^total time:\s*(" + FLOAT + ")")
    out.production_cpu_time_s = _float_after(text, r"^production run:\s*(" + FLOAT + ")")
    _parse_component_setup(lines, out)
    _parse_loadings(lines, out)
    _parse_widom(lines, out)
    _parse_enthalpy(lines, out)
    adsorbates = [c for c in out.components.values() if c.absolute]
    if len(adsorbates) == 1 and adsorbates[0].enthalpy_K is None and out.total_enthalpy_K is not None:
        adsorbates[0].enthalpy_K = out.total_enthalpy_K  # one component: the total is its enthalpy
    return out


def _int_after(text: str, pattern: str) -> int | None:
    match = re.search(pattern, text, re.MULTILINE)
    return int(match.group(1)) if match else None


def _float_after(text: str, pattern: str) -> float | None:
    match = re.search(pattern, text, re.MULTILINE)
    return float(match.group(1)) if match else None


def _component(out: RaspaOutput, index: int, name: str) -> ComponentOutput:
    if name not in out.components:
        out.components[name] = ComponentOutput(index=index, name=name)
    return out.components[name]


def _parse_component_setup(lines: list[str], out: RaspaOutput) -> None:
    """The 'Component i [name] (Adsorbate molecule)' blocks of the header (bulk-gas data)."""
    current: ComponentOutput | None = None
    fields = {
        "MolFraction:": "mol_fraction",
        "Compressibility:": "compressibility",
        "Density of the bulk fluid phase:": "bulk_density_kg_m3",
        "Amount of excess molecules:": "bulk_molecules_in_box",
        "Partial pressure:": "partial_pressure_Pa",
        "Fugacity coefficient:": "fugacity_coefficient",
    }
    for line in lines:
        match = _COMPONENT.match(line)
        if match and "(Adsorbate molecule)" in line:
            current = _component(out, int(match.group(1)), match.group(2))
            continue
        if current is None:
            continue
        if line.startswith(("Number of molecules:", "Current cycle", "Starting simulation")):
            break
        stripped = line.strip()
        for label, attribute in fields.items():
            if stripped.startswith(label) and getattr(current, attribute) is None:
                number = re.search(FLOAT, stripped[len(label):])
                if number:
                    setattr(current, attribute, float(number.group(0)))


def _parse_loadings(lines: list[str], out: RaspaOutput) -> None:
    """The final 'Number of molecules:' section."""
    try:
        start = max(i for i, line in enumerate(lines) if line.startswith("Number of molecules:"))
    except ValueError:
        return
    current: ComponentOutput | None = None
    for line in lines[start + 1:]:
        match = _COMPONENT.match(line)
        if match:
            current = _component(out, int(match.group(1)), match.group(2))
            continue
        if line.startswith("Average Widom") or line.startswith("Average Henry"):
            break
        loading = _LOADING.search(line)
        if loading and current is not None:
            kind, raspa_unit, value, error = loading.groups()
            unit = LOADING_UNITS.get((raspa_unit or "").strip())
            if unit is None:
                continue
            target = current.absolute if kind == "absolute" else current.excess
            target[unit] = Average(value=float(value), error=float(error))


def _parse_widom(lines: list[str], out: RaspaOutput) -> None:
    """'[name] Average ...: value +/- error' lines of the final Widom sections."""
    for line in lines:
        match = _BRACKETED.match(line)
        if not match:
            continue
        name, rest = match.groups()
        pm = _PM.search(rest)
        if pm is None:
            continue
        average = Average(value=float(pm.group(1)), error=float(pm.group(2)))
        component = out.components.get(name)
        if component is None:
            index = len(out.components)
            component = _component(out, index, name)
        if rest.startswith("Average Widom Rosenbluth-weight"):
            component.widom_rosenbluth_weight = average
        elif rest.startswith("Average Widom excess chemical potential"):
            component.widom_excess_chemical_potential_K = average
        elif rest.startswith("Average Henry coefficient") and "[mol/kg/Pa]" in rest:
            component.henry_mol_kg_Pa = average
        elif rest.startswith("Average  <U_gh>_1-<U_h>_0") or rest.startswith("Average <U_gh>_1-<U_h>_0"):
            component.widom_energy_K = average


def _parse_enthalpy(lines: list[str], out: RaspaOutput) -> None:
    """'Enthalpy of adsorption:' section: per-component blocks (mixtures) and the total."""
    starts = [i for i, line in enumerate(lines) if line.strip() == "Enthalpy of adsorption:"]
    if not starts:
        return
    heading = ""
    for line in lines[starts[-1] + 2:]:
        stripped = line.strip()
        if stripped and not line.startswith(("\t", " ")):
            break  # next top-level section
        if not stripped or stripped.startswith(("Block[", "---", "Note:")):
            continue
        if stripped.startswith("Average"):
            pm = _PM.search(stripped)
            if pm and "[K]" in stripped:
                average = Average(value=float(pm.group(1)), error=float(pm.group(2)))
                named = re.search(r"\[(.+?)\]", heading)
                if heading.startswith("Total"):
                    out.total_enthalpy_K = average
                elif named and named.group(1) in out.components:
                    out.components[named.group(1)].enthalpy_K = average
            continue
        if not _PM.search(stripped):
            heading = stripped


def diagnose(job_dir: Path, message: str = "") -> str:
    """One line for the error agent: RASPA's own error lines, else what is missing."""
    out = read_output(job_dir)
    if out.errors:
        return "; ".join(out.errors[:3])
    if not out.finished:
        return message or f"RASPA did not finish ({out.path} has no 'Simulation finished')"
    return message or "RASPA finished"
