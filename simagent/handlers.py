"""Error handlers in custodian's style: one class per failure mode, declarative corrections, one
input modder that applies them and logs them to the job folder.

A handler answers two questions about a job folder: `check(job_dir, job)` (does this failure mode
apply?) and `correct(job_dir, job)` (what to change: ``{"errors": [...], "actions": [...]}``).
Actions are data, never code. The action language (see `apply_actions`):

Protocol parameters (jobs rendered by a protocol; the input writer re-renders them):
    {"param": "timestep", "_set": 0.001}      {"param": "timestep", "_scale": 0.5}
    {"param": "seed", "_unset": True}
Input files (free-form inputs such as a user's in.lammps, an .mdp, a simulation.input):
    {"file": F, "_set_option": {"key": K, "value": V}}   set a command/keyword (LAMMPS `K V...`,
                                                         mdp `K = V`, RASPA `K V`); inserted if absent
    {"file": F, "_unset_option": {"key": K}}
    {"file": F, "_replace_line": {"match": REGEX, "text": NEW, "count": 1}}   (count 0: every match;
                                     an optional "after": REGEX restricts matches to lines after it)
    {"file": F, "_delete_line": {"match": REGEX, "count": 1}}
    {"file": F, "_insert_line": {"before" | "after": REGEX, "text": NEW}}  or {"at": "start" | "end"}
    {"file": F, "_substitute": {"match": REGEX, "old": REGEX, "new": TEXT}} replace inside matching lines
    {"file": F, "_copy_from": "library:NAME" | "user:NAME"}   swap a file: contents from the engine's
                                                         library or the user's input folder, never a path
    {"file": F, "_delete_file": True}

The engine adapter's handlers (`EngineAdapter.handlers()`) are tried in order; the first one whose
check() fires and whose limit is not reached corrects the job. An unknown failure goes to the
decision backend (`backend_diagnosis`), whose answer uses the same action language.

Review rule: a correction from a deterministic handler, a physics gate or the expert backend's
rules is applied without asking (it is listed in the answer and in corrections.json). A correction
proposed by an LLM (`Diagnosis.needs_review`) is shown as a unified diff of the repaired inputs
(`input_diff`) before it runs, unless the user chose --yes; the user may approve, edit or reject it.

Reviewer edits of generated inputs are kept as (rendered text, edited text) pairs and re-applied
by `reapply_edit` (a three-way merge) when the protocol's inputs are rendered again.

Everything else an engine provides (its handler library, pre-run checks, run readers, users'
inputs) is on its adapter: simagent.engines.EngineAdapter, found with simagent.engines.get_engine.
"""

from __future__ import annotations

import difflib
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from simagent.errors import InputError
from simagent.models import Correction, Job

CORRECTIONS_FILE = "corrections.json"
# Bounds on automatic repair (custodian: max_errors, max_errors_per_job, handler max_num_corrections).
MAX_CORRECTIONS_PER_JOB = 6
MAX_CORRECTIONS_TOTAL = 12

Action = dict[str, Any]
Severity = Literal["unsafe", "error", "warning"]


# ---------------------------------------------------------------------------------------------
# Handlers
# ---------------------------------------------------------------------------------------------


class ErrorHandler(ABC):
    """One failure mode of one engine.

    Class flags: `category` (the MDGym error category it covers), `stage` ("output": checks a
    finished or failed run's files; "input": checks the inputs before anything runs, so check()
    must not need outputs), `on_success` (also checked after a run that exited cleanly: warnings,
    physics gates), `max_num_corrections` (how often it may fire on one job)."""

    engine: ClassVar[str] = ""
    category: ClassVar[str] = ""
    stage: ClassVar[Literal["input", "output"]] = "output"
    on_success: ClassVar[bool] = False
    max_num_corrections: ClassVar[int | None] = 2

    @property
    def name(self) -> str:
        return type(self).__name__

    @abstractmethod
    def check(self, job_dir: Path, job: Job) -> bool:
        """True when this failure mode applies to the job folder."""

    @abstractmethod
    def correct(self, job_dir: Path, job: Job) -> dict:
        """{"errors": [what was found], "actions": [declarative changes]}; actions None or [] means
        the failure was recognised but cannot be fixed automatically."""


