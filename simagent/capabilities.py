"""The capabilities a request may need beyond simagent's MD/MC protocols: one small routing table.

Two ways a request reaches a capability:
- by engine: the reader sets `TaskSpec.engine` from the method words an engine honours (DFT, PBE,
  VASP, Quantum ESPRESSO -> qe/vasp; a machine-learned potential, CHGNet, SevenNet -> mlp;
  domains/electronic.py), and the planner then uses only that engine's protocols;
- by graph node: a capability with a `route` (the node that answers it) takes the request.
The words of method no engine or node honours are recorded as `TaskSpec.unsupported`
(simagent.backends.expert.method_words); the query agent ends such a request with `refusal()`,
which says exactly what is not possible and the nearest thing simagent can do. A request is never
answered with a method other than the one it names.

To plug a capability into the graph, set its `route` to the
graph node that handles a TaskSpec needing it, add the node, and remove its words from
method_words.PATTERNS (they are then honoured, not refused).
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
    engines: tuple[str, ...] = ()  # engines that answer it (the reader routes by TaskSpec.engine)


CAPABILITIES: dict[str, Capability] = {
    c.key: c
    for c in [
        Capability(
            "dft", "this electronic-structure method, code or property (simagent runs DFT with Quantum "
            "ESPRESSO: PBE, PBEsol or LDA)",
            "DFT with Quantum ESPRESSO (PBE, PBEsol or LDA): the lattice constant, bulk modulus or band gap "
            "of a one-element crystal (e.g. 'band gap of silicon with PBE')", engines=("qe", "vasp")),
        Capability(
            "ml_potential", "this machine-learned potential (simagent runs the universal CHGNet and SevenNet "
            "models)",
            "the same property with CHGNet or SevenNet (lattice constant or bulk modulus of a crystal), or "
            "with a classical potential of simagent's library", engines=("mlp",)),
        # Literature questions go to the knowledge node before the request is read (agents.query,
        # simagent.knowledge.route); what reaches this table mixes a literature ask into a simulation.
        Capability(
            "literature", "a literature answer inside a simulation request",
            "ask the literature question on its own (it is answered from the indexed sources, cited), "
            "and the simulation separately"),
        Capability(
            "screening", "screening or ranking many structures by anything but the uptake of a gas at a stated "
            "pressure and temperature",
            "a screen of CoRE MOFs by gas uptake, e.g. 'the top 10 CoRE MOFs for methane uptake at 65 bar and "
            "298 K' or 'top 3 of ABETAE, XAFBEN and YORNIE for krypton at 1 bar and 273 K' (also `simagent "
            "screen`); or one named framework at a time, e.g. 'CO2 Henry coefficient of IRMOF-1 at 298 K'"),
        Capability(
            "engine", "a simulation engine simagent does not drive (it drives LAMMPS, GROMACS, RASPA and Zeo++)",
            "the same property with LAMMPS or GROMACS (say 'with LAMMPS' or 'with GROMACS')"),
        Capability(
            "potential", "a potential family simagent has no protocol for (it has EAM, MEAM, Tersoff, "
            "Stillinger-Weber and Lennard-Jones)",
            "the same property with one of those families (e.g. Tersoff for carbon or silicon)"),
    ]
}


def needed(spec: TaskSpec) -> set[str]:
    """Capabilities the request needs: refused ones and those its engine routes it to."""
    by_engine = {c.key for c in CAPABILITIES.values() if spec.engine in c.engines}
    return {u.capability for u in spec.unsupported} | by_engine


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
