"""LAMMPS's installed examples read as systems (simagent.described.example_system.ExampleSystem).

An example input (in.*) is split into the commands that set up its system (units, styles,
read_data, coefficients, groups, computes, constraints such as fix shake, charge equilibration) and
its run protocol (velocity, timestep, integrators and thermostats, run, minimize, output), which a
described run takes from its text instead. The data file's header gives the counts, types and box.
An example whose system part needs anything that cannot be known or is not safe to run (shell,
python, loops, jumps, an include of a file not in its folder, a fix neither kind knows) is listed
with the reason (`refused`), never run. One state is known: a restart file the example itself writes
after a run (write_restart) and reads back after `clear` (read_restart) to start a later run from it;
those commands are the protocol's (ExampleSystem.restarts records which run's state each run reads).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from simagent.described.example_system import ExampleSystem, KeptLine
from tools.lammps.check import Command, parse_commands
from tools.lammps.examples import examples_dir

# commands that set up the system: kept as written
SYSTEM_COMMANDS = frozenset("""units dimension boundary atom_style atom_modify newton comm_modify comm_style
pair_style pair_coeff pair_modify bond_style bond_coeff angle_style angle_coeff dihedral_style dihedral_coeff
improper_style improper_coeff kspace_style kspace_modify special_bonds dielectric read_data mass set group
neighbor neigh_modify compute compute_modify molecule labelmap region lattice create_box create_atoms
delete_atoms change_box replicate displace_atoms delete_bonds create_bonds""".split())
# commands of the run protocol and its output: the text decides them
PROTOCOL_COMMANDS = frozenset("""velocity timestep run minimize min_style min_modify thermo thermo_style
thermo_modify dump dump_modify undump restart write_data write_restart write_dump write_coeff reset_timestep
print log echo info timer uncompute processors package suffix balance run_style""".split())
# commands never run from an example: host code, control flow, files or state that cannot be known
REFUSED_COMMANDS = frozenset("""shell python jump label next if clear quit partition plugin read_restart read_dump
rerun neb prd tad temper hyper kim fitpod mdi""".split())
# fixes that belong to the system (constraints, charge equilibration, per-atom properties, schedules of
# the force field); the other known ones are the protocol's
SYSTEM_FIXES = re.compile(r"^(?:shake|rattle|qeq\b.*|qeq/.*|acks2/.*|property/atom|cmap|adapt|efield)$")
PROTOCOL_FIXES = re.compile(r"^(?:nve|nvt|npt|nph)(?:/.*)?$|^(?:langevin|temp/.*|press/.*|enforce2d|ave/.*|print|"
                            r"halt|momentum|recenter|dt/reset|box/relax|deform|viscous|heat|"
                            r"reaxff/species|reaxff/bonds|reax/c/species|reax/c/bonds|balance|nvk|"
                            r"bond/swap|gcmc|deposit|pour)$")
# styles the installed examples (2022) name that LAMMPS has since renamed (LAMMPS manual, pair reaxff: "reax/c" was
# renamed "reaxff" in the 2021 stable release; fix qeq/reaxff and reaxff/species likewise): (command, old) -> new
RENAMED = {("pair_style", "reax/c"): "reaxff", ("fix", "qeq/reax"): "qeq/reaxff",
           ("fix", "reax/c/species"): "reaxff/species", ("fix", "reax/c/bonds"): "reaxff/bonds"}
# files a style reads from the run folder without naming them (LAMMPS manual, pair comb3: lib.comb3)
IMPLICIT_FILES = {"pair comb3": ["lib.comb3"]}
SAFE_VARIABLES = frozenset({"equal", "atom", "vector", "index", "string", "internal", "format"})
_STYLE_KINDS = {"pair_style": "pair", "bond_style": "bond", "angle_style": "angle", "dihedral_style": "dihedral",
                "improper_style": "improper", "kspace_style": "kspace", "atom_style": "atom"}
_ANY_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$|^-?\.\d+$")


def _known_pair_styles() -> set[str]:
    from tools.lammps.handlers import installed_styles

    try:
        return set(installed_styles().get("pair", ()))
    except Exception:  # noqa: BLE001 - without the engine's list, a word in a hybrid style is taken as a style
        return set()


def _styles(cmd: Command, pair_styles: set[str]) -> list[str]:
    """'kind style' entries a command sets: 'pair lj/charmm/coul/long', 'fix shake', 'special_bonds fene'."""
    words = cmd.words
    if cmd.name in _STYLE_KINDS and len(words) > 1:
        kind = _STYLE_KINDS[cmd.name]
        out = [f"{kind} {words[1]}"]
        if kind == "pair" and words[1].startswith("hybrid"):
            out += [f"pair {w}" for w in words[2:] if not _NUMBER.match(w) and (w in pair_styles or (
                not pair_styles and "/" in w))]
        return out
    if cmd.name == "fix" and len(words) > 3:
        return [f"fix {words[3]}"]
    if cmd.name == "compute" and len(words) > 3:
        return [f"compute {words[3]}"] + ([f"compute pair {words[4]}"] if words[3] == "pair" and len(words) > 4
                                          else [])
    if cmd.name == "special_bonds":
        return [f"special_bonds {w}" for w in words[1:] if not _NUMBER.match(w)]
    return []


def classify(cmd: Command, kept_fixes: set[str]) -> tuple[str, str]:
    """('system' | 'protocol' | 'refused', why) for one command of an example input."""
    name = cmd.name
    if name in REFUSED_COMMANDS:
        return "refused", f"{name} (control flow, host code or a state that cannot be known)"
    if name == "variable":
        style = cmd.arg(2)
        if style == "delete" or style in SAFE_VARIABLES:
            return "system", ""
        return "refused", f"variable style {style}"
    if name == "fix":
        style = cmd.arg(3)
        if SYSTEM_FIXES.match(style):
            return "system", ""
        if PROTOCOL_FIXES.match(style):
            return "protocol", ""
        return "refused", f"fix {style} (not known as the system's or the protocol's)"
    if name == "fix_modify" or name == "unfix":
        return ("system" if cmd.arg(1) in kept_fixes else "protocol"), ""
    if name in SYSTEM_COMMANDS:
        return "system", ""
    if name in PROTOCOL_COMMANDS:
        return "protocol", ""
    return "refused", f"{name} (not known as the system's or the protocol's)"


@lru_cache(maxsize=512)
def data_header(path: Path) -> dict:
    """Counts, types, box (lo, hi per axis) and whether a Velocities section is given, of a LAMMPS data file."""
    info: dict = {"atoms": 0, "bonds": 0, "atom types": 0, "box": [], "velocities": False, "numbers": []}
    axes: dict[str, tuple[float, float]] = {}
    text = path.read_text(errors="replace")
    head = text[:20000].splitlines()
    for line in head[1:]:
        body = line.split("#", 1)[0].strip()
        words = body.split()
        if not words:
            continue
        if len(words) >= 2 and _NUMBER.match(words[0]) and " ".join(words[1:]) in (
                "atoms", "bonds", "angles", "dihedrals", "impropers", "atom types", "bond types", "angle types",
                "dihedral types", "improper types", "ellipsoids", "lines", "triangles", "bodies"):
            key = " ".join(words[1:])
            info[key] = int(float(words[0]))
            info["numbers"].append(float(words[0]))
        elif len(words) == 4 and words[2:] in (["xlo", "xhi"], ["ylo", "yhi"], ["zlo", "zhi"]):
            lo, hi = float(words[0]), float(words[1])
            axes[words[2][0]] = (lo, hi)
            info["numbers"] += [lo, hi, hi - lo]
        elif len(words) == 6 and words[3:] == ["xy", "xz", "yz"]:
            info["numbers"] += [float(w) for w in words[:3]]
        elif words[0][0].isalpha() and axes:
            break
    info["box"] = [axes.get(a, (0.0, 0.0)) for a in "xyz"]
    info["velocities"] = "\nVelocities" in text
    return info


@lru_cache(maxsize=512)
def data_masses(path: Path) -> dict[int, float]:
    """Type -> mass, from a data file's Masses section (empty when it has none)."""
    text = path.read_text(errors="replace")
    found = re.search(r"^\s*Masses\b.*$", text, re.MULTILINE)
    masses: dict[int, float] = {}
    if found is None:
        return masses
    for line in text[found.end():].splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            if masses:
                break
            continue
        if len(words) < 2 or not (_NUMBER.match(words[0]) and _NUMBER.match(words[1])):
            break
        masses[int(float(words[0]))] = float(words[1])
    return masses


