"""GROMACS error handlers (simagent.handlers.ErrorHandler), pre-run checks and run data.

A user's GROMACS job holds an .mdp, a coordinate file (.gro), a topology (.top) and its local
includes (.itp, index.ndx). It runs as `gmx grompp` then `gmx mdrun` (thread-MPI, one rank) in
its own folder; both outputs go to stdout.txt. Messages follow GROMACS 2022 ("Fatal error:",
"ERROR 1 [file topol.top, line 8]:", "WARNING 1 [file md.mdp]:", "LINCS WARNING", ...).

Categories are MDGym's GROMACS ones: mdp parameter, integrator/thermostat incompatibility,
topology, index group, coordinate/topology mismatch, position restraint, LINCS/constraint,
energy blow-up, box, PME, missing force-field parameters.
"""

from __future__ import annotations

import difflib
import math
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from simagent.errors import InputError, ReadError
from simagent.handlers import ErrorHandler, Finding
from simagent.models import Job
from tools.gromacs.engine import GROMPP_DRY_RUN_LIMIT_S, environment, gmx_binary, share_top
from tools.gromacs.mdp import parse_mdp
from tools.gromacs.parse import SCREEN, handler_messages, read_energies, read_output, unstable_message

K_BOLTZMANN_KJ_MOL = 0.0083144626  # kJ/(mol K)
# mdp options of GROMACS 2022 (from `gmx grompp` mdout.mdp), for "did you mean".
MDP_OPTIONS = set("""DispCorr IMD-group QMMM QMMM-grps Shake-SOR acc-grps accelerate adress annealing annealing-npoints
annealing-temp annealing-time awh bd-fric bonded-lambdas calc-lambda-neighbors comm-grps comm-mode
compressed-x-grps compressed-x-precision compressibility constraint-algorithm constraints continuation
cos-acceleration coul-lambdas coulomb-modifier coulombtype couple-intramol couple-lambda0 couple-lambda1
couple-moltype cutoff-scheme define deform delta-lambda density-guided-simulation-active dh_hist_size
dh_hist_spacing dhdl-derivatives dhdl-print-energy disre disre-fc disre-mixed disre-tau disre-weighting dt
electric-field-x electric-field-y electric-field-z emstep emtol energygrp-excl energygrp-table energygrps
epsilon-r epsilon-rf epsilon-surface ewald-geometry ewald-rtol ewald-rtol-lj fcstep fep-lambdas fourier-nx
fourier-ny fourier-nz fourierspacing free-energy freezedim freezegrps gen-seed gen-temp gen-vel
implicit-solvent include init-lambda init-lambda-state init-lambda-weights init-step integrator ld-seed
lincs-iter lincs-order lincs-warnangle lj-pme-comb-rule mass-lambdas morse mts nbfgscorr nh-chain-length
niter nstcalcenergy nstcgsteep nstcomm nstdhdl nstdisreout nstenergy nsteps nstfout nstlist nstlog
nstorireout nstpcouple nsttcouple nstvout nstxout nstxout-compressed nwall orire orire-fc orire-fitgrp
orire-tau pbc pcoupl pcoupltype periodic-molecules pme-order print-nose-hoover-chain-variables pull
qmmm-cp2k-active rcoulomb rcoulomb-switch ref-p ref-t refcoord-scaling restraint-lambdas rlist rotation rtpi
rvdw rvdw-switch sc-alpha sc-coul sc-function sc-gapsys-scale-linpoint-lj sc-gapsys-scale-linpoint-q
sc-gapsys-sigma-lj sc-power sc-r-power sc-sigma separate-dhdl-file shake-tol sim-temp-high sim-temp-low
simulated-tempering simulated-tempering-scaling simulation-part swapcoords table-extension tau-p tau-t
tc-grps tcoupl temperature-lambdas tinit user1-grps user2-grps userint1 userint2 userint3 userint4 userreal1
userreal2 userreal3 userreal4 vdw-lambdas vdw-modifier vdw-type verlet-buffer-tolerance wall-atomtype
wall-density wall-ewald-zfac wall-r-linpot wall-type""".split())
WATER_NAMES = {"SOL", "WAT", "HOH", "TIP3", "SPC", "TIP4P", "TIP3P"}
MINIMIZERS = {"steep", "cg", "l-bfgs", "nm"}


# ---------------------------------------------------------------------------------------------
# Reading inputs (the engine profile, gmx_binary/share_top/environment, is tools.gromacs.engine)
# ---------------------------------------------------------------------------------------------


def norm_key(key: str) -> str:
    return key.strip().lower().replace("_", "-")


def mdp_name(job: Job) -> str:
    return job.params.get("mdp") or next((n for n in job.inputs if n.endswith(".mdp")), "grompp.mdp")