@dataclass
class Finding:
    """A pre-run check result: what is wrong, how bad, where, and optionally how to fix it."""

    severity: Severity
    message: str
    category: str = ""
    file: str | None = None
    line: int | None = None
    handler: str | None = None
    actions: list[Action] = field(default_factory=list)

    def __str__(self) -> str:
        where = f"{self.file}" if self.file else ""
        if self.line is not None:
            where += f" line {self.line}"
        prefix = f"{where}: " if where else ""
        return f"[{self.severity}] {prefix}{self.message}"


def engine_handlers(engine: str, stage: str | None = None) -> list[ErrorHandler]:
    """The handler library of an engine, in priority order (only one stage when given)."""
    from simagent.engines import get_engine

    return get_engine(engine).handlers(stage)


# ---------------------------------------------------------------------------------------------
# The correction log (corrections.json in the job folder; custodian.json's role)
# ---------------------------------------------------------------------------------------------


@dataclass
class CorrectionRecord:
    job: str
    handler: str
    category: str
    errors: list[str]
    actions: list[Action]
    changes: list[str]
    attempt: int
    source: Literal["handler", "gate", "backend", "precheck"] = "handler"

    def to_correction(self) -> Correction:
        return Correction(job=self.job, handler=self.handler, action="; ".join(self.changes) or "none",
                          reason="; ".join(self.errors))

    def as_dict(self) -> dict:
        return dict(vars(self))


class CorrectionLog:
    """All corrections made to the jobs of one run, with the bounds on how many may be made."""

    def __init__(self, records: list[CorrectionRecord] | None = None,
                 max_per_job: int = MAX_CORRECTIONS_PER_JOB, max_total: int = MAX_CORRECTIONS_TOTAL) -> None:
        self.records = list(records or [])
        self.max_per_job = max_per_job
        self.max_total = max_total

    def count(self, job: str | None = None, handler: str | None = None) -> int:
        return sum(1 for r in self.records
                   if (job is None or r.job == job) and (handler is None or r.handler == handler))

    def allows(self, job: str, handler: ErrorHandler | None = None) -> str | None:
        """None when one more correction is allowed, else the reason it is not."""
        if self.count() >= self.max_total:
            return f"the limit of {self.max_total} corrections per run is reached"
        if self.count(job) >= self.max_per_job:
            return f"the limit of {self.max_per_job} corrections for job {job} is reached"
        if handler is not None and handler.max_num_corrections is not None:
            if self.count(job, handler.name) >= handler.max_num_corrections:
                return f"{handler.name} already corrected job {job} {handler.max_num_corrections} time(s)"
        return None

    @classmethod
    def from_corrections(cls, corrections: list[Correction], **limits: int) -> CorrectionLog:
        """A log rebuilt from the graph state's corrections (reviewer edits are not counted)."""
        records = [CorrectionRecord(job=c.job, handler=c.handler, category="", errors=[c.reason], actions=[],
                                    changes=[c.action], attempt=0)
                   for c in corrections if not c.handler.startswith("reviewer")]
        return cls(records, **limits)

    def add(self, record: CorrectionRecord) -> None:
        self.records.append(record)

    def for_job(self, job: str) -> list[CorrectionRecord]:
        return [r for r in self.records if r.job == job]

    def write(self, job_dir: Path, job: str) -> Path:
        """Write this job's corrections (all attempts so far) to the job folder."""
        path = job_dir / CORRECTIONS_FILE
        tmp = job_dir / (CORRECTIONS_FILE + ".tmp")
        tmp.write_text(json.dumps([r.as_dict() for r in self.for_job(job)], indent=2, default=str))
        tmp.replace(path)
        return path

    @classmethod
    def read(cls, job_dir: Path) -> list[CorrectionRecord]:
        path = job_dir / CORRECTIONS_FILE
        if not path.is_file():
            return []
        return [CorrectionRecord(**raw) for raw in json.loads(path.read_text())]


# ---------------------------------------------------------------------------------------------
# The input modder: the only code that changes a job's inputs
# ---------------------------------------------------------------------------------------------

Resolver = Callable[[str], str]  # "library:NAME" / "user:NAME" -> file text


def _option_syntax(file: str, engine: str) -> str:
    if file.endswith(".mdp"):
        return "mdp"
    if engine == "raspa" or file.endswith(".input"):
        return "raspa"
    return "lammps"


def _key_of(line: str, syntax: str) -> str | None:
    body = line.split(";" if syntax == "mdp" else "#", 1)[0].strip()
    if not body:
        return None
    if syntax == "mdp":
        if "=" not in body:
            return None
        return body.split("=", 1)[0].strip().lower().replace("_", "-")
    return body.split()[0].lower() if syntax == "raspa" else body.split()[0]


