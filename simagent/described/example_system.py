"""A described run whose system is an installed LAMMPS example's: its data file, topology and force field.

Many task texts describe a system without giving its atoms ("a solvated 5-mer peptide with a
CHARMM force field, PPPM, SHAKE"), because they retell a LAMMPS example whose atoms, bonds and
force field are in the example's data file. The engine lists its installed examples as
`ExampleSystem`s (simagent.engines: LAMMPS's adapter, `example_systems()`): the example's input
split into the lines that set up the system (units, styles, read_data, coefficients, constraints,
charge equilibration, computes) and the run protocol, which the text decides.

`read_example_system` identifies the one example a text describes, from what the text states, never
from its wording: the units the rules read equal the example's; every style family the text names
(FAMILIES: CHARMM, PPPM, SHAKE, DREIDING hydrogen bonds, ...) is among the example's, and each of the
example's distinctive families is named; stated atom and type counts and box edges agree with its
data file at the precision stated (example_fill.agrees); and every number in the text is either a
run setting the rules read (steps, temperatures, timestep, ...) or one of the example's own numbers.
Anything else stops it, named. One example only; several are refused by name. What the example
covers (bonds, charges, many-body potentials, its atom style) is no longer refused; the run protocol
stays the text's (simagent.described.reading), rendered after the example's lines
(tools.lammps.described).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from simagent.described.example_fill import agrees, decimals

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription


class KeptLine(BaseModel):
    """One command of the example's input that sets up the system, kept as written."""

    text: str
    source: str = Field(description="'in.peptide:12': the example input and line it comes from")
    segment: int = Field(default=0, ge=0, description="the run it precedes: 0 before the first run, k after run k")
    note: str = Field(default="", description="how the line differs from the example's (a style LAMMPS renamed)")


class ExampleSystem(BaseModel):
    """An installed LAMMPS example's system: what its data file holds and the lines that set it up."""

    name: str = Field(description="the example's folder below examples/ ('peptide', 'reaxff/AuO')")
    folder: str = Field(description="where the example is installed")
    input: str = Field(description="the example input the kept lines come from ('in.peptide')")
    title: str = ""
    units: str = "lj"
    dimension: int = 3
    data_file: str
    files: list[str] = Field(default_factory=list, description="files of the folder the kept lines read (data "
                             "file, force fields): copied into the job folder")
    kept: list[KeptLine] = Field(default_factory=list)
    styles: list[str] = Field(default_factory=list, description="'pair lj/charmm/coul/long', 'kspace pppm', "
                              "'fix shake', 'special_bonds fene', ...")
    protocol: list[str] = Field(default_factory=list, description="the example's own run-protocol lines (dropped)")
    runs: int = Field(default=1, ge=0, description="run commands in the example input")
    atoms: int = 0
    bonds: int = 0
    atom_types: int = 0
    atom_style: str = "atomic"
    type_counts: dict[int, int] = Field(default_factory=dict, description="atoms per type in the data file")
    box: list[tuple[float, float]] = Field(default_factory=list)
    velocities: bool = Field(default=False, description="the data file gives velocities")
    masses: dict[int, float] = Field(default_factory=dict, description="type -> mass, the data file's Masses")
    numbers: list[float] = Field(default_factory=list, description="every number of the kept lines, the title "
                                 "and the data file's header")
    thermo_computes: dict[str, str] = Field(default_factory=dict, description="'temp'/'press' -> the compute of the "
                                            "kept lines the example's thermo uses for it (temp/cs of core-shell ions)")
    integrators: dict[str, str] = Field(default_factory=dict, description="ensemble -> the integrator the example's "
                                        "particles need for it ('nve' -> 'nve/body')")
    computes: dict[str, str] = Field(default_factory=dict, description="compute id -> style, of the kept lines")
    restarts: dict[int, int] = Field(default_factory=dict, description="run segment k -> the number of runs whose "
                                     "end state it starts from (the example's own write_restart, clear, read_restart)")
    refused: str | None = Field(default=None, description="why this example cannot be run (shell, loops, ...)")

    def segment(self, k: int) -> list[str]:
        return [line.text for line in self.kept if line.segment == k]

    @property
    def changes_between_runs(self) -> bool:
        """The example sets up more of its system between runs (a pair style swapped after a push-off)."""
        return any(line.segment > 0 for line in self.kept)


@dataclass(frozen=True)
class Family:
    """A style family a text can name: the words (in the normalised text), what it is in the example's
    styles (`styles`, matched against 'kind style' entries), and whether it is distinctive (an example
    that has it is described only by a text that names it)."""

    name: str
    words: str
    styles: str
    distinctive: bool = True