def mdp_options(job: Job) -> dict[str, str]:
    return parse_mdp(job.inputs.get(mdp_name(job), ""))


def _float(value: str | None, default: float | None = None) -> float | None:
    try:
        return float(value.split()[0]) if value else default
    except (ValueError, IndexError):
        return default


def gro_box(text: str) -> tuple[float, float, float] | None:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 3:
        return None
    try:
        values = [float(v) for v in lines[-1].split()[:3]]
    except ValueError:
        return None
    return tuple(values) if len(values) == 3 else None  # type: ignore[return-value]


def gro_atoms(text: str) -> int | None:
    lines = text.splitlines()
    try:
        return int(lines[1].split()[0])
    except (IndexError, ValueError):
        return None


def _topology_text(job: Job, name: str) -> str | None:
    if name in job.inputs:
        return job.inputs[name]
    top = share_top()
    if top and (top / name).is_file():
        return (top / name).read_text(errors="replace")
    return None


def topology_molecules(job: Job) -> list[tuple[str, int]]:
    """[ molecules ] entries of the topology, in order."""
    text = job.inputs.get(job.params.get("topology", "topol.top"), "")
    out, section = [], None
    for line in text.splitlines():
        body = line.split(";", 1)[0].strip()
        found = re.match(r"^\[\s*(\w+)\s*\]$", body)
        if found:
            section = found.group(1)
            continue
        if section == "molecules" and body and not body.startswith("#"):
            words = body.split()
            if len(words) >= 2 and words[1].isdigit():
                out.append((words[0], int(words[1])))
    return out


def molecule_sizes(job: Job) -> dict[str, int]:
    """Atoms per [ moleculetype ], from the topology and its includes (local, then share/top)."""
    sizes: dict[str, int] = {}
    seen: set[str] = set()

    def walk(text: str, base: str) -> None:
        name, section, count = None, None, 0
        for line in text.splitlines():
            body = line.split(";", 1)[0].strip()
            include = re.match(r'^#include\s+"([^"]+)"', body)
            if include:
                target = include.group(1)
                candidates = [target, str(Path(base) / target) if base else target]
                for cand in candidates:
                    if cand not in seen:
                        sub = _topology_text(job, cand)
                        if sub is not None:
                            seen.add(cand)
                            walk(sub, str(Path(cand).parent) if "/" in cand else base)
                            break
                continue
            header = re.match(r"^\[\s*(\w+)\s*\]$", body)
            if header:
                if section == "atoms" and name:
                    sizes[name] = count
                section = header.group(1)
                if section == "moleculetype":
                    name, count = None, 0
                continue
            if not body or body.startswith("#"):
                continue
            if section == "moleculetype" and name is None:
                name = body.split()[0]
            elif section == "atoms" and body.split()[0].isdigit():
                count += 1
        if section == "atoms" and name:
            sizes[name] = count

    walk(job.inputs.get(job.params.get("topology", "topol.top"), ""), "")
    return sizes


# ---------------------------------------------------------------------------------------------
# Reading outputs
# ---------------------------------------------------------------------------------------------


# The one reader is tools.gromacs.parse.read_output (shared with the gates and the analyses).


# ---------------------------------------------------------------------------------------------
# Handlers
# ---------------------------------------------------------------------------------------------


def closest(word: str, candidates, cutoff: float = 0.6) -> str | None:
    found = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=cutoff)
    return found[0] if found else None


def mdp_set(job: Job, key: str, value: object) -> dict:
    return {"file": mdp_name(job), "_set_option": {"key": key, "value": str(value)}}


class GmxHandler(ErrorHandler):
    engine = "gromacs"
    pattern = ""
    warnings_too = False

    def check(self, job_dir: Path, job: Job) -> bool:
        self.out = read_output(job_dir)
        self.match = self.out.find(self.pattern, self.warnings_too) if self.pattern else None
        return self.match is not None


class UnknownMdpOption(GmxHandler):
    """"Unknown left-hand 'tau_tt' in parameter file": the option is ignored (and counts as a
    warning, so grompp stops). Renamed to the closest GROMACS option."""

    category = "mdp parameter"
    pattern = r"Unknown left-hand '([^']+)' in parameter file"
    warnings_too = True
    max_num_corrections = 3

    def correct(self, job_dir: Path, job: Job) -> dict:
        bad = self.match.group(1)
        good = closest(norm_key(bad), MDP_OPTIONS, cutoff=0.7)
        errors = [f"unknown mdp option `{bad}`"]
        if not good:
            return {"errors": errors, "actions": [{"file": mdp_name(job), "_unset_option": {"key": bad}}]}
        value = next((ln.split("=", 1)[1].split(";")[0].strip() for ln in job.inputs[mdp_name(job)].splitlines()
                      if "=" in ln and norm_key(ln.split("=", 1)[0]) == norm_key(bad)), "")
        return {"errors": [f"{errors[0]} (did you mean `{good}`?)"], "actions": [
            {"file": mdp_name(job), "_unset_option": {"key": bad}}, mdp_set(job, good, value)]}