def _format_option(key: str, value: Any, syntax: str) -> str:
    if syntax == "mdp":
        return f"{key:<24}= {value}"
    return f"{key:<15} {value}".rstrip()


def _norm_key(key: str, syntax: str) -> str:
    if syntax == "mdp":
        return key.strip().lower().replace("_", "-")
    return key.strip().lower() if syntax == "raspa" else key.strip()


_LAMMPS_RUN = re.compile(r"^\s*(run|minimize|rerun|min_style)\b")


def _set_option(lines: list[str], key: str, value: Any, syntax: str, anchor: str | None) -> tuple[list[str], str]:
    wanted = _norm_key(key, syntax)
    new = _format_option(key, value, syntax)
    hits = [i for i, line in enumerate(lines) if _key_of(line, syntax) == wanted]
    if hits:
        old = [lines[i].strip() for i in hits]
        for i in hits:
            lines[i] = new
        return lines, f"`{old[-1]}` -> `{new.strip()}`" + (f" ({len(hits)} lines)" if len(hits) > 1 else "")
    if anchor:
        pattern = re.compile(anchor)
        position = next((i for i, line in enumerate(lines) if pattern.search(line)), None)
    elif syntax == "lammps":
        position = next((i for i, line in enumerate(lines) if _LAMMPS_RUN.match(line)), None)
    elif syntax == "raspa":
        position = next((i for i, line in enumerate(lines) if line.strip().lower().startswith("component")), None)
    else:
        position = None
    if position is None:
        lines.append(new)
    else:
        lines.insert(position, new)
    return lines, f"added `{new.strip()}`"


def _select(lines: list[str], pattern: str, count: int, after: str | None = None) -> list[int]:
    """Indices of lines matching `pattern` (the first `count`, 0: all), optionally only those
    after the first line matching `after`."""
    regex = re.compile(pattern)
    start = 0
    if after:
        anchor = re.compile(after)
        start = next((i + 1 for i, line in enumerate(lines) if anchor.search(line)), len(lines))
    hits = [i for i, line in enumerate(lines) if i >= start and regex.search(line)]
    return hits if count == 0 else hits[:count]


def apply_file_action(text: str, action: Action, syntax: str) -> tuple[str, str]:
    """Apply one file action to a text; returns (new text, what changed). Raises InputError when
    the action does not apply (no matching line): a correction must never silently do nothing."""
    trailing = text.endswith("\n")
    lines = text.splitlines()
    if "_set_option" in action:
        spec = action["_set_option"]
        lines, change = _set_option(lines, spec["key"], spec["value"], spec.get("syntax", syntax), spec.get("before"))
    elif "_unset_option" in action:
        spec = action["_unset_option"]
        wanted = _norm_key(spec["key"], spec.get("syntax", syntax))
        hits = [i for i, line in enumerate(lines) if _key_of(line, spec.get("syntax", syntax)) == wanted]
        if not hits:
            raise InputError(f"no `{spec['key']}` to remove")
        change = "removed " + ", ".join(f"`{lines[i].strip()}`" for i in hits)
        lines = [line for i, line in enumerate(lines) if i not in hits]
    elif "_replace_line" in action:
        spec = action["_replace_line"]
        hits = _select(lines, spec["match"], spec.get("count", 1), spec.get("after"))
        if not hits:
            raise InputError(f"no line matches {spec['match']!r}")
        change = ", ".join(f"`{lines[i].strip()}` -> `{spec['text'].strip()}`" for i in hits)
        for i in hits:
            lines[i] = spec["text"]
    elif "_substitute" in action:
        spec = action["_substitute"]
        hits = _select(lines, spec.get("match", spec["old"]), spec.get("count", 1), spec.get("after"))
        changes = []
        for i in hits:
            new = re.sub(spec["old"], lambda m: m.expand(spec["new"]), lines[i])
            if new != lines[i]:
                changes.append(f"`{lines[i].strip()}` -> `{new.strip()}`")
                lines[i] = new
        if not changes:
            raise InputError(f"nothing to substitute for {spec['old']!r}")
        change = ", ".join(changes)
    elif "_delete_line" in action:
        spec = action["_delete_line"]
        hits = _select(lines, spec["match"], spec.get("count", 1), spec.get("after"))
        if not hits:
            raise InputError(f"no line matches {spec['match']!r}")
        change = "removed " + ", ".join(f"`{lines[i].strip()}`" for i in hits)
        lines = [line for i, line in enumerate(lines) if i not in hits]
    elif "_insert_line" in action:
        spec = action["_insert_line"]
        new_lines = spec["text"].splitlines() or [""]
        if spec.get("at") == "start":
            position = 0
        elif spec.get("at") == "end":
            position = len(lines)
        else:
            key = "before" if "before" in spec else "after"
            hits = _select(lines, spec[key], 1)
            if not hits:
                raise InputError(f"no line matches {spec[key]!r} to insert {key}")
            position = hits[0] + (1 if key == "after" else 0)
        lines[position:position] = new_lines
        change = "added " + ", ".join(f"`{t.strip()}`" for t in new_lines)
    else:
        raise InputError(f"unknown file action {sorted(action)}")
    return "\n".join(lines) + ("\n" if trailing or not lines else ""), change


