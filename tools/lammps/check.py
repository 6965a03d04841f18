"""Pre-run checks for LAMMPS inputs: a safety policy, a static reading of the script (units,
timestep, box, potential coverage) and a parse-level dry run (`lmp -skiprun`).

Safety policy: a generated or user-edited input may not run shell or host code, open network
connections, or read or write files outside its job folder. Rejected (nothing runs):
  * commands `shell`, `python`, `plugin`, `geturl`, `mdi`, `message`, `server`, `kim*`;
  * styles that call host code or talk to other programs: `python*` (fix python/invoke,
    python/move, pair python), `mdi/*`, `ipi`, `imd`, `client/md`, `external`, `dump movie`;
  * variables of style `python`, `getenv`, `internal`-free reading of host state (one exception: a
    getenv of the runner's own CLEAN_STOP_ENV, the number of seconds after which the engine should stop
    itself, simagent.executor);
  * absolute, home (`~`) or parent-directory (`..`) paths anywhere, compressed files (LAMMPS
    reads them through an external program), file names with shell metacharacters;
  * `include`/`jump` of a file that is not an input of the job; commands or file names built
    from variables that cannot be resolved statically.
Nested commands (`if ... then "..."`, `run N every M "..."`, `partition ... command`) are
checked the same way.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from simagent.executor import CLEAN_STOP_ENV
from simagent.handlers import Finding
from tools.lammps import engine

# ---------------------------------------------------------------------------------------------
# Tokenising LAMMPS input (manual, "Parsing rules": '#' comments outside quotes, '&' continues a
# line, single/double/triple quotes group words, $x / ${name} / $(expr) substitution)
# ---------------------------------------------------------------------------------------------


@dataclass
class Command:
    file: str
    line: int  # physical line number where the command starts (1-based)
    text: str  # the logical line, comments removed
    words: list[str]  # quotes removed

    @property
    def name(self) -> str:
        return self.words[0] if self.words else ""

    def arg(self, i: int, default: str = "") -> str:
        return self.words[i] if len(self.words) > i else default


def _strip_comment(line: str) -> str:
    quote = None
    i = 0
    while i < len(line):
        if line.startswith('"""', i):
            quote = None if quote == '"""' else ('"""' if quote is None else quote)
            i += 3
            continue
        ch = line[i]
        if quote is None and ch in "\"'":
            quote = ch
        elif quote == ch:
            quote = None
        elif quote is None and ch == "#":
            return line[:i]
        i += 1
    return line


def split_words(text: str) -> list[str]:
    words, buf, quote, i, has = [], [], None, 0, False
    while i < len(text):
        if text.startswith('"""', i) and quote in (None, '"""'):
            quote = None if quote == '"""' else '"""'
            has = True
            i += 3
            continue
        ch = text[i]
        if quote is None and ch in "\"'":
            quote, has = ch, True
        elif quote is not None and quote == ch:
            quote = None
        elif quote is None and ch.isspace():
            if buf or has:
                words.append("".join(buf))
            buf, has = [], False
        else:
            buf.append(ch)
        i += 1
    if buf or has:
        words.append("".join(buf))
    return words


def logical_lines(text: str) -> list[tuple[int, str]]:
    out, buf, start = [], "", None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw).rstrip()
        if start is None:
            start = number
        if line.endswith("&"):
            buf += line[:-1] + " "
            continue
        full = (buf + line).strip()
        if full:
            out.append((start, full))
        buf, start = "", None
    if buf.strip():
        out.append((start or 1, buf.strip()))
    return out


def parse_commands(text: str, file: str = engine.MAIN_INPUT) -> list[Command]:
    return [Command(file, number, line, split_words(line)) for number, line in logical_lines(text)]


_SUBST = re.compile(r"\$\{(\w+)\}|\$(\w)")


def substitute(text: str, variables: dict[str, str]) -> str:
    """Replace $x and ${name} whose value is known statically (first value of index/loop styles)."""
    return _SUBST.sub(lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), text)


# ---------------------------------------------------------------------------------------------
# Safety policy
# ---------------------------------------------------------------------------------------------

FORBIDDEN_COMMANDS = {
    "shell": "runs shell commands on the host",
    "python": "runs Python code on the host",
    "plugin": "loads compiled code into LAMMPS",
    "geturl": "downloads files from the network",
    "mdi": "connects to other programs (MolSSI driver interface)",
    "message": "opens a connection to another program",
    "server": "opens a connection to another program",
    "kim": "queries the OpenKIM web service / loads external models",
    "kim_init": "loads external OpenKIM models",
    "kim_interactions": "loads external OpenKIM models",
    "kim_query": "queries the OpenKIM web service",
    "kim_param": "uses external OpenKIM models",
    "kim_property": "uses external OpenKIM models",
}
_FORBIDDEN_STYLE = re.compile(r"^(python.*|mdi/.*|ipi|imd|client/.*|external|quip|kim)$")
_STYLE_COMMANDS = {"fix": 3, "compute": 3, "pair_style": 1, "dump": 3}  # index of the style word
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".lzma", ".lz4", ".z")
_SAFE_NAME = re.compile(r"^[\w.+\-/*%]+$")
# Commands whose arguments name files, and which argument positions / keywords do.
_FILE_POSITIONS = {
    "include": [1], "log": [1], "read_data": [1], "read_restart": [1], "read_dump": [1], "rerun": [1],
    "molecule": [2], "write_data": [1], "write_restart": [1], "write_dump": [3], "write_coeff": [1],
    "dump": [5], "restart": [2, 3], "jump": [1], "bond_write": [6], "angle_write": [4],
    "dihedral_write": [4], "pair_write": [8],
}
_FILE_KEYWORDS = {"file", "append", "out", "screen", "infile", "outfile", "fileper", "restart", "data"}


