"""The ensemble a text prescribes, in the words people use for it (expert reader, simagent.described).

A run's ensemble is named by its acronym (NVE, NVT, NPT, NPH), by its name (microcanonical, canonical,
isothermal-isobaric, isoenthalpic-isobaric) or by what is held constant ('at constant energy', 'the
total energy is conserved', 'constant temperature and pressure', 'constant N, V and T'); NVE also by
what is absent (no heat bath, no thermostat, a thermally isolated system) or by the bare equations of
motion (Newton's equations, velocity Verlet), and NVT by an unnamed thermostat or heat bath. Named
thermostats (Langevin, Berendsen, rescaling) stay the readers' own: in LAMMPS they act on NVE
integration. A negated mention ('not microcanonical', 'rather than NVT') prescribes nothing; a
property named after an ensemble ('isothermal compressibility', 'constant-pressure heat capacity')
prescribes nothing either.

`evolution_words` finds words that prescribe how the system evolves whether or not they name an
ensemble, so a reader that cannot place them refuses ('stated, not understood') instead of running
a default ensemble. Every rule is tested on paraphrases (tests/test_ensemble_words.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Ensemble = Literal["nve", "nvt", "npt", "nph"]

# a mention is negated by these words ending at most three words before it
_NEGATED = re.compile(r"(?:\bnot|\bno|\bnon|n't|\bnever|\bnor|\brather than|\binstead of|\bunlike|\bexcept)"
                      r"(?:[- ]+(?:a|an|the|in|at|under|using|use|with|run|be|been|being|from|purely|"
                      r"strictly|simply|plain|any|its|this|that)){0,3}[- ]*\(?$")
# a property named after an ensemble's constraint is no prescription of the run
_PROPERTY_AFTER = r"(?![- ](?:heat capacit|specific heat|compressibilit|bulk modul|elastic|expansi|thermal expansi|" \
                  r"modul|enthalp|c_?p\b|c_?v\b|calorimet|partition function|average))"

_NPH = (r"\bnph\b|\bis(?:o)?enthalpic\b|constant[- ]enthalpy|constant[- ]pressure(?:,| and|, and)? (?:constant[- ])?"
        r"enthalpy|\bconstant n, ?p,? (?:and )?h\b|\(n, ?p, ?h\)")
_NPT = (r"\bnpt\b|isothermal[- ]isobaric|isobaric[- ]isothermal|"
        r"constant[- ]temperature(?:,| and|, and)? (?:constant[- ])?pressure" + _PROPERTY_AFTER + "|"
        r"constant[- ]pressure(?:,| and|, and)? (?:constant[- ])?temperature|"
        r"constant[- ]pressure" + _PROPERTY_AFTER + r"|\bisobaric\b" + _PROPERTY_AFTER + r"|"
        r"\bconstant n, ?p,? (?:and )?t\b|\(n, ?p, ?t\)|"
        r"(?:number of (?:particles|atoms|molecules), )?pressure and temperature (?:are |is )?(?:held |kept )?"
        r"(?:constant|fixed)|\bbarostat")
_NVT = (r"\bnvt\b|nos[eé][- ]?hoover|"
        r"(?<!micro-)(?<!micro )(?<!grand )(?<!grand-)\bcanonical(?: \(nvt\))?[- ](?:ensemble|sampling|"
        r"conditions?|distribution|dynamics|md|simulation|run)|"
        r"constant[- ]temperature" + _PROPERTY_AFTER + r"|\bisothermal(?![- ]isobaric)" + _PROPERTY_AFTER + r"|"
        r"\bconstant n, ?v,? (?:and )?t\b|\(n, ?v, ?t\)|"
        r"\b(?:coupled|coupling|connected|contact|attached|exchang\w*)[^.;,]{0,30}\b(?:heat|thermal) (?:bath|"
        r"reservoir)|(?:heat|thermal) (?:bath|reservoir) at\b")
_NVE = (r"\bnve\b|"
        r"micro-?canonical|"
        r"constant[- ](?:total[- ]|mechanical[- ])?energy(?![- ](?:shift|offset|term|surface|landscape|barrier|"
        r"contour|level|minimi))|"
        r"energy[- ]conserv(?:ing|ative)|"
        r"(?:total|mechanical|the) energy(?: of (?:each|every|the|this|that) \w+)? (?:is |being |stays |remains |"
        r"should be |must be |will be |to be |"
        r"gets? )?(?:strictly |exactly )?(?:conserved|held constant|kept constant|held fixed|kept fixed)|"
        r"(?:total|mechanical|the) energy(?: of (?:each|every|the|this|that) \w+)? (?:stays|remains|is|being|"
        r"should stay|must stay|should remain|must remain) "
        r"(?:strictly |exactly )?(?:constant|fixed|unchanged)|"
        r"(?:total|mechanical) energy (?:constant|fixed)\b|"
        r"conserv(?:es|e|ing|ed)(?: the)? (?:total |mechanical )?energy|"
        r"\bno (?:heat bath|thermal reservoir|thermostat\w*|temperature control)|"
        r"without (?:a |any |the )?(?:heat bath|thermal reservoir|thermostat\w*|temperature control|coupling to)|"
        r"\bun-?thermostatt?ed|thermostat[- ]free|"
        r"(?:thermally |energetically )isolated|\bisolated system|"
        r"\b(?:isolat|decoupl|disconnect)\w*(?: (?:the|this|that|its) (?:system|atoms|particles|fluid|crystal)| it| "
        r"them)? from (?:a |any |the |its )?(?:heat bath|thermal reservoir|thermostat|surroundings|environment|"
        r"reservoir)|"
        r"\bconstant n, ?v,? (?:and )?e\b|\(n, ?v, ?e\)|"
        r"(?:number of (?:particles|atoms|molecules), )?volume and (?:total )?energy (?:are |is )?(?:held |kept )?"
        r"(?:constant|fixed)")
# NVE only by the bare equations of motion: any thermostat or other ensemble in the sentence outranks it
_NVE_WEAK = (r"newton(?:'s|s'|ian)? (?:equations?|dynamics|mechanics|(?:second )?laws? of motion|equations? of motion)|"
             r"(?:plain|pure|standard|classical) newtonian|velocity[- ]verlet|\bverlet (?:integrat|algorithm|scheme)")

# thermostats with names: NVE integration under Langevin, Berendsen or rescaling is the LAMMPS way to hold T
_NVE_THERMOSTAT = r"langevin|berendsen|velocity[- ]rescal|temp/rescale|rescal\w* (?:the )?velocit"
_NAMED_THERMOSTAT = _NVE_THERMOSTAT + r"|v-rescale|\bcsvr\b|\bbussi\b|andersen|\bdpd\b|nos[eé][- ]?hoover"
_PATTERNS: list[tuple[Ensemble, str]] = [("nph", _NPH), ("npt", _NPT), ("nvt", _NVT), ("nve", _NVE)]
# an unnamed thermostat: the sentence is thermostatted, by a thermostat the text leaves open; the target
# or set point of "the thermostat" is one stated before ('a controller adjusts the thermostat target')
_UNNAMED_THERMOSTAT = re.compile(r"\bthermostat(?:t?ed|t?ing|s)?\b(?!(?:'s)? (?:target|set[- ]?point))")
# words that prescribe how the system evolves, whether or not an ensemble is read from them: the
# ensembles' own words and those of thermostats, integrators and equations of motion
EVOLUTION = re.compile("|".join([_NPH, _NPT, _NVT, _NVE, _NVE_WEAK, _UNNAMED_THERMOSTAT.pattern,
    r"\bensembles?\b(?![- ]averag)|barostat\w*|(?:heat|thermal) (?:bath|reservoir)|equations? of motion|"
    r"newton(?:'s|s')? (?:second |2nd )?(?:equations|laws?)(?! of (?:action|reaction))|"
    r"\bintegrat(?:or|ion (?:scheme|algorithm|method))|"
    r"(?:brownian|langevin|stochastic|dissipative particle|hamiltonian) dynamics|"
    r"\b(?:andersen|bussi|csvr|v-rescale|berendsen|langevin)\b|"
    r"(?:temperature|pressure) (?:control|coupling|regulation)|\bconserv\w* (?:the )?(?:total |mechanical )?energy|"
    r"energy (?:is |being )?conserved|(?:total|mechanical) energy\b[^.;,]{0,30}\b(?:conserved|held|kept|"
    r"fixed|constant)\b|"
    # 'the system is isolated'; not 'an isolated atom' (a cohesive energy's reference) nor 'isolated molecules'
    r"\bisolated\b(?! (?:\w+ )?(?:atoms?|molecules?|particles?|ions?|dimers?|monomers?|gas|species|clusters?|"
    r"chains?|vacanc\w+|defects?)\b)|"
    r"\b(?:isothermal|isobaric|isoenthalpic|adiabatic|microcanonical|canonical)\b" + _PROPERTY_AFTER]))


@dataclass(frozen=True)
class Stated:
    """An ensemble a sentence prescribes, with the words it was read from. `unnamed_thermostat`: the
    words hold the temperature without naming a thermostat ('constant temperature', 'a heat bath',
    'NVE with a thermostat'); the acronyms NVT and NPT name LAMMPS's Nose-Hoover fixes."""

    ensemble: Ensemble
    words: str
    unnamed_thermostat: bool = False
    temperature_only: bool = False  # NVT from words that hold the temperature and say nothing of the volume