def apply_param_action(params: dict, action: Action) -> tuple[dict, str]:
    params = dict(params)
    name = action["param"]
    if "_unset" in action:
        old = params.pop(name, None)
        return params, f"{name}: {old} -> default"
    if name not in params:
        raise InputError(f"the protocol has no parameter {name!r}")
    old = params[name]
    if "_scale" in action:
        new = old * float(action["_scale"])
        if isinstance(old, int) and not isinstance(old, bool):
            new = int(round(new))
    elif "_set" in action:
        new = action["_set"]
    else:
        raise InputError(f"unknown parameter action {sorted(action)}")
    params[name] = new
    return params, f"{name}: {old:g} -> {new:g}" if _is_number(old) and _is_number(new) else f"{name}: {old} -> {new}"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_param_action(action: Action) -> bool:
    return "param" in action


def apply_actions(job: Job, actions: list[Action], resolver: Resolver | None = None) -> tuple[Job, list[str]]:
    """The input modder: a new Job with the actions applied, and one line per change.

    File actions edit `job.inputs`; parameter actions edit `job.params` (for protocol jobs the
    graph applies them to the protocol run instead and re-renders, see agents.error)."""
    inputs = dict(job.inputs)
    params = dict(job.params)
    changes = []
    for action in actions:
        if is_param_action(action):
            params, change = apply_param_action(params, action)
            changes.append(change)
            continue
        name = action.get("file")
        if not name or "/" in name or name.startswith("."):
            raise InputError(f"a correction may only touch files in the job folder, not {name!r}")
        if "_copy_from" in action:
            source = action["_copy_from"]
            if resolver is None or not re.match(r"^(library|user):[\w.+-]+$", source):
                raise InputError(f"cannot copy {source!r} into the job folder")
            inputs[name] = resolver(source)
            changes.append(f"{name}: replaced by {source}")
            continue
        if action.get("_delete_file"):
            inputs.pop(name, None)
            changes.append(f"{name}: removed")
            continue
        if name not in inputs:
            raise InputError(f"the job has no input file {name!r}")
        inputs[name], change = apply_file_action(inputs[name], action, _option_syntax(name, job.engine))
        changes.append(f"{name}: {change}")
    return job.model_copy(update={"inputs": inputs, "params": params}), changes


