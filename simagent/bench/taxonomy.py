"""Rule-based failure taxonomy for tasks that did not fully succeed (MDGym's categories).

Rules (several may apply to one task; each finding names its evidence):
* premature_termination: the agent stopped (or was stopped at the budget) without answering any
  metric (no final_answer.json, not a JSON object, or none of the metric names in it), or it
  was stopped at the budget;
* fabricated_answer: the answer gives a value for at least one metric but neither the task's
  folder nor its trajectory log shows one successful engine run (simagent.bench.evidence says
  what counts as one); such an answer scores 0 whatever its values;
* syntax_error: an engine run failed on its input (unknown command or keyword, illegal arguments);
* environment_misunderstanding: an engine run (or the agent) failed on the environment: a missing
  file, program, module, force-field or style that is not installed;
* incorrect_post_processing: at least one engine run succeeded and an answer exists, but a scored
  metric is wrong, missing or not a number.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from simagent.bench.agents import AgentRun
from simagent.bench.evidence import EngineRun
from simagent.bench.validate import Validation

PREMATURE = "premature_termination"
FABRICATED = "fabricated_answer"
SYNTAX = "syntax_error"
ENVIRONMENT = "environment_misunderstanding"
POST_PROCESSING = "incorrect_post_processing"
CATEGORIES = (FABRICATED, SYNTAX, ENVIRONMENT, PREMATURE, POST_PROCESSING)

# Input the engine could not read. LAMMPS: "ERROR: Unknown command", "Illegal ... command";
# GROMACS grompp/mdrun: "Invalid enum", "Unknown left-hand", "Invalid command line argument";
# Python-driven engines (RASPA, Zeo++ workers) and agent scripts: "SyntaxError".
SYNTAX_PATTERNS = [
    r"ERROR[^\n]*Unknown command", r"ERROR[^\n]*Illegal\b", r"\bIllegal [\w/ ]+ command",
    r"Expected (?:integer|floating point)", r"Incorrect args", r"Unknown identifier", r"Invalid [\w ]*keyword",
    r"Invalid enum", r"Unknown left-hand", r"Invalid command[- ]line argument", r"Unknown (?:option|keyword)",
    r"\bSyntaxError\b", r"[Ss]yntax error", r"[Pp]arse error",
]
# The environment was not what the agent assumed.
ENVIRONMENT_PATTERNS = [
    r"No such file or directory", r"[Cc]annot open", r"[Cc]ould not open", r"command not found",
    r"ModuleNotFoundError", r"No module named", r"Permission denied", r"Unrecognized [\w/ ]*style",
    r"Package [\w-]+ (?:is )?not installed", r"File [^\n]{0,200} not found", r"[Ff]ile not found",
    r"EngineNotFound", r"was not found", r"[Ll]ibrary error", r"\bGMXLIB\b",
]


@dataclass
class Finding:
    category: str
    evidence: str


def _match(patterns: list[str], text: str) -> str | None:
    for pattern in patterns:
        hit = re.search(pattern, text)
        if hit:
            start = text.rfind("\n", 0, hit.start()) + 1
            end = text.find("\n", hit.end())
            return text[start:end if end >= 0 else None].strip()[:300]
    return None


def successful_runs(runs: list[EngineRun], logged_runs: list[dict]) -> int:
    """How many successful engine runs the task folder and the trajectory log show."""
    logged = [r for r in logged_runs if r.get("kind") == "engine_run" and r.get("succeeded") is True]
    return max(sum(r.succeeded for r in runs), len(logged))


def fabrication(validation: Validation, runs: list[EngineRun], logged_runs: list[dict]) -> Finding | None:
    """The fabricated-answer rule on its own: checked for every answer, right or wrong, because a
    made-up answer must score 0 even when its numbers happen to be right."""
    if not validation.answered or successful_runs(runs, logged_runs):
        return None
    where = f"{len(runs)} engine run(s), none successful" if runs else "no engine run at all"
    return Finding(FABRICATED, f"an answer without a successful engine run in the task folder or log ({where})")


def classify(validation: Validation, agent_run: AgentRun, runs: list[EngineRun],
             logged_runs: list[dict], agent_errors: str = "") -> list[Finding]:
    """Findings for a task that did not fully succeed; [] for a successful one."""
    fabricated = fabrication(validation, runs, logged_runs)
    if validation.success and fabricated is None:
        return []
    findings: list[Finding] = []
    answered = bool(validation.answered)
    has_ok_run = successful_runs(runs, logged_runs) > 0
    if not answered or agent_run.timed_out:
        if not validation.answer_found:
            what = "no final_answer.json (or not a JSON object); "
        elif not answered:
            what = "final_answer.json answers none of the metrics; "
        else:
            what = ""
        why = f"the agent exited with code {agent_run.exit_code}"
        if agent_run.message:
            why = agent_run.message if agent_run.timed_out else f"{why} ({agent_run.message})"
        findings.append(Finding(PREMATURE, what + why))
    if fabricated is not None:
        findings.append(fabricated)
    failed = [r for r in runs if not r.succeeded]
    for category, patterns, extra in ((SYNTAX, SYNTAX_PATTERNS, ""), (ENVIRONMENT, ENVIRONMENT_PATTERNS, agent_errors)):
        for run in failed:
            line = _match(patterns, run.error_text)
            if line:
                findings.append(Finding(category, f"{run.folder}: {line}"))
                break
        else:
            line = _match(patterns, extra) if extra else None
            if line:
                findings.append(Finding(category, f"agent output: {line}"))
    if answered and has_ok_run:
        wrong = [c for c in validation.scored_checks if not c.passed]
        if wrong:
            detail = ", ".join(f"{c.metric} ({c.note or _off(c)})" for c in wrong)
            findings.append(Finding(POST_PROCESSING, f"a successful run but wrong or missing values: {detail}"))
    return findings


def _off(check) -> str:
    if check.relative_error is None:
        return f"{check.value!r} vs {check.ground_truth!r}"
    return f"{check.value:.6g} vs {check.ground_truth:.6g}, {100 * check.relative_error:.1f} % off"


def as_dicts(findings: list[Finding]) -> list[dict]:
    return [asdict(f) for f in findings]
