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
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from simagent.described.example_fill import agrees

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription


class KeptLine(BaseModel):
    """One command of the example's input that sets up the system, kept as written."""

    text: str
    source: str = Field(description="'in.peptide:12': the example input and line it comes from")
    segment: int = Field(default=0, ge=0, description="the run it precedes: 0 before the first run, k after run k")


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
    box: list[tuple[float, float]] = Field(default_factory=list)
    velocities: bool = Field(default=False, description="the data file gives velocities")
    numbers: list[float] = Field(default_factory=list, description="every number of the kept lines, the title "
                                 "and the data file's header")
    computes: dict[str, str] = Field(default_factory=dict, description="compute id -> style, of the kept lines")
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
    Family("Ewald", r"\bewald\b", r"^kspace ewald|ewald$", distinctive=False),
    Family("Wolf", r"\bwolf\b", r"wolf", distinctive=False),
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
    Family("COMB", r"\bcomb\b(?!3)", r"^pair comb$"),
    Family("AIREBO", r"airebo", r"^pair airebo"),
    Family("REBO", r"\brebo\b", r"^pair rebo$"),
    Family("Tersoff", r"tersoff", r"^pair tersoff"),
    Family("Stillinger-Weber", r"stillinger|\bsw\b", r"^pair sw\b"),
    Family("EAM", r"\beam\b|embedded[- ]atom", r"^pair eam"),
    Family("MEAM", r"\bmeam\b", r"^pair meam"),
    Family("Morse", r"\bmorse\b", r"^(?:pair|bond) morse"),
    Family("nb3b", r"\bnb3b\b|non-?bonded three[- ]body", r"^pair nb3b"),
    Family("body particles", r"\bbody\b", r"^(?:atom body|pair body)"),
    Family("soft repulsion", r"\bsoft\b[^.;]{0,40}potential|pair[_ ]style soft", r"^pair soft$"),
    Family("FENE", r"\bfene\b", r"^(?:bond fene|special_bonds fene)"),
    Family("rigid bodies", r"\brigid bod|fix rigid", r"^fix rigid"),
    Family("harmonic bonds", r"harmonic", r"^(?:bond|angle|dihedral|improper) harmonic", distinctive=False),
    Family("Coulomb", r"coulomb|electrostatic|\bcoul/", r"coul|^kspace", distinctive=False),
    Family("hybrid/overlay", r"hybrid/overlay|overlaid", r"^pair hybrid/overlay$", distinctive=False),
)
# the refusals of simagent.described.reading an example's system settles, and what in the example does
COVERS: dict[str, str] = {
    "molecular topology (bonds, angles, constraints)": r"^(?:bond|angle|dihedral|improper|fix shake|fix rattle) ",
    "electrostatics (coul, kspace)": r"coul|^kspace|^fix qeq|^pair (?:reax|comb|streitz)",
    "a many-body potential": r"^pair (?:airebo|rebo|reaxff|reax/c|comb|comb3|tersoff|sw|eam|meam|nb3b|bop)\b",
    "an atom style other than atomic": r"^atom ",
}
# what reading.py finds missing that the example's data file and input state
SETTLED_GAPS = re.compile(r"^(?:initial configuration|pair potential|pair cutoff|LJ |atom masses|box size|"
                          r"lattice scale)")
# fields the example's lines set, which the text's reading of them must not render again
_SYSTEM_FIELDS = ("pair", "potential", "masses", "lattice", "box")
# output the text may ask for without it being part of the system ('dump ... every 100 steps')
_OUTPUT = re.compile(r"(?:dump|trajector\w*|output|write|print|log)\w*[^.;]{0,60}?every\s+(\d+)")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![a-z\d])")
_POWER = re.compile(r"\b10\s*\^\s*\{?\s*\(?\s*([-+]?\d+)\s*\)?\s*\}?")
_BOX = re.compile(r"\bbox\b[^.;0-9]{0,30}?\(?\s*(\d+(?:\.\d+)?)\s*(?:x|\*|by)\s*(\d+(?:\.\d+)?)"
                  r"(?:\s*(?:x|\*|by)\s*(\d+(?:\.\d+)?))?")
_ATOMS = re.compile(r"(?<![\w.-])(\d+)[- ](?:atoms?|particles?)\b(?! (?:types?|pairs?)\b)")
_TYPES = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten) (?:atom|particle|bead) types\b")
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
          "ten": 10}


def catalogue() -> list[ExampleSystem]:
    """The installed examples' systems (empty without LAMMPS or its examples)."""
    from simagent.engines import get_engine

    try:
        return list(get_engine("lammps").example_systems())
    except (ImportError, OSError, ValueError, KeyError):
        return []


def families(example: ExampleSystem) -> set[str]:
    return {f.name for f in FAMILIES if any(re.search(f.styles, s) for s in example.styles)}


def named_families(low: str) -> set[str]:
    return {f.name for f in FAMILIES if re.search(f.words, low)}


