"""Query expansion with a small glossary of molecular-simulation vocabulary.

People ask in the words of their field ("barostat", "heat bath", "neighbour list", "g(r)", "edr
file"); manuals name the same things in their own terms ("pressure coupling", "temperature
coupling", "neighbor searching", "radial distribution function", "energy file"). A question keeps
its words and gains the manual's: `expand` returns the terms to add. Entries are general vocabulary
(synonyms, British/American spellings, abbreviations, GROMACS file extensions), each written for the
concept, never for one benchmark question.
"""

from __future__ import annotations

import re

# (pattern matched as whole words in the lower-cased question, terms the manuals use for it)
_ENTRIES: tuple[tuple[str, str], ...] = (
    # ensembles and coupling
    (r"barostats?|pressure control|constant pressure|pressure bath", "pressure coupling pcoupl"),
    (r"thermostats?|heat baths?|temperature control|constant temperature", "temperature coupling tcoupl"),
    (r"nvt|canonical ensemble", "constant temperature canonical ensemble temperature coupling"),
    (r"npt|isobaric", "constant pressure isothermal-isobaric pressure coupling"),
    (r"langevin", "stochastic dynamics sd friction"),
    # neighbour lists and cut-offs
    (r"neighbou?r lists?|pair lists?|verlet lists?", "neighbor searching pair list"),
    (r"cut-?offs?", "cut-off cutoff"),
    # spelling variants
    (r"neighbour(s|ing)?", "neighbor neighbor searching"),
    (r"centre(s|d)?", "center"),
    (r"minimi[sz](e|ation|er|ing)", "minimization minimize"),
    (r"equilibrat(e|ion|ing)", "equilibration"),
    (r"parametri[sz](e|ation)", "parameterization"),
    (r"behaviour", "behavior"),
    # abbreviations
    (r"g\(r\)|rdfs?", "radial distribution function rdf"),
    (r"msd", "mean square displacement msd"),
    (r"rmsd", "root mean square deviation rms"),
    (r"rmsf", "root mean square fluctuation rmsf"),
    (r"sasa", "solvent accessible surface area sasa"),
    (r"pme", "particle mesh ewald pme"),
    (r"lj", "lennard-jones"),
    (r"vdw|van der waals", "van der waals vdw lennard-jones"),
    (r"h-bonds?|hbonds?", "hydrogen bond hbond"),
    (r"com|centre of mass|center of mass", "center of mass com"),
    (r"fep|alchemical", "free energy lambda"),
    (r"md", "molecular dynamics"),
    (r"mc", "monte carlo"),
    # what things are called in GROMACS
    (r"time ?steps?|integration steps?", "time step dt"),
    (r"initial velocities|starting velocities|random velocities", "velocity generation gen-vel"),
    (r"counter-?ions?|counterions?|neutrali[sz]e", "ions"),
    (r"water model|solvent box|solvate", "solvent water"),
    (r"run input|tpr", "run input file tpr"),
    (r"edr", "energy file edr"),
    (r"xtc|compressed trajectory|reduced precision", "compressed trajectory xtc"),
    (r"trr", "full precision trajectory trr"),
    (r"mdp", "mdp options parameters"),
    (r"ndx|index groups?", "index file ndx groups"),
    (r"topology|\.top", "topology top"),
    (r"restart|checkpoint", "checkpoint continuation cpt"),
    (r"periodic (image|copy|copies|boundar(y|ies))", "periodic boundary conditions pbc"),
)
_COMPILED = tuple((re.compile(rf"(?<![\w-])(?:{pattern})(?![\w-])"), terms) for pattern, terms in _ENTRIES)


def expand(question: str) -> list[str]:
    """Manual terms for the vocabulary the question uses (each list of terms once, in glossary order)."""
    text = question.lower()
    return [terms for pattern, terms in _COMPILED if pattern.search(text)]


def expanded(question: str) -> str:
    """The question followed by the manual's terms for what it names."""
    extra = expand(question)
    return f"{question} ({'; '.join(extra)})" if extra else question