class InvalidMdpValue(GmxHandler):
    """"Invalid enum 'mdd' for variable integrator, using 'md' Next time, use one of: ...": the
    closest allowed value."""

    category = "mdp parameter"
    pattern = r"Invalid enum '([^']+)' for variable (\S+), using '([^']+)'\s*Next time, use one of: (.*)"

    def correct(self, job_dir: Path, job: Job) -> dict:
        bad, key, default, allowed = self.match.groups()
        options = re.findall(r"'([^']+)'", allowed)
        options = [o for o in options if "removed" not in o]
        good = closest(bad.lower(), options, cutoff=0.5) or default
        return {"errors": [f"mdp {key} = {bad} is not a valid value (did you mean `{good}`?)"],
                "actions": [mdp_set(job, key, good)]}


class TcouplingInput(GmxHandler):
    """"Invalid T coupling input: 1 groups, 1 ref-t values and 0 tau-t values": one value per
    group, taking the first value given (tau-t 0.1 ps when none: v-rescale's usual choice)."""

    category = "mdp parameter"
    pattern = r"Invalid T coupling input: (\d+) groups, (\d+) ref-t values and (\d+) tau-t values"

    def correct(self, job_dir: Path, job: Job) -> dict:
        groups = int(self.match.group(1))
        opts = mdp_options(job)
        ref = (opts.get("ref-t", "").split() or ["300"])[0]
        tau = (opts.get("tau-t", "").split() or ["0.1"])[0]
        return {"errors": [f"temperature coupling needs one ref-t and tau-t per tc-grps group ({groups})"],
                "actions": [mdp_set(job, "ref-t", " ".join([ref] * groups)),
                            mdp_set(job, "tau-t", " ".join([tau] * groups))]}


class IncludeNotFound(GmxHandler):
    """'Topology include file "oplsaa.ff/spcee.itp" not found': the closest existing file (job
    folder, then the force-field folder). A missing position-restraint file under `define =
    -DPOSRES` is a position-restraint problem: the define is removed (no restraints)."""

    category = "topology"
    pattern = r'Topology include file "([^"]+)" not found'
    max_num_corrections = 2

    def correct(self, job_dir: Path, job: Job) -> dict:
        bad = self.match.group(1)
        opts = mdp_options(job)
        top = job.params.get("topology", "topol.top")
        if "posre" in bad.lower() and "POSRES" in opts.get("define", ""):
            self.category = "position restraint"
            define = " ".join(w for w in opts["define"].split() if "POSRES" not in w)
            action = mdp_set(job, "define", define) if define else {"file": mdp_name(job),
                                                                    "_unset_option": {"key": "define"}}
            return {"errors": [f"position restraints requested (define = {opts['define']}) but {bad} does not exist; "
                               "the run continues without restraints"], "actions": [action]}
        folder = str(Path(bad).parent) if "/" in bad else ""
        pool = [n for n in job.inputs if n.endswith(".itp")]
        share = share_top()
        if share and folder and (share / folder).is_dir():
            pool += [f"{folder}/{p.name}" for p in (share / folder).glob("*.itp")]
        good = closest(bad, pool, cutoff=0.8)
        errors = [f"topology include {bad} does not exist"]
        if not good:
            return {"errors": errors, "actions": None}
        return {"errors": [f"{errors[0]} (closest: {good})"], "actions": [
            {"file": top, "_substitute": {"match": r'^\s*#include\s+"' + re.escape(bad) + '"',
                                          "old": re.escape(bad), "new": good}}]}


class CoordinateTopologyMismatch(GmxHandler):
    """'number of coordinates in coordinate file (conf.gro, 663) does not match topology
    (topol.top, 660)': the count of the last [ molecules ] entry is set so the atoms match, when
    the difference is a whole number of those molecules."""

    category = "coordinate/topology mismatch"
    pattern = r"number of coordinates in coordinate file \((\S+), (\d+)\)\s*does not match topology \((\S+), (\d+)\)"
    max_num_corrections = 1

    def correct(self, job_dir: Path, job: Job) -> dict:
        n_coords, n_top = int(self.match.group(2)), int(self.match.group(4))
        errors = [f"the coordinates have {n_coords} atoms, the topology {n_top}"]
        molecules = topology_molecules(job)
        sizes = molecule_sizes(job)
        if not molecules or molecules[-1][0] not in sizes:
            return {"errors": errors, "actions": None}
        name, count = molecules[-1]
        diff = n_coords - n_top
        if diff % sizes[name] or count + diff // sizes[name] < 0:
            return {"errors": errors, "actions": None}
        new = count + diff // sizes[name]
        top = job.params.get("topology", "topol.top")
        return {"errors": errors + [f"[ molecules ] {name}: {count} -> {new} ({sizes[name]} atoms each)"],
                "actions": [{"file": top, "_replace_line": {
                    "match": rf"^\s*{re.escape(name)}\s+{count}\s*(;.*)?$", "text": f"{name:<16}{new}", "after":
                    r"^\s*\[\s*molecules\s*\]"}}]}