def _stated_setup(desc: SimulationDescription, low: str) -> dict[str, object]:
    """The system numbers the text states: atoms, atom types, box edges (None: not stated)."""
    types = _TYPES.search(low)
    box = _BOX.search(low)
    counts = {int(m.group(1)) for m in _ATOMS.finditer(low)}
    atoms = desc.stated_atoms if desc.stated_atoms is not None else counts.pop() if len(counts) == 1 else None
    edges = tuple(float(v) for v in box.groups() if v is not None) if box else None
    return {"atoms": atoms, "atom types": (int(types.group(1)) if types.group(1).isdigit()
                                                     else _WORDS[types.group(1)]) if types else None,
            "box": edges}


def _example_setup(example: ExampleSystem, axes: int) -> dict[str, object]:
    return {"atoms": example.atoms, "atom types": example.atom_types,
            "box": tuple(hi - lo for lo, hi in example.box[:axes])}


def _differences(stated: dict[str, object], example: ExampleSystem) -> list[str]:
    box = stated["box"]
    own = _example_setup(example, len(box) if isinstance(box, tuple) else 3)
    return [f"{key} {value}" + f" where {example.name} has {own[key]}" for key, value in stated.items()
            if value is not None and not agrees(value, own[key])]  # type: ignore[arg-type]


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


def _text_numbers(low: str) -> list[str]:
    low = _POWER.sub(lambda m: f"1e{m.group(1)}", low)
    low = _OUTPUT.sub(lambda m: m.group(0)[:m.start(1) - m.start(0)], low)  # output intervals: not the system's
    return [m.group(0) for m in _NUMBER.finditer(low)]


def unexplained_numbers(desc: SimulationDescription, low: str, example: ExampleSystem) -> list[str]:
    """Numbers the text states that are neither a run setting the rules read nor one of the example's."""
    known = _protocol_numbers(desc) + example.numbers
    out = []
    for said in _text_numbers(low):
        value = float(said)
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


def read_example_system(desc: SimulationDescription, low: str) -> None:
    """The installed LAMMPS example whose system a text describes without placing its atoms, when it
    identifies exactly one (see the module doc); else nothing changes, or a named refusal."""
    if desc.lattice is not None or desc.placements or desc.molecular or desc.chain or desc.units is None:
        return
    if not any(m.startswith("initial configuration") for m in desc.missing):
        return
    if not named_families(low) & {f.name for f in FAMILIES if f.distinctive}:
        return  # no style family that would single an example out: the catalogue is not read
    found = candidates(desc, low, catalogue())
    if not found:
        return
    stated = _stated_setup(desc, low)
    agreeing = [e for e in found if not _differences(stated, e)]
    if not agreeing:
        desc.unsupported.append("the system of LAMMPS example " + "; ".join(
            f"{e.name} ({e.input}), which the text retells but states {', '.join(_differences(stated, e))}"
            for e in found))
        return
    if len(agreeing) > 1:
        desc.unsupported.append("one installed LAMMPS example's system: the text fits several ("
                                + ", ".join(f"{e.name}/{e.input}" for e in agreeing) + ")")
        return
    example = agreeing[0]
    unexplained = unexplained_numbers(desc, low, example)
    if unexplained:
        desc.unsupported.append(f"the numbers {', '.join(unexplained)}, which are neither a run setting read nor "
                                f"in LAMMPS example {example.name} ({example.input}), whose system the text describes")
        return
    if example.changes_between_runs and len(desc.run_stages()) != example.runs:
        desc.unsupported.append(f"LAMMPS example {example.name} sets up its system anew between its {example.runs} "
                                f"runs; the text states {len(desc.run_stages())}")
        return
    use_example(desc, example, low)


# the thermostat damping of an example's protocol fix: fix ID group nvt|npt temp T0 T1 DAMP, langevin T0 T1 DAMP,
# temp/berendsen T0 T1 DAMP
_THERMOSTAT_FIX = {"nose-hoover": r"(?:nvt|npt) temp", "langevin": r"langevin", "berendsen": r"temp/berendsen"}


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


def use_example(desc: SimulationDescription, example: ExampleSystem, low: str) -> None:
    """The description runs the example's system: its lines stand for the system the text names, what the
    example covers is no longer refused or missing, and report.md lists where every line comes from."""
    desc.example_system = example
    said = ", ".join(sorted(named_families(low) & families(example)))
    files = ", ".join([example.input, *example.files])
    desc.note("example_system", "rules", f"LAMMPS example {example.name} ({files}): {example.units} units, "
              f"{example.atoms} atoms; the text names {said}")
    for line in example.kept:
        desc.note(f"example_system.{line.source}", "rules", f"{line.text} (from {example.name}/{line.source})")
    for name, covered in COVERS.items():
        if name in desc.unsupported and any(re.search(covered, s) for s in example.styles):
            desc.unsupported.remove(name)
    desc.missing = [m for m in desc.missing if not SETTLED_GAPS.search(m)]
    for field in _SYSTEM_FIELDS:
        if getattr(desc, field):
            setattr(desc, field, None if field != "masses" else {})
    desc.dimension = example.dimension  # type: ignore[assignment]
    _example_damping(desc, example)
    if desc.velocity is not None and example.velocities and desc.origin.get("velocity") is not None and \
            desc.origin["velocity"].source == "default":
        desc.velocity = None  # the thermostat's start (reading._velocity_for_thermostat) is not needed
        desc.note("velocity", "default", f"none: the atoms start with the velocities of {example.data_file} (the "
                  "text creates none)")
