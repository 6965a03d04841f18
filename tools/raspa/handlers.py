"""RASPA2 error handlers (simagent.handlers.ErrorHandler), pre-run checks and GCMC run data.

A user's RASPA job is a simulation.input plus any local files (CIFs, force-field and molecule
definitions); it runs as `simulate simulation.input` in its own folder. RASPA2 2.0.4 exits with
code 0 even when it stops early, so failures are read from the messages ("Cannot open .../
methan.def", "ReturnPseudoAtomNumber: Error!!!! :CH4_sp3", "file ... .cif does not exist") and
from a missing Output/System_0/*.data.
RASPA2 does not check that the simulation box is at least twice the cut-off in every
perpendicular direction; the pre-run check does (UnitCellTooSmall).
"""

from __future__ import annotations

import difflib
import math
import re
from pathlib import Path

import numpy as np

from simagent.errors import InputError
from simagent.handlers import ErrorHandler, Finding
from simagent.models import Job
from tools.raspa import engine
from tools.raspa.engine import share_dir

MAIN = "simulation.input"
SCREEN = "stdout.txt"
DEFAULT_CUTOFF = 12.0  # RASPA's default CutOff, angstrom
INSERTION_MOVES = ("swapprobability", "cbmcprobability", "cfcmcprobability", "cfcmc-cbmcprobability",
                   "gibbsswapchangeprobability", "widomprobability", "reinsertionprobability")
SWAP_MOVES = ("swapprobability", "cbmcprobability", "cfcmcprobability", "cfcmc-cbmcprobability")


# ---------------------------------------------------------------------------------------------
# Reading inputs
# ---------------------------------------------------------------------------------------------