class GroupNotFound(GmxHandler):
    """'Group Water_and_ions referenced in the .mdp file was not found in the index file': the
    closest default group; with a single coupling group, System."""

    category = "index group"
    pattern = r"Group (\S+) referenced in the \.mdp file was not found in the index file"

    def correct(self, job_dir: Path, job: Job) -> dict:
        bad = self.match.group(1)
        opts = mdp_options(job)
        molecules = [m for m, _ in topology_molecules(job)]
        groups = {"System", "Other", "Water", "non-Water", *molecules}
        if any(m in WATER_NAMES for m in molecules):
            groups |= {"SOL", "Water"}
        key = next((k for k, v in opts.items() if k.endswith("grps") and bad in v.split()), "tc-grps")
        values = opts.get(key, "").split()
        good = closest(bad, groups, cutoff=0.8)
        if good is None and key == "tc-grps" and len(values) == 1:
            good = "System"
        errors = [f"group {bad} ({key}) does not exist in this system (groups: {', '.join(sorted(groups))})"]
        if not good:
            return {"errors": errors, "actions": None}
        new = " ".join(good if v == bad else v for v in values)
        return {"errors": [f"{errors[0]}; using {good}"], "actions": [mdp_set(job, key, new)]}


class CutoffLongerThanHalfBox(GmxHandler):
    """'The cut-off length is longer than half the shortest box vector': cut-offs reduced to 45 %
    of the shortest box edge (with PME the electrostatics stay complete; the LJ cut-off changes)."""

    category = "box"
    pattern = r"cut-off length is longer than half the shortest box vector"
    max_num_corrections = 1

    def correct(self, job_dir: Path, job: Job) -> dict:
        box = gro_box(job.inputs.get(job.params.get("coordinates", "conf.gro"), ""))
        if not box:
            return {"errors": ["cut-off longer than half the box"], "actions": None}
        new = math.floor(0.45 * min(box) * 100) / 100
        actions = [mdp_set(job, key, f"{new:g}") for key in ("rvdw", "rcoulomb")]
        if "rlist" in mdp_options(job):
            actions.append(mdp_set(job, "rlist", f"{new:g}"))
        return {"errors": [f"cut-offs longer than half the shortest box edge ({min(box):g} nm); set to {new:g} nm"],
                "actions": actions}


class PmeOrder(GmxHandler):
    """'With coulombtype = PME, you should have 3 <= pme-order <= 12': the default order 4."""

    category = "PME"
    pattern = r"pme-order|PME order|fourier-?spacing|PME grid|PME.*not supported"
    max_num_corrections = 1

    def correct(self, job_dir: Path, job: Job) -> dict:
        message = self.match.string
        if "pme-order" in message:
            return {"errors": [message], "actions": [mdp_set(job, "pme-order", 4)]}
        if "fourier" in message.lower() or "grid" in message:
            return {"errors": [message], "actions": [mdp_set(job, "fourierspacing", 0.12)]}
        return {"errors": [message], "actions": None}


class BarostatIncompatible(GmxHandler):
    """Integrator/barostat combinations grompp refuses: 'Constraints are not implemented with MTTK
    pressure control', Parrinello-Rahman while generating velocities (warning counted as an error):
    the stochastic cell rescaling barostat (C-rescale; Bernetti & Bussi 2020) works in both cases,
    with tau-p 2 ps."""

    category = "integrator/thermostat incompatibility"
    pattern = (r"not implemented with MTTK|MTTK .*not (?:compatible|supported)|"
               r"Parrinello-Rahman pressure coupling, but this can\s*be unstable|"
               r"tau-p \([\d.]+\)\s*should be at least \d+ times larger")
    warnings_too = True
    max_num_corrections = 1

    def check(self, job_dir: Path, job: Job) -> bool:
        return super().check(job_dir, job) and bool(self.out.errors) and \
            mdp_options(job).get("pcoupl", "no").lower() not in ("no", "c-rescale")

    def correct(self, job_dir: Path, job: Job) -> dict:
        opts = mdp_options(job)
        actions = [mdp_set(job, "pcoupl", "C-rescale"), mdp_set(job, "tau-p", "2.0")]
        return {"errors": [f"pcoupl = {opts.get('pcoupl')} does not fit this run ({self.match.group(0)[:90]})"],
                "actions": actions}