_MOLECULAR_STYLES = ("full", "molecular", "bond", "angle")  # data file Atoms columns: id mol type ...
_ATOMIC_STYLES = ("atomic", "charge", "body", "sphere", "ellipsoid", "dipole")  # id type ...


@lru_cache(maxsize=512)
def type_counts(path: Path, atom_style: str) -> dict[int, int]:
    """Atoms per type in a data file's Atoms section (empty for an atom style whose columns are not known)."""
    if atom_style not in _MOLECULAR_STYLES + _ATOMIC_STYLES:
        return {}
    column = 2 if atom_style in _MOLECULAR_STYLES else 1
    text = path.read_text(errors="replace")
    found = re.search(r"^\s*Atoms\b.*$", text, re.MULTILINE)
    if found is None:
        return {}
    counts: dict[int, int] = {}
    started = False
    for line in text[found.end():].splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            if started:
                break
            continue
        if not _NUMBER.match(words[0]) or len(words) <= column:
            break
        started = True
        kind = int(float(words[column]))
        counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items()))


def _renamed(cmd: Command) -> tuple[str, str]:
    """The command with a style LAMMPS has renamed since the example was written, and what was renamed."""
    at = 3 if cmd.name == "fix" else 1
    new = RENAMED.get((cmd.name, cmd.arg(at)))
    if new is None:
        return cmd.text, ""
    words = cmd.text.split()
    old, words[at] = words[at], new
    return " ".join(words), f"{cmd.name} {old} is named {new} in LAMMPS since 2021"