FAMILIES: tuple[Family, ...] = (
    Family("CHARMM", r"\bcharmm\b", r"^(?:pair lj/charmm|angle charmm|dihedral charmm)"),
    Family("CMAP", r"\bcmap\b", r"^fix cmap"),
    Family("PPPM", r"\bpppm\b|particle[- ]particle[- ]particle[- ]mesh", r"^kspace pppm", distinctive=False),
    Family("Ewald", r"\bewald\b", r"^kspace ewald|^pair_style .*\bewald\b", distinctive=False),
    Family("Wolf", r"\bwolf\b", r"^pair \S*wolf|^pair_style .*\bwolf\b", distinctive=False),
    Family("SHAKE", r"\bshake\b", r"^fix shake"),
    Family("RATTLE", r"\brattle\b", r"^fix rattle"),
    Family("DREIDING hydrogen bonds", r"dreiding|hbond", r"^pair hbond/dreiding"),
    Family("core-shell", r"core[- ]shell|adiabatic shell", r"^pair \S+/cs\b|^compute temp/cs"),
    Family("Born-Mayer-Huggins", r"\bborn\b", r"^pair born"),
    Family("Buckingham", r"buckingham|\bbuck\b", r"^pair buck"),
    Family("Streitz-Mintmire", r"streitz", r"^pair coul/streitz"),
    Family("ReaxFF", r"\breax", r"^pair (?:reaxff|reax/c|reax)\b"),
    Family("charge equilibration", r"\bqeq\b|charge equilibration", r"^fix qeq"),
    Family("COMB3", r"\bcomb3\b", r"^pair comb3"),
    Family("COMB", r"(?<![/\w])comb\b(?![3/])", r"^pair comb$"),
    Family("AIREBO", r"airebo", r"^pair airebo"),
    Family("REBO", r"\brebo\b", r"^pair rebo$"),
    Family("Tersoff", r"tersoff", r"^pair tersoff"),
    Family("Stillinger-Weber", r"stillinger|\bsw\b", r"^pair sw\b"),
    Family("EAM", r"\beam\b|embedded[- ]atom", r"^pair eam"),
    Family("MEAM", r"\bmeam\b", r"^pair meam"),
    Family("Morse", r"\bmorse\b", r"^(?:pair|bond) morse|^pair airebo/morse"),
    Family("nb3b", r"\bnb3b\b|non-?bonded three[- ]body", r"^pair nb3b"),
    Family("body particles", r"(?<![-\w])(?<!many )body (?:particles?|atoms?|style)|atom[_ ]style body|\bbody/",
           r"^(?:atom body|pair body)"),
    Family("soft repulsion", r"\bsoft\b[^.;]{0,40}potential|pair[_ ]style soft", r"^pair soft$"),
    Family("FENE", r"\bfene\b", r"^(?:bond fene|special_bonds fene)"),
    Family("rigid bodies", r"\brigid bod|fix rigid", r"^fix rigid"),
    # the relative-resolution LJ model (pair lj/relres): fine-grained sites near, coarse-grained ones far
    Family("relative resolution", r"\brelres\b|relative[- ]resolution", r"^pair lj/relres$"),
    Family("smoothed LJ", r"\blj/smooth\b(?!/)", r"^pair lj/smooth$", distinctive=False),
    Family("Fourier dihedrals", r"\bfourier\b[^.;]{0,20}dihedral|dihedral[_ ]style fourier", r"^dihedral fourier$",
           distinctive=False),
    # not the three-body term of nb3b/harmonic ('a three-body harmonic nb3b potential', 'harmonic nb3b')
    Family("harmonic bonds", r"(?<!nb3b/)(?<!body )(?<!three )\bharmonic\b(?![- ](?:nb3b|three[- ]body|non-?bonded))",
           r"^(?:bond|angle|dihedral|improper) harmonic", distinctive=False),
    Family("Coulomb", r"coulomb|electrostatic|\bcoul/", r"coul|^kspace", distinctive=False),
    Family("hybrid/overlay", r"hybrid[/ ]overlay|overlaid", r"^pair hybrid/overlay$", distinctive=False),
)
# the refusals of simagent.described.reading an example's system settles, and what in the example does
COVERS: dict[str, str] = {
    # bonds: the example's topology, or a reactive potential whose bonds are its own (ReaxFF, COMB, AIREBO)
    "molecular topology (bonds, angles, constraints)": r"^(?:bond|angle|dihedral|improper|fix shake|fix rattle) |"
                                                       r"^pair (?:reaxff|reax/c|comb3?|airebo|rebo|tersoff)\b",
    "electrostatics (coul, kspace)": r"coul|^kspace|^fix qeq|^pair (?:reax|comb|streitz)",
    "a many-body potential": r"^pair (?:airebo|rebo|reaxff|reax/c|comb|comb3|tersoff|sw|eam|meam|nb3b|bop)\b",
    "a many-body potential with charge equilibration (COMB, ReaxFF, Streitz-Mintmire, BOP, SMTBQ)":
        r"^pair (?:reaxff|reax/c|comb|comb3|coul/streitz|bop|smtbq)\b",
    "several atom types or random placement": r"^read_data",
    "replicate": r"^replicate ",
    "an atom style other than atomic": r"^atom ",
}
# what reading.py finds missing that the example's data file and input state
SETTLED_GAPS = re.compile(r"^(?:initial configuration|pair potential|pair cutoff|LJ |atom masses|box size|"
                          r"lattice scale|the number of atoms of type|how many atoms)")
