"""What a described run executed, for report.md: the typed description field by field.

Each field that the description sets is shown with its value and where it came from (`rules`: the
words the reading rule read; `llm`: the language model's quote; `default`: the value and the
documented reason). Stages are listed in order with their dynamics, deformation or shear and the
origins of their settings; when the rendered input is at hand, each stage also lists the fixes
it ran (read from the input's own `# stage N:` markers). Every origin the description recorded is
shown somewhere, so nothing read or defaulted is hidden.
"""

from __future__ import annotations

import re
from typing import Any

from simagent.described.model import Origin, SimulationDescription, Stage

# top-level fields shown (in this order); the bookkeeping fields are not
FIELDS = ("units", "dimension", "boundary", "atom_style", "atom_types", "lattice", "box", "masses", "pair",
          "potential", "chain", "substitutions", "cavities", "srd", "dipoles", "ellipsoids", "neighbor_skin",
          "neighbor_every", "neighbor_multi", "velocity", "timestep", "respa", "thermo_every", "layout", "pillars",
          "scan", "green_kubo",
          "defect", "stated_atoms", "average_stage", "average_from")
# origin keys recorded under another name than the field they fill
ALIASES = {"at_rest": "layout", "thermostat_group": "layout", "walls": "layout", "indenters": "layout",
           "create_in": "layout", "velocity_add": "layout", "cluster": "layout", "group": "layout",
           "force": "layout", "substitution": "substitutions", "boundary.unstated": "boundary"}
STAGE_KEY = re.compile(r"^(?:run|min|deform)(\d+)(?:\.|$)")


def _present(value: Any) -> bool:
    return value is not None and value != [] and value != {} and value != ""


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_show(v)}" for k, v in value.items() if _present(v)) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _origin(key: str, origin: Origin) -> str:
    if origin.source == "default":
        value, _, reason = origin.evidence.partition(": ")
        return f"{key}: default {value}" + (f" ({reason})" if reason else "")
    return f"{key}: {origin.source} “{origin.evidence}”"


def _owner(key: str) -> str:
    """The top-level field an origin key belongs to ('velocity.seed' -> 'velocity')."""
    if key in ALIASES:
        return ALIASES[key]
    head = key.split(".", 1)[0]
    head = re.sub(r"\d+$", "", head)
    return ALIASES.get(head, head)


def _stage_number(key: str, names: list[str]) -> int | None:
    """The 1-based stage an origin key belongs to: its prefix is the stage's name ('run2.t_damp'),
    or a deformation read for stage N ('deform2')."""
    head = key.split(".", 1)[0]
    if head in names:
        return names.index(head) + 1
    m = STAGE_KEY.match(key)
    return int(m.group(1)) if m else None


def _stage_text(stage: Stage) -> str:
    data = stage.model_dump(mode="json", exclude_none=True, exclude={"name", "evidence", "statement", "kind"})
    for flag in ("reset_timestep", "keep_fixes"):
        if not data.get(flag):
            data.pop(flag, None)
    if stage.msst is not None:  # fix msst integrates the stage: no ensemble of its own
        data.pop("dynamics", None)
    dynamics = data.get("dynamics") or {}
    if dynamics.get("ensemble") not in ("npt", "nph"):
        dynamics.pop("p_coupling", None)  # a barostat's setting, meaningless without one
    if stage.kind == "minimize":
        data.pop("steps", None)
    return ", ".join(f"{k} = {_show(v)}" for k, v in data.items() if _present(v))


def stage_fixes(input_text: str) -> dict[int, list[str]]:
    """Stage number -> the fix lines (style and arguments) the rendered input ran in that stage,
    read between its `# stage N:` markers; fixes set before the first marker belong to stage 1."""
    out: dict[int, list[str]] = {}
    current = 1
    for line in input_text.splitlines():
        m = re.match(r"#\s*stage\s+(\d+):", line)
        if m:
            current = int(m.group(1))
            continue
        words = line.split()
        if len(words) >= 4 and words[0] == "fix":
            out.setdefault(current, []).append(" ".join(words[3:]) + f" on {words[2]}")
    return out


def executed_lines(desc: SimulationDescription, input_text: str | None = None) -> list[str]:
    """Markdown list lines (top level and indented) of the typed description that was run."""
    dump = desc.model_dump(mode="json")
    fields = SimulationDescription.model_fields
    by_field: dict[str, list[str]] = {}
    by_stage: dict[int, list[str]] = {}
    for key, origin in desc.origin.items():
        number = _stage_number(key, [s.name for s in desc.stages])
        if number is not None and 1 <= number <= len(desc.stages):
            by_stage.setdefault(number, []).append(_origin(key, origin))
        else:
            by_field.setdefault(_owner(key), []).append(_origin(key, origin))
    lines = ["- the typed simulation description that was run (each field: value; where it came from: "
             "rules = the words read, llm = the language model's quote, default = the documented reason):"]
    for name in FIELDS:
        value = dump.get(name)
        default = fields[name].get_default(call_default_factory=True)
        if isinstance(default, object) and hasattr(default, "model_dump"):
            default = default.model_dump(mode="json")
        origins = by_field.pop(name, [])
        if (value is None or value == default or value in ([], {})) and not origins:
            continue
        shown = _show(value)
        if name in ("average_stage", "average_from") and isinstance(value, int) and value < len(desc.stages):
            shown = f"{value + 1} ({desc.stages[value].name})"
        where = "; ".join(origins) if origins else "not recorded (the model's default or a renderer's value)"
        lines.append(f"  - {name} = {shown} [{where}]")
    fixes = stage_fixes(input_text) if input_text else {}
    for i, stage in enumerate(desc.stages, start=1):
        text = _stage_text(stage)
        lines.append(f"  - stage {i} ({stage.name}, {stage.kind}): {text}")
        if stage.evidence:
            lines.append(f"    - stated: “{stage.evidence}”")
        for item in by_stage.get(i, []):
            lines.append(f"    - {item}")
        if fixes.get(i):
            lines.append("    - fixes as run: " + "; ".join(fixes[i]))
    for owner, items in by_field.items():  # recorded under a name no field above owns
        lines.append(f"  - other readings ({owner}): " + "; ".join(items))
    return lines