def negated(text: str, start: int) -> bool:
    """Is the mention that starts at `start` negated ('not microcanonical', 'rather than in the NVT ensemble')?"""
    return _NEGATED.search(text[max(0, start - 40):start]) is not None


def _positive(pattern: str, text: str, outside: re.Match[str] | None = None) -> re.Match[str] | None:
    """The first mention of `pattern` that is not negated (nor inside the span of `outside`)."""
    for m in re.finditer(pattern, text):
        inside = outside is not None and outside.start() <= m.start() < outside.end()
        if not inside and not negated(text, m.start()):
            return m
    return None


def sentence_ensemble(sentence: str) -> Stated | None:
    """The ensemble one (lower-case) sentence prescribes, or None. Several in one sentence: NPH, then
    NPT, NVT, NVE (a barostat or thermostat word outranks the integration it acts on; 'NVE with a
    Langevin thermostat' is the caller's, which knows the thermostats); an unnamed thermostat makes
    NVT unless the sentence says NVE; Newton's equations or velocity Verlet alone make NVE."""
    nve = _positive(_NVE, sentence)
    thermostat = _positive(_UNNAMED_THERMOSTAT.pattern, sentence, outside=nve)  # not 'without a thermostat'
    for ensemble, pattern in _PATTERNS[:3]:
        hit = _positive(pattern, sentence)
        if hit is None:
            continue
        if ensemble != "nvt":
            return Stated(ensemble, hit.group(0))
        named = _positive(r"\bnvt\b|nos[eé][- ]?hoover", sentence) is not None
        volume = _positive(r"\bnvt\b|canonical|\bconstant n, ?v|\(n, ?v, ?t\)", sentence) is not None
        other = _positive(_NVE_THERMOSTAT, sentence)
        if not named and not volume and other is not None:  # 'at constant temperature by a Langevin thermostat'
            return Stated("nve", other.group(0))
        return Stated("nvt", hit.group(0), unnamed_thermostat=not named, temperature_only=not volume)
    if thermostat is not None and _positive(_NAMED_THERMOSTAT, sentence) is not None:
        thermostat = None  # a thermostat with a name is the readers' own ('a Langevin thermostat at 1.0')
    if nve is not None:
        return Stated("nve", nve.group(0), unnamed_thermostat=thermostat is not None)
    if thermostat is not None:
        return Stated("nvt", thermostat.group(0), unnamed_thermostat=True, temperature_only=True)
    weak = _positive(_NVE_WEAK, sentence)
    if weak is not None and _positive(_NAMED_THERMOSTAT, sentence) is None:
        return Stated("nve", weak.group(0))
    return None


