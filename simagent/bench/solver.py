"""Child process of the `simagent` bench agent: `simagent.solve` with the harness's budget.

    python -m simagent.bench.solver task.json --workdir DIR --budget SECONDS [--data-root D] [--backend B]

The budget replaces the harness's (300 s + time_limit) so that the solver finishes (and writes
final_answer.json) a little inside the harness's own limit. Graph stages and job events go to stderr as
`BENCH-STEP {json}` lines, which the harness copies into trajectory_log.jsonl.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from simagent.bench.agents import STEP_PREFIX


def _report(event: str, info: dict) -> None:
    step = {"event": event, **{k: v for k, v in info.items() if isinstance(v, str | int | float | bool) or v is None}}
    print(STEP_PREFIX + json.dumps(step, default=str), file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", type=Path)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--budget", type=float, required=True, help="seconds for the whole solve")
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--backend", default=None)
    args = parser.parse_args(argv)

    from simagent.errors import SimagentError
    from simagent.solve import solve, solve_settings

    try:
        outcome = solve(args.task, args.workdir, args.data_root, solve_settings(args.backend),
                        budget_s=args.budget, progress=_report)
    except SimagentError as err:
        print(f"error: {err}", file=sys.stderr)
        return getattr(err, "exit_code", 1)
    print(json.dumps(outcome.summary()))
    return outcome.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
