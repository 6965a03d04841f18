"""Literature values from the user's own corpus beside a computed answer, for comparison.

After a run has answered, the user's index (their papers, `simagent rag add`) is searched for the
property and the material. A passage contributes a value only when all of these hold:
- its cosine similarity to the query reaches the relevance threshold;
- it names the material (the system's name, or the molecule of a molecular fluid) and every guest
  species (a formula or its name: CH4 / methane), in its text, section or document title;
- one of its sentences names the property, names no other framework-like material (ZIF-8 in a
  paper on IRMOF-1), and quotes a number with a unit of the property's dimension (a diffusion
  coefficient in m2/s, cm^2 s-1, 10^-9 m^2/s ...; an activation energy in kJ/mol next to
  "diffusion" is not one).
The value is kept as quoted, converted to the result's unit for reading, cited, and listed apart from
the computed numbers (Answer.literature, a labelled paragraph of the summary): it is never a result.
Without a user index nothing is searched (and no model is loaded)."""

from __future__ import annotations

import logging
import re

from simagent import units
from simagent.errors import SimagentError
from simagent.knowledge import answer as cited
from simagent.knowledge import library
from simagent.knowledge.documents import Hit
from simagent.models import Answer, LiteratureValue, Result, SystemSpec, TaskSpec

log = logging.getLogger(__name__)

PER_RESULT = 3  # literature values listed per computed number
SEARCH_K = 10
HEADER = "Literature (from your corpus; quoted, not computed by simagent, for comparison only):"

# words of a property name that do not say which property it is
_GENERIC = frozenset({"self", "coefficient", "constant", "value", "total", "per", "atom", "first", "peak"})
# words of a system name that do not name the material
_NOT_A_NAME = frozenset({"fcc", "bcc", "hcp", "sc", "diamond", "bulk", "crystal", "crystalline", "solid", "liquid",
                         "gas", "fluid", "the", "a", "an", "of", "pure", "model", "system", "in", "and"})

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_DASHES = str.maketrans({"−": "-", "–": "-", "‐": "-", "\u2009": " ", "\u00a0": " ", "·": "x", "×": "x"})
_NUMBER = re.compile(
    r"(?<![\w.\-^])\(?(?P<mantissa>[-+]?\d+(?:\.\d+)?)"
    r"(?:\s*(?:±|\+/-|\+-)\s*\d+(?:\.\d+)?)?\)?"
    r"(?:\s*[eE](?P<e1>[-+]?\d+)|\s*[x*]\s*10\s*\^?\s*\(?(?P<e2>[-+]?\s*\d+)\)?)?"
    r"\s*(?P<rest>[^\s,;()]+(?:\s+[^\s,;()]+){0,2})")
_PER = re.compile(r"^(?P<base>[A-Za-zÅ]+)\^?(?P<power>-\d)$")  # "s-1", "s^-1", "mol-1", "cm-3"