def text_ensemble(low: str) -> Stated | None:
    """The ensemble a whole (lower-case) request prescribes, sentence by sentence: the first sentence
    that names one wins over none; a later one of higher rank (NPH, NPT, NVT, NVE) replaces it, as
    the expert reader has always ranked the acronyms."""
    rank = {"nph": 0, "npt": 1, "nvt": 2, "nve": 3}
    best: Stated | None = None
    for sentence in re.split(r"(?<=[.;!?])\s+", low):
        found = sentence_ensemble(sentence)
        if found is not None and (best is None or rank[found.ensemble] < rank[best.ensemble]):
            best = found
    return best


# Monte Carlo ensembles (grand canonical, Gibbs, semi-grand): a sampling the MC protocols honour, no dynamics
_MONTE_CARLO = re.compile(r"grand[- ]canonical|semi-?grand|\bgibbs\b|osmotic|monte[- ]carlo|\bgcmc\b|\bmu ?v ?t\b|μvt")


def evolution_words(text: str) -> str | None:
    """The first (non-negated) words of a text that prescribe how the system evolves in an MD run,
    or None (Monte Carlo ensembles are no MD evolution)."""
    for m in re.finditer(EVOLUTION.pattern, text):
        near = text[max(0, m.start() - 30):m.end() + 20]
        if not negated(text, m.start()) and not _MONTE_CARLO.search(near):
            return m.group(0)
    return None