def _path_problem(token: str) -> str | None:
    token = token.strip()
    if token.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", token):
        return f"absolute path '{token}' leaves the job folder"
    if ".." in re.split(r"[\\/]", token):
        return f"path '{token}' leaves the job folder"
    return None


def _file_problem(token: str) -> str | None:
    problem = _path_problem(token)
    if problem:
        return problem
    if "$" in token or token.startswith("v_"):
        return f"file name '{token}' is built from a variable and cannot be checked"
    if token.lower().endswith(_COMPRESSED):
        return f"compressed file '{token}' would be read or written through an external program"
    if token not in ("SELF", "NULL", "none", "yes", "no") and not _SAFE_NAME.match(token):
        return f"file name '{token}' contains characters that are not allowed"
    return None


def _file_tokens(cmd: Command) -> list[str]:
    words = cmd.words
    tokens = [words[i] for i in _FILE_POSITIONS.get(cmd.name, []) if i < len(words)]
    if cmd.name == "restart" and len(words) > 2:
        tokens = [w for w in words[2:] if w not in ("fileper", "nfile")][:2]
    for i, word in enumerate(words[1:-1], start=1):
        if word in _FILE_KEYWORDS and cmd.name not in ("thermo_modify",):
            tokens.append(words[i + 1])
    if cmd.name == "variable" and len(words) > 3 and words[2] in ("file", "atomfile"):
        tokens.append(words[3])
    if cmd.name in ("pair_coeff", "bond_coeff", "angle_coeff") and len(words) > 3:
        tokens += [w for w in words[3:] if "." in w and not _is_number(w)]
    return tokens


def _is_number(word: str) -> bool:
    try:
        float(word)
        return True
    except ValueError:
        return False


def _nested_commands(cmd: Command) -> list[str]:
    """Command strings that a command runs itself (if/then/else, run every, partition)."""
    words = cmd.words
    if cmd.name == "if":
        nested, take = [], False
        for word in words[2:]:
            if word in ("then", "else"):
                take = True
            elif word == "elif":
                take = False
            elif take:
                nested.append(word)
            else:
                take = False
        return nested
    if cmd.name == "run" and "every" in words:
        i = words.index("every")
        return [w for w in words[i + 2:] if w != "NULL"]
    if cmd.name == "partition" and len(words) > 3:
        return [" ".join(words[3:])]
    if cmd.name in ("fix",) and len(words) > 3 and words[3] == "halt":
        return []
    return []


def _command_problems(cmd: Command, variables: dict[str, str], inputs: dict[str, str], depth: int) -> list[str]:
    if not cmd.words:
        return []
    name = cmd.name
    if "$" in name or name.startswith("v_"):
        return [f"a command name built from a variable cannot be checked: {cmd.text}"]
    if name in FORBIDDEN_COMMANDS or name.startswith("kim"):
        why = FORBIDDEN_COMMANDS.get(name, "uses external OpenKIM models")
        return [f"`{name}` {why} and is not allowed: {cmd.text}"]
    style_at = _STYLE_COMMANDS.get(name)
    if style_at is not None and len(cmd.words) > style_at:
        style = cmd.words[style_at]
        if _FORBIDDEN_STYLE.match(style) or (name == "dump" and style == "movie"):
            return [f"{name} style `{style}` runs host code or talks to other programs and is not allowed: {cmd.text}"]
    if name == "pair_style" and "hybrid" in cmd.arg(1):
        bad = [w for w in cmd.words[2:] if _FORBIDDEN_STYLE.match(w)]
        if bad:
            return [f"pair style `{bad[0]}` runs host code and is not allowed: {cmd.text}"]
    if name == "variable" and len(cmd.words) > 2 and cmd.words[2] in ("python", "getenv") and \
            cmd.words[2:] != ["getenv", CLEAN_STOP_ENV]:
        return [f"variable style `{cmd.words[2]}` reads the host environment or runs Python and is not "
                f"allowed: {cmd.text}"]
    problems = []
    skip = set()
    if name == "print":
        skip = {1}
    if name == "fix" and cmd.arg(2) == "print":
        skip = {4}
    if name in ("variable",) and cmd.arg(2) in ("string", "format", "equal", "atom", "vector", "index",
                                                    "loop", "world", "universe", "uloop"):
        skip = set(range(3, len(cmd.words)))  # values; checked where they are used as file names
    for i, word in enumerate(cmd.words[1:], start=1):
        if i in skip:
            continue
        problem = _path_problem(word)
        if problem:
            problems.append(f"{problem}: {cmd.text}")
            break
    if not problems:
        for token in _file_tokens(cmd):
            problem = _file_problem(token)
            if problem:
                problems.append(f"{problem}: {cmd.text}")
                break
    if name in ("include",) or (name == "jump" and cmd.arg(1) not in ("SELF", "")):
        target = cmd.arg(1)
        if target and not _file_problem(target) and target not in inputs:
            problems.append(f"`{name} {target}`: the file is not an input of this job")
    for nested in _nested_commands(cmd):
        if depth > 5:
            problems.append(f"nesting too deep to check: {cmd.text}")
            break
        for sub in parse_commands(substitute(nested, variables), cmd.file):
            sub.line = cmd.line
            problems += _command_problems(sub, variables, inputs, depth + 1)
    return problems


