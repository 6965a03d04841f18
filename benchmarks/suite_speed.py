"""Is the test suite slower than before? Compares two pytest runs by their own per-test durations.

Run the fast suite of two checkouts at the same time, so the machine's load falls on both alike:

    PYTHONPATH=<checkout> /usr/bin/time -v -o <tag>.time nice -n 10 python -m pytest -m "not slow" -q \\
        -p no:cacheprovider --durations=0 --durations-min=0 > <tag>.log 2>&1

then compare the two reports:

    python benchmarks/suite_speed.py before.log after.log [--time before.time after.time] \\
        [--exclude PATTERN ...] [--unchanged-in BEFORE_DIR AFTER_DIR] [--markdown out.md]

The figure that answers the question is the sum of setup + call + teardown over the test ids that
both runs ran (a `call` phase in both) and passed in both: the same tests, the same assertions. Tests
only one run has (added or removed since) are counted apart. Tests whose id contains an --exclude
pattern (statistically flaky ones) are left out of both sides; with --unchanged-in, so are the tests of
every test file whose text differs between the two checkouts (their assertions may differ). Wall and
CPU time of the whole run come from `/usr/bin/time -v` when given. Timing is only comparable between
runs made under the same load.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)s (setup|call|teardown)\s+(\S.*)$")
_OUTCOME = re.compile(r"^(FAILED|ERROR) (\S+?)(?: - .*)?$")
_SUMMARY = re.compile(r"^=*\s*(\d+ (?:passed|failed).*) in ([\d.]+)s")


@dataclass
class Report:
    """One pytest run: per-test phase durations, failed/errored ids, pytest's own summary line."""

    phases: dict[str, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))
    bad: set[str] = field(default_factory=set)
    summary: str = ""
    pytest_s: float | None = None

    def total(self, test: str) -> float:
        return sum(self.phases[test].values())

    def ran(self) -> set[str]:
        return {t for t, p in self.phases.items() if "call" in p}


def read_report(path: Path) -> Report:
    report = Report()
    for line in path.read_text(errors="replace").splitlines():
        found = _DURATION.match(line)
        if found:
            seconds, phase, test = found.groups()
            report.phases[test.strip()][phase] = float(seconds)
            continue
        found = _OUTCOME.match(line)
        if found:
            report.bad.add(found.group(2))
            continue
        found = _SUMMARY.match(line)
        if found:
            report.summary, report.pytest_s = found.group(1).strip(" ="), float(found.group(2))
    if not report.phases:
        raise SystemExit(f"{path}: no per-test durations (run pytest with --durations=0 --durations-min=0)")
    return report


def read_time(path: Path) -> dict[str, float]:
    """Wall, user and system seconds and peak memory from a `/usr/bin/time -v` report."""
    text = path.read_text(errors="replace")

    def number(label: str) -> float:
        found = re.search(rf"{re.escape(label)}:\s*([\d.:]+)", text)
        if not found:
            raise SystemExit(f"{path}: no '{label}' (not a /usr/bin/time -v report?)")
        value = found.group(1)
        if ":" in value:  # [h:]mm:ss.ss
            parts = [float(p) for p in value.split(":")]
            return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
        return float(value)

    return {"wall_s": number("Elapsed (wall clock) time (h:mm:ss or m:ss)"), "user_s": number("User time (seconds)"),
            "sys_s": number("System time (seconds)"), "max_rss_mb": number("Maximum resident set size (kbytes)") / 1024}


def changed_files(before: Path, after: Path, tests: set[str]) -> set[str]:
    """The test files (of these test ids) whose text differs between two checkouts."""
    files = {t.split("::")[0] for t in tests}

    def text(root: Path, name: str) -> bytes | None:
        return (root / name).read_bytes() if (root / name).is_file() else None

    return {f for f in files if text(before, f) != text(after, f)}