class CouplingTimeTooShort(GmxHandler):
    """'For proper integration of the Nose-Hoover thermostat, tau-t (0.1) should be at least 20 times
    larger than nsttcouple*dt (0.02)': the coupling time is raised to that bound (at least 1 ps for
    Nose-Hoover, 2 ps for a barostat, the customary values)."""

    category = "integrator/thermostat incompatibility"
    pattern = (r"For proper integration of the (\S+) (thermostat|barostat), tau-([tp]) \(([\d.]+)\)\s*should be at "
               r"least (\d+) times larger than nst[tp]couple\*dt \(([\d.]+)\)")
    warnings_too = True
    max_num_corrections = 2

    def correct(self, job_dir: Path, job: Job) -> dict:
        name, kind, which, value, times, step = self.match.groups()
        floor = 1.0 if which == "t" else 2.0
        new = max(float(times) * float(step), floor)
        key = f"tau-{which}"
        values = mdp_options(job).get(key, value).split()
        return {"errors": [f"{name} {kind}: {key} = {value} ps is below {times} x nst{which}couple*dt ({step} ps)"],
                "actions": [mdp_set(job, key, " ".join(f"{new:g}" for _ in values))]}


class ThermostatIntegrator(GmxHandler):
    """grompp errors pairing an integrator with a thermostat it cannot use (e.g. Nose-Hoover with
    md-vv and constraints): v-rescale, which every dynamical integrator supports."""

    category = "integrator/thermostat incompatibility"
    pattern = r"(?:Nose-Hoover|nose-hoover|tcoupl).*(?:not (?:implemented|supported)|can not be used)"
    max_num_corrections = 1

    def correct(self, job_dir: Path, job: Job) -> dict:
        return {"errors": [self.match.string], "actions": [mdp_set(job, "tcoupl", "v-rescale")]}


class AtomtypeNotFound(GmxHandler):
    """'Atomtype opls_9999 not found' / 'No default Bond types': the force field lacks
    parameters. They cannot be invented: recognised and passed on."""

    category = "missing force-field parameters"
    pattern = r"Atomtype (\S+) not found|No default (\S+(?: \S+)?) types|Unknown bond_atomtype|" \
              r"No such moleculetype (\S+)"
    max_num_corrections = 0

    def correct(self, job_dir: Path, job: Job) -> dict:
        if "moleculetype" in self.match.group(0):
            self.category = "topology"
        return {"errors": [self.match.string], "actions": None}


class GenTemperature(GmxHandler):
    """Velocities generated far above the coupling temperature (gen-temp >> ref-t) blow the system
    up: gen-temp is set to ref-t (before the run: a warning with this correction)."""

    category = "energy blow-up"
    stage = "input"
    max_num_corrections = 1

    def check(self, job_dir: Path, job: Job) -> bool:
        out = read_output(job_dir)
        if out.exists and not out.unstable:
            return False
        opts = mdp_options(job)
        if opts.get("gen-vel", "no").lower() != "yes":
            return False
        gen = _float(opts.get("gen-temp"), 300.0)
        refs = [float(v) for v in opts.get("ref-t", "").split() if _is_number(v)]
        self.ref = max(refs) if refs else None
        self.gen = gen
        return bool(self.ref and gen and gen > 3 * self.ref)

    def correct(self, job_dir: Path, job: Job) -> dict:
        return {"errors": [f"velocities generated at {self.gen:g} K for a run coupled at {self.ref:g} K"],
                "actions": [mdp_set(job, "gen-temp", f"{self.ref:g}")]}


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def timestep_bound_ps(job: Job) -> tuple[float, str]:
    """Largest sensible dt: 2.5 fs with constrained bonds to H or rigid water only (SETTLE), 1 fs
    for flexible bonds to hydrogen (GROMACS manual: 'with constraints on h-bonds, 2 fs')."""
    opts = mdp_options(job)
    flexible = "FLEXIBLE" in opts.get("define", "")
    constraints = opts.get("constraints", "none").lower()
    only_water = all(m in WATER_NAMES for m, _ in topology_molecules(job)) and topology_molecules(job)
    if constraints in ("h-bonds", "all-bonds", "h-angles", "all-angles") and not flexible:
        return 0.0025, f"constraints = {constraints}"
    if only_water and not flexible:
        return 0.0025, "rigid water (SETTLE)"
    return 0.001, "flexible bonds to hydrogen"