def _track_variable(cmd: Command, variables: dict[str, str]) -> None:
    """Remember the first value of a variable, as LAMMPS would substitute it at this point."""
    if cmd.name != "variable" or len(cmd.words) < 4:
        return
    name, style, value = cmd.words[1], cmd.words[2], cmd.words[3]
    if style == "index":
        variables.setdefault(name, value)  # LAMMPS ignores a redefinition of an index variable
    elif style in ("string", "world", "universe", "uloop", "equal", "format"):
        variables[name] = value
    elif style == "loop":
        variables[name] = value if len(cmd.words) > 4 and _is_number(cmd.words[4]) else "1"


def safety_findings(inputs: dict[str, str], main: str = engine.MAIN_INPUT) -> list[Finding]:
    """Lines of any LAMMPS input file of the job that would run host code or leave the folder.

    Every file that looks like a LAMMPS script is checked (the main input, files it includes)."""
    findings: list[Finding] = []
    scripts = [main] + [n for n in inputs if n != main and _looks_like_script(n, inputs[n])]
    for name in scripts:
        if name not in inputs:
            continue
        variables: dict[str, str] = {}
        for cmd in parse_commands(inputs[name], name):
            _track_variable(cmd, variables)
            resolved = cmd
            if "$" in cmd.text:
                text = substitute(cmd.text, variables)
                resolved = Command(cmd.file, cmd.line, text, split_words(text))
            for problem in _command_problems(resolved, variables, inputs, 0):
                findings.append(Finding("unsafe", problem, category="unsafe input", file=name, line=cmd.line,
                                        handler="safety policy"))
    return findings


def _looks_like_script(name: str, text: str) -> bool:
    if name.endswith((".lmp", ".in", ".lammps", ".inc", ".include")) or name.startswith("in."):
        return True
    first = next((w for _, w in logical_lines(text)[:1]), "")
    return first.split()[0] in _KNOWN_COMMANDS if first.split() else False


def safety_problems(text: str) -> list[str]:
    """Back-compatible: safety problems of one input text, as messages with line numbers."""
    return [f"line {f.line}: {f.message}" for f in safety_findings({engine.MAIN_INPUT: text})]


# ---------------------------------------------------------------------------------------------
# A static reading of the script: what the run will look like
# ---------------------------------------------------------------------------------------------

# Core commands implemented in LAMMPS' input.cpp plus the command styles of this build.
_KNOWN_COMMANDS = set("""
clear echo if include jump label log next partition print python quit shell variable angle_coeff
angle_style atom_modify atom_style bond_coeff bond_style bond_write boundary comm_modify comm_style
compute compute_modify dielectric dihedral_coeff dihedral_style dimension dump dump_modify fix
fix_modify group improper_coeff improper_style kspace_modify kspace_style labelmap lattice mass
min_modify min_style molecule neigh_modify neighbor newton package pair_coeff pair_modify pair_style
pair_write processors region reset_timestep restart run_style special_bonds suffix thermo
thermo_modify thermo_style timestep timer uncompute undump unfix units angle_write balance change_box
create_atoms create_bonds create_box delete_atoms delete_bonds displace_atoms info minimize read_data
read_dump read_restart replicate rerun run set velocity write_coeff write_data write_dump
write_restart reset_atoms reset_atom_ids reset_mol_ids dihedral_write group2ndx ndx2group
fix_modify kim geturl plugin region2vmd neb prd tad temper hyper dynamical_matrix third_order
""".split())

# Time unit of each units style, in femtoseconds (LAMMPS manual, `units`).
TIME_UNIT_FS = {"real": 1.0, "metal": 1e3, "si": 1e15, "cgs": 1e15, "electron": 1.0, "micro": 1e9, "nano": 1e6}
DEFAULT_TIMESTEP = {"lj": 0.005, "real": 1.0, "metal": 0.001, "si": 1e-8, "cgs": 1e-8, "electron": 0.001,
                    "micro": 2.0, "nano": 0.00045}
# Boltzmann constant in each style's energy per temperature (LAMMPS `units` page).
K_BOLTZMANN = {"lj": 1.0, "real": 0.0019872067, "metal": 8.617343e-5, "si": 1.3806504e-23,
               "cgs": 1.3806504e-16, "electron": 3.16681534e-6}
INTEGRATORS = {"nve", "nvt", "npt", "nph", "nve/limit", "nvt/sllod", "rigid", "rigid/nve", "rigid/nvt",
               "rigid/npt", "rigid/small", "rigid/nve/small", "rigid/nvt/small", "rigid/npt/small",
               "nve/sphere", "nvt/sphere", "npt/sphere", "nve/asphere", "nvt/asphere", "nve/noforce",
               "brownian", "nvk", "nve/dot", "nve/dotc/langevin", "nvt/manifold/rattle", "nve/manifold/rattle",
               "gld", "gle", "nvt/eff", "npt/eff", "nve/eff", "rigid/nph", "rigid/nph/small", "nph/sphere"}
THERMOSTATS = {"nvt", "npt", "langevin", "temp/berendsen", "temp/rescale", "temp/csvr", "temp/csld",
               "rigid/nvt", "rigid/npt", "rigid/nvt/small", "rigid/npt/small", "nvt/sllod", "gld", "gle",
               "langevin/eff", "nvt/eff", "npt/eff", "dpd/tstat", "temp/rescale/eff", "brownian",
               "srd"}  # fix srd rescales its solvent's velocities to its temperature: the big particles exchange energy