def parse_input(text: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    """(global settings, one dict per Component) with lower-case keys; values as text."""
    settings: dict[str, str] = {}
    components: list[dict[str, str]] = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        key = words[0].lower()
        if key == "component":
            component = {"index": words[1] if len(words) > 1 else str(len(components))}
            rest = words[2:]
            if len(rest) >= 2 and rest[0].lower() == "moleculename":
                component["moleculename"] = rest[1]
            components.append(component)
            continue
        target = components[-1] if components else settings
        target[key] = " ".join(words[1:])
    return settings, components


def settings_of(job: Job) -> tuple[dict[str, str], list[dict[str, str]]]:
    return parse_input(job.inputs.get(MAIN, ""))


def cif_cell(text: str) -> tuple[float, float, float, float, float, float] | None:
    values = {}
    for key in ("a", "b", "c", "alpha", "beta", "gamma"):
        name = f"_cell_length_{key}" if len(key) == 1 else f"_cell_angle_{key}"
        found = re.search(rf"^\s*{name}\s+([0-9.]+)", text, flags=re.M)
        if not found:
            return None
        values[key] = float(found.group(1))
    return tuple(values[k] for k in ("a", "b", "c", "alpha", "beta", "gamma"))  # type: ignore[return-value]


def perpendicular_widths(cell: tuple[float, ...]) -> tuple[float, float, float]:
    """Distances between opposite faces of the cell (what must exceed twice the cut-off)."""
    a, b, c, alpha, beta, gamma = cell
    al, be, ga = (math.radians(x) for x in (alpha, beta, gamma))
    va = np.array([a, 0.0, 0.0])
    vb = np.array([b * math.cos(ga), b * math.sin(ga), 0.0])
    cx = c * math.cos(be)
    cy = c * (math.cos(al) - math.cos(be) * math.cos(ga)) / math.sin(ga)
    vc = np.array([cx, cy, math.sqrt(max(c * c - cx * cx - cy * cy, 0.0))])
    volume = abs(float(np.dot(va, np.cross(vb, vc))))
    return (volume / float(np.linalg.norm(np.cross(vb, vc))), volume / float(np.linalg.norm(np.cross(vc, va))),
            volume / float(np.linalg.norm(np.cross(va, vb))))


def framework_cif(job: Job, name: str) -> str | None:
    local = f"{name}.cif"
    if local in job.inputs:
        return job.inputs[local]
    share = share_dir()
    path = share / "structures" / "cif" / local if share else None
    return path.read_text(errors="replace") if path and path.is_file() else None


def available(kind: str, sub: str = "") -> list[str]:
    """Names in RASPA's library: cif frameworks, force fields, molecules of a definition set."""
    share = share_dir()
    if share is None:
        return []
    if kind == "cif":
        return sorted(p.stem for p in (share / "structures" / "cif").glob("*.cif"))
    if kind == "forcefield":
        return sorted(p.name for p in (share / "forcefield").iterdir() if p.is_dir())
    if kind == "molecule":
        return sorted(p.stem for p in (share / "molecules" / sub).glob("*.def"))
    return []


# ---------------------------------------------------------------------------------------------
# Reading outputs
# ---------------------------------------------------------------------------------------------


def output_file(job_dir: Path) -> Path | None:
    found = sorted((job_dir / "Output" / "System_0").glob("*.data")) if (job_dir / "Output").is_dir() else []
    return found[0] if found else None


def read_text(job_dir: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in (job_dir / SCREEN, job_dir / "stderr.txt") if p.is_file())


def loading_blocks(text: str) -> dict[str, list[float]]:
    """Block averages of the absolute loading per component ('Number of molecules' section): the
    Block[i] lines before each component's first 'Average loading absolute' line."""
    blocks: dict[str, list[float]] = {}
    section = text.split("Number of molecules:", 1)
    if len(section) < 2:
        return blocks
    current, closed = None, True
    for line in section[1].splitlines():
        stripped = line.strip()
        comp = re.match(r"^Component (\d+) \[(.+)\]", stripped)
        if comp:
            current, closed = comp.group(2), False
            blocks[current] = []
            continue
        if stripped.startswith("Average loading absolute"):
            closed = True
            continue
        block = re.match(r"^Block\[\s*\d+\]\s+([-+0-9.eE]+|-?nan)", stripped)
        if block and current is not None and not closed:
            blocks[current].append(float(block.group(1)))
        if stripped.startswith(("Average Widom", "Average surface area", "Average chemical potential")):
            break
    return blocks


def move_acceptance(text: str) -> dict[str, float]:
    """Accepted fraction per move kind ('Performance of the ... move' sections), in %."""
    out = {}
    for chunk in text.split("Performance of the ")[1:]:
        kind = chunk.split(" move", 1)[0].strip()
        head = chunk[:800]
        percent = re.search(r"accepted: [0-9.]+ \(([0-9.]+) \[%\]\)", head)
        fractions = re.search(r"accepted\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)", head)
        if percent:
            out[kind] = float(percent.group(1))
        elif fractions:
            out[kind] = 100 * float(np.mean([float(x) for x in fractions.groups()]))
    return out


# ---------------------------------------------------------------------------------------------
# Handlers
# ---------------------------------------------------------------------------------------------


def closest(word: str, candidates, cutoff: float = 0.6) -> str | None:
    found = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=cutoff)
    if found:
        return found[0]
    lower = {c.lower(): c for c in candidates}
    return lower.get(word.lower())


class RaspaHandler(ErrorHandler):
    engine = "raspa"
    pattern = ""
    on_success = True  # RASPA2 exits with 0 even when it stops on an error

    def check(self, job_dir: Path, job: Job) -> bool:
        self.text = read_text(job_dir)
        self.match = re.search(self.pattern, self.text) if self.pattern else None
        return self.match is not None


def set_global(key: str, value: object) -> dict:
    return {"file": MAIN, "_set_option": {"key": key, "value": str(value)}}


class MoleculeDefinitionMissing(RaspaHandler):
    """'Cannot open .../molecules/TraPPE/methan.def': the closest molecule of that definition set."""

    category = "molecule definition"
    pattern = r"Cannot open (?:\S*/)?molecules/([^/\s]+)/([^/\s]+)\.def|Cannot open ([^/\s]+)\.def"
    max_num_corrections = 2

    def correct(self, job_dir: Path, job: Job) -> dict:
        definition, bad = self.match.group(1), self.match.group(2) or self.match.group(3)
        pool = available("molecule", definition or "") + [n[:-4] for n in job.inputs if n.endswith(".def")]
        good = closest(bad, pool)
        errors = [f"molecule definition `{bad}` not found" + (f" in {definition}" if definition else "")]
        if not good:
            return {"errors": errors, "actions": None}
        return {"errors": [f"{errors[0]} (closest: {good})"], "actions": [{"file": MAIN, "_substitute": {
            "match": r"(?i)^\s*Component\s+\d+\s+MoleculeName\s+" + re.escape(bad) + r"\s*(#.*)?$",
            "old": r"(?<=\s)" + re.escape(bad) + r"(?=\s|$)", "new": good}}]}