def _numbers(words: list[str]) -> list[float]:
    return [float(w) for w in words if _NUMBER.match(w)]


def _restart_of_own(expanded: list[Command], at: int, written: dict[str, int]) -> str | None:
    """The restart file a `clear` at `at` is followed by reading back, when the example wrote it itself."""
    following = expanded[at + 1] if at + 1 < len(expanded) else None
    if expanded[at].name != "clear" or following is None or following.name != "read_restart":
        return None
    return following.arg(1) if following.arg(1) in written else None


def read_example(folder: Path, input_path: Path, name: str) -> ExampleSystem | None:
    """One example input as a system, or None when it reads no data file of its folder."""
    text = input_path.read_text(errors="replace")
    if not re.search(r"^\s*(?:read_data|include)\b", text, re.MULTILINE):
        return None
    commands = parse_commands(text, input_path.name)
    title = next((ln.lstrip("#").strip() for ln in text.splitlines() if ln.strip().startswith("#")
                  and ln.lstrip("#").strip()), "")
    expanded: list[Command] = []
    refused: str | None = None
    for cmd in commands:
        if cmd.name == "include":
            inner = folder / cmd.arg(1)
            if "$" in cmd.arg(1) or not inner.is_file():
                refused = refused or f"include {cmd.arg(1)} (not a file of the example)"
                continue
            expanded += parse_commands(inner.read_text(errors="replace"), inner.name)
        else:
            expanded.append(cmd)
    reads = [c for c in expanded if c.name == "read_data"]
    if len(reads) != 1 or "$" in reads[0].arg(1) or not (folder / reads[0].arg(1)).is_file():
        return None
    data = folder / reads[0].arg(1)
    kept: list[KeptLine] = []
    protocol: list[str] = []
    kept_fixes: set[str] = set()
    styles: list[str] = []
    numbers: list[float] = [float(n) for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", title)]
    pair_styles = _known_pair_styles()
    units, dimension, runs = "lj", 3, 0
    written: dict[str, int] = {}  # restart file -> the runs done when the example wrote it
    restarts: dict[int, int] = {}  # run segment -> the number of runs whose end state it starts from
    for at, cmd in enumerate(expanded):
        if cmd.name == "write_restart" and "$" not in cmd.arg(1):
            written[cmd.arg(1)] = runs
        own = _restart_of_own(expanded, at, written) if cmd.name == "clear" else None
        if own is not None or (cmd.name == "read_restart" and at > 0 and expanded[at - 1].name == "clear"
                               and cmd.arg(1) in written):
            protocol.append(cmd.text)
            if own is not None:
                restarts[runs] = written[own]
            continue
        kind, why = classify(cmd, kept_fixes)
        if kind == "refused":
            refused = refused or why
            continue
        if kind == "protocol":
            protocol.append(cmd.text)
            runs += cmd.name in ("run", "minimize")
            continue
        if cmd.name == "fix":
            kept_fixes.add(cmd.arg(1))
        if cmd.name == "units":
            units = cmd.arg(1)
        if cmd.name == "dimension":
            dimension = int(cmd.arg(1)) if cmd.arg(1).isdigit() else 3
        text, note = _renamed(cmd)
        kept.append(KeptLine(text=text, source=f"{cmd.file}:{cmd.line}", segment=runs, note=note))
        styles += [s for s in _styles(cmd, pair_styles) if s not in styles]
        numbers += [float(n) for n in _ANY_NUMBER.findall(" ".join(cmd.words[1:]))]  # also inside ramp(1.0,20.0)
    kept = [k for k in kept if k.segment < runs or runs == 0]  # after the last run: output and cleanup
    header = data_header(data)
    atom_style = next((k.text.split()[1] for k in kept if k.text.split()[0] == "atom_style"
                       and len(k.text.split()) > 1), "atomic")
    per_type = type_counts(data, atom_style)
    files = [data.name] + [f for style, names in IMPLICIT_FILES.items() if style in styles for f in names
                           if (folder / f).is_file()]
    for line in kept:
        for word in line.text.split()[1:]:
            if word not in files and re.fullmatch(r"[\w.+-]+", word) and (folder / word).is_file():
                files.append(word)
    extent = [hi - lo for lo, hi in header["box"][:dimension]]
    if header.get("atoms") and all(e > 0 for e in extent):  # the number density a text may quote
        numbers.append(header["atoms"] / float(np.prod(extent)))
    computes = {c.arg(1) for c in expanded if c.name == "compute"}
    thermo_computes = {}
    for line in protocol:  # thermo_modify temp ID press ID: the system's own temperature (and pressure) compute
        words = line.split()
        if words and words[0] == "thermo_modify":
            thermo_computes |= {k: v for k, v in zip(words[1:], words[2:], strict=False) if k in ("temp", "press")
                                and v in computes}
    integrators = {m.group(1): m.group(0) for line in protocol if (m := re.match(
        r"fix\s+\S+\s+\S+\s+((nve|nvt|npt|nph)/(?:body|sphere|asphere|line|tri))\b", line))}
    return ExampleSystem(
        name=name, folder=str(folder), input=input_path.name, title=title, units=units, dimension=dimension,
        data_file=data.name, files=files, kept=kept, styles=styles, protocol=protocol, runs=runs,
        atoms=header.get("atoms", 0), bonds=header.get("bonds", 0), masses=data_masses(data),
        atom_types=header.get("atom types", 0),
        box=header["box"], velocities=header["velocities"], atom_style=atom_style, type_counts=per_type,
        numbers=sorted(set(numbers + header["numbers"] + [float(n) for n in per_type.values()])),
        computes={c.arg(1): c.arg(3) for c in expanded if c.name == "compute" and len(c.words) > 3},
        integrators={style.split("/")[0]: style for style in integrators}, thermo_computes=thermo_computes,
        restarts=restarts, refused=refused)


@lru_cache(maxsize=2)
def _catalogue(root: str) -> tuple[ExampleSystem, ...]:
    base = Path(root)
    out = []
    for input_path in sorted(base.glob("**/in.*")):
        folder = input_path.parent
        try:
            example = read_example(folder, input_path, str(folder.relative_to(base)))
        except (OSError, ValueError, IndexError):
            continue
        if example is not None:
            out.append(example)
    return tuple(out)


def example_systems() -> list[ExampleSystem]:
    """Every installed example input that reads a data file of its folder, as a system (those that
    cannot be run carry `refused`)."""
    root = examples_dir()
    return list(_catalogue(str(root))) if root is not None else []


def job_files(example: ExampleSystem) -> dict[str, str]:
    """The example's files the kept lines read (data file, force fields), by name: copied into the job."""
    folder = Path(example.folder)
    return {name: (folder / name).read_text(errors="replace") for name in example.files}


HBOND_COLUMN = "c_hbcount[1]"  # compute pair hbond/dreiding/*: its first extra value is the number of hydrogen bonds


def hbond_style(example: ExampleSystem | None) -> str | None:
    """The pair style of an example's system that counts hydrogen bonds (hbond/dreiding/lj, /morse), or None."""
    if example is None:
        return None
    return next((s.split()[1] for s in example.styles if re.match(r"pair hbond/", s)), None)


def hbond_lines(example: ExampleSystem | None) -> list[str]:
    """compute pair on the hydrogen-bond style: [1] the number of hydrogen bonds, [2] their energy (LAMMPS manual,
    pair hbond/dreiding)."""
    style = hbond_style(example)
    return [f"compute         hbcount all pair {style}"] if style else []


def own_integrators(example: ExampleSystem | None, fixes: list[str]) -> list[str]:
    """The stage's integrator fix in the variant the example's particles need (fix nve -> fix nve/body for body
    particles, as the example integrates them); other fixes as they are."""
    if example is None or not example.integrators:
        return fixes
    out = []
    for line in fixes:
        words = line.split()
        if len(words) > 3 and words[0] == "fix" and words[3] in example.integrators:
            line = line.replace(f" {words[3]}", f" {example.integrators[words[3]]}", 1)
        out.append(line)
    return out


THERMOSTAT_STYLES = ("nvt", "npt", "langevin", "temp/berendsen", "temp/rescale", "temp/csvr")


def thermo_keywords(example: ExampleSystem | None) -> str:
    """' temp CStemp press thermo_press_lmp': the example's own temperature and pressure computes for thermo."""
    if example is None:
        return ""
    return "".join(f" {k} {v}" for k, v in sorted(example.thermo_computes.items(), reverse=True))


def velocity_keywords(example: ExampleSystem | None) -> str:
    """' bias yes temp CStemp': velocities created at the temperature the example's own compute measures (without
    the bias it removes, as the example creates them)."""
    if example is None or "temp" not in example.thermo_computes:
        return ""
    bias = any(re.search(r"^velocity\b.*\bbias yes\b", line) for line in example.protocol)
    return f"{' bias yes' if bias else ''} temp {example.thermo_computes['temp']}"


def thermostat_modify(example: ExampleSystem | None, fixes: list[str]) -> list[str]:
    """fix_modify ID temp <compute> for each thermostat fix: it controls the temperature the example's system
    defines (core-shell ions: the cores' and shells' centre-of-mass motion, compute temp/cs)."""
    if example is None or "temp" not in example.thermo_computes:
        return []
    return [f"fix_modify      {w[1]} temp {example.thermo_computes['temp']}" for w in (f.split() for f in fixes)
            if len(w) > 3 and w[0] == "fix" and w[3] in THERMOSTAT_STYLES]