class TimestepTooLarge(GmxHandler):
    """dt beyond the bound for the constraints in use (see timestep_bound_ps): halved to the
    bound's good value. Before a run a warning; after LINCS/SETTLE failures the root cause."""

    category = "LINCS/constraint"
    stage = "input"
    max_num_corrections = 1

    def check(self, job_dir: Path, job: Job) -> bool:
        out = read_output(job_dir)
        if out.exists and not out.unstable:
            return False
        opts = mdp_options(job)
        if opts.get("integrator", "md").lower() in MINIMIZERS:
            return False
        self.dt = _float(opts.get("dt"), 0.001)
        self.bound, self.why = timestep_bound_ps(job)
        return self.dt > self.bound * (1 + 1e-9)

    def correct(self, job_dir: Path, job: Job) -> dict:
        good = 0.002 if self.bound >= 0.0025 else 0.0005
        return {"errors": [f"dt = {self.dt:g} ps is beyond {self.bound:g} ps ({self.why})"],
                "actions": [mdp_set(job, "dt", f"{good:g}")]}


class ConstraintFailure(GmxHandler):
    """LINCS/SETTLE warnings and blow-ups ('LINCS WARNING', 'water molecules can not be settled',
    'moved more than the distance allowed', a non-finite energy or force, segmentation fault after
    such messages; parse.unstable_message): halve dt."""

    category = "LINCS/constraint"
    max_num_corrections = 3

    def check(self, job_dir: Path, job: Job) -> bool:
        self.out = read_output(job_dir)
        self.found = unstable_message(self.out.text)
        if self.found and not re.search("LINCS|SETTLE|settled", self.found.group(0)):
            self.category = "energy blow-up"
        return self.found is not None and mdp_options(job).get("integrator", "md").lower() not in MINIMIZERS

    def correct(self, job_dir: Path, job: Job) -> dict:
        dt = _float(mdp_options(job).get("dt"), 0.001)
        new = dt / 2
        return {"errors": [f"{self.found.group(0)}: the dynamics diverged at dt = {dt:g} ps"],
                "actions": [mdp_set(job, "dt", f"{new:g}")]}


class TooManyWarnings(GmxHandler):
    """'Too many warnings (N)': grompp warnings no handler above resolves. Never bypassed with
    -maxwarn: recognised and passed on with the warnings."""

    category = "mdp parameter"
    pattern = r"Too many warnings"
    max_num_corrections = 0

    def correct(self, job_dir: Path, job: Job) -> dict:
        return {"errors": self.out.warnings[:3] or ["grompp stopped on warnings"], "actions": None}


class WallTime(GmxHandler):
    category = "energy blow-up"
    max_num_corrections = 0

    def check(self, job_dir: Path, job: Job) -> bool:
        from simagent.executor import read_record

        record = read_record(job_dir)
        self.message = record.message if record else ""
        return bool(record and (record.timed_out or record.stalled))

    def correct(self, job_dir: Path, job: Job) -> dict:
        return {"errors": [self.message], "actions": None}


class EnergyDrift(GmxHandler):
    """NVE (integrator md, tcoupl no) with a drifting total energy (simagent.gates): halve dt."""

    category = "energy blow-up"
    on_success = True
    max_num_corrections = 2

    def check(self, job_dir: Path, job: Job) -> bool:
        from simagent import gates

        data = run_data(job_dir, job)
        if data is None:
            return False
        result = gates.energy_drift_gate(data)
        self.reason = result.reason
        return result.outcome == gates.Outcome.FAIL

    def correct(self, job_dir: Path, job: Job) -> dict:
        dt = _float(mdp_options(job).get("dt"), 0.001)
        return {"errors": [self.reason], "actions": [mdp_set(job, "dt", f"{dt / 2:g}")]}


HANDLERS: list[type[ErrorHandler]] = [
    WallTime,
    UnknownMdpOption,
    InvalidMdpValue,
    TcouplingInput,
    IncludeNotFound,
    CoordinateTopologyMismatch,
    GroupNotFound,
    CutoffLongerThanHalfBox,
    PmeOrder,
    BarostatIncompatible,
    CouplingTimeTooShort,
    ThermostatIntegrator,
    AtomtypeNotFound,
    TooManyWarnings,
    GenTemperature,
    TimestepTooLarge,
    ConstraintFailure,
    EnergyDrift,
]

CATEGORY_PATTERNS = [(cls.pattern, cls.category) for cls in HANDLERS if getattr(cls, "pattern", "")]


def categorize(message: str) -> str:
    for pattern, category in CATEGORY_PATTERNS:
        if re.search(pattern, message):
            return category
    return "unknown"


# ---------------------------------------------------------------------------------------------
# Pre-run: safety, static checks, grompp dry run
# ---------------------------------------------------------------------------------------------


