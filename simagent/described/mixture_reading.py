"""Rules that read an atomic mixture (simagent.described.mixtures) from a described task's text.

Read here, each recording the words it read:
- how many atom types there are: the highest 'type N' the text names, or 'two atom types',
  'a binary mixture', 'four species';
- per type, the clause that names it ('type 2 particles have mass 10 and epsilon 0.5, sigma 3'):
  its mass and its own LJ epsilon/sigma, and the words it is called by ('the substrate (type 1)',
  'solvent particles (type 2)', 'a substrate composed of type 1 atoms');
- a pair of types with its own coefficients or cutoff ('between type 1 and type 2 ...', 'the
  substrate-deposit interactions use a cutoff of 5.0'); other unlike pairs follow the stated mixing
  rule, else LAMMPS's default (geometric), listed as a default;
- atoms placed at random ('300 atoms of type 2 are inserted at random positions in the box, seed
  4242, no closer than 0.9 to any other atom'): LAMMPS create_atoms random;
- atoms deposited during the run ('100 atoms are added every 100 steps in the slab z = 8-9'):
  LAMMPS fix deposit, which inserts one atom every M steps, N in all.
When the types, their masses and all pair coefficients are read and every random placement is
read, 'several atom types or random placement' is no longer unsupported.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from simagent.backends.expert.protocol_text import NUM, NUMBER_WORDS
from simagent.described.group_reading import _LAYOUT_WORDS, _REQUEST, LAYOUT_UNSUPPORTED
from simagent.described.groups import Group, Layout, Region
from simagent.described.mixtures import DEFAULT_MAX_TRIES, DEFAULT_PLACEMENT_SEED, AtomType, Deposition, RandomPlacement
from simagent.described.model import Dynamics, PairCoeff, SimulationDescription, Stage
from simagent.described.solids import DEFAULT_SUBSTITUTION_SEED, Substitution

MIXTURE_UNSUPPORTED = "several atom types or random placement"
DEPOSIT_UNSUPPORTED = "fix deposit"
DEFAULT_DEPOSIT_SEED = 29494
DEFAULT_DEPOSIT_NEAR = 1.0  # LAMMPS examples/deposit: near 1.0 (sigma)
DEFAULT_DEPOSIT_SPEED = 1.0  # LAMMPS examples/deposit: vz -1.0 -1.0

_TYPE = re.compile(r"\b(?:atom |particle )?type[- ]?(\d+)\b")
_COUNT_WORD = "|".join(NUMBER_WORDS)
_N_TYPES = re.compile(rf"\b(\d+|{_COUNT_WORD}) (?:different |distinct )?(?:atom(?:ic)? |particle )?(?:types|species|"
                      rf"components|kinds of (?:atoms|particles))\b|\b(binary|ternary) (?:mixture|system|alloy)")
_MASS = re.compile(r"\bmass(?:es)?\s*(?:of|=|:|is|equal to)?\s*" + NUM)
_EPS = re.compile(r"epsilon\s*(?:=|of|:|is)?\s*" + NUM)
_SIG = re.compile(r"sigma\s*(?:=|of|:|is)?\s*" + NUM + r"(?!\s*(?:cut|\*))")
_CUT = re.compile(r"(?:cut-?off(?: distance| radius)?(?: of| =| is|:)?|\bcut (?:off )?at|(?:reach(?:es|ing)?|"
                  r"extend(?:s|ing)?)(?: out)? to)\s*" + NUM)
_ROLE_BEFORE = re.compile(r"\b([a-z]+) (?:(?:atoms|particles|spheres|beads) )?\((?:atom )?type (\d+)\)")
_ROLE_OF = re.compile(r"\b([a-z]+) (?:is |are )?(?:composed|consisting|consists|made|built|formed) (?:up )?of "
                      r"type (\d+)|\b([a-z]+) of type (\d+) (?:atoms|particles)")
_ROLE_AFTER = re.compile(r"\btype (\d+) (?:atoms|particles)? ?(?:as|represent\w*|for|form\w*|being) (?:the )?"
                         r"(?:as )?([a-z]+)")
_ROLE_VERB = re.compile(r"\btype (\d+) (?:atoms|particles) (?:are |is )?(?:being |then |dynamically )?"
                        r"(deposited|inserted|added|adsorbed|poured|injected)")
_PAIR_TYPES = re.compile(r"between (?:atoms of |particles of )?type (\d+) and (?:atoms of |particles of )?type (\d+)|"
                         r"\btypes? (\d+) ?(?:and|-|/) ?(?:type )?(\d+) (?:pairs?|interactions?|cross)")
_PAIR_ROLES = re.compile(r"\b([a-z]+)[- /]([a-z]+) (?:pairs?|(?:pair |cross[- ])?interactions?|cross[- ]terms?)")
_ALL_UNIT_MASS = re.compile(r"\ball (?:the )?(?:atoms|particles)(?: types)? (?:are having|have|having|with|carry|"
                            r"are of|share)(?: the| a)? (?:same )?unit mass|\bunit mass for all|"
                            r"all masses (?:are |= ?)"
                            r"(?:1|one|unity)\b")
RANDOM_PLACEMENT = re.compile(r"random(?:ly)? (?:insert|place|position|distribut|add|put|scatter)|"
                              r"(?:insert|plac|position|distribut|add|put|scatter)\w* "
                              r"(?:at random|randomly|in random positions|at random positions)")


def _stem(word: str) -> str:
    return word[:5]


# Words of one meaning for a kind of particle: a metric may call 'big' what the text calls 'large'.
_SAME_SIZE_WORDS = ({"big", "large", "colloidal", "colloid"}, {"small", "little", "tiny"},
                    {"heavy", "heavier"}, {"light", "lighter"})


def type_called(desc: SimulationDescription, word: str) -> int | None:
    """The atom type the description calls by `word` ('big', 'solvent'), read as the text's role words
    are read (their first five letters; 'big' and 'large' are one word), or None."""
    kin = next((s for s in _SAME_SIZE_WORDS if word in s), {word})
    stems = {_stem(w) for w in kin}
    hits = {t.index for t in desc.types if t.name and _stem(t.name) in stems}
    return hits.pop() if len(hits) == 1 else None


def _types_named(low: str) -> int:
    named = [int(m.group(1)) for m in _TYPE.finditer(low)]
    counted = 0
    for hit in _N_TYPES.finditer(low):
        word = hit.group(1) or hit.group(2)
        counted = max(counted, int(word) if word.isdigit() else NUMBER_WORDS.get(word, 0))
    return max(named + [counted, 1])


def _clauses(sentence: str) -> dict[int, str]:
    """type -> the words from where the sentence names it to where it names the next type."""
    hits = list(_TYPE.finditer(sentence))
    out: dict[int, str] = {}
    for n, hit in enumerate(hits):
        end = hits[n + 1].start() if n + 1 < len(hits) else len(sentence)
        out.setdefault(int(hit.group(1)), "")
        out[int(hit.group(1))] += " " + sentence[hit.start():end]
    return out


_NOT_ROLES = {"the", "of", "and", "with", "are", "is", "all", "two", "both", "each", "atom", "atoms", "particle",
              "particles", "number", "average", "fraction", "count", "amount", "mean", "total"}


def _roles(low: str) -> dict[str, tuple[int, str]]:
    """stem of a word a type is called by -> (type, the word)."""
    roles: dict[str, tuple[int, str]] = {}
    found = [(h.group(1), h.group(2)) for h in _ROLE_BEFORE.finditer(low)]
    found += [(h.group(1), h.group(2)) if h.group(1) else (h.group(3), h.group(4)) for h in _ROLE_OF.finditer(low)]
    found += [(h.group(2), h.group(1)) for h in _ROLE_AFTER.finditer(low)]
    found += [(h.group(2), h.group(1)) for h in _ROLE_VERB.finditer(low)]
    for word, index in found:
        if word not in _NOT_ROLES:
            roles.setdefault(_stem(word), (int(index), word))
    return roles


def read_mixture(desc: SimulationDescription, low: str, sentence_dynamics: Callable[..., Dynamics | None],
                 complete: Callable[[SimulationDescription, Stage, str], None]) -> None:
    """Types, masses, per-pair coefficients, random placements and a deposition (module docstring).
    `sentence_dynamics` and `complete`: the stage reader's, to read the mobile group's thermostat."""
    n_types = _types_named(low)
    sentences = re.split(r"(?<=[.;])\s+", low)
    _unstated_parts(desc, low, sentences)
    if n_types > 1:
        if desc.pair is None or desc.potential is not None:
            return  # types of a many-body potential are the elements' (solids); no LJ: nothing to assign
        _types(desc, low, sentences, n_types)
        _numbered_substitutions(desc, sentences)
    placed = [p for s in sentences if (p := _placement(desc, s))]
    _deposition(desc, low, sentences)
    if desc.lattice is None and desc.box is not None and not desc.placements and desc.molecular is None and \
            desc.chain is None and (desc.layout is None or not desc.layout.fills):  # (fills: lattices of their own)
        desc.missing.append("the atoms placed at random (how many, of which type)")
    if desc.deposition is not None and desc.layout is not None and desc.layout.thermostat_group:
        _group_thermostat(desc, low, sentences, sentence_dynamics, complete)
    randoms = [s for s in sentences if RANDOM_PLACEMENT.search(s)]
    if len(placed) < len(randoms) - (1 if desc.substitutions else 0):
        return  # a random placement stated but not read: stays unsupported
    if n_types > 1 and not desc.types:
        return
    if MIXTURE_UNSUPPORTED in desc.unsupported and (n_types > 1 or placed):
        desc.unsupported.remove(MIXTURE_UNSUPPORTED)


# '25 % of the lattice particles are turned into type 2 at random (seed 4421)'
_TO_TYPE = re.compile(r"\b" + NUM + r" ?(?:%|percent) of (?:the |all )?(?:lattice |type[- ]?1 |original )?(?:atoms|"
                      r"particles|sites|beads)\b[^.;]{0,60}?\b(?:to|into|as|by|become|becomes) "
                      r"(?:atoms? of |particles? of )?type[- ]?(\d+)\b")


def _numbered_substitutions(desc: SimulationDescription, sentences: list[str]) -> None:
    """A fraction of the lattice atoms given another type at random, the type named by its number
    (LAMMPS set type/fraction)."""
    for sentence in sentences:
        hit = _TO_TYPE.search(sentence)
        if not hit or not re.search(r"random", sentence) or desc.lattice is None:
            continue
        to_type, fraction = int(hit.group(2)), float(hit.group(1)) / 100
        if not 0 < fraction <= 1 or to_type > desc.atom_types or to_type == desc.lattice_type:
            continue
        seed = _SEED.search(sentence)
        desc.substitutions.append(Substitution(from_type=desc.lattice_type, to_type=to_type, fraction=fraction,
                                               seed=int(seed.group(1)) if seed else DEFAULT_SUBSTITUTION_SEED))
        n = len(desc.substitutions)
        desc.note(f"substitution{n}", "rules", hit.group(0))
        if not seed:
            desc.note(f"substitution{n}.seed", "default", f"{DEFAULT_SUBSTITUTION_SEED}: none stated")


def check_made_types(desc: SimulationDescription) -> None:
    """A type the text names with its own parameters but no atom of which is made would silently be left
    out of the run: named missing. Called once every reader has run; a new way of making atoms of a type
    belongs in `made` here."""
    if not desc.types or desc.molecular is not None or desc.potential is not None or desc.chain is not None or \
            desc.unsupported or (desc.lattice is None and not desc.placements):
        return  # no system built here (a data file, molecules, a many-body potential's elements), or refused already
    made = {desc.lattice_type} if desc.lattice is not None else set()
    made |= {p.atom_type for p in desc.placements if p.molecule is None}
    made |= {s.to_type for s in desc.substitutions}
    made |= {desc.deposition.atom_type} if desc.deposition is not None else set()
    made |= {desc.srd.atom_type} if desc.srd is not None else set()
    made |= {c.atom_type for c in desc.cavities}
    if desc.layout is not None:  # lattice atoms per region, groups given a type
        made |= {f.atom_type for f in desc.layout.fills} | {t for _, t in desc.layout.retype}
    unmade = [t.index for t in desc.types if t.index not in made]
    if unmade:
        desc.missing.append("how the atoms of type " + ", ".join(map(str, unmade)) + " are made (the text gives the "
                            "type parameters; no lattice, placement, substitution or deposition of it was read)")


def _unstated_parts(desc: SimulationDescription, low: str, sentences: list[str]) -> None:
    """What a prescribed but unrendered method would also need and the text leaves out, named so that
    the refusal says all of it: the colloid potential's coefficients, the SRD bin size, the size of a
    round region."""
    if "pair_style colloid" in desc.unsupported and not re.search(r"hamaker[^.;]{0,30}\d", low):
        desc.missing.append("the colloid potential's coefficients per pair type (Hamaker constant, sigma, "
                            "particle diameters)")
    if any("fix srd" in u for u in desc.unsupported) and not re.search(r"(?:bin|grid|cell) (?:size|length|width)"
                                                                        r"[^.;]{0,20}\d", low):
        desc.missing.append("the SRD bin (grid) size")
    for sentence in sentences:
        shape = re.search(r"\b(cylind\w*|spherical|circular|round)\b[^.;]{0,40}\bregions?\b", sentence)
        if shape and not re.search(r"radi(?:us|i)|diameter", low):
            desc.missing.append(f"the radius of the {shape.group(1)} region")


def _types(desc: SimulationDescription, low: str, sentences: list[str], n_types: int) -> None:
    types = {i: AtomType(index=i) for i in range(1, n_types + 1)}
    roles = _roles(low)
    for index, word in roles.values():
        if index in types and not types[index].name:
            types[index].name = word
    for sentence in sentences:
        for index, clause in _clauses(sentence).items():
            if index not in types or _PAIR_TYPES.search(clause):
                continue
            t = types[index]
            own = clause.split(" while ")[0].split(" whereas ")[0]
            for field, pattern in (("mass", _MASS), ("epsilon", _EPS), ("sigma", _SIG)):
                hit = pattern.search(own)
                if hit and getattr(t, field) is None:
                    setattr(t, field, float(hit.group(1)))
                    desc.note(f"type{index}.{field}", "rules", hit.group(0))
        _role_mass(desc, sentence, roles, types)
    desc.types = list(types.values())
    desc.atom_types = n_types
    desc.note("atom_types", "rules", f"{n_types} atom types (the highest type the text names)")
    _type_masses(desc, low)
    _pair_coeffs(desc, low, sentences, roles)


def _role_mass(desc: SimulationDescription, sentence: str, roles: dict[str, tuple[int, str]],
               types: dict[int, AtomType]) -> None:
    """'the solvent particles have mass 0.01', where 'solvent' names one type elsewhere ('solvent
    particles (type 2)'): a sentence naming no type number, one role and one mass."""
    if _TYPE.search(sentence):
        return
    named = {roles[_stem(w)][0] for w in re.findall(r"[a-z]+", sentence) if _stem(w) in roles and len(w) > 3}
    masses = _MASS.findall(sentence)
    if len(named) != 1 or len(masses) != 1:
        return
    t = types.get(named.pop())
    if t is not None and t.mass is None:
        t.mass = float(masses[0])
        desc.note(f"type{t.index}.mass", "rules", f"{t.name or 'type ' + str(t.index)}: {sentence[:100]}")


def _type_masses(desc: SimulationDescription, low: str) -> None:
    if "atom masses" in desc.missing:
        return
    every = _ALL_UNIT_MASS.search(low)
    if not every and len(_MASS.findall(low)) > 1 and any(t.mass is None for t in desc.types):
        desc.missing.append("which atom type each stated mass belongs to")
        return
    for t in desc.types:
        if t.mass is not None:
            desc.masses[t.index] = t.mass
        elif every:
            desc.masses[t.index] = 1.0
            desc.note(f"type{t.index}.mass", "rules", every.group(0))
        elif desc.units == "lj":
            desc.masses[t.index] = 1.0
            desc.note(f"type{t.index}.mass", "default", "1: in LJ units the unit of mass (no mass stated for "
                      f"type {t.index})")
        else:
            desc.missing.append(f"the mass of atom type {t.index}")
    desc.masses = {k: v for k, v in desc.masses.items() if k <= desc.atom_types}
    desc.note("masses", "rules", ", ".join(f"type {k}: {v:g}" for k, v in sorted(desc.masses.items())))


def _pair_coeffs(desc: SimulationDescription, low: str, sentences: list[str],
                 roles: dict[str, tuple[int, str]]) -> None:
    pair = desc.pair
    if pair is None:
        return
    if pair.coeffs and pair.coeffs[0].i == "*":  # the one coefficient set read for the whole text
        base = pair.coeffs[0]
    else:
        base = None
    own = [t for t in desc.types if t.epsilon is not None or t.sigma is not None]
    coeffs: list[PairCoeff] = []
    if own:
        for t in desc.types:
            eps = t.epsilon if t.epsilon is not None else (base.epsilon if base else None)
            sig = t.sigma if t.sigma is not None else (base.sigma if base else None)
            if eps is None or sig is None:
                desc.missing.append(f"the LJ epsilon and sigma of atom type {t.index}")
                return
            coeffs.append(PairCoeff(i=str(t.index), j=str(t.index), epsilon=eps, sigma=sig))
        if pair.mixing is None:
            desc.note("pair.mixing", "default", "geometric: LAMMPS's default mixing rule for unlike pairs (none "
                      "stated)")
    elif base is not None:
        coeffs.append(base)
    for sentence in sentences:
        for hit in list(_PAIR_TYPES.finditer(sentence)) + list(_PAIR_ROLES.finditer(sentence)):
            groups = [g for g in hit.groups() if g]
            if hit.re is _PAIR_ROLES:
                if any(_stem(w) not in roles for w in groups):
                    continue
                ij = [roles[_stem(w)][0] for w in groups]
            else:
                ij = [int(g) for g in groups]
            i, j = sorted(ij)
            tail = sentence[hit.start():hit.start() + 160]
            eps, sig, cut = (_EPS.search(tail), _SIG.search(tail), _CUT.search(tail))
            if not (eps or sig or cut):
                continue
            like = next((c for c in coeffs if c.i == "*" or (c.i == str(i) and c.j == str(i))), base)
            coeffs.append(PairCoeff(i=str(i), j=str(j),
                                    epsilon=float(eps.group(1)) if eps else (like.epsilon if like else 1.0),
                                    sigma=float(sig.group(1)) if sig else (like.sigma if like else 1.0),
                                    cutoff=float(cut.group(1)) if cut else None))
            desc.note(f"pair.{i}{j}", "rules", tail[:100])
    if coeffs:
        pair.coeffs = coeffs


# --- random placement ---------------------------------------------------------------------------
_PLACE_COUNT = re.compile(r"\b(\d+) (?:(?:more|additional|extra|new) )?(?:(?:atom |particle )?type[- ]?(\d+) )?"
                          r"(?:(?!of\b|and\b)[a-z]+ )?(?:atoms|particles)(?: of (?:atom |particle )?type[- ]?(\d+))?")
_SEED = re.compile(r"\b(?:random )?seed\s*(?:of|=|:|is)?\s*(\d+)")
_OVERLAP = re.compile(r"(?:\b(?:no|none|not)(?: two)?(?: (?:atoms?|particles?))? (?:closer|nearer) than|"
                      r"(?:minimum|least|smallest) "
                      r"(?:separation|distance)(?: of| between \w+)?|"
                      r"overlap (?:distance|cut-?off|criterion)(?: of)?|"
                      r"at least)\s*" + NUM)
_IN_BOX = re.compile(r"\b(?:in|inside|within|throughout|into) (?:the )?(?:whole |entire )?(?:simulation )?"
                     r"(?:box|domain|cell)\b")
_IN_REGION = re.compile(r"\b(?:in|inside|within|into) (?:the )?(?:region (?:named |called )?'?([a-z]\w*)|([a-z]\w*) "
                        r"region)\b")


def _placement(desc: SimulationDescription, sentence: str) -> RandomPlacement | None:
    if not RANDOM_PLACEMENT.search(sentence):
        return None
    hit = _PLACE_COUNT.search(sentence)
    if not hit:
        return None
    index = int(hit.group(2) or hit.group(3) or 0) or None
    if index is None:
        index = 1 if desc.atom_types == 1 else None
    if index is None:
        desc.missing.append(f"the atom type of the {hit.group(1)} randomly placed atoms")
        return None
    region = None
    named = _IN_REGION.search(sentence)
    if named:
        name = named.group(1) or named.group(2)
        if desc.layout is None or not any(r.name == name for r in desc.layout.regions):
            desc.missing.append(f"the region '{name}' the random atoms are placed in")
            return None
        region = name
    elif not _IN_BOX.search(sentence):
        desc.note(f"placement{len(desc.placements) + 1}.region", "default", "the whole box: the text names no "
                  "region for the random atoms")
    seed = _SEED.search(sentence)
    overlap = _OVERLAP.search(sentence)
    p = RandomPlacement(atom_type=index, count=int(hit.group(1)), seed=int(seed.group(1)) if seed else
                        DEFAULT_PLACEMENT_SEED, region=region, overlap=float(overlap.group(1)) if overlap else None,
                        max_tries=DEFAULT_MAX_TRIES if overlap else None)
    n = len(desc.placements) + 1
    desc.placements.append(p)
    desc.atom_types = max(desc.atom_types, index)
    desc.note(f"placement{n}", "rules", sentence[:160])
    if not seed:
        desc.note(f"placement{n}.seed", "default", f"{DEFAULT_PLACEMENT_SEED}: none stated")
    if overlap:
        desc.note(f"placement{n}.max_tries", "default", f"{DEFAULT_MAX_TRIES} attempts per atom (LAMMPS maxtry; "
                  "none stated): an atom that finds no free place is not inserted, which the run's atom count shows")
    return p


# --- deposition ---------------------------------------------------------------------------------
_DEPOSIT_RATE = re.compile(r"\b(\d+) (?:(?:atom |particle )?type[- ]?\d+ )?(?:atoms|particles) (?:are |is |being )?"
                           r"(?:added|inserted|deposited|introduced) (?:once )?every (\d+) (?:time ?)?steps")
_SPAN = re.compile(r"\(?\b([xyz])\s*=\s*" + NUM + r"\s*(?:-|to)\s*" + NUM)
_ABOVE_GROUP = re.compile(r"\b(mobile|free|moving|upper|thermostat\w*)\b[^.;]{0,30}?\b(?:above|over|with [xyz] >) "
                          r"([xyz])\s*=?\s*" + NUM)

_ABOVE_GROUP_AFTER = re.compile(r"\b(?:atoms|particles) (?:with|at|whose) ([xyz])\s*(?:coordinates? )?"
                                r"(?:above|over|>|greater than)\s*" + NUM +
                                r"[^.;]{0,20}?\b(?:are|form|make up|as) (?:the )?(mobile|free|moving)\b")


def _group_thermostat(desc: SimulationDescription, low: str, sentences: list[str],
                      sentence_dynamics: Callable[..., Dynamics | None],
                      complete: Callable[[SimulationDescription, Stage, str], None]) -> None:
    """The thermostat stated with the mobile group acts in every run (the deposited atoms' own NVE,
    stated elsewhere, does not replace it)."""
    said = next((s for s in sentences if re.search(r"\bmobile\b", s) and re.search(r"thermostat|langevin", s)), None)
    dyn = sentence_dynamics(said, desc.units == "lj", None) if said else None
    if dyn is None or dyn.thermostat is None:
        return
    for stage in desc.stages:
        if stage.dynamics is not None and stage.dynamics.thermostat is None and stage.dynamics.ensemble == "nve":
            stage.dynamics = dyn.model_copy()
            complete(desc, stage, low)
            desc.note(f"{stage.name}.thermostat", "rules", said[:120])


def _deposition(desc: SimulationDescription, low: str, sentences: list[str]) -> None:
    if DEPOSIT_UNSUPPORTED not in desc.unsupported or desc.box is None:
        return
    rate = _DEPOSIT_RATE.search(low)
    where = next((s for s in sentences if re.search(r"deposit", s) and _SPAN.search(s)), None)
    if not rate or where is None:
        desc.missing.append("the deposition's rate (atoms, every how many steps) and region")
        return
    span = _SPAN.search(where)
    assert span is not None
    typed = re.search(r"\btype (\d+) (?:atoms|particles)? ?(?:are |is )?(?:\w+ )?deposit|deposit\w* of type (\d+)",
                      low)
    if not typed:
        desc.missing.append("the atom type that is deposited")
        return
    index = int(typed.group(1) or typed.group(2))
    axis = span.group(1)
    bounds: list[float | None] = []
    for k, a in enumerate("xyz"):
        lo, hi = desc.box.lo[k], desc.box.hi[k]
        bounds += [float(span.group(2)), float(span.group(3))] if a == axis else [lo, hi]
    layout = desc.layout or Layout()
    layout.regions.append(Region(name="deposit_region", style="block", bounds=tuple(bounds)))
    downward = re.search(r"\bdow\w*ward|\bdown\b|toward\w* the (?:substrate|surface|bottom)", low)
    sign = -1.0 if downward else 1.0
    seed = _SEED.search(where)
    desc.deposition = Deposition(atom_type=index, count=int(rate.group(1)), every=int(rate.group(2)),
                                 region="deposit_region", seed=int(seed.group(1)) if seed else DEFAULT_DEPOSIT_SEED,
                                 near=DEFAULT_DEPOSIT_NEAR, axis=axis, velocity=sign * DEFAULT_DEPOSIT_SPEED)
    desc.note("deposition", "rules", f"{rate.group(0)}; {span.group(0)}: type {index}")
    desc.note("deposition.count", "default", f"{rate.group(1)} atoms in all, one every {rate.group(2)} steps: fix "
              "deposit inserts one atom per interval, so 'N atoms every M steps' is read in LAMMPS's meaning")
    desc.note("deposition.velocity", "default", f"{sign * DEFAULT_DEPOSIT_SPEED:g} along {axis} "
              f"({'downward' if downward else 'no direction stated'}; speed as LAMMPS examples/deposit, none stated)")
    desc.note("deposition.near", "default", f"{DEFAULT_DEPOSIT_NEAR:g}: least distance of an inserted atom to the "
              "others, like the speed in lattice units (fix deposit's default; LAMMPS examples/deposit; none stated)")
    if not seed:
        desc.note("deposition.seed", "default", f"{DEFAULT_DEPOSIT_SEED}: none stated")
    mobile = _ABOVE_GROUP.search(low) or _ABOVE_GROUP_AFTER.search(low)
    if mobile:
        axis_at, value = (2, 3) if mobile.re is _ABOVE_GROUP else (1, 2)
        k = "xyz".index(mobile.group(axis_at))
        b: list[float | None] = [None] * 6
        b[2 * k] = float(mobile.group(value))
        layout.regions.append(Region(name="mobile_region", style="block", bounds=tuple(b)))
        layout.groups.append(Group(name="mobile", region="mobile_region"))
        layout.thermostat_group = "mobile"
        layout.integrated = "mobile"
        desc.note("group.mobile", "rules", mobile.group(0) + ": the lattice atoms there are integrated and "
                  "thermostatted; the others stay where they are made (a fixed substrate)")
    elif re.search(r"\bmobile\b|\bfixed (?:substrate|surface|base)|do(?:es)? not move|\bheld\b", low):
        desc.missing.append("which atoms move (the mobile group) and which are held")
    if desc.boundary["xyz".index(axis)] != "p":
        desc.note("deposition.wall", "default", f"a reflecting wall for the deposited atoms at the {axis} face they "
                  "move away from: with a fixed boundary an atom crossing it is lost (LAMMPS examples/deposit; not "
                  "stated)")
    desc.layout = layout
    desc.unsupported.remove(DEPOSIT_UNSUPPORTED)
    if where is not None and LAYOUT_UNSUPPORTED in desc.unsupported and _filled_part(desc, low, layout) and not [
            s for s in sentences if _LAYOUT_WORDS.search(s) and s is not where and not _REQUEST.search(s)]:
        desc.unsupported.remove(LAYOUT_UNSUPPORTED)


_PART = re.compile(r"\b(?:lower|bottom) (?:portion|part|region|layer|section|slab)s? of the (?:simulation )?box\s*"
                   r"\(?\s*(?:([xyz])\s*(?:=|from)\s*)?" + NUM + r"\s*(?:-|to)\s*" + NUM)


def _filled_part(desc: SimulationDescription, low: str, layout: Layout) -> bool:
    """'the substrate fills the lower part of the box (z 0-3), fcc': the lattice atoms are made in
    that block only (the box's last axis unless one is named)."""
    hit = _PART.search(low)
    if not hit:
        return layout.create_in is not None
    axis = hit.group(1) or ("y" if desc.dimension == 2 else "z")
    k = "xyz".index(axis)
    bounds: list[float | None] = [None] * 6
    bounds[2 * k], bounds[2 * k + 1] = float(hit.group(2)), float(hit.group(3))
    layout.regions.append(Region(name="substrate_region", style="block", bounds=tuple(bounds)))
    layout.create_in = "substrate_region"
    desc.note("create_in", "rules", hit.group(0) + f": the lattice atoms fill {axis} {hit.group(2)}-{hit.group(3)}")
    if desc.lattice is not None and desc.lattice.origin is None:
        desc.lattice.origin = (0.25, 0.25, 0.25)
        desc.note("lattice.origin", "default", "0.25 0.25 0.25: lattice planes off the faces of the filled block, so "
                  "no plane lies exactly on a face where round-off would decide whether it is in (as LAMMPS "
                  "examples/deposit)")
    return True
