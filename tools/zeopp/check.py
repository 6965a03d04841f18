"""Pre-run checks for Zeo++ jobs: pyzeo is installed, the settings are sane, and the structure in
the job folder passes the same CIF checks as any structure the structure agent hands out (a
reviewer may have edited it)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path, PurePosixPath

from tools.zeopp import engine
from tools.zeopp.inputs import CIF_NAME, SETTINGS_NAME

TASKS = {"free_sphere", "surface_area", "volume", "psd", "channels", "pov"}
MAX_RADIUS = 10.0  # angstrom: beyond any molecular probe
MAX_SAMPLES = 5_000_000


def settings_problems(text: str) -> list[str]:
    try:
        settings = json.loads(text)
    except ValueError as err:
        return [f"{SETTINGS_NAME} is not valid JSON: {err}"]
    problems = []
    cif = str(settings.get("cif", ""))
    if not cif or PurePosixPath(cif).name != cif or cif.startswith("."):
        problems.append(f"{SETTINGS_NAME}: structure file {cif!r} must be a plain file name in the job folder")
    tasks = settings.get("tasks", [])
    unknown = sorted(set(tasks) - TASKS)
    if not tasks or unknown:
        problems.append(f"{SETTINGS_NAME}: tasks {tasks} (known: {', '.join(sorted(TASKS))})")
    for task in tasks:
        block = settings.get(task, {}) if task != "free_sphere" else {}
        for key, value in block.items():
            if key.endswith("radius") and not (isinstance(value, int | float) and 0 <= value <= MAX_RADIUS):
                problems.append(f"{SETTINGS_NAME}: {task}.{key} = {value!r} is not a radius in 0-{MAX_RADIUS:g} A")
            if key.startswith("samples") and not (isinstance(value, int) and 0 < value <= MAX_SAMPLES):
                problems.append(f"{SETTINGS_NAME}: {task}.{key} = {value!r} is not a sample count in 1-{MAX_SAMPLES}")
    if settings.get("high_accuracy") not in ("DEF", "HI", "MED", "LOW", "OCC", "FCC", "ACC", "AQC", "DDH", "TIH",
                                             "ICH", "ICC", "RIH", "S4", "S10", "S20", "S30", "S40", "S50", "S100",
                                             "S500", "S1000", "S10000"):
        problems.append(f"{SETTINGS_NAME}: unknown high-accuracy setting {settings.get('high_accuracy')!r}")
    return problems


def structure_problems(cif_text: str, name: str = CIF_NAME) -> list[str]:
    from simagent.materials.structures import check_cif

    with tempfile.TemporaryDirectory(prefix="simagent-zeopp-check-") as folder:
        path = Path(folder) / name
        path.write_text(cif_text)
        report, _structure = check_cif(path)
    return report.problems


def precheck(job) -> list[str]:
    """Adapter entry point used by the error agent (an empty list: fine to run)."""
    engine.check_installed()
    if SETTINGS_NAME not in job.inputs:
        return [f"no {SETTINGS_NAME} among the job's inputs"]
    problems = settings_problems(job.inputs[SETTINGS_NAME])
    if problems:
        return problems
    cif = json.loads(job.inputs[SETTINGS_NAME])["cif"]
    if cif not in job.inputs:
        return [f"the structure file {cif} is not among the job's inputs"]
    return structure_problems(job.inputs[cif], cif)