# fields the example's lines set, which the text's reading of them must not render again
_SYSTEM_FIELDS = ("pair", "potential", "masses", "lattice", "box")
# output the text may ask for without it being part of the system ('dump ... every 100 steps')
_OUTPUT = re.compile(r"(?:dump|trajector\w*|output|write|print|log)\w*[^.;]{0,60}?every\s+(\d+)")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![a-z\d])")
_POWER = re.compile(r"\b10\s*\^\s*\{?\s*\(?\s*([-+]?\d+)\s*\)?\s*\}?")
_BOX = re.compile(r"\bbox\b[^.;0-9]{0,30}?\(?\s*(\d+(?:\.\d+)?)\s*(?:x|\*|by)\s*(\d+(?:\.\d+)?)"
                  r"(?:\s*(?:x|\*|by)\s*(\d+(?:\.\d+)?))?")
_ATOMS = re.compile(r"(?<![\w.-])(\d+)[- ](?:atoms?|particles?)\b(?! (?:types?|pairs?)\b)")
_COUNT_WORD = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
_TYPES = re.compile(rf"\b{_COUNT_WORD} (?:different |distinct )?(?:atoms?|particles?|beads?) types\b|"
                    rf"\b{_COUNT_WORD} types of (?:atoms|particles|beads)\b")
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
          "ten": 10}


def catalogue() -> list[ExampleSystem]:
    """The installed examples' systems (empty without LAMMPS or its examples)."""
    from simagent.engines import get_engine

    try:
        return list(get_engine("lammps").example_systems())
    except (ImportError, OSError, ValueError, KeyError):
        return []


def _settings(example: ExampleSystem) -> list[str]:
    """What a family or a refusal is matched against: the 'kind style' entries and the kept lines."""
    return example.styles + [" ".join(k.text.split()) for k in example.kept]


def families(example: ExampleSystem) -> set[str]:
    return {f.name for f in FAMILIES if any(re.search(f.styles, s) for s in _settings(example))}


def named_families(low: str) -> set[str]:
    return {f.name for f in FAMILIES if re.search(f.words, low)}


def _element_counts(text: str) -> tuple[int, ...]:
    """Atom counts the text states per element ('60 H', 'Al = 864', '576 are O'), sorted."""
    from simagent.backends.expert.vocabulary import SYMBOLS

    found = [(m.group(2), m.group(1)) for m in re.finditer(r"\b(\d+)\s+(?:are\s+|of\s+)?([A-Z][a-z]?)\b", text)]
    found += [(m.group(1), m.group(2)) for m in re.finditer(r"\b([A-Z][a-z]?)\s*[=:]\s*(\d+)\b", text)]
    symbols = {sym for sym, _ in found if sym in SYMBOLS and sym not in _UNIT_SYMBOLS}
    counts = [int(n) for sym, n in found if sym in symbols]
    return tuple(sorted(counts)) if len(symbols) >= 2 else ()


def _stated_setup(desc: SimulationDescription, low: str, text: str) -> dict[str, object]:
    """The system numbers the text states: atoms, atom types, box edges (None: not stated)."""
    types = _TYPES.search(low)
    box = _BOX.search(low)
    counts = {int(m.group(1)) for m in _ATOMS.finditer(low)}
    atoms = desc.stated_atoms if desc.stated_atoms is not None else counts.pop() if len(counts) == 1 else None
    edges = tuple(float(v) for v in box.groups() if v is not None) if box else None
    said = (types.group(1) or types.group(2)) if types else None
    return {"atoms": atoms, "atom types": (int(said) if said.isdigit() else _WORDS[said]) if said else None,
            "box": edges, "atoms per element": _element_counts(text) or None}


def _example_setup(example: ExampleSystem, axes: int) -> dict[str, object]:
    return {"atoms": example.atoms, "atom types": example.atom_types,
            "box": tuple(hi - lo for lo, hi in example.box[:axes]),
            "atoms per element": tuple(sorted(example.type_counts.values()))}


def _differences(stated: dict[str, object], example: ExampleSystem) -> list[str]:
    box = stated["box"]
    own = _example_setup(example, len(box) if isinstance(box, tuple) else 3)
    out = []
    for key, value in stated.items():
        if value is None:
            continue
        if key == "atoms per element":  # the counts stated are among the example's types' counts
            have = list(own[key])  # type: ignore[call-overload]
            fits = all(n in have and not have.remove(n) for n in value)  # type: ignore[union-attr]
        elif key == "box":  # an edge given to its last digit, rounded or cut (25.97 for 25.9798)
            fits = len(value) == len(own[key]) and all(  # type: ignore[arg-type]
                abs(v - e) < 10.0 ** -decimals(v) and abs(v - e) <= 0.01 * abs(e) for v, e in zip(
                    value, own[key], strict=True))  # type: ignore[arg-type, call-overload]
        else:
            fits = agrees(value, own[key])  # type: ignore[arg-type]
        if not fits:
            out.append(f"{key} {_said(value)} where {example.name} has {_said(own[key])}")
    return out