class PseudoAtomMissing(RaspaHandler):
    """'ReturnPseudoAtomNumber: Error!!!! :CH4_sp3': a pseudo atom no force field file defines.
    When the Forcefield name itself does not exist, the closest force field that defines the atom."""

    category = "force field"
    pattern = r"ReturnPseudoAtomNumber: Error!+\s*:\s*(\S+)|[Pp]seudo ?[Aa]tom (\S+) not found"
    max_num_corrections = 1

    def correct(self, job_dir: Path, job: Job) -> dict:
        atom = self.match.group(1) or self.match.group(2)
        settings, _ = settings_of(job)
        forcefield = settings.get("forcefield", "")
        errors = [f"pseudo atom {atom} is not defined by force field `{forcefield}`"]
        share = share_dir()
        names = available("forcefield")
        if forcefield in names or "pseudo_atoms.def" in job.inputs or share is None:
            return {"errors": errors, "actions": None}
        defining = [n for n in names if (share / "forcefield" / n / "pseudo_atoms.def").is_file() and
                    re.search(rf"^\s*{re.escape(atom)}\s", (share / "forcefield" / n / "pseudo_atoms.def")
                              .read_text(errors="replace"), flags=re.M)]
        good = closest(forcefield, defining, cutoff=0.5)
        if not good:
            return {"errors": errors + [f"force field `{forcefield}` does not exist"], "actions": None}
        return {"errors": errors + [f"force field `{forcefield}` does not exist (closest defining {atom}: {good})"],
                "actions": [set_global("Forcefield", good)]}


class FrameworkMissing(RaspaHandler):
    """'Error: file .../structures/cif/IRMOF1.cif does not exist': the closest CIF name."""

    category = "structure"
    pattern = r"file (?:\S*/)?([^/\s]+)\.cif does not exist"
    max_num_corrections = 1

    def correct(self, job_dir: Path, job: Job) -> dict:
        bad = self.match.group(1)
        pool = available("cif") + [n[:-4] for n in job.inputs if n.endswith(".cif")]
        good = closest(bad, pool, cutoff=0.8)
        errors = [f"framework `{bad}` not found"]
        if not good:
            return {"errors": errors, "actions": None}
        return {"errors": [f"{errors[0]} (closest: {good})"], "actions": [set_global("FrameworkName", good)]}


class UnitCellTooSmall(RaspaHandler):
    """The simulation box must be at least twice the cut-off wide in every perpendicular
    direction (minimum image convention); RASPA2 does not check. More unit cells are used."""

    category = "unit cell"
    stage = "input"
    max_num_corrections = 1

    def check(self, job_dir: Path, job: Job) -> bool:
        settings, _ = settings_of(job)
        name = settings.get("frameworkname")
        if not name:
            return False
        cif = framework_cif(job, name)
        cell = cif_cell(cif) if cif else None
        if cell is None:
            return False
        self.cutoff = float(settings.get("cutoff", settings.get("cutoffvdw", DEFAULT_CUTOFF)).split()[0])
        try:
            cells = [int(x) for x in settings.get("unitcells", "1 1 1").split()[:3]]
        except ValueError:
            return False
        self.widths = perpendicular_widths(cell)
        self.cells = cells
        self.needed = [max(n, math.ceil(2 * self.cutoff / w - 1e-9)) for n, w in zip(cells, self.widths, strict=True)]
        return self.needed != cells

    def correct(self, job_dir: Path, job: Job) -> dict:
        widths = " x ".join(f"{n * w:.1f}" for n, w in zip(self.cells, self.widths, strict=True))
        return {"errors": [f"box {widths} A with UnitCells {' '.join(map(str, self.cells))} is narrower than twice "
                           f"the cut-off ({2 * self.cutoff:g} A)"],
                "actions": [set_global("UnitCells", " ".join(map(str, self.needed)))]}