def safety_findings(job: Job) -> list[Finding]:
    """GROMACS inputs cannot run code, but they name files: includes and include paths must stay
    in the job folder or the force-field library; no coupling to external programs."""
    findings = []
    for name, text in job.inputs.items():
        for number, line in enumerate(text.splitlines(), start=1):
            body = line.split(";", 1)[0].strip()
            include = re.match(r'^#include\s+["<]([^">]+)[">]', body)
            if include and _leaves(include.group(1)):
                findings.append(Finding("unsafe", f"#include of '{include.group(1)}' leaves the job folder",
                                        category="unsafe input", file=name, line=number, handler="safety policy"))
            if name.endswith(".mdp") and "=" in body:
                key, value = (part.strip() for part in body.split("=", 1))
                key = norm_key(key)
                if key == "include" and any(_leaves(w.removeprefix("-I")) for w in value.split()):
                    findings.append(Finding("unsafe", f"include path '{value}' leaves the job folder",
                                            category="unsafe input", file=name, line=number, handler="safety policy"))
                if key == "integrator" and value.lower() == "mimic" or key == "qmmm-cp2k-active" and value == "true":
                    findings.append(Finding("unsafe", f"{key} = {value} couples to an external program",
                                            category="unsafe input", file=name, line=number, handler="safety policy"))
    for name in job.inputs:
        if _leaves(name):
            findings.append(Finding("unsafe", f"input file name '{name}' leaves the job folder",
                                    category="unsafe input", handler="safety policy"))
    return findings


def _leaves(path: str) -> bool:
    return path.startswith(("/", "~")) or ".." in re.split(r"[\\/]", path) or "$" in path


def grompp_command(job: Job, tpr: str = "topol.tpr") -> list[str]:
    p = job.params
    command = [str(gmx_binary()), "grompp", "-f", mdp_name(job), "-c", p.get("coordinates", "conf.gro"),
               "-p", p.get("topology", "topol.top"), "-o", tpr, "-maxwarn", "0"]
    if p.get("index"):
        command += ["-n", p["index"]]
    if "POSRES" in mdp_options(job).get("define", ""):
        command += ["-r", p.get("restraints") or p.get("coordinates", "conf.gro")]
    return command