def compare(before: Report, after: Report, exclude: list[str], skip_files: set[str] = frozenset()) -> dict:
    def excluded(test: str) -> bool:
        return any(pattern in test for pattern in exclude) or test.split("::")[0] in skip_files

    both = before.ran() & after.ran()
    common = sorted(t for t in both if t not in before.bad | after.bad and not excluded(t))
    dropped = sorted(t for t in both if t not in common)
    sum_before = sum(before.total(t) for t in common)
    sum_after = sum(after.total(t) for t in common)
    per_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for test in common:
        per_file[test.split("::")[0]][0] += before.total(test)
        per_file[test.split("::")[0]][1] += after.total(test)
    only_before = sorted(before.ran() - after.ran())
    only_after = sorted(after.ran() - before.ran())
    return {"common": common, "dropped": dropped, "sum_before": sum_before, "sum_after": sum_after,
            "per_file": dict(per_file), "only_before": only_before, "only_after": only_after,
            "only_before_s": sum(before.total(t) for t in only_before),
            "only_after_s": sum(after.total(t) for t in only_after)}


def _ratio(after: float, before: float) -> str:
    return f"{after / before:.3f}" if before else "-"


def markdown(before: Report, after: Report, result: dict, times: tuple[dict, dict] | None, names: tuple[str, str],
             top: int = 10) -> str:
    b, a = result["sum_before"], result["sum_after"]
    lines = [f"| | {names[0]} | {names[1]} | after/before |", "|---|---|---|---|",
             f"| tests both ran and passed ({len(result['common'])}), sum of durations | {b:.1f} s | {a:.1f} s "
             f"| {_ratio(a, b)} |",
             f"| tests only one side ran | {len(result['only_before'])} ({result['only_before_s']:.1f} s) "
             f"| {len(result['only_after'])} ({result['only_after_s']:.1f} s) | |",
             f"| pytest's summary | {before.summary} in {before.pytest_s} s "
             f"| {after.summary} in {after.pytest_s} s | |"]
    if times:
        tb, ta = times
        cpu_b, cpu_a = tb["user_s"] + tb["sys_s"], ta["user_s"] + ta["sys_s"]
        wall_b, wall_a = tb["wall_s"], ta["wall_s"]
        lines += [f"| whole run, wall | {wall_b:.0f} s | {wall_a:.0f} s | {_ratio(wall_a, wall_b)} |",
                  f"| whole run, CPU user+sys | {cpu_b:.0f} s | {cpu_a:.0f} s | {_ratio(cpu_a, cpu_b)} |",
                  f"| peak memory (one process) | {tb['max_rss_mb']:.0f} MB | {ta['max_rss_mb']:.0f} MB | |"]
    if result["dropped"]:
        shown = ", ".join(result["dropped"][:12]) + (f" and {len(result['dropped']) - 12} more"
                                                      if len(result["dropped"]) > 12 else "")
        lines += ["", f"Left out of the common set ({len(result['dropped'])}: failed on a side, --exclude, or in a "
                      f"changed test file): {shown}"]
    moved = sorted(result["per_file"].items(), key=lambda kv: -abs(kv[1][1] - kv[1][0]))[:top]
    lines += ["", f"Largest per-file changes over the common tests (top {top}):", "",
              "| file | before (s) | after (s) | change (s) |", "|---|---|---|---|"]
    lines += [f"| {f} | {x:.1f} | {y:.1f} | {y - x:+.1f} |" for f, (x, y) in moved]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--time", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                        help="the two runs' /usr/bin/time -v reports")
    parser.add_argument("--exclude", nargs="*", default=[], help="leave tests whose id contains this out")
    parser.add_argument("--unchanged-in", nargs=2, type=Path, metavar=("BEFORE_DIR", "AFTER_DIR"),
                        help="keep only tests whose test file is the same text in these two checkouts")
    parser.add_argument("--names", nargs=2, default=("before", "after"))
    parser.add_argument("--markdown", type=Path, help="write the table here as well")
    args = parser.parse_args(argv)
    before, after = read_report(args.before), read_report(args.after)
    times = (read_time(args.time[0]), read_time(args.time[1])) if args.time else None
    skip = changed_files(*args.unchanged_in, before.ran() | after.ran()) if args.unchanged_in else set()
    text = markdown(before, after, compare(before, after, args.exclude, skip), times, tuple(args.names))
    print(text, end="")
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
