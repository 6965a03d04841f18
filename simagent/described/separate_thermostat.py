"""A thermostat stated in a sentence of its own that acts on the NVE integration another sentence states.

LAMMPS holds a temperature during NVE integration with a second fix that rescales or kicks the
velocities (temp/berendsen, temp/rescale, langevin), and texts that retell such an input often give
the two fixes in two sentences, in either order: "A Berendsen thermostat keeps the atoms at 500 K.
The atoms are integrated with fix nve for 5000 steps." Both sentences describe one run: fix nve with
the thermostat on top, its set point and damping as the thermostat's sentence states them.

They are one run only when nothing puts them in sequence:
- the thermostat's sentence states no run length of its own (it would be a stage of its own);
- neither sentence orders them ('first ... then', 'afterwards', 'followed by', an equilibration before
  a production run);
- the NVE is stated by its name (NVE, fix nve): 'the total energy is conserved' or 'without a
  thermostat' contradicts the thermostat; which of the two holds is then asked (listed as missing).
A thermostat that is put before or after an NVE run this way, without a run length of its own, is a
stage whose length the text does not give: listed as missing, never dropped.
"""

from __future__ import annotations

import re

from simagent.backends.expert.ensemble_words import sentence_ensemble
from simagent.described.model import Dynamics, SimulationDescription

# thermostats LAMMPS applies on top of fix nve (simagent.described.reading._named_thermostat)
ON_NVE = ("berendsen", "langevin", "velocity-rescale")
# words that put a sentence's dynamics after an earlier stage
_LATER = re.compile(r"\b(?:then|afterwards?|after (?:that|this|which|equilibration|the \w+)|subsequently|next|later|"
                    r"thereafter|followed by|finally|in a (?:second|final|later|subsequent) (?:stage|step|phase|run)|"
                    r"production)\b")
# words that make a sentence's dynamics a stage before later ones
_EARLIER = re.compile(r"\b(?:first|firstly|initially|to begin|at the start|beforehand|before|prior to|"
                      r"equilibrat\w*|pre-?equilibrat\w*)\b")
_NVE_NAME = re.compile(r"\bnve\b")


def on_nve(dyn: Dynamics | None) -> bool:
    """The dynamics is a thermostat that acts on fix nve (Berendsen, Langevin, velocity rescaling)."""
    return dyn is not None and dyn.ensemble == "nve" and dyn.thermostat in ON_NVE


def plain_nve(sentence: str, dyn: Dynamics | None) -> bool:
    """The sentence states NVE by its name with no thermostat ('run in the NVE ensemble', 'fix nve')."""
    if dyn is None or dyn.ensemble != "nve" or dyn.thermostat is not None:
        return False
    stated = sentence_ensemble(sentence)
    return stated is not None and stated.ensemble == "nve" and not stated.unnamed_thermostat and \
        _NVE_NAME.search(stated.words) is not None


def ordered(before: str, after: str) -> str | None:
    """The words that put the earlier sentence's dynamics before the later one's as stages of their own
    (None: nothing orders them)."""
    hit = _EARLIER.search(before) or _LATER.search(after)
    return hit.group(0) if hit else None


def joined(thermostat: Dynamics, nve: Dynamics) -> Dynamics:
    """fix nve under the thermostat: the thermostat's fields, the NVE sentence's integrator limit."""
    return thermostat.model_copy(update={"limit": nve.limit if nve.limit is not None else thermostat.limit})


def name(dyn: Dynamics) -> str:
    return {"berendsen": "Berendsen", "langevin": "Langevin", "velocity-rescale": "velocity-rescaling"}.get(
        dyn.thermostat or "", dyn.thermostat or "")


def unplaced(dyn: Dynamics, sentence: str, words: str) -> str:
    """What is missing when a thermostat's sentence is a stage of its own that states no run length."""
    return (f"the run length of the stage under the {name(dyn)} thermostat stated in '{sentence.strip()[:120]}' "
            f"(a stage of its own, '{words}', with no steps stated)")


def other_thermostat(dyn: Dynamics, before: str, sentence: str, run: Dynamics) -> str:
    """What is missing when a thermostat's sentence is followed by a run of an ensemble with a thermostat of
    its own ('the NPT ensemble'): which of the two holds the temperature is not the reader's to choose."""
    own = name(run) or run.thermostat or "its own"
    return (f"which thermostat holds the {run.ensemble.upper()} run of '{sentence.strip()[:120]}': the {name(dyn)} "
            f"thermostat stated in '{before.strip()[:120]}' or the ensemble's {own} thermostat")


def contradicted(dyn: Dynamics, before: str, sentence: str) -> str:
    """What is missing when a thermostat's sentence is followed by a run that its words keep at constant energy."""
    stated = sentence_ensemble(sentence)
    said = stated.words if stated is not None else "NVE"
    return (f"whether the run of '{sentence.strip()[:120]}' ('{said}': no thermostat) is under the {name(dyn)} "
            f"thermostat stated in '{before.strip()[:120]}'")


# one thermostat per group of atoms: 'separate Berendsen thermostats for the water, the CO2 and the walls',
# 'a thermostat on each species', 'thermostats applied to the individual groups', 'every component keeps its own
# thermostat'; not one thermostat on one group ('a thermostat on the mobile atoms only')
_PER_GROUP = re.compile(
    r"\b(?:separate|independent|individual|distinct)(?: \w+){0,2} thermostats\b|"
    r"\bthermostats?\b[^.;]{0,60}\b(?:to|on|for|of) (?:each|every|the individual|individual|the separate) "
    r"(?:groups?|species|components?|subsystems?|molecule types?|kinds?)\b|"
    r"\b(?:each|every) (?:group|species|component|subsystem)\b[^.;]{0,40}\bits own(?: \w+){0,2} thermostat\b|"
    r"\bper[- ](?:group|species|component) thermostats?\b")
PER_GROUP_NAME = "a thermostat of its own on each group of atoms"


def read_group_thermostats(desc: SimulationDescription, low: str) -> None:
    """Several thermostats, one per group of atoms, each on its own temperature: the renderer writes one
    thermostat per stage (on all atoms, or on the one group a layout names), so such a text is refused by name,
    never run under a single thermostat on every atom."""
    hit = _PER_GROUP.search(low)
    if hit and not any(u.startswith(PER_GROUP_NAME) for u in desc.unsupported):
        desc.unsupported.append(f"{PER_GROUP_NAME} ('{hit.group(0)}')")
