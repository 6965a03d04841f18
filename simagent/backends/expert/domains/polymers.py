"""Expert-reader domain module for bead-spring polymers (see domains/__init__.py).

Recognises Kremer-Grest / bead-spring / FENE chains and polymer melts as SystemSpec(kind="polymer")
in reduced LJ units, with the chain length ("chains of 20 beads", "20-bead chains", "20-mers",
"N = 20", "chain length 20") written into SystemSpec.molecule as "bead-spring chain of N beads"
(read back by tools.lammps.protocols.chains.chain_length_of; a `chain_length` field on SystemSpec
would make this explicit). "M chains" (or "M molecules") sets the bead count to M x N. Without a
chain length, "chain length" goes to `missing` so the graph asks. It runs after the generic rules
and replaces the LJ fluid they guess from "T* = 1" or "rho* = 0.85". Frameworks are left alone.
"""

from __future__ import annotations

import re

from simagent.materials.alkanes import polyethylene, polyethylene_carbons
from simagent.models import PotentialSpec, SystemSpec, TaskSpec

POLYMER = (
    r"bead[- ]?spring|kremer[- ]?grest|\bfene\b|polymer (?:melts?|chains?)|\bpolymers?\b|"
    r"\bchains? of \d+ (?:beads?|monomers?|segments?)|\b\d+[- ]bead\b|\b\d+-mers?\b|\bcoarse[- ]grained chains?\b"
)
KREMER_GREST = r"kremer[- ]?grest|bead[- ]?spring|\bfene\b"
CHAIN_LENGTH = [
    r"\bchains? of (?:length )?(\d+)(?: beads?| monomers?| segments?| units?)?\b",
    r"\b(\d+)[- ](?:bead|monomer|segment)s?\b",
    r"\b(\d+)-mers?\b",
    r"\bchain length(?: of|=|:)?\s*(\d+)\b",
    r"\bn\s*=\s*(\d+)\b(?!\s*(?:chains|molecules|atoms|particles))",
]
N_CHAINS = r"\b(\d+)\s*(?:polymer |bead-spring |kremer-grest )?(?:chains|molecules)\b"
TOTAL_BEADS = r"\b(\d+)\s*(?:beads|monomers|atoms|particles)\s+in total\b|\btotal of (\d+)\s*(?:beads|monomers|atoms)\b"


def chain_length(low: str) -> int | None:
    """Beads per chain stated in the (lower-case) request, or None."""
    for pattern in CHAIN_LENGTH:
        match = re.search(pattern, low)
        if match:
            return int(match.group(1))
    return None


# Named (atomistic) polymers: read as such, so no bead-spring or element protocol answers them in
# their place; the planner says which property no protocol computes for them yet.
NAMED_POLYMERS = (
    r"\b(?:poly\s?(?:\(?ethylene oxide\)?|\(?ethylene glycol\)?|ethylene|propylene|styrene|"
    r"\(?methyl methacrylate\)?|\(?vinyl chloride\)?|isoprene|butadiene|\(?lactic acid\)?|carbonate|"
    r"\(?dimethylsiloxane\)?|amide|urethane|imide)|pmma|pvc|peo|peg|pdms|hdpe|ldpe|lldpe|uhmwpe|nylon(?:[- ]?\d+)?)\b"
)


def named_polymer(low: str) -> str | None:
    match = re.search(NAMED_POLYMERS, low)
    return match.group(0) if match else None


def refine(text: str, low: str, spec: TaskSpec) -> None:
    """Set a bead-spring polymer system (reduced LJ units) where the text describes one."""
    if spec.system is not None and spec.system.kind == "framework":
        return  # a chain molecule adsorbed in a framework is a guest, not a melt to simulate
    named = named_polymer(low) or polyethylene(text)
    if named:
        molecule = named
        if polyethylene(text):  # TraPPE-UA chains (tools/lammps/protocols/alkanes.py), of a stated length
            carbons = polyethylene_carbons(text)
            molecule = f"polyethylene C{carbons[0]}" if carbons else "polyethylene"
            if re.search(r"\bpe\b", low):  # 'PE' names the polymer here, not a potential energy
                named = "polyethylene"
                if not re.search(r"potential energ", low):
                    spec.properties = [p for p in spec.properties if p.name != "potential_energy_per_atom"]
        spec.system = SystemSpec(name=named, kind="polymer", molecule=molecule)
        spec.units_style = "real"  # atomistic: the reduced-unit bead-spring protocols do not apply
        spec.engine = "lammps"
        spec.missing = [m for m in spec.missing if m not in ("density", "temperature", "system")]
        computable = spec.properties and {p.name for p in spec.properties} <= {"density"}
        if molecule.startswith("polyethylene") and computable and spec.conditions.temperature is None:
            spec.missing.append("temperature")  # the melt density needs it (lammps/trappe_alkane)
        return
    if not re.search(POLYMER, low):
        return
    n_beads = chain_length(low)
    kg = re.search(KREMER_GREST, low) is not None
    name = "Kremer-Grest bead-spring melt" if kg else "bead-spring polymer melt"
    molecule = f"bead-spring chain of {n_beads} beads" if n_beads else "bead-spring chain"
    phase = "solid" if re.search(r"\bglass(?:y)?\b|\bcrystal(?:line)?\b", low) else "liquid"
    spec.system = SystemSpec(name=name, kind="polymer", molecule=molecule, phase=phase)
    potential = spec.potential or PotentialSpec()
    spec.potential = potential.model_copy(
        update={"family": "lj", "name_hint": "kremer-grest" if kg else potential.name_hint}
    )
    spec.units_style = "lj"
    spec.engine = "lammps"
    chains = re.search(N_CHAINS, low)
    total = re.search(TOTAL_BEADS, low)
    if total:
        spec.controls.n_atoms = int(total.group(1) or total.group(2))
    elif chains and n_beads:
        spec.controls.n_atoms = int(chains.group(1)) * n_beads
    elif chains:
        spec.controls.n_atoms = None  # "M molecules" counts chains, not beads; N is asked for
    if n_beads is None and "chain length" not in spec.missing:
        spec.missing.append("chain length")
    # the generic rules ask for a density for an LJ fluid; a melt has the Kremer-Grest default
    spec.missing = [m for m in spec.missing if m not in ("density", "temperature")]
