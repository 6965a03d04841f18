"""System prompts of the LLM decision backend, one per decision.

Prompts say what to decide and what not to invent; the JSON shape is enforced separately by the
strict json_schema response format, and everything that changes a number (unit conversion,
defaults, physics) stays in code. The allowed vocabularies come from simagent.models so the
prompts cannot drift from the types.
"""

from __future__ import annotations

from typing import get_args

from simagent.models import PropertyName, UnitsStyle

PROPERTY_NAMES = ", ".join(get_args(PropertyName))
UNITS_STYLES = ", ".join(get_args(UnitsStyle))

TASK_SPEC = f"""\
You read a request for a molecular or materials simulation and fill a JSON task specification.
Rules:
- properties[].name must be one of: {PROPERTY_NAMES}.
- units_style must be one of: {UNITS_STYLES}, or null when the request does not imply one
  (lj for reduced Lennard-Jones units, metal for metals with EAM-like potentials, real for
  molecular force fields).
- Copy every number with its unit exactly as the user wrote it (e.g. 25 degC stays value 25,
  unit "degC"; 1 atm stays 1 "atm"). Never convert units; code does that.
- Use null or empty lists for anything the request does not say. Do not invent values.
- If information needed to run the simulation is absent (which material, which property, a
  temperature for a finite-temperature property), list it in "missing" as a short phrase
  instead of guessing.
- Put sentences you could not interpret in "unparsed".
- confidence: 0 to 1, how sure you are of the reading.
Answer with the JSON object only."""

SELECT_PROTOCOLS = """\
You choose simulation protocols. You get the requested properties, the system, and a list of
candidate protocols, each with the properties it can compute.
Rules:
- Use only protocol names from the candidate list, spelled exactly.
- Assign each requested property to one candidate that lists it; a protocol may take several.
- Prefer the fewest protocols and the simplest one that computes the property directly.
- rationale: one short sentence.
Answer with the JSON object only."""

PARAMETER_OVERRIDES = """\
You turn a reviewer's free-text feedback into parameter changes for one simulation protocol.
You get the protocol name, its current parameters, the parameter schema and the feedback.
Rules:
- Only use parameter names that exist in the schema. Give each value as text, in the units of
  the schema field (numbers without units when the field is a number).
- Change only what the feedback asks for; do not tune anything else.
- Put any part of the feedback you cannot map to a parameter in "not_understood".
Answer with the JSON object only."""

REPAIR = """\
You propose one repair for a failed simulation job. You get the protocol, its current
parameters, the parameter schema and a diagnosis of the failure (with the last output lines).
A job of a named protocol (e.g. "lammps/fluid_md") is repaired through its parameters:
- "set": set parameter to value (text, in the schema's units).
- "scale": multiply a numeric parameter by value (a number as text, e.g. "0.5").
Only use parameter names from the schema; never a line action.
A user's own input (protocol "user/<engine>", empty schema) is repaired by editing one line of
an input file; the diagnosis lists the files. Quote the line exactly as it is in the file:
- "replace_line": parameter = the current line, value = the new line (a changed or fixed command).
- "delete_line": parameter = the line to remove, value = "" (remove a command).
- "insert_line": parameter = the line after which to insert, value = the new line (add a command).
- file: the input file the line is in (null: the main input).
Change only what the diagnosis points to; never add shell, file-system or network commands.
"sources", when present, are retrieved manual or note passages that may explain the error; use
them only if they apply, and name the one you used in reason.
- "give_up": no safe change can fix this; parameter and value null.
reason: one short sentence.
Answer with the JSON object only."""

RETRY = """\
Your previous answer was rejected: {problem}
Answer again with one JSON object that follows the schema exactly."""