class NoInsertionMoves(RaspaHandler):
    """A grand-canonical run (ExternalPressure with a framework) whose components have no
    insertion/deletion move: the loading can never change, and nothing is accepted. Swap moves
    (SwapProbability 1.0) are added to those components."""

    category = "moves"
    stage = "input"
    on_success = True
    max_num_corrections = 1

    def check(self, job_dir: Path, job: Job) -> bool:
        settings, components = settings_of(job)
        if settings.get("simulationtype", "").lower() != "montecarlo" or "externalpressure" not in settings:
            return False
        self.missing = [c for c in components if not any(k in c for k in SWAP_MOVES)]
        return bool(self.missing)

    def correct(self, job_dir: Path, job: Job) -> dict:
        actions = [{"file": MAIN, "_insert_line": {
            "after": rf"(?i)^\s*Component\s+{re.escape(c['index'])}\s",
            "text": "            SwapProbability          1.0"}}
            for c in self.missing]
        names = ", ".join(c.get("moleculename", c["index"]) for c in self.missing)
        return {"errors": [f"no insertion/deletion moves for {names} in a grand-canonical run: the loading cannot "
                           "change (no accepted moves)"], "actions": actions}


class NoAcceptedMoves(RaspaHandler):
    """Every Monte Carlo move was rejected (0 % accepted): nothing was sampled. Recognised; the
    usual causes (blocked pores, a molecule larger than the pores) need a person or the backend."""

    category = "moves"
    on_success = True
    max_num_corrections = 0

    def check(self, job_dir: Path, job: Job) -> bool:
        path = output_file(job_dir)
        if path is None:
            return False
        acceptance = move_acceptance(path.read_text(errors="replace"))
        self.acceptance = acceptance
        return bool(acceptance) and all(v == 0.0 for v in acceptance.values())

    def correct(self, job_dir: Path, job: Job) -> dict:
        return {"errors": ["no Monte Carlo move was accepted: " + ", ".join(f"{k} {v:g} %"
                                                                            for k, v in self.acceptance.items())],
                "actions": None}


class NoOutput(RaspaHandler):
    """RASPA stopped before writing Output/System_0 (with a message no handler above knows)."""

    category = "unknown"
    max_num_corrections = 0

    def check(self, job_dir: Path, job: Job) -> bool:
        self.text = read_text(job_dir)
        return bool(self.text) and output_file(job_dir) is None

    def correct(self, job_dir: Path, job: Job) -> dict:
        tail = [ln for ln in self.text.splitlines() if ln.strip()][-3:]
        return {"errors": ["RASPA stopped without output: " + " | ".join(tail)], "actions": None}


HANDLERS: list[type[ErrorHandler]] = [
    MoleculeDefinitionMissing,
    PseudoAtomMissing,
    FrameworkMissing,
    UnitCellTooSmall,
    NoInsertionMoves,
    NoAcceptedMoves,
    NoOutput,
]


def categorize(message: str) -> str:
    for cls in HANDLERS:
        if cls.pattern and re.search(cls.pattern, message):
            return cls.category
    return "unknown"


# ---------------------------------------------------------------------------------------------
# Pre-run checks, runs, gates, user jobs
# ---------------------------------------------------------------------------------------------

# Settings whose values name files in RASPA's library or the job folder.
_FILE_KEYS = {"frameworkname", "forcefield", "moleculedefinition", "moleculename", "blockpocketsfilename",
              "component", "inputfiletype", "restartfile"}


def safety_findings(job: Job) -> list[Finding]:
    findings = []
    for name, text in job.inputs.items():
        if name != MAIN:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            words = line.split("#", 1)[0].split()
            for word in words[1:]:
                if word.startswith(("/", "~")) or ".." in re.split(r"[\\/]", word) or "/" in word or "$" in word:
                    findings.append(Finding("unsafe", f"'{word}' names a path outside the job folder and the RASPA "
                                                      f"library: {line.strip()}", category="unsafe input", file=name,
                                            line=number, handler="safety policy"))
                    break
    return findings