BAROSTATS = {"npt", "nph", "press/berendsen", "rigid/npt", "rigid/nph", "rigid/npt/small", "box/relax",
             "press/langevin", "npt/eff", "nph/sphere", "npt/sphere"}
# Cell edge per lattice spacing (conventional cells) and atoms per cell, LAMMPS `lattice` page.
_LATTICE_CELL = {"sc": ((1, 1, 1), 1), "bcc": ((1, 1, 1), 2), "fcc": ((1, 1, 1), 4), "diamond": ((1, 1, 1), 8),
                 "hcp": ((1, math.sqrt(3), math.sqrt(8 / 3)), 4), "sq": ((1, 1, 1), 1), "sq2": ((1, 1, 1), 2),
                 "hex": ((1, math.sqrt(3), 1), 2)}


@dataclass
class Fix:
    id: str
    group: str
    style: str
    args: list[str]
    line: int


@dataclass
class RunBlock:
    """One `run` or `minimize` with the state that applies to it."""

    kind: str  # run | minimize
    steps: int
    line: int
    timestep: float
    fixes: list[Fix]


@dataclass
class ScriptModel:
    """What a static reading of the input tells (None: cannot tell without running)."""

    commands: list[Command] = field(default_factory=list)
    units: str = "lj"
    dimension: int = 3
    boundary: list[str] = field(default_factory=lambda: ["p", "p", "p"])
    atom_style: str = "atomic"
    timestep: float | None = None
    timestep_line: int | None = None
    n_types: int | None = None
    n_atoms: int | None = None
    masses: dict[int, float] = field(default_factory=dict)
    box: tuple[float, float, float] | None = None
    pair_style: str | None = None
    pair_args: list[str] = field(default_factory=list)
    pair_coeffs: list[Command] = field(default_factory=list)
    data_pair_coeffs: bool = False  # a data file read after the pair style gives its coefficients (Pair Coeffs)
    kspace: str | None = None
    charged: bool = False
    shake: bool = False
    thermo_norm: bool | None = None
    variables: dict[str, str] = field(default_factory=dict)
    fixes: dict[str, Fix] = field(default_factory=dict)
    runs: list[RunBlock] = field(default_factory=list)
    data_files: list[str] = field(default_factory=list)
    neighbor_skin: float | None = None
    random_start: bool = False
    minimized_first: bool = False

    @property
    def dt(self) -> float:
        return self.timestep if self.timestep is not None else DEFAULT_TIMESTEP.get(self.units, 0.005)

    @property
    def kB(self) -> float:
        return K_BOLTZMANN.get(self.units, 1.0)

    @property
    def per_atom_thermo(self) -> bool:
        """LAMMPS normalises extensive thermo output per atom by default in lj units only."""
        return self.thermo_norm if self.thermo_norm is not None else self.units == "lj"

    def lightest_mass(self) -> float | None:
        return min(self.masses.values()) if self.masses else None

    def last_dynamics(self) -> RunBlock | None:
        runs = [r for r in self.runs if r.kind == "run" and r.steps > 0]
        return runs[-1] if runs else None

    def pair_cutoff(self) -> float | None:
        """Global cutoff of the pair style (first numeric argument of most styles)."""
        if not self.pair_style:
            return None
        numbers = [float(a) for a in self.pair_args if _is_number(a)]
        if self.pair_style.startswith(("lj/", "coul/", "born", "buck", "morse", "soft", "yukawa", "table")) and numbers:
            if self.pair_style.startswith("table"):
                return None
            return max(numbers)
        return None


def _lattice_spacing(words: list[str], units: str) -> tuple[float, float, float] | None:
    if len(words) < 3 or words[1] not in _LATTICE_CELL or not _is_number(words[2]):
        return None
    (fx, fy, fz), per_cell = _LATTICE_CELL[words[1]]
    scale = float(words[2])
    if units == "lj":  # the scale is a reduced density: a = (n_cell / rho*)^(1/dim)
        if scale <= 0:
            return None
        a = (per_cell / scale / (fx * fy * fz)) ** (1 / 3)
    else:
        a = scale
    spacing = [a * fx, a * fy, a * fz]
    if "spacing" in words:
        i = words.index("spacing")
        try:
            spacing = [float(w) * a for w in words[i + 1:i + 4]]
        except ValueError:
            return None
    return tuple(spacing)  # type: ignore[return-value]