def _said(value: object) -> str:
    return ", ".join(f"{v:g}" for v in value) if isinstance(value, tuple) else str(value)


_UNIT_SYMBOLS = frozenset({"K", "Pa"})  # '300 K', '1 Pa': units, not potassium or protactinium
_FILE_WORD = re.compile(r"(?<![\w/.-])[\w+-]+(?:\.[\w+-]+)+(?![\w-])")


_STYLE_WORD = re.compile(r"(?<![\w/.-])[a-z][a-z0-9_]*(?:/[a-z0-9_]+)+(?![\w/-])")


def _style_names(example: ExampleSystem) -> set[str]:
    return {s.split()[1] for s in example.styles if len(s.split()) > 1}


def _named_styles_fit(low: str, example: ExampleSystem, others: list[ExampleSystem]) -> bool:
    """Every LAMMPS style the text names by its name ('body/nparticle', 'qeq/slater') that is a style of a
    candidate is among this example's."""
    known = set().union(*(_style_names(e) for e in others))
    return {w for w in _STYLE_WORD.findall(low) if w in known} <= _style_names(example)


def _named_files_fit(text: str, example: ExampleSystem, others: list[ExampleSystem]) -> bool:
    """Every file the text names that is a file of a candidate's folder is among this example's files."""
    folders = {Path(e.folder) for e in others}
    named = {w for w in _FILE_WORD.findall(text) if any((f / w).is_file() for f in folders)}
    return named <= set(example.files)


# AIREBO's switches (LAMMPS manual, pair airebo: pair_style airebo cutoff LJ_flag TORSION_flag, both 1 when
# omitted), as a text states them: 'with both the LJ and torsion terms enabled', 'torsion switched off'
_SWITCH_NAME = r"(?:lj|lennard-jones|torsion(?:al)?)"
_SWITCH_NAMES = rf"(?:both )?(?:the )?{_SWITCH_NAME}(?:(?: and |/| & )(?:the )?{_SWITCH_NAME})?"
_ON = r"enabled|included|switched on|turned on|active|on|kept"
_OFF_WORDS = r"disabled|excluded|switched off|turned off|omitted|off|neglected|removed|dropped"
_SWITCH = re.compile(rf"(?P<names>{_SWITCH_NAMES})(?: (?:terms?|interactions?|contributions?|parts?|energ(?:y|ies)))?"
                     rf"(?: (?:are|is|being|both|set))*(?P<negated> not)? (?P<state>{_ON}|{_OFF_WORDS})\b|"
                     rf"\b(?P<prefix>without|with no|enabling|disabling|excluding|including) "
                     rf"(?P<names2>{_SWITCH_NAMES})(?: (?:terms?|interactions?|contributions?))")


def stated_switches(low: str) -> dict[str, bool]:
    """AIREBO's LJ and torsion switches a text states ('lj' / 'torsion' -> on), from the first statement of each."""
    out: dict[str, bool] = {}
    for m in _SWITCH.finditer(low):
        if m.group("names"):
            names, on = m.group("names"), m.group("state") not in _OFF_WORDS.split("|")
            on = on != bool(m.group("negated"))
        else:
            names, on = m.group("names2"), m.group("prefix") in ("enabling", "including")
        for key, word in (("lj", r"\blj\b|lennard-jones"), ("torsion", r"torsion")):
            if re.search(word, names):
                out.setdefault(key, on)
    return out


def _airebo_switches(example: ExampleSystem) -> dict[str, bool] | None:
    for line in example.kept:
        words = line.text.split()
        if len(words) >= 3 and words[0] == "pair_style" and words[1] in ("airebo", "airebo/morse"):
            flags = [*words[3:5], "1", "1"][:2]
            return {"lj": flags[0] != "0", "torsion": flags[1] != "0"}
    return None


def _switches_fit(low: str, example: ExampleSystem) -> bool:
    """The AIREBO switches a text states are the example's, and a switch the text leaves out is on in the example
    (LAMMPS's default: an example that turns it off is not the text's unless the text says so). A text stating
    no switch fits every example (which one it describes is then open)."""
    own = _airebo_switches(example)
    stated = stated_switches(low) if own is not None else {}
    if own is None or not stated:
        return True
    return all(stated.get(k, True) == v for k, v in own.items())


def _switches_said(example: ExampleSystem) -> str:
    own = _airebo_switches(example) or {}
    return f"{example.input}: " + ", ".join(f"{k} {'on' if v else 'off'}" for k, v in own.items())


def _protocol_numbers(desc: SimulationDescription) -> list[float]:
    """The numbers the rules read into the run protocol (stages, velocities, timestep, output)."""
    values: list[float] = []
    for stage in desc.stages:
        values.append(stage.steps)
        for part in (stage.dynamics, stage.minimize):
            if part is not None:
                values += [v for v in part.model_dump().values() if isinstance(v, int | float) and
                           not isinstance(v, bool)]
    if desc.velocity is not None:
        values += [desc.velocity.temperature, desc.velocity.seed]
    values += [v for v in (desc.timestep, desc.thermo_every, desc.dimension) if v is not None]
    return [float(v) for v in values]


