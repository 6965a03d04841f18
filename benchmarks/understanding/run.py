"""Understanding benchmark: how well a decision backend reads requests into TaskSpecs.

    .venv/bin/python benchmarks/understanding/run.py --backend expert
    .venv/bin/python benchmarks/understanding/run.py --backend local --model 0.5b [--limit 20]
    .venv/bin/python benchmarks/understanding/run.py --backend hybrid --model 1.5b
    .venv/bin/python benchmarks/understanding/run.py --summary   # one table from all results

The requests and their expected readings (requests.jsonl) were written by hand from the request
text. Fields an entry does not list are expected empty (no temperature, no elements, engine
lammps, no last-step property...); fields in its "skip" list are not scored. Quantities are
compared after conversion to canonical units (simagent.units: K, bar, g/cm^3; 'reduced' as is)
within 0.5 %. A request counts as asking the user when the spec lists gaps (`missing`) or the
backend raised a request error (the user is told what to write). Results go to results/ as JSON
(every request, the spec, the score) and a markdown table.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from simagent.backends.expert import vocabulary as vocab  # noqa: E402
from simagent.capabilities import needed  # noqa: E402
from simagent.config import Settings  # noqa: E402
from simagent.errors import SimagentError  # noqa: E402
from simagent.models import Quantity, TaskSpec  # noqa: E402
from simagent.units import REDUCED, to_canonical  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE / "requests.jsonl"
RESULTS = HERE / "results"
MODELS = {"0.5b": "qwen2.5-coder-0.5b", "1.5b": "qwen2.5-coder-1.5b"}
FIELDS = ["kind", "elements", "name", "properties", "temperature", "pressure", "density",
          "potential_family", "engine", "last_step", "unsupported"]
DIMENSIONS = {"temperature": "temperature", "pressure": "pressure", "density": "density"}
REL_TOL = 5e-3
EAM_FAMILY = {"eam", "eam/alloy", "eam/fs"}


def load_requests(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------


def _canonical(q: Quantity | dict | None, dim: str) -> tuple[float, str] | None:
    if q is None:
        return None
    if isinstance(q, dict):
        q = Quantity(**q)
    if q.unit == REDUCED:
        return (q.value, REDUCED)
    try:
        c = to_canonical(q, dim)
    except SimagentError:
        return (q.value, f"?{q.unit}")
    return (c.value, c.unit)


def _same_quantity(a: tuple[float, str] | None, b: tuple[float, str] | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a[1] == b[1] and abs(a[0] - b[0]) <= max(REL_TOL * abs(b[0]), 1e-6)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def predicted_fields(spec: TaskSpec | None) -> dict[str, Any]:
    if spec is None:
        return {}
    system = spec.system
    pot = spec.potential
    return {
        "kind": system.kind if system else None,
        "elements": sorted(system.elements) if system else [],
        "name": " ".join(filter(None, [system.name, system.structure or "", system.molecule or ""]
                                + [n for n, s in vocab.ELEMENT_NAMES.items() if s in system.elements]))
        if system else "",
        "properties": sorted({p.name for p in spec.properties}),
        "temperature": _canonical(spec.conditions.temperature, "temperature"),
        "pressure": _canonical(spec.conditions.pressure, "pressure"),
        "density": _canonical(spec.conditions.density, "density"),
        "potential_family": pot.family if pot else None,
        "engine": spec.engine,
        "last_step": any(p.at == "last_step" for p in spec.properties),
        "unsupported": sorted(needed(spec)),
    }


def score(entry: dict[str, Any], spec: TaskSpec | None, error: str | None) -> dict[str, bool]:
    """field -> correct, for the fields this entry scores."""
    expect = entry.get("expect", {})
    skip = set(entry.get("skip", []))
    refused = sorted(set(entry.get("expect_unsupported", [])))
    if refused:  # a refused request is scored on what it must refuse and the fields it lists
        skip |= {f for f in FIELDS if f not in expect and f != "unsupported"}
        if "potential_family" in expect:
            skip.discard("potential_family")
    got = predicted_fields(spec)
    out: dict[str, bool] = {}
    for field in FIELDS:
        if field in skip or (field == "name" and "name" not in expect):
            continue
        if field == "unsupported":
            out[field] = got.get("unsupported", []) == refused if spec is not None else False
            continue
        if spec is None:
            out[field] = False
            continue
        if field == "kind":
            out[field] = got["kind"] == expect.get("kind")
        elif field == "elements":
            out[field] = got["elements"] == sorted(expect.get("elements", []))
        elif field == "name":
            out[field] = _norm(expect["name"]) in _norm(got["name"])
        elif field == "properties":
            out[field] = got["properties"] == sorted(set(expect.get("properties", [])))
        elif field in DIMENSIONS:
            want = expect.get(field)
            out[field] = _same_quantity(got[field], _canonical(want, DIMENSIONS[field]) if want else None)
        elif field == "potential_family":
            want = expect.get("potential_family")
            have = got["potential_family"]
            out[field] = have == want or (want == "eam" and have in EAM_FAMILY)
        elif field == "engine":
            out[field] = got["engine"] == expect.get("engine", "lammps")
        elif field == "last_step":
            out[field] = got["last_step"] == bool(expect.get("last_step", False))
    return out


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


def make_backend(name: str, model: str, threshold: float | None):
    settings = Settings(backend=name, model_name=MODELS.get(model, model), llm_timeout_s=600)
    if threshold is not None:
        settings = settings.model_copy(update={"hybrid_threshold": threshold})
    if name == "expert":
        from simagent.backends.expert import ExpertBackend

        return ExpertBackend()
    if name == "local":
        from simagent.backends.local import LocalBackend

        return LocalBackend(settings)
    if name == "hybrid":
        from simagent.backends.hybrid import HybridBackend

        return HybridBackend(settings)
    raise SystemExit(f"unknown backend {name!r}")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _expert_fields(backend, entry: dict[str, Any]) -> dict[str, bool] | None:
    """The score of the hybrid's own rules on this request (None for other backends), so a run
    shows whether the LLM changed any score."""
    expert = getattr(backend, "expert", None)
    if expert is None:
        return None
    try:
        return score(entry, expert.task_spec(entry["request"]), None)
    except SimagentError as err:
        return score(entry, None, str(err))


def _llm_latency(backend, routes_before: int) -> float | None:
    """Seconds the LLM took on the last request (None: the request was not routed to it)."""
    routes = getattr(backend, "routes", None)
    if not routes or len(routes) <= routes_before:
        return None
    latency = routes[-1].llm_latency_s
    return None if latency is None else round(latency, 3)


def run(backend_name: str, model: str, limit: int | None, threshold: float | None,
        only: str | None, label: str | None, every: int | None = None,
        split: str = "all", resume: bool = False) -> dict[str, Any]:
    """Run the requests and write results/<label>.json after every request (`"partial": true`
    until the last), so an interrupted run still has figures; `resume` keeps the records of an
    earlier partial file and runs only the requests it lacks."""
    entries = load_requests()
    if split != "all":
        entries = [e for e in entries if e.get("split") == split]
    if only:
        entries = [e for e in entries if re.search(only, e["id"]) or re.search(only, e["category"])]
    if every and every > 1:
        entries = entries[::every]
    if limit:
        entries = entries[:limit]
    name = label or (backend_name if backend_name == "expert" else f"{backend_name}-{model}")
    if split != "all" and not label:
        name += f"-{split}"
    wanted = {e["id"] for e in entries}
    records: list[dict[str, Any]] = []
    if resume and (RESULTS / f"{name}.json").exists():
        records = [r for r in json.loads((RESULTS / f"{name}.json").read_text())["records"] if r["id"] in wanted]
    done = {r["id"] for r in records}
    started = time.perf_counter()
    backend = make_backend(backend_name, model, threshold)
    startup_s = time.perf_counter() - started
    meta = {"backend": backend_name, "model": None if backend_name == "expert" else MODELS.get(model, model),
            "label": name, "threshold": getattr(backend, "threshold", None), "startup_s": round(startup_s, 2),
            "planned": len(entries)}
    RESULTS.mkdir(parents=True, exist_ok=True)

    def write(partial: bool) -> dict[str, Any]:
        result = {**meta, "partial": partial, "summary": summarize(records), "records": records}
        (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1))
        (RESULTS / f"{name}.md").write_text(markdown([result]))
        return result

    try:
        for i, entry in enumerate(entries, 1):
            if entry["id"] in done:
                continue
            routes_before = len(getattr(backend, "routes", []) or [])
            began = time.perf_counter()
            spec: TaskSpec | None = None
            error = None
            try:
                spec = backend.task_spec(entry["request"])
            except SimagentError as err:
                error = str(err)
            latency = time.perf_counter() - began
            llm_latency = _llm_latency(backend, routes_before)
            fields = score(entry, spec, error)
            asked = error is not None or bool(spec and spec.missing)
            record = {
                "id": entry["id"],
                "category": entry["category"],
                "split": entry.get("split"),
                "style": entry.get("style"),
                "request": entry["request"],
                "latency_s": round(latency, 3),
                "llm_latency_s": llm_latency,
                "decider": getattr(backend, "last_decider", backend_name),
                "route": getattr(backend, "last_detail", ""),
                "error": error,
                "asked": asked,
                "expect_clarification": bool(entry.get("expect_clarification", False)),
                "fields": fields,
                "expert_fields": _expert_fields(backend, entry),
                "spec": spec.model_dump(mode="json", exclude_defaults=True) if spec else None,
            }
            records.append(record)
            write(partial=True)
            wrong = [f for f, ok in fields.items() if not ok]
            print(f"[{i}/{len(entries)}] {entry['id']:<10} {latency:6.2f} s  {record['decider']:<7} "
                  f"{'ok' if not wrong else 'wrong: ' + ', '.join(wrong)}", flush=True)
    finally:
        close = getattr(backend, "close", None)
        if callable(close):
            close()
    return write(partial=len(records) < len(entries))


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    accuracy = {}
    for field in FIELDS:
        scored = [r["fields"][field] for r in records if field in r["fields"]]
        accuracy[field] = {"correct": sum(scored), "n": len(scored)}
    tp = sum(1 for r in records if r["asked"] and r["expect_clarification"])
    fp = sum(1 for r in records if r["asked"] and not r["expect_clarification"])
    fn = sum(1 for r in records if not r["asked"] and r["expect_clarification"])
    latencies = [r["latency_s"] for r in records]
    all_ok = sum(1 for r in records if all(r["fields"].values()))
    llm = sum(1 for r in records if r["decider"] not in ("expert",))
    by_split = {}
    for split in ("dev", "test"):
        part = [r for r in records if r.get("split") == split]
        by_split[split] = {"n": len(part), "all_fields_correct": sum(1 for r in part if all(r["fields"].values()))}
    llm_latencies = [r["llm_latency_s"] for r in records if r.get("llm_latency_s") is not None]
    changed = [r["id"] for r in records if r.get("expert_fields") is not None
               and all(r["fields"].values()) != all(r["expert_fields"].values())]
    return {
        "by_split": by_split,
        "routed_to_llm": len(llm_latencies),
        "llm_latency_s": {"median": statistics.median(llm_latencies) if llm_latencies else None,
                          "max": max(llm_latencies) if llm_latencies else None},
        "llm_changed_all_fields_correct": changed,
        "n": len(records),
        "accuracy": accuracy,
        "all_fields_correct": all_ok,
        "clarification": {"tp": tp, "fp": fp, "fn": fn,
                          "precision": tp / (tp + fp) if tp + fp else None,
                          "recall": tp / (tp + fn) if tp + fn else None},
        "errors": sum(1 for r in records if r["error"]),
        "latency_s": {"median": statistics.median(latencies) if latencies else None,
                      "p90": percentile(latencies, 0.9), "total": round(sum(latencies), 2)},
        "decided_by_llm": llm,
    }


def _pct(c: dict[str, int]) -> str:
    return f"{100 * c['correct'] / c['n']:.1f}" if c["n"] else "-"


def markdown(results: list[dict[str, Any]]) -> str:
    head = ["field"] + [r["label"] for r in results]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for field in FIELDS:
        lines.append("| " + " | ".join([field] + [_pct(r["summary"]["accuracy"][field]) for r in results]) + " |")
    def row(label: str, fn) -> None:
        lines.append("| " + " | ".join([label] + [fn(r["summary"]) for r in results]) + " |")
    row("all fields correct (%)", lambda s: f"{100 * s['all_fields_correct'] / s['n']:.1f}" if s["n"] else "-")
    def split_row(s: dict, split: str) -> str:
        part = s.get("by_split", {}).get(split, {})
        return f"{100 * part['all_fields_correct'] / part['n']:.1f} ({part['n']})" if part.get("n") else "-"

    for split in ("dev", "test"):
        row(f"all fields correct, {split} split (%)", lambda s, split=split: split_row(s, split))
    row("clarification precision", lambda s: _fmt(s["clarification"]["precision"]))
    row("clarification recall", lambda s: _fmt(s["clarification"]["recall"]))
    row("request errors", lambda s: str(s["errors"]))
    row("routed to the LLM", lambda s: str(s.get("routed_to_llm", "-")))
    row("decided by the LLM", lambda s: str(s["decided_by_llm"]))
    row("LLM latency median / max (s)", lambda s: "-" if not s.get("llm_latency_s", {}).get("median")
        else f"{s['llm_latency_s']['median']:.1f} / {s['llm_latency_s']['max']:.1f}")
    row("LLM changed all-fields-correct", lambda s: ", ".join(s.get("llm_changed_all_fields_correct", [])) or "-"
        if "llm_changed_all_fields_correct" in s else "-")
    row("latency median (s)", lambda s: _fmt(s["latency_s"]["median"], 3))
    row("latency p90 (s)", lambda s: _fmt(s["latency_s"]["p90"], 3))
    row("requests", lambda s: str(s["n"]))
    notes = [f"- {r['label']}: model {r['model'] or '-'}, threshold {r['threshold']}, start-up {r['startup_s']} s"
             + (f"; PARTIAL: {r['summary']['n']} of {r['planned']} requests" if r.get("partial") else "")
             for r in results]
    return ("Field accuracy in % (requests with that field scored). Latency per request on this machine.\n\n"
            + "\n".join(lines) + "\n\n" + "\n".join(notes) + "\n")


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def combined() -> str:
    """One table over all result files, and one over the requests every file has (local runs on
    a busy machine may cover a subset, e.g. --every 3), so backends are compared like for like."""
    order = ["expert", "local-0.5b", "local-1.5b", "hybrid-0.5b", "hybrid-1.5b"]
    found = {p.stem: json.loads(p.read_text()) for p in RESULTS.glob("*.json") if p.stem != "summary"}
    results = [found[k] for k in order if k in found] + [v for k, v in sorted(found.items()) if k not in order]
    text = "## All requests each backend ran\n\n" + markdown(results)
    common = set.intersection(*[{r["id"] for r in res["records"]} for res in results]) if results else set()
    if results and any(len(res["records"]) != len(common) for res in results):
        subset = []
        for res in results:
            records = [r for r in res["records"] if r["id"] in common]
            subset.append({**res, "summary": summarize(records)})
        text += f"\n## The {len(common)} requests all backends ran\n\n" + markdown(subset)
    (RESULTS / "summary.md").write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["expert", "local", "hybrid"], default="expert")
    parser.add_argument("--model", default="0.5b", help="0.5b | 1.5b (local and hybrid)")
    parser.add_argument("--limit", type=int, default=None, help="first N requests only")
    parser.add_argument("--every", type=int, default=None, help="every K-th request (a spread-out subset)")
    parser.add_argument("--only", default=None, help="regex on id or category")
    parser.add_argument("--threshold", type=float, default=None, help="hybrid routing threshold")
    parser.add_argument("--label", default=None, help="result file name (default backend-model)")
    parser.add_argument("--split", choices=["all", "dev", "test"], default="all",
                        help="the frozen split to run (see README: the test split is never tuned to)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the records of an earlier (partial) result file and run the rest")
    parser.add_argument("--summary", action="store_true", help="combine results/*.json into summary.md")
    args = parser.parse_args()
    if args.summary:
        print(combined())
        return
    result = run(args.backend, args.model, args.limit, args.threshold, args.only, args.label, args.every,
                 args.split, args.resume)
    print(markdown([result]))


if __name__ == "__main__":
    main()