def library_findings(job: Job) -> list[Finding]:
    """Framework, molecule definitions and force field named by a user's input: in the job folder or
    RASPA's library."""
    findings = []
    settings, components = settings_of(job)
    name = settings.get("frameworkname")
    if name and framework_cif(job, name) is None:
        pool = available("cif")
        hint = difflib.get_close_matches(name, pool, n=1, cutoff=0.8)
        findings.append(Finding("error", f"framework {name} not found (no {name}.cif here or in RASPA's library)",
                                category="structure", file=MAIN, handler="FrameworkMissing",
                                actions=[set_global("FrameworkName", hint[0])] if hint else []))
    for component in components:
        molecule, definition = component.get("moleculename"), component.get("moleculedefinition", "")
        if molecule and f"{molecule}.def" not in job.inputs and available("molecule", definition) and \
                molecule not in available("molecule", definition):
            findings.append(Finding("error", f"molecule {molecule} has no definition in {definition}",
                                    category="molecule definition", file=MAIN, handler="MoleculeDefinitionMissing"))
    forcefield = settings.get("forcefield")
    if forcefield and forcefield != "Local" and "pseudo_atoms.def" not in job.inputs and available("forcefield") \
            and forcefield not in available("forcefield"):
        findings.append(Finding("error", f"force field {forcefield} does not exist in RASPA's library",
                                category="force field", file=MAIN, handler="PseudoAtomMissing"))
    return findings


def user_command(job: Job) -> tuple[list[str], dict[str, str]]:
    """RASPA2's `simulate` on a user's simulation.input (protocol jobs run tools/raspa/run.py)."""
    return [str(engine.simulate_binary()), MAIN], engine.environment()


def user_log(job_dir: Path) -> Path:
    return output_file(job_dir) or job_dir / SCREEN


def main_input(job: Job) -> str:
    return MAIN


def extend_actions(job: Job, factor: float = 2.0) -> list[dict] | None:
    """More MC cycles by `factor`: the protocol's cycle parameter for a protocol job (its inputs are
    re-rendered), NumberOfCycles in a user's simulation.input."""
    if not job.protocol.startswith("user"):
        name = "helium_cycles" if job.stage == "helium_void_fraction" else "production_cycles"
        return [{"param": name, "_scale": factor}]
    settings, _ = settings_of(job)
    try:
        cycles = int(float(settings.get("numberofcycles", "0")))
    except ValueError:
        return None
    return [set_global("NumberOfCycles", int(cycles * factor))] if cycles > 0 else None


def output_problem(job_dir: Path, job: Job) -> str | None:
    """Why a run that exited with 0 produced no result (RASPA2 exits with 0 on errors)."""
    if output_file(job_dir) is None:
        lines = [ln.strip() for ln in read_text(job_dir).splitlines() if ln.strip()]
        return "RASPA stopped before writing Output/System_0" + (f": {lines[-1]}" if lines else "")
    text = output_file(job_dir).read_text(errors="replace")
    if "Simulation finished" not in text:
        return "the RASPA output is incomplete (no 'Simulation finished')"
    return None


def run_data(job_dir: Path, job: Job):
    from simagent.gates import RunData

    path = output_file(job_dir)
    if path is None:
        return None
    settings, components = settings_of(job)
    gcmc = "externalpressure" in settings and any(any(k in c for k in SWAP_MOVES) for c in components)
    data = RunData(engine="raspa", ensemble="gcmc" if gcmc else "unknown")
    blocks = loading_blocks(path.read_text(errors="replace"))
    data.blocks = {f"loading {name}": values for name, values in blocks.items() if values}
    return data


def load_user_job(path: Path, job_id: str = "run", time_limit_s: float = 1800.0) -> tuple[Job, dict[str, Path]]:
    folder = path if path.is_dir() else path.parent
    main = folder / MAIN if path.is_dir() else path
    if not main.is_file():
        raise InputError(f"no {MAIN} in {folder}")
    inputs = {MAIN: main.read_text()}
    for extra in sorted(folder.iterdir()):
        if extra.is_file() and extra.suffix in (".cif", ".def") and extra.stat().st_size < 50 * 1024 * 1024:
            inputs[extra.name] = extra.read_text(errors="replace")
    job = Job(id=job_id, protocol="user/raspa", engine="raspa", stage="user", inputs=inputs,
              params={"user_folder": sorted(p.name for p in folder.iterdir() if p.is_file())[:200]},
              time_limit_s=time_limit_s)
    return job, {}