# bonded neighbours named by their separation ('exclude 1-2 and 1-3 pairs', '1-4 interactions'): names, not values
_NEIGHBOURS = re.compile(r"\b1-[234](?:(?:,|,? and|,? or)\s*1-[234])*(?= (?:\w+ )?(?:pairs?|interactions?|neighbou?rs?|"
                         r"terms?|exclusions?|weights?|contributions?|special|bonded|intramolecular)\b)")


def _text_numbers(low: str) -> list[str]:
    low = _POWER.sub(lambda m: f"1e{m.group(1)}", low)
    low = _NEIGHBOURS.sub(" ", low)
    low = _OUTPUT.sub(lambda m: m.group(0)[:m.start(1) - m.start(0)], low)  # output intervals: not the system's
    return [m.group(0) for m in _NUMBER.finditer(low)]


def unexplained_numbers(desc: SimulationDescription, low: str, example: ExampleSystem,
                        identified: tuple[float, ...] = ()) -> list[str]:
    """Numbers the text states that are neither a run setting the rules read, nor one of the example's, nor
    one of the counts and edges the example was identified by (`identified`)."""
    known = _protocol_numbers(desc) + example.numbers
    out = []
    for said in _text_numbers(low):
        value = float(said)
        if value in identified:
            continue
        if not any(agrees(value, k) or value == k for k in known):
            out.append(said)
    return list(dict.fromkeys(out))


def candidates(desc: SimulationDescription, low: str, examples: list[ExampleSystem]) -> list[ExampleSystem]:
    """The examples whose system the text names: same units and dimension, every family the text names
    among the example's, and every distinctive family of the example named."""
    named = named_families(low)
    distinctive = {f.name for f in FAMILIES if f.distinctive}
    if not named & distinctive:
        return []
    out = []
    for example in examples:
        if example.refused is not None or example.units != desc.units or example.dimension != desc.dimension:
            continue
        have = families(example)
        if named <= have and (have & distinctive) <= named:
            out.append(example)
    return out


def _distinct(examples: list[ExampleSystem]) -> list[ExampleSystem]:
    """One per system: inputs of one folder that set up the same system from the same data file (in.coreshell
    and in.coreshell.thermostats differ in their protocol only) are one, named by the shortest input."""
    seen: dict[tuple, ExampleSystem] = {}
    for example in sorted(examples, key=lambda e: (len(e.input), e.input)):
        seen.setdefault((example.folder, example.data_file, tuple(k.text.split() and " ".join(k.text.split())
                                                                   for k in example.kept)), example)
    return list(seen.values())


# organic molecules by their systematic names ('2,2-dimethylhexane', 'n-octane', 'ethanol')
_MOLECULE = re.compile(r"(?<![\w-])(?:\d+(?:,\d+)*-|n-)?(?:(?:di|tri|tetra)?(?:methyl|ethyl|propyl|butyl))*"
                       r"(?:meth|eth|prop|but|pent|hex|hept|oct|non|dec|undec|dodec)(?:ane|ene|yne|anol)\b")


def named_molecules(text: str) -> set[str]:
    return {m.group(0) for m in _MOLECULE.finditer(text.lower())}


def _named_molecules_fit(low: str, example: ExampleSystem) -> bool:
    """Every molecule the text names by its chemical name is one the example's title names (fits when either names
    none: an example whose title names no molecule is not told apart by one)."""
    own = named_molecules(example.title)
    return not own or named_molecules(low) <= own


def _segment_numbers(example: ExampleSystem, k: int) -> list[float]:
    return [float(n) for line in example.segment(k) for n in _NUMBER.findall(" ".join(line.split()[1:]).lower())]


def _segment_styles(example: ExampleSystem, k: int) -> set[str]:
    return {w[1] for w in (line.split() for line in example.segment(k)) if len(w) > 1 and w[0].endswith("_style")}


def runs_differ(desc: SimulationDescription, example: ExampleSystem) -> list[str]:
    """What the text states for one run alone (its statement: a style, a switching distance) that the example's
    set-up of the same run does not have; empty when every run's words agree with their run's lines."""
    known = set().union(*(_segment_styles(example, k) for k in range(example.runs)))
    protocol = _protocol_numbers(desc)
    out = []
    for k, index in enumerate(desc.run_stages()):
        stage = desc.stages[index]
        said = stage.statement
        styles = {w for w in _STYLE_WORD.findall(said) if w in known} - _segment_styles(example, k)
        own = _segment_numbers(example, k)
        numbers = [n for n in _text_numbers(said) if not any(agrees(float(n), v) for v in protocol + [stage.steps])
                   and not any(agrees(float(n), v) for v in own)]
        if styles or numbers:
            out.append(f"run {k + 1} states {', '.join(sorted(styles) + numbers)}, which the example's run {k + 1} "
                       f"does not set up")
    return out


