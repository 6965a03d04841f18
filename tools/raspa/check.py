"""Pre-run checks for RASPA jobs: every file RASPA will read is in the job folder, every atom type it
will meet is a pseudo atom with an interaction, the supercell is large enough for the cutoff, and a
dry run (0 cycles: RASPA reads everything and computes the initial energy) succeeds.

RASPA does not stop on a missing force-field file (it prints "... not found and therefore not used" and
carries on with defaults), and it falls back to its share folder for missing molecule or framework
files; both would silently change the physics, so they are findings here."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from simagent.materials.frameworks import perpendicular_widths
from tools.raspa import engine

MAIN_INPUT = engine.MAIN_INPUT
FORCE_FIELD_FILES = ("pseudo_atoms.def", "force_field_mixing_rules.def", "force_field.def")
DRY_RUN_TIME_LIMIT_S = 120.0
_UNSAFE = re.compile(r"(^/|^~|\.\.)")


def _keywords(text: str) -> list[tuple[str, list[str]]]:
    """(keyword, arguments) per non-comment line; 'Component 0 MoleculeName CO2' -> ('MoleculeName', ['CO2'])."""
    rows = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if words[0] in ("Component", "Framework", "System") and len(words) >= 3:
            words = words[2:]
        elif words[0] in ("Component", "Framework", "System"):
            continue
        rows.append((words[0], words[1:]))
    return rows


def _first(rows: list[tuple[str, list[str]]], keyword: str) -> list[str] | None:
    for key, args in rows:
        if key.lower() == keyword.lower():
            return args
    return None


def _all(rows: list[tuple[str, list[str]]], keyword: str) -> list[list[str]]:
    return [args for key, args in rows if key.lower() == keyword.lower()]


def pseudo_atom_names(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        return []
    try:
        count = int(lines[0].split()[0])
    except ValueError:
        return []
    return [line.split()[0] for line in lines[1:count + 1]]


def mixing_rule_names(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    # shifted/truncated, tail yes/no, count, then count rows, then the mixing rule
    try:
        count = int(lines[2].split()[0])
    except (IndexError, ValueError):
        return []
    return [line.split()[0] for line in lines[3:3 + count]]


def pair_names(text: str) -> list[tuple[str, str]]:
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    try:
        count = int(lines[1].split()[0])
    except (IndexError, ValueError):
        return []
    return [(line.split()[0], line.split()[1]) for line in lines[2:2 + count]]


def molecule_atom_types(text: str) -> list[str]:
    """Pseudo-atom names in the 'atomic positions' block of a RASPA molecule .def."""
    lines = text.splitlines()
    types = []
    for i, line in enumerate(lines):
        if line.strip().lower().startswith("# atomic positions"):
            for row in lines[i + 1:]:
                if row.lstrip().startswith("#"):
                    break
                words = row.split()
                if len(words) >= 2:
                    types.append(words[1])
            break
    return types


def cif_cell_and_labels(text: str) -> tuple[list[float] | None, list[str]]:
    """(a, b, c, alpha, beta, gamma) and the atom labels of a CIF written as a single atom loop."""
    cell = []
    for key in ("_cell_length_a", "_cell_length_b", "_cell_length_c",
                "_cell_angle_alpha", "_cell_angle_beta", "_cell_angle_gamma"):
        match = re.search(rf"^{key}\s+([0-9.eE+-]+)", text, re.MULTILINE)
        if not match:
            return None, []
        cell.append(float(match.group(1).split("(")[0]))
    labels: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "loop_" and i + 1 < len(lines) and lines[i + 1].strip().startswith("_atom_site_"):
            headers = []
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith("_"):
                headers.append(lines[j].strip())
                j += 1
            if "_atom_site_label" not in headers:
                continue
            column = headers.index("_atom_site_label")
            while j < len(lines) and lines[j].strip() and not lines[j].strip().startswith(("loop_", "_", "data_")):
                words = lines[j].split()
                if len(words) > column:
                    labels.append(words[column])
                j += 1
    return cell, labels


def _matrix(a: float, b: float, c: float, alpha: float, beta: float, gamma: float):  # noqa: ANN202
    import numpy as np

    ca, cb, cg = (np.cos(np.radians(x)) for x in (alpha, beta, gamma))
    sg = np.sin(np.radians(gamma))
    cy = (ca - cb * cg) / sg
    return np.array([[a, 0, 0], [b * cg, b * sg, 0], [c * cb, c * cy, c * np.sqrt(max(0.0, 1 - cb * cb - cy * cy))]])


def static_problems(inputs: dict[str, str]) -> list[str]:
    """Findings without running RASPA."""
    if MAIN_INPUT not in inputs:
        return [f"no {MAIN_INPUT}"]
    rows = _keywords(inputs[MAIN_INPUT])
    problems: list[str] = []
    referenced = []
    framework = _first(rows, "FrameworkName")
    if framework:
        referenced.append(("framework", framework[0], f"{framework[0]}.cif"))
    for args in _all(rows, "MoleculeName"):
        if args:
            referenced.append(("molecule", args[0], f"{args[0]}.def"))
    for args in _all(rows, "BlockPocketsFileName"):
        if args:
            referenced.append(("blocking", args[0], f"{args[0]}.block"))
    for kind, name, filename in referenced:
        if _UNSAFE.search(name):
            problems.append(f"{kind} name '{name}' points outside the job folder")
        elif filename not in inputs:
            problems.append(f"missing {kind} file {filename} (RASPA would fall back to its share folder)")
    for args in _all(rows, "MoleculeDefinition"):
        if args and args[0].lower() != "local":
            problems.append(f"MoleculeDefinition {args[0]}: molecule files must be local to the job folder")
    for name in FORCE_FIELD_FILES:
        if name not in inputs:
            problems.append(f"missing {name} (RASPA would silently run without it)")
    if problems:
        return problems

    pseudo = set(pseudo_atom_names(inputs["pseudo_atoms.def"]))
    if not pseudo:
        return ["pseudo_atoms.def lists no pseudo atoms"]
    interacting = set(mixing_rule_names(inputs["force_field_mixing_rules.def"]))
    needed: dict[str, str] = {}
    cell, labels = (None, [])
    if framework:
        cell, labels = cif_cell_and_labels(inputs[f"{framework[0]}.cif"])
        for label in labels:
            needed.setdefault(label, f"{framework[0]}.cif")
        if not labels:
            problems.append(f"{framework[0]}.cif has no atoms (_atom_site_label loop)")
    for kind, _name, filename in referenced:
        if kind == "molecule":
            types = molecule_atom_types(inputs[filename])
            if not types:
                problems.append(f"{filename} lists no atoms")
            for t in types:
                needed.setdefault(t, filename)
    for name, where in sorted(needed.items()):
        if name not in pseudo:
            problems.append(f"pseudo atom '{name}' (used in {where}) is missing from pseudo_atoms.def")
        elif name not in interacting:
            problems.append(f"pseudo atom '{name}' has no entry in force_field_mixing_rules.def")
    for a, b in pair_names(inputs["force_field.def"]):
        for name in (a, b):
            if name not in pseudo:
                problems.append(f"force_field.def pairs unknown pseudo atom '{name}'")

    cutoff = _first(rows, "CutOffVDW") or _first(rows, "CutOff")
    cells = _first(rows, "UnitCells")
    if cell and cutoff and cells:
        try:
            widths = perpendicular_widths(_matrix(*cell)) * [int(x) for x in cells[:3]]
            cut = float(cutoff[0])
            charge_cut = _first(rows, "CutOffChargeCharge")
            if charge_cut:
                cut = max(cut, float(charge_cut[0]))
        except (TypeError, ValueError):
            problems.append("cannot read UnitCells / CutOffVDW")
        else:
            if min(widths) < 2 * cut - 1e-6:
                problems.append(
                    f"unit cell too small for the cutoff: perpendicular widths of the {'x'.join(cells[:3])} "
                    f"supercell are {', '.join(f'{w:.2f}' for w in widths)} A, each must be at least "
                    f"2 x {cut:g} A")
    return problems


def dry_run(inputs: dict[str, str], time_limit_s: float = DRY_RUN_TIME_LIMIT_S) -> list[str]:
    """Run RASPA for 0 cycles on a scratch copy (reads all files, sets up the system); error lines."""
    scratch = Path(tempfile.mkdtemp(prefix="simagent-raspa-dry-"))
    try:
        for name, text in inputs.items():
            (scratch / name).write_text(text)
        main = scratch / MAIN_INPUT
        text = re.sub(r"^(\s*NumberOfCycles\s+)\S+", r"\g<1>0", main.read_text(), flags=re.MULTILINE)
        text = re.sub(r"^(\s*NumberOfInitializationCycles\s+)\S+", r"\g<1>0", text, flags=re.MULTILINE)
        main.write_text(text)
        try:
            proc = subprocess.run(engine.command(), cwd=scratch, capture_output=True, text=True,
                                  timeout=time_limit_s, env=engine.environment())
        except subprocess.TimeoutExpired:
            return [f"dry run did not finish within {time_limit_s:g} s"]
        if proc.returncode == 0:
            return []
        lines = [line.strip() for line in (proc.stderr + proc.stdout).splitlines()
                 if any(m in line for m in ("Cannot", "Error", "ERROR", "error", "not found"))]
        return lines[:5] or [f"dry run exited with code {proc.returncode}"]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def precheck(job) -> list[str]:  # noqa: ANN001 - simagent.models.Job
    """Adapter entry point used by the error agent: static checks, then a 0-cycle dry run."""
    problems = static_problems(job.inputs)
    if problems or job.stage_in:
        return problems
    return dry_run(job.inputs)
