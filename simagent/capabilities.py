"""The capabilities a request may need beyond simagent's MD/MC protocols: one small routing table.

The request reader records the words that need one of these as `TaskSpec.unsupported`
(simagent.backends.expert.method_words). The query agent then either routes the request to the
capability (when its `route` is set: the name of the graph node that answers it) or ends it with
`refusal()`, which says exactly what is not possible and the nearest thing simagent can do. A
request is never answered with a method other than the one it names.

To plug a capability in (DFT: issue 11, literature: issue 12, screening: issue 15), set its
`route` here to the graph node that handles a TaskSpec with that capability, and add the node.
"""

from __future__ import annotations

from dataclasses import dataclass

from simagent.models import TaskSpec, Unsupported


@dataclass(frozen=True)
class Capability:
    key: str
    what: str  # what the request asks for, in the user's terms
    nearest: str  # the nearest thing simagent does today
    issue: int | None = None  # the issue that builds it, while it is not there
    route: str | None = None  # graph node answering it, once it exists


CAPABILITIES: dict[str, Capability] = {
    c.key: c
    for c in [
        Capability(
            "dft", "DFT / electronic-structure calculations (VASP, Quantum ESPRESSO, PBE and other "
            "functionals; band gaps, densities of states, DFT binding energies)",
            "classical potentials: lattice constants, cohesive energies and elastic properties with an EAM, "
            "MEAM, Tersoff, Stillinger-Weber or Lennard-Jones potential (name one, e.g. 'with the Tersoff "
            "potential')", issue=11),
        Capability(
            "ml_potential", "machine-learned interatomic potentials (MACE, NequIP, GAP, SNAP, DeePMD, CHGNet ...)",
            "the classical potentials of simagent's library (EAM, MEAM, Tersoff, Stillinger-Weber, "
            "Lennard-Jones): name one to run with it", issue=11),
        Capability(
            "literature", "literature search and cited published values",
            "a simulated value, if you name the system, the conditions and the model", issue=12),
        Capability(
            "screening", "screening or ranking many structures (e.g. a CoRE MOF database)",
            "one named framework at a time, e.g. 'methane uptake in HKUST-1 at 65 bar and 298 K'", issue=15),
        Capability(
            "engine", "a simulation engine simagent does not drive (it drives LAMMPS, GROMACS, RASPA and Zeo++)",
            "the same property with LAMMPS or GROMACS (say 'with LAMMPS' or 'with GROMACS')"),
        Capability(
            "potential", "a potential family simagent has no protocol for (it has EAM, MEAM, Tersoff, "
            "Stillinger-Weber and Lennard-Jones)",
            "the same property with one of those families (e.g. Tersoff for carbon or silicon)"),
    ]
}


def routes(spec: TaskSpec) -> list[str]:
    """Graph nodes that take this request (all its needed capabilities must be available)."""
    needed = [CAPABILITIES[u.capability] for u in spec.unsupported]
    if needed and all(c.route for c in needed) and len({c.route for c in needed}) == 1:
        return [needed[0].route]  # type: ignore[list-item]
    return []


def refusal(unsupported: list[Unsupported]) -> str:
    """What is not possible, and the nearest thing simagent can do, for each needed capability."""
    parts = []
    seen: set[str] = set()
    for item in unsupported:
        if item.capability in seen:
            continue
        seen.add(item.capability)
        cap = CAPABILITIES[item.capability]
        words = ", ".join(f"'{u.words}'" for u in unsupported if u.capability == item.capability)
        status = f"not yet supported (issue {cap.issue})" if cap.issue else "not supported"
        parts.append(f"the request asks for {words}: {cap.what} is {status}, and simagent does not answer "
                     f"it with another method. Nearest thing it can do: {cap.nearest}.")
    text = " ".join(parts)
    return text[:1].upper() + text[1:]