def neighbor_differs(desc: SimulationDescription, example: ExampleSystem) -> list[str]:
    """Neighbor-list settings the text states (skin, rebuild interval) that the example's own lines set otherwise:
    the example's lines are rendered, so a different stated value would not be run."""
    own: dict[str, float] = {}
    for line in example.segment(0):
        words = line.split()
        if words[0] == "neighbor" and len(words) > 1:
            own["skin"] = float(words[1])
        if words[0] == "neigh_modify" and "every" in words[:-1]:
            own["every"] = float(words[words.index("every") + 1])
    out = []
    for key, stated in (("skin", desc.neighbor_skin), ("every", desc.neighbor_every)):
        if stated is not None and key in own and not agrees(float(stated), own[key]):
            out.append(f"a neighbor {key} of {stated:g} where LAMMPS example {example.name} ({example.input}) has "
                       f"{own[key]:g}")
    return out


def _note_runs(desc: SimulationDescription, example: ExampleSystem) -> None:
    for k, index in enumerate(desc.run_stages()):
        stage = desc.stages[index]
        lines = [line for line in example.kept if line.segment == k and line.text.split()[0] == "pair_style"]
        if k > 0 and lines and stage.statement:
            desc.note(f"{stage.name}.example_run", "rules", f"'{stage.statement.strip(' ,;:')}' is run {k + 1} of "
                      f"LAMMPS example {example.name} ({lines[0].source}: {' '.join(lines[0].text.split())} and the "
                      "lines after it)")


def read_example_system(desc: SimulationDescription, low: str, text: str) -> None:
    """The installed LAMMPS example whose system a text describes without placing its atoms, when it
    identifies exactly one (see the module doc); else nothing changes, or a named refusal."""
    if desc.lattice is not None or desc.placements or desc.molecular or desc.chain or desc.units is None:
        return
    if not any(m.startswith(("initial configuration", "box size")) for m in desc.missing):
        return  # the text builds its atoms itself
    if not named_families(low) & {f.name for f in FAMILIES if f.distinctive}:
        return  # no style family that would single an example out: the catalogue is not read
    found = candidates(desc, low, catalogue())
    if not found:
        return
    stated = _stated_setup(desc, low, text)
    found = [e for e in found if _named_files_fit(text, e, found) and _named_styles_fit(low, e, found)] or found
    molecules = [e for e in found if _named_molecules_fit(low, e)]
    if not molecules:
        desc.unsupported.append(f"a system of {', '.join(sorted(named_molecules(low)))}: the installed LAMMPS examples "
                                "with the styles the text names simulate another molecule ("
                                + "; ".join(f"{e.name}/{e.input}: {e.title}" for e in found) + ")")
        return
    found = molecules
    switched = [e for e in found if _switches_fit(low, e)]
    if not switched:
        said = ", ".join(f"{k} {'on' if v else 'off'}" for k, v in stated_switches(low).items())
        desc.unsupported.append(f"AIREBO with {said} (the other switches on, LAMMPS's default), which no installed "
                                f"LAMMPS example runs (" + "; ".join(_switches_said(e) for e in found) + ")")
        return
    found = switched
    agreeing = [e for e in found if not _differences(stated, e)]
    if not agreeing:
        desc.unsupported.append("the system of LAMMPS example " + "; ".join(
            f"{e.name} ({e.input}), which the text retells but states {', '.join(_differences(stated, e))}"
            for e in found))
        return
    agreeing = _distinct(agreeing)
    if len(agreeing) > 1:
        desc.unsupported.append("one installed LAMMPS example's system: the text fits several ("
                                + ", ".join(f"{e.name}/{e.input}" for e in agreeing) + ")")
        return
    example = agreeing[0]
    identified = tuple(float(v) for value in stated.values() if value is not None
                       for v in (value if isinstance(value, tuple) else (value,)))
    unexplained = unexplained_numbers(desc, low, example, identified)
    if unexplained:
        desc.unsupported.append(f"the numbers {', '.join(unexplained)}, which are neither a run setting read nor "
                                f"in LAMMPS example {example.name} ({example.input}), whose system the text describes")
        return
    if example.changes_between_runs and len(desc.run_stages()) != example.runs:
        desc.unsupported.append(f"LAMMPS example {example.name} sets up its system anew between its {example.runs} "
                                f"runs; the text states {len(desc.run_stages())}")
        return
    differ = runs_differ(desc, example) if example.changes_between_runs else []
    neighbor = neighbor_differs(desc, example)
    if neighbor:
        desc.unsupported.append("; ".join(neighbor))
        return
    if differ:
        desc.unsupported.append(f"the runs of LAMMPS example {example.name} ({example.input}) in another order or "
                                f"set-up: {'; '.join(differ)}")
        return
    use_example(desc, example, low)
    if example.changes_between_runs:
        _note_runs(desc, example)


# the thermostat damping of an example's protocol fix: fix ID group nvt|npt temp T0 T1 DAMP, langevin T0 T1 DAMP,
# temp/berendsen T0 T1 DAMP
_THERMOSTAT_FIX = {"nose-hoover": r"(?:nvt|npt) temp", "langevin": r"langevin", "berendsen": r"temp/berendsen"}