def _read_data_header(text: str) -> dict:
    info: dict = {"masses": {}}
    lines = text.splitlines()
    for i, line in enumerate(lines[1:], start=1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        words = body.split()
        if body.endswith("atoms") and len(words) == 2 and words[0].isdigit():
            info["n_atoms"] = int(words[0])
        elif body.endswith("atom types") and words[0].isdigit():
            info["n_types"] = int(words[0])
        elif len(words) == 4 and words[2:] in (["xlo", "xhi"], ["ylo", "yhi"], ["zlo", "zhi"]):
            info.setdefault("bounds", {})[words[2][0]] = float(words[1]) - float(words[0])
        elif words[0] == "Masses":
            for mass_line in lines[i + 1:]:
                mb = mass_line.split("#", 1)[0].split()
                if not mb:
                    if info["masses"]:
                        break
                    continue
                if not mb[0].isdigit():
                    break
                info["masses"][int(mb[0])] = float(mb[1])
            break
        elif words[0][0].isalpha() and words[0] not in ("Masses",) and info.get("bounds"):
            break
    return info


def read_script(inputs: dict[str, str], main: str = engine.MAIN_INPUT) -> ScriptModel:
    """Interpret the input statically: settings in force, fixes at each run, box, masses."""
    model = ScriptModel()
    if main not in inputs:
        return model
    spacing: tuple[float, float, float] | None = None
    regions: dict[str, tuple[float, float, float] | None] = {}
    pending = list(parse_commands(inputs[main], main))
    seen_includes: set[str] = set()
    while pending:
        cmd = pending.pop(0)
        _track_variable(cmd, model.variables)
        if "$" in cmd.text:
            text = substitute(cmd.text, model.variables)
            cmd = Command(cmd.file, cmd.line, text, split_words(text))
        model.commands.append(cmd)
        w, name = cmd.words, cmd.name
        if name == "include" and cmd.arg(1) in inputs and cmd.arg(1) not in seen_includes:
            seen_includes.add(cmd.arg(1))
            pending = parse_commands(inputs[cmd.arg(1)], cmd.arg(1)) + pending
        elif name == "units" and len(w) > 1:
            model.units = w[1]
        elif name == "dimension" and len(w) > 1 and w[1].isdigit():
            model.dimension = int(w[1])
        elif name == "boundary" and len(w) >= 4:
            model.boundary = w[1:4]
        elif name == "atom_style" and len(w) > 1:
            model.atom_style = w[1]
            model.charged = model.charged or w[1] in ("charge", "full", "dipole", "peri") or "charge" in w
        elif name == "timestep" and len(w) > 1 and _is_number(w[1]):
            model.timestep, model.timestep_line = float(w[1]), cmd.line
        elif name == "lattice":
            spacing = _lattice_spacing(w, model.units)
        elif name == "region" and len(w) >= 9 and w[2] == "block":
            try:
                bounds = [float(x) for x in w[3:9]]
            except ValueError:
                regions[w[1]] = None
                continue
            lengths = (bounds[1] - bounds[0], bounds[3] - bounds[2], bounds[5] - bounds[4])
            box_units = "units" in w and w[w.index("units") + 1] == "box"
            if box_units:
                regions[w[1]] = lengths
            elif spacing:
                regions[w[1]] = tuple(x * s for x, s in zip(lengths, spacing, strict=True))  # type: ignore[assignment]
            else:
                regions[w[1]] = None
        elif name == "create_box" and len(w) > 2 and w[1].isdigit():
            model.n_types = int(w[1])
            model.box = regions.get(w[2])
        elif name == "read_data" and len(w) > 1:
            model.data_files.append(w[1])
            if w[1] in inputs:
                header = _read_data_header(inputs[w[1]])
                model.n_types = header.get("n_types", model.n_types)
                model.n_atoms = header.get("n_atoms", model.n_atoms)
                model.masses.update(header["masses"])
                model.data_pair_coeffs = model.data_pair_coeffs or bool(
                    re.search(r"^\s*Pair(?:IJ)? Coeffs\b", inputs[w[1]], re.MULTILINE))
                bounds = header.get("bounds", {})
                if len(bounds) == 3:
                    model.box = (bounds["x"], bounds["y"], bounds["z"])
        elif name == "replicate" and len(w) >= 4 and model.box:
            try:
                model.box = tuple(b * int(n) for b, n in zip(model.box, w[1:4], strict=True))  # type: ignore[assignment]
            except ValueError:
                model.box = None
        elif name == "create_atoms" and "random" in w:
            model.random_start = True
        elif name == "mass" and len(w) > 2 and _is_number(w[2]):
            for t in _type_range(w[1], model.n_types):
                model.masses[t] = float(w[2])
        elif name == "pair_style" and len(w) > 1:
            model.pair_style, model.pair_args, model.pair_coeffs = w[1], w[2:], []
            model.data_pair_coeffs = False
            if "coul" in w[1] or w[1].startswith(("reaxff", "comb", "streitz")):
                model.charged = model.charged or "coul" in w[1]
        elif name == "pair_coeff":
            model.pair_coeffs.append(cmd)
        elif name == "kspace_style" and len(w) > 1:
            model.kspace = None if w[1] == "none" else w[1]
        elif name == "set" and "charge" in w:
            model.charged = True
        elif name == "neighbor" and len(w) > 1 and _is_number(w[1]):
            model.neighbor_skin = float(w[1])
        elif name == "thermo_modify" and "norm" in w:
            i = w.index("norm")
            model.thermo_norm = cmd.arg(i + 1) == "yes"
        elif name == "fix" and len(w) >= 4:
            model.fixes[w[1]] = Fix(w[1], w[2], w[3], w[4:], cmd.line)
            if w[3] in ("shake", "rattle") or w[3].startswith("rigid"):
                model.shake = True
        elif name == "unfix" and len(w) > 1:
            model.fixes.pop(w[1], None)
        elif name in ("run", "minimize"):
            steps = 0
            if name == "run" and len(w) > 1:
                steps = int(float(w[1])) if _is_number(w[1]) else 0
            if name == "minimize" and not any(r.kind == "run" for r in model.runs):
                model.minimized_first = True
            model.runs.append(RunBlock(name, steps, cmd.line, model.dt, list(model.fixes.values())))
        elif name == "clear":
            break  # a second, independent simulation follows (e.g. an isolated-atom reference)
    _masses_from_potential(model)
    return model


def type_elements(model: ScriptModel) -> dict[int, str]:
    """Element of each atom type from a many-body `pair_coeff * * file E1 E2 ...` line."""
    for cmd in model.pair_coeffs:
        w = cmd.words
        if len(w) >= 4 and w[1] == "*" and w[2] == "*":
            if model.pair_style == "eam":
                elements = potential_elements(w[3]) or []
                if len(elements) == 1 and model.n_types:
                    return {t: elements[0] for t in range(1, model.n_types + 1)}
            names = [x for x in w[4:] if x in _ELEMENT_MASSES or x == "NULL"]
            if names and len(names) == len(w[4:]):
                return {i + 1: e for i, e in enumerate(names) if e != "NULL"}
    return {}


def _masses_from_potential(model: ScriptModel) -> None:
    """Many-body potential files set the masses of the types they map (e.g. eam/alloy)."""
    for t, element in type_elements(model).items():
        model.masses.setdefault(t, _ELEMENT_MASSES[element])


def _element_masses() -> dict[str, float]:
    from ase.data import atomic_masses, chemical_symbols

    return {s: float(m) for s, m in zip(chemical_symbols, atomic_masses, strict=True) if s != "X"}


_ELEMENT_MASSES = _element_masses()


def _type_range(spec: str, n_types: int | None) -> list[int]:
    """LAMMPS type ranges: '2', '*', '1*3', '*2', '2*'."""
    if spec.isdigit():
        return [int(spec)]
    if "*" in spec and n_types:
        lo, hi = spec.split("*", 1)
        return list(range(int(lo) if lo else 1, (int(hi) if hi else n_types) + 1))
    return []


# ---------------------------------------------------------------------------------------------
# Physics and consistency checks on the static model
# ---------------------------------------------------------------------------------------------

# Largest sensible MD timestep, by the lightest mass (g/mol), in fs. The fastest vibrations set the
# step: ~1/20 of an O-H/C-H stretch period (~10 fs) for hydrogen without constraints; with
# SHAKE/RATTLE 2 fs (standard for water models); heavier atoms a few fs (metals: 1-5 fs, e.g.
# LAMMPS examples use 1-5 fs for EAM metals). A step beyond these bounds makes NVE drift or atoms fly.
def max_timestep_fs(lightest_mass: float, constrained: bool) -> float:
    if lightest_mass < 4.5:  # H, D, He
        return 2.5 if constrained else 1.0
    if lightest_mass < 20:  # C, N, O: bonded organics, ~1-2 fs
        return 2.5 if constrained else 2.0
    return min(10.0, 5.0 * math.sqrt(lightest_mass / 50.0))


# For Lennard-Jones systems the natural time is tau = sigma sqrt(m / epsilon); 0.005 tau is the
# usual step and stability is lost above ~0.02 tau (Allen & Tildesley, ch. 3).
LJ_MAX_TIMESTEP_TAU = 0.015
LJ_GOOD_TIMESTEP_TAU = 0.005
# Thermostat/barostat damping: LAMMPS manual (fix nh) recommends ~100 and ~1000 timesteps.
TDAMP_STEPS, PDAMP_STEPS, MIN_DAMP_STEPS = 100, 1000, 10


def lj_tau(model: ScriptModel) -> float | None:
    """sigma sqrt(m/epsilon) in the units' time unit for a one-type-or-more lj/cut system (the
    smallest over types with i i coefficients), None when not an LJ system or unknown."""
    if not model.pair_style or not model.pair_style.startswith("lj/cut") or "coul" in model.pair_style:
        return None
    taus = []
    for cmd in model.pair_coeffs:
        w = cmd.words
        if len(w) < 5 or not (_is_number(w[3]) and _is_number(w[4])):
            continue
        types = _type_range(w[1], model.n_types)
        if w[1] != w[2] or not types:
            continue
        eps, sigma = float(w[3]), float(w[4])
        for t in types:
            mass = model.masses.get(t)
            if mass and eps > 0 and sigma > 0:
                if model.units == "lj":
                    taus.append(sigma * math.sqrt(mass / eps))
                elif model.units in ("metal", "real"):
                    # m [g/mol], eps [eV or kcal/mol], sigma [A]: tau in fs = sigma sqrt(m/eps) * c
                    # with c = sqrt(1e-3 kg / 6.02214076e23 / (eps_J)) * 1e-10 m -> s -> fs
                    eps_j = eps * (1.602176634e-19 if model.units == "metal" else 4184 / 6.02214076e23)
                    tau_s = sigma * 1e-10 * math.sqrt(mass * 1e-3 / 6.02214076e23 / eps_j)
                    taus.append(tau_s * 1e15 / TIME_UNIT_FS[model.units])
    return min(taus) if taus else None


def timestep_bound(model: ScriptModel) -> tuple[float, float, str] | None:
    """(largest sensible dt, a good dt, why) in the script's time unit, None when unknown."""
    tau = lj_tau(model)
    if tau is not None:
        return (LJ_MAX_TIMESTEP_TAU * tau, LJ_GOOD_TIMESTEP_TAU * tau,
                f"{LJ_MAX_TIMESTEP_TAU:g} tau for LJ (tau = sigma sqrt(m/eps) = {tau:.4g})")
    if model.units == "lj":
        if model.lightest_mass() is None:
            return None
        return LJ_MAX_TIMESTEP_TAU, LJ_GOOD_TIMESTEP_TAU, f"{LJ_MAX_TIMESTEP_TAU:g} tau in reduced units"
    mass = model.lightest_mass()
    if mass is None or model.units not in TIME_UNIT_FS:
        return None
    bound_fs = max_timestep_fs(mass, model.shake)
    unit = TIME_UNIT_FS[model.units]
    good = bound_fs / 2
    return (bound_fs / unit, good / unit,
            f"{bound_fs:g} fs for a lightest mass of {mass:g} g/mol{' with constraints' if model.shake else ''}")


def nice_number(value: float) -> float:
    """Round down to 1, 2 or 5 times a power of ten (timesteps people write)."""
    if value <= 0:
        return value
    exponent = math.floor(math.log10(value))
    for mantissa in (5, 2, 1):
        if mantissa * 10**exponent <= value * (1 + 1e-9):
            return float(f"{mantissa * 10 ** exponent:.12g}")
    return value


def static_findings(inputs: dict[str, str], main: str = engine.MAIN_INPUT) -> list[Finding]:
    """Physics and consistency findings from the static model (no engine run)."""
    model = read_script(inputs, main)
    findings: list[Finding] = []
    dynamics = [r for r in model.runs if r.kind == "run" and r.steps > 0]
    if not model.runs:
        findings.append(Finding("warning", "the input has no run or minimize command: nothing is simulated",
                                category="script order", file=main))
    bound = timestep_bound(model)
    if bound and dynamics:
        largest, good, why = bound
        dt = max(r.timestep for r in dynamics)
        if dt > largest * (1 + 1e-9):
            findings.append(Finding(
                "warning", f"timestep {dt:g} is too large for units {model.units} (limit {largest:.3g}: {why})",
                category="timestep", file=main, line=model.timestep_line, handler="TimestepTooLarge",
                actions=[{"file": main, "_set_option": {"key": "timestep", "value": f"{nice_number(good):g}"}}],
            ))
    for block in dynamics:
        for fix in block.fixes:
            damp = _damping(fix)
            for kind, value in damp:
                if value is not None and value < MIN_DAMP_STEPS * block.timestep:
                    steps = TDAMP_STEPS if kind == "temp" else PDAMP_STEPS
                    findings.append(Finding(
                        "warning",
                        f"fix {fix.id} ({fix.style}) {kind} damping {value:g} is shorter than "
                        f"{MIN_DAMP_STEPS} timesteps ({MIN_DAMP_STEPS * block.timestep:g}); LAMMPS recommends "
                        f"about {steps} timesteps", category="thermostat/barostat", file=main, line=fix.line,
                        handler="ThermostatDamping"))
        integrated = [f for f in block.fixes if f.style in INTEGRATORS]
        groups: dict[str, list[Fix]] = {}
        for fix in integrated:
            groups.setdefault(fix.group, []).append(fix)
        for group, fixes in groups.items():
            if len(fixes) > 1 or (group != "all" and any(f.group == "all" for f in integrated) and fixes):
                if len(fixes) > 1:
                    ids = ", ".join(f"{f.id} ({f.style})" for f in fixes)
                    findings.append(Finding(
                        "warning", f"atoms of group {group} are time-integrated by several fixes ({ids})",
                        category="fix/compute incompatibility", file=main, line=fixes[-1].line,
                        handler="DoubleIntegration"))
    unique: dict[str, Finding] = {}
    for finding in findings:
        unique.setdefault(finding.message, finding)
    findings = list(unique.values())
    cutoff = model.pair_cutoff()
    if cutoff and model.box and dynamics:
        periodic = [length for length, b in zip(model.box, model.boundary, strict=False) if b == "p"]
        if periodic and cutoff > min(periodic) / 2:
            findings.append(Finding(
                "warning", f"pair cutoff {cutoff:g} exceeds half the shortest periodic box edge "
                f"({min(periodic):.4g}): atoms interact with their own images", category="region and geometry",
                file=main, handler="CutoffHalfBox"))
    if model.charged and model.pair_style and "coul/cut" in model.pair_style and model.kspace is None and \
            all(b == "p" for b in model.boundary) and dynamics:
        findings.append(Finding(
            "warning", f"charges in a periodic system with {model.pair_style} and no long-range solver "
            "(kspace_style): electrostatics are truncated", category="pair/force field", file=main,
            handler="ChargesWithoutKspace"))
    findings += coverage_findings(model, main)
    return findings


def _damping(fix: Fix) -> list[tuple[str, float | None]]:
    """(kind, damping time) of a thermostat/barostat fix."""
    out: list[tuple[str, float | None]] = []
    args = fix.args
    if fix.style in ("nvt", "npt", "nph", "rigid/nvt", "rigid/npt", "nvt/sllod"):
        for key, kind in (("temp", "temp"), ("iso", "press"), ("aniso", "press"), ("tri", "press"),
                          ("x", "press"), ("y", "press"), ("z", "press")):
            if key in args:
                i = args.index(key)
                if len(args) > i + 3 and _is_number(args[i + 3]):
                    out.append((kind, float(args[i + 3])))
    elif fix.style in ("langevin", "temp/berendsen", "temp/csvr", "temp/csld") and len(args) >= 3:
        if _is_number(args[2]):
            out.append(("temp", float(args[2])))
    elif fix.style == "press/berendsen":
        for key in ("iso", "aniso", "x", "y", "z"):
            if key in args:
                i = args.index(key)
                if len(args) > i + 3 and _is_number(args[i + 3]):
                    out.append(("press", float(args[i + 3])))
    return out


def potential_elements(file: str) -> list[str] | None:
    """Elements a shipped potential file covers (from the potential library index)."""
    try:
        from simagent.materials.potentials import load_index

        for entry in load_index():
            if entry.file == file:
                return list(entry.elements)
    except Exception:  # noqa: BLE001 - the library is optional for these checks
        return None
    return None


_MANYBODY = ("eam/alloy", "eam/fs", "eam/he", "tersoff", "sw", "meam", "adp", "bop", "comb", "airebo",
             "rebo", "extep", "vashishta", "polymorphic", "snap", "gw", "lcbop", "nb3b", "edip", "reaxff")


def coverage_findings(model: ScriptModel, main: str) -> list[Finding]:
    """Every atom type has interactions: LJ-like styles need an i i coefficient (or * *) for each
    type; many-body styles map each type to an element the file holds, and to exactly n types."""
    findings: list[Finding] = []
    if not model.pair_style or not model.n_types or not model.runs:
        return findings
    style = model.pair_style
    if style.startswith(_MANYBODY) or style == "eam":
        for cmd in model.pair_coeffs:
            w = cmd.words
            if len(w) < 4 or w[1] != "*" or w[2] != "*":
                continue
            if style == "eam":
                continue
            mapped = [x for x in w[4:] if not _is_number(x)] if not style.startswith("meam") else []
            if style.startswith("meam"):
                continue
            if len(mapped) != model.n_types:
                findings.append(Finding(
                    "error", f"pair_coeff maps {len(mapped)} element(s) ({' '.join(mapped) or 'none'}) but the "
                    f"box has {model.n_types} atom type(s)", category="pair/force field", file=main, line=cmd.line,
                    handler="PotentialElements"))
            known = potential_elements(w[3])
            missing = [x for x in mapped if x != "NULL" and known is not None and x not in known]
            if missing:
                findings.append(Finding(
                    "error", f"potential file {w[3]} has no {', '.join(missing)} (it covers {', '.join(known or [])})",
                    category="pair/force field", file=main, line=cmd.line, handler="PotentialElements"))
        return findings
    if style.startswith(("lj/", "buck", "born", "morse", "soft", "yukawa", "coul/", "mie", "lj96", "gauss")):
        if "hybrid" in style or model.data_pair_coeffs:
            return findings
        covered: set[int] = set()
        for cmd in model.pair_coeffs:
            w = cmd.words
            if len(w) < 3:
                continue
            a, b = _type_range(w[1], model.n_types), _type_range(w[2], model.n_types)
            for i in a:
                for j in b:
                    if i == j:
                        covered.add(i)
        missing = [t for t in range(1, model.n_types + 1) if t not in covered]
        explicit_pairs = {(min(x, y), max(x, y)) for cmd in model.pair_coeffs
                          for x in _type_range(cmd.arg(1), model.n_types)
                          for y in _type_range(cmd.arg(2), model.n_types)}
        unpaired = [t for t in missing if not all((min(t, u), max(t, u)) in explicit_pairs
                                                  for u in range(1, model.n_types + 1))]
        if unpaired:
            findings.append(Finding(
                "error", f"no pair coefficients for atom type(s) {', '.join(map(str, unpaired))} "
                f"({style} needs i i coefficients to mix, or every pair given)", category="pair/force field",
                file=main, handler="PairCoeffCoverage"))
    return findings


# ---------------------------------------------------------------------------------------------
# Dry run
# ---------------------------------------------------------------------------------------------

# With -skiprun nothing is computed, so reading energies or computes afterwards fails; such errors
# are artefacts of the dry run, not of the input (LAMMPS stops there, so later lines go unchecked).
DRY_RUN_ARTEFACTS = ("was not tallied on needed timestep", "is not current", "not computed on needed timestep",
                     "Variable evaluation before simulation box is defined")


def _skipped_prd(text: str) -> str:
    """The text with every `prd N ...` made `prd 0 ...` for the dry run: under -skiprun no step advances, so
    prd's loop, which ends after N steps of dynamics, would never end; with N = 0 LAMMPS still checks all of the
    command's arguments (the event compute, the keywords) and runs on one partition."""
    return re.sub(r"^(\s*prd\s+)\S+", r"\g<1>0", text, flags=re.M)


def dry_run(inputs: dict[str, str], main: str = engine.MAIN_INPUT, time_limit_s: float = 60,
            files: dict[str, Path] | None = None) -> list[str]:
    """ERROR lines from `lmp -skiprun` on a scratch copy of the inputs (empty list: parses).

    Only call this on inputs that passed the safety policy. `files` are extra (binary) files
    copied in by name."""
    scratch = Path(tempfile.mkdtemp(prefix="simagent-dryrun-"))
    try:
        for name, text in inputs.items():
            (scratch / name).write_text(_skipped_prd(text))
        for name, path in (files or {}).items():
            shutil.copy2(path, scratch / name)
        command = engine.command(main) + ["-skiprun", "-screen", "screen.txt"]
        try:
            proc = subprocess.run(command, cwd=scratch, capture_output=True, text=True,
                                  timeout=time_limit_s, env=engine.environment())
        except subprocess.TimeoutExpired:
            return [f"dry run did not finish within {time_limit_s:g} s"]
        text = ""
        for name in ("screen.txt", "log.lammps"):
            if (scratch / name).is_file():
                text += (scratch / name).read_text(errors="replace")
        text += proc.stdout + proc.stderr
        errors = []
        for line in text.splitlines():
            if line.strip().startswith("ERROR") and line.strip() not in errors:
                errors.append(line.strip())
        if errors and all(any(a in e for a in DRY_RUN_ARTEFACTS) for e in errors):
            return []
        last = re.findall(r"^Last (?:input )?(?:command|line): (.*)$", text, flags=re.M)
        if errors and last:
            errors[-1] += f" (at: {last[-1].strip()})"
        if proc.returncode != 0 and not errors:
            errors = [f"dry run exited with code {proc.returncode}"]
        return errors
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
