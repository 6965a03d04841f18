"""Parallel replica dynamics (LAMMPS `prd`, REPLICA package) and atoms removed by ID, read from a task text.

A text that prescribes parallel replica dynamics ("sample the rare hops with parallel-replica dynamics for
5000 steps; an event is an atom moving more than 0.6 A; quench with tolerances 1e-6 after each event")
states the command's run length (the stage its sentence makes) and some of its settings: the event
threshold (compute event/displace), the quench minimisation, how the dephasing velocities are drawn, and
a coordination cutoff (compute coord/atom). Whatever it leaves out gets the value of LAMMPS's own
example of the method (examples/prd, in.prd: t_event 100, n_dephase 10, t_dephase 10, t_correlate 100,
seed 54985, dephasing at the temperature of the dynamics, quench maxeval = maxiter), or LAMMPS's default
for an optional keyword; each is listed in report.md. LAMMPS runs one replica per processor partition
(-partition Mx1); a count the text leaves out is one replica per core the job runs on.

The dynamics of the PRD stage are the dynamics in force (the thermostat of the run before stays, as in
the example). A minimisation the text ties to the events ("after each detected transition") is the
prd quench, not a stage of its own.

Only the method's name makes a PRD stage: 'replicas of the box', 'replicate the cell', a 'replica
exchange' are not parallel replica dynamics.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from simagent.backends.expert.protocol_text import NUM

if TYPE_CHECKING:
    from simagent.described.model import Minimize, SimulationDescription, Stage

NAME = "parallel replica dynamics (prd)"
# the method named: 'parallel replica dynamics', 'parallel-replica method', '(PRD)'; never 'replica exchange'
MENTION = re.compile(r"\bparallel[- ]replica(?:s)?\b(?! exchange)|\bprd\b")
# the values of LAMMPS examples/prd/in.prd for what a text leaves out
EXAMPLE = {"t_event": 100, "n_dephase": 10, "t_dephase": 10, "t_correlate": 100, "seed": 54985}
EXAMPLE_WHY = "the value of LAMMPS's examples/prd (in.prd), the example of the method; the text states none"
# prd's quench when no minimisation is tied to the events (LAMMPS prd default: min 0.1 0.1 40 50)
QUENCH_DEFAULT = (0.1, 0.1, 40, 50)


class ParallelReplica(BaseModel):
    """The arguments of one LAMMPS `prd` command (and the computes it uses)."""

    steps: int = Field(gt=0, description="N: dynamics steps of each replica (time steps, LAMMPS's default)")
    t_event: int = Field(gt=0, description="steps between event checks")
    n_dephase: int = Field(gt=0, description="velocity randomisations per dephasing")
    t_dephase: int = Field(gt=0, description="steps of dynamics after each randomisation")
    t_correlate: int = Field(gt=0, description="steps within which two events are correlated")
    seed: int = Field(gt=0)
    displacement: float = Field(gt=0, description="compute event/displace threshold (distance units)")
    temperature: float | None = Field(default=None, gt=0, description="dephasing temperature (None: each "
                                      "replica's current one, LAMMPS's default)")
    loop: Literal["all", "local", "geom"] = "geom"
    distribution: Literal["uniform", "gaussian"] = "gaussian"
    etol: float = Field(ge=0)
    ftol: float = Field(ge=0)
    max_iterations: int = Field(gt=0)
    max_evaluations: int = Field(gt=0)
    coordination_cutoff: float | None = Field(default=None, gt=0, description="compute coord/atom cutoff")
    replicas: int | None = Field(default=None, ge=1, description="None: one per core the job runs on")

    def command(self, compute: str) -> str:
        temp = f" temp {self.temperature:g}" if self.temperature is not None else ""
        return (f"prd             {self.steps} {self.t_event} {self.n_dephase} {self.t_dephase} {self.t_correlate} "
                f"{compute} {self.seed}{temp} min {self.etol:g} {self.ftol:g} {self.max_iterations} "
                f"{self.max_evaluations} vel {self.loop} {self.distribution}")


def _sentences(low: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.;])\s+", low) if s]


def _count(pattern: str, low: str) -> tuple[int, str] | None:
    hit = re.search(pattern, low)
    return (int(float(hit.group(1))), hit.group(0)) if hit else None


_DISPLACEMENT = re.compile(r"(?:displace\w*|mov\w*|moves?|hops?|jumps?|shifts?)[^.;]{0,40}?(?:greater|more|larger|"
                           r"further|farther|beyond|exceed\w*|above|over)(?: than)?(?: a distance of)?\s*" + NUM +
                           r"\s*(?:angstroms?|a\b|å)?")
_DISPLACEMENT_ALT = re.compile(r"(?:displacement|distance) (?:threshold|cutoff|criterion)(?: of| =| is)?\s*" + NUM)
_COORDINATION = re.compile(r"coordination(?: number)? (?:cut-?off|radius|distance)(?: of| =| is)?\s*" + NUM)
_REPLICAS = re.compile(r"\b(\d+) (?:independent )?(?:replicas|partitions)\b|\breplicas?(?: count)?(?: of| =| is| to)?"
                       r"\s*(\d+)\b")


def read_prd(desc: SimulationDescription, low: str, minimize_settings) -> None:
    """Turn the run stage the text ties to parallel replica dynamics into a PRD stage; see the module
    docstring. `minimize_settings` reads a minimisation sentence (simagent.described.reading)."""
    if not MENTION.search(low):
        return
    desc.unsupported = [u for u in desc.unsupported if not u.startswith("parallel replica")]
    runs = _prd_runs(desc)
    if len(runs) != 1:
        desc.missing.append("which run is the parallel replica dynamics (one run length stated with it)"
                            if not runs else "one parallel replica dynamics run (the text ties several runs to it)")
        return
    stage = runs[0]
    found: dict[str, object] = {}
    words: dict[str, str] = {}
    for key, pattern in (("t_event", r"(?:event[- ]checks?|check(?:ed|ing|s)? for (?:transition )?events)"
                                     r"[^.;]{0,20}?every\s*" + NUM + r"\s*(?:time ?)?steps"),
                         ("n_dephase", r"(\d+) (?:velocity )?(?:randomi[sz]ations|dephasing (?:runs|cycles|stages))"),
                         ("t_dephase", r"dephas\w*[^.;]{0,40}?(?:runs?|of|for)\s*" + NUM + r"\s*(?:time ?)?steps"),
                         ("t_correlate", r"correlat\w* (?:time|period|interval|window)(?: of| =| is)?\s*" + NUM),
                         ("seed", r"(?:prd|dephas\w*|replica)[^.;]{0,30}?seed(?: of| =| is)?\s*(\d+)")):
        hit = _count(pattern, low)
        if hit:
            found[key], words[key] = hit
        else:
            found[key] = EXAMPLE[key]
            desc.note(f"prd.{key}", "default", f"{EXAMPLE[key]}: {EXAMPLE_WHY}")
    for key, text in words.items():
        desc.note(f"prd.{key}", "rules", text)
    move = _DISPLACEMENT.search(low) or _DISPLACEMENT_ALT.search(low)
    if move is None:
        desc.missing.append("the displacement that makes an event of parallel replica dynamics")
        return
    desc.note("prd.displacement", "rules", move.group(0))
    coord = _COORDINATION.search(low)
    if coord:
        desc.note("prd.coordination_cutoff", "rules", coord.group(0))
    replicas = _REPLICAS.search(low)
    if replicas:
        desc.note("prd.replicas", "rules", replicas.group(0))
    else:
        desc.note("prd.replicas", "default", "one per core the job runs on: LAMMPS runs one replica per processor "
                  "partition (mpiexec -n M lmp -partition Mx1) and the text states no count; the run's count is in "
                  "the answer's method")
    temperature, loop, dist = _dephasing(desc, low, stage)
    etol, ftol, maxiter, maxeval = _quench(desc, low, minimize_settings)
    stage.prd = ParallelReplica(
        steps=stage.steps, displacement=float(move.group(1)), temperature=temperature, loop=loop,
        distribution=dist, etol=etol, ftol=ftol, max_iterations=maxiter, max_evaluations=maxeval,
        coordination_cutoff=float(coord.group(1)) if coord else None,
        replicas=int(replicas.group(1) or replicas.group(2)) if replicas else None, **found)  # type: ignore[arg-type]
    if desc.stages[-1] is not stage:
        desc.unsupported.append("stages after parallel replica dynamics (it is rendered as the last stage)")
    if stage.steps % stage.prd.t_event or stage.prd.t_correlate % stage.prd.t_event:
        desc.missing.append(f"parallel replica dynamics run lengths that are multiples of the event-check interval "
                            f"({stage.steps} and t_correlate {stage.prd.t_correlate} for t_event {stage.prd.t_event})")


def _prd_runs(desc: SimulationDescription) -> list[Stage]:
    """The run stages the text ties to PRD: of those made from a sentence naming the method, the one whose run
    length is the first stated after the name ('NVT for 500 steps, then PRD for 1000 steps': the second)."""
    runs = [s for s in desc.stages if s.kind == "run" and MENTION.search(s.evidence)]
    if len(runs) < 2:
        return runs
    tied = []
    for stage in runs:
        at = MENTION.search(stage.evidence)
        assert at is not None
        length = re.search(r"(\d+) (?:time ?)?steps\b", stage.evidence[at.end():])
        if length and int(length.group(1)) == stage.steps and stage.evidence not in {t.evidence for t in tied}:
            tied.append(stage)
    return tied


def _dephasing(desc: SimulationDescription, low: str, stage: Stage) -> tuple[float | None, str, str]:
    """The dephasing velocities: temperature, loop and distribution."""
    window = " ".join(s for s in _sentences(low) if re.search(r"dephas|decorrelat", s))
    hit = re.search(r"dephas\w*[^.;]{0,60}?\b(?:at|temperature(?: of)?)\s*" + NUM + r"\s*k\b", window)
    dyn = stage.dynamics
    if hit:
        temperature: float | None = float(hit.group(1))
        desc.note("prd.temperature", "rules", hit.group(0))
    elif dyn is not None and dyn.t_stop is not None:
        temperature = dyn.t_stop
        desc.note("prd.temperature", "default", f"{dyn.t_stop:g}: the target of the thermostat in force, as LAMMPS's "
                  "examples/prd dephases at its run temperature; the text states none")
    else:
        temperature = None
        desc.note("prd.temperature", "default", "each replica's current temperature: LAMMPS's prd default (no temp "
                  "keyword); the text states none")
    dist = re.search(r"\b(uniform|gaussian|maxwell)", window)
    distribution = "gaussian" if dist and dist.group(1) != "uniform" else "uniform" if dist else "gaussian"
    desc.note("prd.distribution", "rules" if dist else "default",
              dist.group(0) if dist else "gaussian: LAMMPS's prd default (vel geom gaussian); the text states none")
    every = re.search(r"\b(?:all|every|each) (?:the )?(?:particles?|atoms?)\b", window)
    loop = "all" if every else "geom"
    desc.note("prd.loop", "rules" if every else "default", every.group(0) if every else
              "geom: LAMMPS's prd default (vel geom gaussian); the text states none")
    return temperature, loop, distribution


def _quench(desc: SimulationDescription, low: str, minimize_settings) -> tuple[float, float, int, int]:
    """The quench minimisation: the minimisation stage the text ties to the events, removed as a stage."""
    tied = [s for s in desc.stages if s.kind == "minimize" and re.search(r"\bevents?\b|transition|quench",
                                                                         s.evidence)]
    if not tied:
        desc.note("prd.min", "default", "0.1 0.1 40 50: LAMMPS's prd default quench (etol ftol maxiter maxeval); the "
                  "text ties no minimisation to the events")
        return QUENCH_DEFAULT
    stage = tied[0]
    index = desc.stages.index(stage)
    desc.stages.remove(stage)
    if desc.average_stage is not None and desc.average_stage > index:
        desc.average_stage -= 1
    for key in [k for k in desc.origin if k.startswith(f"{stage.name}.")]:
        del desc.origin[key]
    sentence = next((s for s in _sentences(low) if s.startswith(stage.evidence[:60])), stage.evidence)
    quench: Minimize | None = minimize_settings(desc, sentence, "prd.min")
    assert quench is not None and stage.minimize is not None  # the stage was made from this sentence
    maxeval = quench.max_evaluations
    if not re.search(r"evaluations", sentence):  # the example's maxeval = maxiter, not the general default
        maxeval = quench.max_iterations
        desc.note("prd.min.max_evaluations", "default", f"{maxeval}: the quench's iterations, as LAMMPS's "
                  "examples/prd; the text states none")
    desc.note("prd.min", "rules", stage.evidence)
    return quench.etol, quench.ftol, quench.max_iterations, maxeval


# atoms removed by their IDs: 'removing atom ID 300', 'the atom with id 17 is deleted', 'atoms with IDs 4 and 9 are
# deleted' (never a count or a fraction of atoms)
_IDS = (r"(?:with |whose |of )?(?:id|identifier|index|number|tag|#)s?\s*(?:(?:is|=|of|:)\s*)?"
        r"(\d+(?:(?:\s*,\s*|,?\s+and\s+)\d+)*)")
_REMOVED = re.compile(r"\b(?:remov|delet|extract|tak\w* out)\w*[^.;]{0,60}?\batoms? " + _IDS + r"|\batoms? " + _IDS +
                      r"[^.;]{0,40}?\b(?:is|are) (?:removed|deleted)")


def read_removed_atoms(desc: SimulationDescription, low: str) -> None:
    """Atoms the text removes by ID, at the point of the sequence where it says so: before the first stage
    stated after that sentence (a removal stated after every stage is listed as missing: nothing would see
    it)."""
    for hit in _REMOVED.finditer(low):
        ids = [int(x) for x in re.findall(r"\d+", hit.group(1) or hit.group(2))]
        if re.match(r"\s*(?:to|-|through|until)\s*\d", low[hit.end(1) if hit.group(1) else hit.end(2):]):
            desc.missing.append(f"which atoms are removed ('{hit.group(0)}...': a range of IDs, not read)")
            continue
        after = [s for s in desc.stages if (at := low.find(s.evidence[:80])) >= 0 and at > hit.start()]
        if not after:
            desc.missing.append(f"a stage after the removal of atom(s) {', '.join(map(str, ids))}")
            continue
        after[0].delete_ids += [i for i in ids if i not in after[0].delete_ids]
        desc.note(f"{after[0].name}.delete_ids", "rules", hit.group(0))