def _example_protocol(desc: SimulationDescription, example: ExampleSystem, low: str) -> None:
    """Run settings the text leaves out, where the example's own protocol has them for the same run: its
    thermostat damping, rescaling interval, minimisation limits, timestep and velocity seed (and distribution,
    loop, angular momentum), as the example fills what a text retelling it leaves out
    (simagent.described.example_fill); each listed with its source."""
    why = f"not stated; LAMMPS example {example.name}'s ({example.input}), whose system the text describes"
    _example_damping(desc, example)
    _example_rescaling(desc, example, why)
    _example_minimisation(desc, example, why)
    steps = {float(m.group(1)) for line in example.protocol if (m := re.match(r"timestep\s+(\S+)$", line.strip()))}
    timestep = desc.origin.get("timestep")
    if len(steps) == 1 and timestep is not None and timestep.source == "default":
        desc.timestep = steps.pop()
        desc.note("timestep", "default", f"{desc.timestep:g}: {why}")
    v = desc.velocity
    creations = [line.split() for line in example.protocol if re.match(r"velocity\s+all\s+create\s", line.strip())]
    seed = desc.origin.get("velocity.seed") or desc.origin.get("velocity")  # the seed, or the whole creation
    if v is None or len(creations) != 1 or seed is None or seed.source != "default":
        return
    words = creations[0]
    if len(words) < 5 or not agrees(v.temperature, float(words[3])):
        return
    v.seed = int(words[4])
    keys = dict(zip(words[5::2], words[6::2], strict=False))
    said = [f"seed {v.seed}"]
    dist = desc.origin.get("velocity.distribution")
    if keys.get("dist") in ("uniform", "gaussian") and (dist is None or dist.source == "default"):
        v.distribution = keys["dist"]  # type: ignore[assignment]
        said.append(f"dist {v.distribution}")
    if keys.get("loop") in ("all", "local", "geom") and v.loop is None:
        v.loop = keys["loop"]  # type: ignore[assignment]
        said.append(f"loop {v.loop}")
    if keys.get("rot") == "yes" and not v.zero_rotation and not re.search(r"angular momentum|rotation", low):
        v.zero_rotation = True
        said.append("rot yes")
    desc.note("velocity.seed", "default", f"{' '.join(said)}: {why}, which creates its velocities at the same "
              "temperature")


_RESCALE = re.compile(r"fix\s+\S+\s+\S+\s+temp/rescale\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+1(?:\.0*)?$")


def _example_rescaling(desc: SimulationDescription, example: ExampleSystem, why: str) -> None:
    """A velocity-rescaling interval the text states without its window, the example's own for that interval;
    rescaling stated with neither, the example's interval and window when it rescales to the same set point."""
    for stage in desc.stages:
        dyn, key = stage.dynamics, f"{stage.name}.rescale_window"
        if dyn is None or dyn.thermostat != "velocity-rescale":
            continue
        interval = desc.origin.get(f"{stage.name}.rescale")
        if interval is not None and interval.source == "default" and dyn.t_start is not None:
            own = {(int(m.group(1)), float(m.group(4))) for line in example.protocol if (m := _RESCALE.match(
                line.strip())) and agrees(dyn.t_start, float(m.group(2))) and agrees(dyn.t_stop, float(m.group(3)))}
            if len(own) == 1:
                dyn.rescale_every, dyn.rescale_window = own.pop()
                desc.note(f"{stage.name}.rescale", "default", f"every {dyn.rescale_every} steps, window "
                          f"{dyn.rescale_window:g}: {why}, which rescales to the same temperature")
                desc.origin.pop(key, None)
            continue
        if desc.origin.get(key) is None or desc.origin[key].source != "default":
            continue
        windows = {float(m.group(1)) for line in example.protocol if (m := re.match(
            rf"fix\s+\S+\s+\S+\s+temp/rescale\s+{dyn.rescale_every}\s+\S+\s+\S+\s+(\S+)\s+1(?:\.0*)?$",
            line.strip()))}
        if len(windows) == 1:
            dyn.rescale_window = windows.pop()
            desc.note(key, "default", f"{dyn.rescale_window:g}: {why}")


def _example_minimisation(desc: SimulationDescription, example: ExampleSystem, why: str) -> None:
    """A minimisation stated with the example's tolerances but without its iteration limits: the example's."""
    limits = {(int(w[3]), int(w[4]), float(w[1]), float(w[2])) for w in (line.split() for line in example.protocol)
              if len(w) == 5 and w[0] == "minimize" and all(_NUMBER.fullmatch(x) for x in w[1:])}
    for stage in desc.stages:
        m, key = stage.minimize, f"{stage.name}.max_iterations"
        if m is None or desc.origin.get(key) is None or desc.origin[key].source != "default":
            continue
        same = [(it, ev) for it, ev, etol, ftol in limits if agrees(m.etol, etol) and agrees(m.ftol, ftol)]
        if len(same) == 1:
            m.max_iterations, m.max_evaluations = same[0]
            desc.note(key, "default", f"{m.max_iterations}: {why}, which minimises to the same tolerances")
            desc.note(f"{stage.name}.max_evaluations", "default", f"{m.max_evaluations}: {why}")