def dry_run(job: Job, time_limit_s: float = GROMPP_DRY_RUN_LIMIT_S) -> list[str]:
    """Errors of `gmx grompp` on a scratch copy (empty: the inputs are accepted)."""
    scratch = Path(tempfile.mkdtemp(prefix="simagent-grompp-"))
    try:
        for name, text in job.inputs.items():
            (scratch / name).write_text(text)
        try:
            proc = subprocess.run(grompp_command(job), cwd=scratch, capture_output=True, text=True,
                                  timeout=time_limit_s, env=environment())
        except subprocess.TimeoutExpired:
            return [f"grompp did not finish within {time_limit_s:g} s"]
        errors, warnings = handler_messages(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            return errors + [f"(warning) {w}" for w in warnings] or [f"grompp exited with code {proc.returncode}"]
        return []
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def cutoff_findings(job: Job) -> list[Finding]:
    """A cut-off longer than half the shortest box edge (read from the coordinate file's box)."""
    box = gro_box(job.inputs.get(job.params.get("coordinates", "conf.gro"), ""))
    opts = mdp_options(job)
    cutoff = max(_float(opts.get(k), 0.0) or 0.0 for k in ("rvdw", "rcoulomb", "rlist"))
    if box and cutoff > 0.5 * min(box):
        return [Finding("error", f"cut-off {cutoff:g} nm exceeds half the shortest box edge ({min(box):g} nm)",
                        category="box", file=mdp_name(job), handler="CutoffLongerThanHalfBox")]
    return []


# ---------------------------------------------------------------------------------------------
# Runs, gates, user jobs
# ---------------------------------------------------------------------------------------------


def user_command(job: Job) -> tuple[list[str], dict[str, str]]:
    grompp = " ".join(shlex.quote(w) for w in grompp_command(job))
    mdrun = " ".join(shlex.quote(w) for w in [str(gmx_binary()), "mdrun", "-s", "topol.tpr", "-deffnm", "md",
                                               "-ntmpi", str(job.ranks), "-ntomp", str(job.threads)])
    return ["/bin/sh", "-c", f"{grompp} && {mdrun}"], environment()


def user_log(job_dir: Path) -> Path:
    return job_dir / "md.log" if (job_dir / "md.log").is_file() else job_dir / SCREEN


def main_input(job: Job) -> str:
    return mdp_name(job)


# The protocol parameter that sets the length of each stage of tools.gromacs.protocols.liquids.
STAGE_STEPS = {"em": "em_steps", "melt": "melt_steps", "nvt": "nvt_steps", "npt": "npt_steps",
               "prod": "production_steps"}


def extend_actions(job: Job, factor: float = 2.0) -> list[dict] | None:
    """Make the run longer by `factor`: the stage's step parameter of a protocol job, or nsteps
    in a user's .mdp."""
    if not job.protocol.startswith("user"):
        name = STAGE_STEPS.get(job.stage or "")
        return [{"param": name, "_scale": factor}] if isinstance(job.params.get(name), int) else None
    steps = _float(mdp_options(job).get("nsteps"))
    if not steps or steps <= 0:
        return None
    return [mdp_set(job, "nsteps", int(steps * factor))]


def run_data(job_dir: Path, job: Job):
    from simagent.gates import RunData

    edr = _energy_file(job_dir, job)
    if edr is None:
        return None
    try:
        energies = read_energies(edr)
    except ReadError:  # an unreadable energy file is "nothing to judge"
        return None
    mdp = f"{edr.stem}.mdp" if f"{edr.stem}.mdp" in job.inputs else mdp_name(job)
    opts = parse_mdp(job.inputs.get(mdp, ""))
    integrator = opts.get("integrator", "md").lower()
    tcoupl = opts.get("tcoupl", "no").lower()
    pcoupl = opts.get("pcoupl", "no").lower()
    if integrator in MINIMIZERS:
        ensemble = "minimize"
    elif pcoupl not in ("no", ""):
        ensemble = "npt"
    elif tcoupl not in ("no", "") or integrator in ("sd", "bd"):
        ensemble = "nvt"
    else:
        ensemble = "nve"
    names = {"Time": "time_ps", "Temperature": "temperature", "Pressure": "pressure", "Potential": "potential_energy",
             "Total Energy": "total_energy", "Kinetic En.": "kinetic_energy", "Density": "density",
             "Volume": "volume"}
    data = RunData(engine="gromacs", ensemble=ensemble, kB=K_BOLTZMANN_KJ_MOL, per_atom=False,
                   pressure_unit="bar", timestep=_float(opts.get("dt"), 0.001))
    for key, values in energies.items():
        data.series[names.get(key, key)] = np.asarray(values, dtype=float)
    data.time = data.series.get("time_ps")
    data.n_atoms = gro_atoms(job.inputs.get(job.params.get("coordinates", "conf.gro"), ""))
    if ensemble != "minimize":
        refs = [float(v) for v in opts.get("ref-t", "").split() if _is_number(v)]
        annealing = any(v.lower() not in ("no", "") for v in opts.get("annealing", "no").split())
        data.target_temperature = refs[0] if refs and len(set(refs)) == 1 and not annealing else None
        data.target_pressure = _float(opts.get("ref-p")) if ensemble == "npt" else None
    return data


def _energy_file(job_dir: Path, job: Job) -> Path | None:
    """md.edr of a user's job; for a protocol job, the .edr of one of its .mdp stages (the newest)."""
    if (job_dir / "md.edr").is_file():
        return job_dir / "md.edr"
    stages = {Path(name).stem for name in job.inputs if name.endswith(".mdp")}
    found = [p for p in job_dir.glob("*.edr") if p.stem in stages]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def load_user_job(path: Path, job_id: str = "run", time_limit_s: float = 1800.0) -> tuple[Job, dict[str, Path]]:
    """A user's GROMACS job: an .mdp (or a folder holding one), with the coordinate file,
    topology, local .itp files and index.ndx from the same folder."""
    folder = path if path.is_dir() else path.parent
    mdps = [path] if path.is_file() else sorted(folder.glob("*.mdp"))
    if len(mdps) != 1:
        raise InputError(f"give one .mdp file (found {len(mdps)} in {folder})")
    mdp = mdps[0]

    def pick(preferred: str, pattern: str) -> Path | None:
        if (folder / preferred).is_file():
            return folder / preferred
        found = sorted(p for p in folder.glob(pattern) if not p.name.startswith(("md.", "mdout", "#")))
        return found[0] if len(found) == 1 else None

    coordinates = pick("conf.gro", "*.gro") or pick("conf.pdb", "*.pdb")
    topology = pick("topol.top", "*.top")
    if coordinates is None or topology is None:
        raise InputError(f"{folder} needs one coordinate file (.gro/.pdb) and one topology (.top) next to {mdp.name}")
    inputs = {mdp.name: mdp.read_text(), coordinates.name: coordinates.read_text(), topology.name: topology.read_text()}
    for itp in sorted(folder.glob("*.itp")):
        inputs[itp.name] = itp.read_text()
    params = {"mdp": mdp.name, "coordinates": coordinates.name, "topology": topology.name}
    if (folder / "index.ndx").is_file():
        inputs["index.ndx"] = (folder / "index.ndx").read_text()
        params["index"] = "index.ndx"
    params["user_folder"] = sorted(p.name for p in folder.iterdir() if p.is_file())[:200]
    job = Job(id=job_id, protocol="user/gromacs", engine="gromacs", stage="user", inputs=inputs, params=params,
              time_limit_s=time_limit_s)
    return job, {}