def input_diff(before: Job | dict[str, str], after: Job | dict[str, str], prefix: str = "") -> str:
    """Unified diff of the inputs (what review mode shows before a repaired job runs); `before`
    and `after` are jobs or {file name: text}; `prefix` (e.g. the job id) goes before file names."""
    old_files = before.inputs if isinstance(before, Job) else before
    new_files = after.inputs if isinstance(after, Job) else after
    out: list[str] = []
    for name in sorted(set(old_files) | set(new_files)):
        old, new = old_files.get(name, ""), new_files.get(name, "")
        if old != new:
            lines = list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                              fromfile=f"a/{prefix}{name}", tofile=f"b/{prefix}{name}"))
            out += [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Reviewer edits of generated inputs, re-applied after the protocol re-renders them
# ---------------------------------------------------------------------------------------------

Change = tuple[int, int, list[str]]  # replace base lines [start, end) by these lines


def _changes(base: list[str], other: list[str]) -> list[Change]:
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    return [(i1, i2, other[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _conflict(a: Change, b: Change) -> bool:
    """Do two changes of the same base touch the same lines? Two replacements conflict when their
    ranges overlap; an insertion conflicts with a replacement it falls strictly inside, and with
    another insertion at the same place (the order of the two would be a guess)."""
    (a1, a2, _), (b1, b2, _) = a, b
    if a1 == a2 and b1 == b2:
        return a1 == b1
    if a1 == a2:
        return b1 < a1 < b2
    if b1 == b2:
        return a1 < b1 < a2
    return a1 < b2 and b1 < a2


def reapply_edit(base: str, edited: str, fresh: str) -> str:
    """Re-apply a reviewer's edit (`base` -> `edited`) to a new rendering `fresh` of the same file.

    A line-based three-way merge: the reviewer's changes and the re-rendering's changes of `base`
    are combined when they touch different lines. Raises InputError, naming the lines, when both
    changed the same lines: the edit no longer applies cleanly and must not be dropped silently."""
    if fresh == base or fresh == edited:
        return edited
    if edited == base:
        return fresh
    base_lines = base.splitlines(keepends=True)
    mine = _changes(base_lines, edited.splitlines(keepends=True))
    theirs = _changes(base_lines, fresh.splitlines(keepends=True))
    merged = list(mine)
    for change in theirs:
        if change in mine:
            continue  # the new rendering made the same change as the reviewer
        clash = next((m for m in mine if _conflict(m, change)), None)
        if clash is not None:
            start, end = min(clash[0], change[0]), max(clash[1], change[1])
            where = f"line {start + 1}" if end <= start + 1 else f"lines {start + 1}-{end}"
            was = "".join(base_lines[start:end]).strip() or "(nothing)"
            raise InputError(f"the edit and the new rendering both change {where} of the rendered file "
                             f"(rendered: `{was}`; edit: `{''.join(clash[2]).strip() or '(deleted)'}`; "
                             f"new rendering: `{''.join(change[2]).strip() or '(deleted)'}`)")
        merged.append(change)
    lines = list(base_lines)
    for start, end, new in sorted(merged, key=lambda c: (c[0], c[1]), reverse=True):
        lines[start:end] = new
    # a last line without a newline may have moved up: only the file's end may lack one
    return "".join(line if line.endswith("\n") or i == len(lines) - 1 else line + "\n"
                   for i, line in enumerate(lines))


# ---------------------------------------------------------------------------------------------
# Diagnosis: which handler applies, and what it proposes
# ---------------------------------------------------------------------------------------------


@dataclass
class Diagnosis:
    """What went wrong with one job and the proposed correction (empty actions: none found)."""

    job: str
    errors: list[str]
    handler: str | None = None
    category: str = ""
    actions: list[Action] = field(default_factory=list)
    blocked: str | None = None  # why no correction was allowed (limits)
    needs_review: bool = False  # proposed by an LLM: shown as a diff before it runs (review mode)

    @property
    def fixable(self) -> bool:
        return bool(self.actions) and self.blocked is None

    def summary(self) -> str:
        text = "; ".join(self.errors) or "unknown failure"
        return f"{text} [{self.category}]" if self.category else text


def diagnose(job_dir: Path, job: Job, log: CorrectionLog, succeeded: bool = False,
             handlers: list[ErrorHandler] | None = None) -> Diagnosis | None:
    """Run the engine's output handlers on a job folder; first one that fires wins.

    For a job that exited cleanly only `on_success` handlers are consulted; None means nothing
    fired (for a failed job: an unknown failure, for a finished one: nothing to report)."""
    handlers = engine_handlers(job.engine) if handlers is None else handlers
    recognised: Diagnosis | None = None
    for handler in handlers:
        if succeeded and not handler.on_success:
            continue
        try:
            fired = handler.check(job_dir, job)
        except (OSError, ValueError):  # unreadable output: the next handler may still apply
            fired = False
        if not fired:
            continue
        result = handler.correct(job_dir, job) or {}
        diagnosis = Diagnosis(job=job.id, errors=list(result.get("errors") or [handler.name]),
                              handler=handler.name, category=handler.category,
                              actions=list(result.get("actions") or []))
        diagnosis.blocked = log.allows(job.id, handler) if diagnosis.actions else None
        if diagnosis.fixable:
            return diagnosis
        recognised = recognised or diagnosis
    return recognised


# ---------------------------------------------------------------------------------------------
# The decision backend as the last handler
# ---------------------------------------------------------------------------------------------


def repair_action_to_actions(repair, job: Job) -> list[Action]:
    """A backend's RepairAction in the handler action language ([] for give_up)."""
    kind = repair.action
    if kind == "give_up":
        return []
    if kind in ("set", "scale"):
        if repair.parameter is None or repair.value is None:
            return []
        if kind == "scale":
            return [{"param": repair.parameter, "_scale": float(repair.value)}]
        return [{"param": repair.parameter, "_set": _parse_value(repair.value)}]
    file = getattr(repair, "file", None) or _main_input(job)
    if file is None or repair.parameter is None:
        return []
    # the line as the backend quoted it; how many blanks separate its words does not matter
    words = repair.parameter.split()
    if not words:
        return []
    match = r"^\s*" + r"\s+".join(re.escape(word) for word in words) + r"\s*$"
    if kind == "replace_line":
        return [{"file": file, "_replace_line": {"match": match, "text": repair.value or ""}}]
    if kind == "delete_line":
        return [{"file": file, "_delete_line": {"match": match}}]
    if kind == "insert_line":
        return [{"file": file, "_insert_line": {"after": match, "text": repair.value or ""}}]
    return []


def _parse_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def _main_input(job: Job) -> str | None:
    from simagent.engines import get_engine

    return get_engine(job.engine).main_input(job) if job.inputs else None


def rule_based(backend_name: str) -> bool:
    """True for the expert backend's rules (also when the hybrid backend let them decide)."""
    return backend_name == "expert" or backend_name.endswith("(expert)")


# Free-form inputs longer than this are cut in the repair request (a local model's context is small).
MAX_INPUT_CHARS_FOR_REPAIR = 6000


def output_tail(job_dir: Path | None, lines: int = 15) -> str:
    """The last lines of a job's screen output (stdout.txt), or "" when there is none."""
    path = job_dir / "stdout.txt" if job_dir is not None else None
    if path is None or not path.is_file():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def repair_request(job: Job, diagnosis_text: str, free_form: bool, job_dir: Path | None = None) -> str:
    """The diagnosis as the backend sees it: with the tail of the screen output when `job_dir` is
    given, and for free-form inputs (a user's own files, repaired by line actions) the text of the
    input files, so a line can be quoted exactly."""
    parts = [diagnosis_text]
    tail = output_tail(job_dir)
    if tail and tail not in diagnosis_text:
        parts.append(f"last output lines:\n{tail}")
    if not free_form or not job.inputs:
        return "\n".join(parts)
    parts.append("input files (line actions must quote a line exactly):")
    for name, text in job.inputs.items():
        if len(text) > MAX_INPUT_CHARS_FOR_REPAIR:
            text = text[:MAX_INPUT_CHARS_FOR_REPAIR] + "\n[... cut ...]"
        parts.append(f"--- file: {name} ---\n{text.rstrip()}")
    return "\n".join(parts)


def backend_diagnosis(backend, job: Job, diagnosis_text: str, protocol: str, params: dict, schema: dict,
                      log: CorrectionLog, job_dir: Path | None = None) -> Diagnosis:
    """Ask the decision backend (expert rules or an LLM) for one repair of a job no handler fixed.

    Protocol jobs get parameter actions; free-form jobs (protocol `user/...`) may also get line
    actions, which are tried on the job's inputs here so an answer that quotes a line that is not
    in the file is reported as such instead of being planned. A repair from an LLM is flagged
    `needs_review` (review mode shows it as a diff before it runs)."""
    blocked = log.allows(job.id)
    if blocked:
        return Diagnosis(job=job.id, errors=[diagnosis_text], handler=f"{backend.name} repair", blocked=blocked)
    free_form = protocol.startswith("user")
    # the expert's rules read the diagnosis alone (keywords in a screen output could misfire them)
    shown_dir = None if backend.name == "expert" else job_dir
    answer = backend.repair(repair_request(job, diagnosis_text, free_form, shown_dir), protocol, params, schema)
    name = backend.name  # after the call: the hybrid backend names who decided
    actions = repair_action_to_actions(answer, job)
    reason = f"{diagnosis_text} ({answer.reason})" if answer.reason else diagnosis_text
    errors = [reason]
    file_actions = [a for a in actions if not is_param_action(a)]
    if file_actions and not free_form:
        errors.append(f"{name} proposed an input edit ({answer.action}) but protocol jobs are repaired "
                      "through their parameters")
        actions = []
    elif file_actions:
        try:
            apply_actions(job, file_actions)
        except InputError as err:
            errors.append(f"the proposed {answer.action} does not apply: {err}")
            actions = []
    return Diagnosis(job=job.id, errors=errors, handler=f"{name} repair", category="backend",
                     actions=actions, needs_review=bool(actions) and not rule_based(name))