def _example_damping(desc: SimulationDescription, example: ExampleSystem) -> None:
    """A thermostat the text states without its damping, of the kind the example's own protocol uses:
    the example's damping (listed), as the example fills what a text retelling it leaves out
    (simagent.described.example_fill)."""
    for stage in desc.stages:
        dyn = stage.dynamics
        key = f"{stage.name}.t_damp"
        if dyn is None or dyn.thermostat not in _THERMOSTAT_FIX or desc.origin.get(key) is None or \
                desc.origin[key].source != "default":
            continue
        dampings = {float(m.group(1)) for line in example.protocol if (m := re.search(
            r"^fix\s+\S+\s+\S+\s+" + _THERMOSTAT_FIX[dyn.thermostat] + r"\s+\S+\s+\S+\s+(-?\d+(?:\.\d+)?(?:e-?\d+)?)\b",
            line.strip()))}
        if len(dampings) == 1:
            dyn.t_damp = dampings.pop()
            desc.note(key, "default", f"{dyn.t_damp:g}: not stated; the damping of LAMMPS example {example.name}'s "
                      f"own thermostat ({example.input}), whose system the text describes")


# united-atom sites: a carbon with its bonded hydrogens as one particle (C, CH, CH2, CH3, CH4), atomic masses
# 12.011 and 1.008 (the masses LAMMPS data files use, e.g. examples/relres: 14.027 for CH2)
_UNITED_ATOM = {n: 12.011 + 1.008 * n for n in range(5)}
_ENERGY_UNIT = {"real": "kcal/mol", "metal": "eV", "lj": "epsilon", "si": "J", "cgs": "erg", "electron": "Hartree"}


def united_atom_sites(example: ExampleSystem) -> dict[int, str]:
    """Type -> 'CH2' when every type's mass is a carbon with 0-4 hydrogens (united atoms), else empty."""
    names = {}
    for kind, mass in example.masses.items():
        n = next((n for n, m in _UNITED_ATOM.items() if abs(mass - m) < 0.01), None)
        if n is None:
            return {}
        names[kind] = "C" + ("" if n == 0 else "H" if n == 1 else f"H{n}")
    return names if example.bonds else {}


def _note_particles(desc: SimulationDescription, example: ExampleSystem) -> None:
    """What one particle of a per-particle metric is: a site of the example's data file; for united atoms, a
    carbon with its hydrogens (the hydrogens are no particles of their own)."""
    sites = united_atom_sites(example)
    if not sites:
        return
    kinds = ", ".join(sorted(set(sites.values()), key=len))
    desc.note("particles", "default", f"a particle is one site of {example.data_file} ({example.atoms} sites): united "
              f"atoms, each a carbon with its bonded hydrogens ({kinds}; masses "
              f"{min(example.masses.values()):g}-{max(example.masses.values()):g}), so per-particle quantities are "
              f"per site, energies in {_ENERGY_UNIT.get(example.units, example.units + ' units')}")


def use_example(desc: SimulationDescription, example: ExampleSystem, low: str) -> None:
    """The description runs the example's system: its lines stand for the system the text names, what the
    example covers is no longer refused or missing, and report.md lists where every line comes from."""
    desc.example_system = example
    said = ", ".join(sorted(named_families(low) & families(example)))
    files = ", ".join([example.input, *example.files])
    desc.note("example_system", "rules", f"LAMMPS example {example.name} ({files}): {example.units} units, "
              f"{example.atoms} atoms; the text names {said}")
    for line in example.kept:
        desc.note(f"example_system.{line.source}", "rules", f"{line.text} (from {example.name}/{line.source}"
                  + (f"; {line.note}" if line.note else "") + ")")
    settings = _settings(example)
    for name, covered in COVERS.items():
        if name in desc.unsupported and any(re.search(covered, s) for s in settings):
            desc.unsupported.remove(name)
    desc.missing = [m for m in desc.missing if not SETTLED_GAPS.search(m)]
    for field in _SYSTEM_FIELDS:
        if getattr(desc, field):
            setattr(desc, field, None if field != "masses" else {})
    desc.dimension = example.dimension  # type: ignore[assignment]
    desc.atom_types = max(1, example.atom_types)
    _note_particles(desc, example)
    _example_protocol(desc, example, low)
    if desc.velocity is None or desc.origin.get("velocity") is None or desc.origin["velocity"].source != "default":
        return
    if example.velocities:
        desc.velocity = None  # the thermostat's start (reading._velocity_for_thermostat) is not needed
        desc.note("velocity", "default", f"none: the atoms start with the velocities of {example.data_file} (the "
                  "text creates none)")
    elif not any(re.match(r"velocity\s", line.strip()) for line in example.protocol):
        desc.velocity = None  # off their lattice sites the atoms feel forces: the thermostat heats them from rest
        desc.note("velocity", "default", f"none: the text creates no velocities, nor does LAMMPS example "
                  f"{example.name} ({example.input}); the atoms start at rest at the positions of {example.data_file}")