def _plain(text: str) -> str:
    """ASCII minus signs, 'x' for multiplication, superscripts as ^n ('10⁻⁹' -> '10^-9', 'm²' -> 'm^2')."""
    text = text.translate(_DASHES)
    return re.sub(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+", lambda m: "^" + m.group(0).translate(_SUPERSCRIPT), text)


def read_unit(words: str) -> str | None:
    """The longest unit (up to three words) at the start of `words` that simagent.units knows:
    'm2 s-1 at 298 K' -> 'm2/s', 'g cm-3.' -> 'g/cm3'; None when no known unit starts there."""
    parts = words.split()
    for n in range(min(3, len(parts)), 0, -1):
        pieces = [p.rstrip(".:") for p in parts[:n]]
        joined = pieces[0]
        for piece in pieces[1:]:
            per = _PER.match(piece)
            if per:
                power = per.group("power")[1:]
                joined += "/" + per.group("base") + ("" if power == "1" else power)
            else:
                joined += " " + piece
        for candidate in (joined, joined.replace("^", "")):
            if units.dimension(candidate):
                return candidate
    return None


def quoted_values(sentence: str) -> list[tuple[float, str]]:
    """(value, unit) for every number followed by a known unit in a sentence."""
    found = []
    for match in _NUMBER.finditer(_plain(sentence)):
        unit = read_unit(match.group("rest"))
        if unit is None:
            continue
        exponent = match.group("e1") or match.group("e2")
        value = float(match.group("mantissa") + (f"e{exponent.replace(' ', '')}" if exponent else ""))
        found.append((value, unit))
    return found


def _stems(property_name: str) -> list[str]:
    words = [w for w in re.split(r"[_\s-]+", property_name.lower()) if len(w) >= 4 and w not in _GENERIC]
    return [w[:max(5, len(w) - 3)] for w in words]


def _flexible(name: str) -> re.Pattern[str]:
    """A name matched as a whole word, its parts joined by nothing, a space, '-' or '_' (IRMOF-1, irmof 1)."""
    parts = re.findall(r"[A-Za-z]+|\d+", name)
    return re.compile(r"(?<![A-Za-z0-9])" + r"[\s_-]?".join(map(re.escape, parts)) + r"(?![A-Za-z0-9])",
                      re.IGNORECASE)


def subject_patterns(system: SystemSpec | None) -> list[list[re.Pattern[str]]]:
    """What a passage must name: groups of alternatives, every group matched (material, each guest)."""
    from simagent.backends.expert.domains.frameworks import GUESTS

    if system is None:
        return []
    groups: list[list[re.Pattern[str]]] = []
    name = system.molecule if system.kind == "molecular_fluid" and system.molecule else system.name
    words = [w for w in re.split(r"\s+", name.strip()) if w.lower() not in _NOT_A_NAME]
    if words:
        groups.append([_flexible(" ".join(words))])
    for guest in system.guests:
        aliases = [re.compile(p, re.IGNORECASE) for p, formula in GUESTS.items() if formula == guest]
        groups.append([_flexible(guest), *aliases])
    return groups


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(\[])|\n+", text) if s.strip()]


# a framework-like name: letters, a hyphen, a number (ZIF-8, UiO-66, HKUST-1, MIL-53Al)
_MATERIAL_NAME = re.compile(r"(?<![\w-])[A-Z][A-Za-z]*-\d+[A-Za-z]*(?![\w-])")


def _names_another_material(sentence: str, subject: list[list[re.Pattern[str]]]) -> bool:
    """A sentence of a paper on the material that quotes another one ("for comparison, in ZIF-8 ...")."""
    return any(not any(p.fullmatch(name) for group in subject for p in group)
               for name in _MATERIAL_NAME.findall(sentence))


def values_in(hit: Hit, result: Result, subject: list[list[re.Pattern[str]]]) -> list[tuple[float, str, str]]:
    """(value, unit, sentence) quoted by a passage for a result's property and material."""
    where = " ".join((hit.title, hit.section, hit.text))
    if not subject or not all(any(p.search(where) for p in group) for group in subject):
        return []
    dimension = units.dimension(result.unit)
    stems = _stems(result.property or result.quantity)
    if dimension is None or not stems:
        return []
    out = []
    for sentence in _sentences(hit.text):
        low = sentence.lower()
        if not all(stem in low for stem in stems) or _names_another_material(sentence, subject):
            continue
        out += [(v, u, sentence) for v, u in quoted_values(sentence) if units.dimension(u) == dimension]
    return out


def query(result: Result, system: SystemSpec | None) -> str:
    what = (result.property or result.quantity).replace("_", " ")
    if system is None:
        return what
    guests = " and ".join(system.guests)
    return f"{what} of {guests} in {system.name}" if guests else f"{what} of {system.name}"


def add_literature(reply: Answer, spec: TaskSpec | None, kb: library.KnowledgeBase | None = None) -> Answer:
    """The answer with literature values from the user's corpus added (citations, Answer.literature and
    a labelled paragraph of the summary); unchanged when there is no user index or nothing matches."""
    if reply.status != "answered" or not reply.answers or spec is None:
        return reply
    kb = kb or library.KnowledgeBase({"user": library.user_index_dir()})
    if not kb.usable():  # no corpus: nothing to say; a corpus built under other settings: say so
        notes = "".join(f"\nNote: no literature comparison: {p}." for p in kb.problems())
        return reply.model_copy(update={"summary": reply.summary + notes}) if notes else reply
    subject = subject_patterns(spec.system)
    citations = list(reply.citations)
    keys: dict[tuple[str, str, str], int] = {}
    values: list[LiteratureValue] = []
    for result in reply.answers:
        try:
            hits = kb.search(query(result, spec.system), k=SEARCH_K, kinds={"literature"},
                             min_score=library.RELEVANCE_THRESHOLD)
        except SimagentError as err:  # a broken user index must not lose a computed answer
            log.warning("no literature comparison: %s", err)
            return reply
        seen: set[tuple[float, str]] = set()
        for hit in hits:
            for value, unit, sentence in values_in(hit, result, subject):
                if (value, unit) in seen or len(seen) == PER_RESULT:
                    continue
                seen.add((value, unit))
                place = (hit.source, hit.section, hit.text)
                if place not in keys:
                    keys[place] = len(citations) + 1
                    citations.append(cited.citation(keys[place], hit))
                values.append(LiteratureValue(
                    property=result.quantity, value=value, unit=unit,
                    value_in_result_unit=units.convert(value, unit, result.unit), result_unit=result.unit,
                    quote=" ".join(sentence.split()), citation=keys[place]))
    if not values:
        return reply
    lines = [HEADER]
    for v in values:
        c = citations[v.citation - 1]
        converted = "" if units.normalize_unit(v.unit) == units.normalize_unit(v.result_unit) else \
            f" (= {v.value_in_result_unit:.3g} {v.result_unit})"
        lines.append(f"- {v.property.replace('_', ' ')}: {v.value:.3g} {v.unit}{converted} [{v.citation}] "
                     f"\"{cited.quote(v.quote)}\" ({cited.reference(c)})")
    return reply.model_copy(update={"citations": citations, "literature": values,
                                    "summary": reply.summary + "\n" + "\n".join(lines)})
