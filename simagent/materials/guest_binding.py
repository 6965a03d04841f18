"""What a guest binding-energy request names, whatever engine computes it: one guest species in a
framework (resolved through the structure library), and the parameters of the placement search
(tools.mlp runs it; tools.qe prices the DFT version)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from simagent.defaults import Default
from simagent.errors import RequestError
from simagent.materials import forcefields
from simagent.materials import frameworks as rfw
from simagent.models import TaskSpec


class GuestBindingParams(BaseModel):
    # Defaults the answer reports, each with its reason (templates filled from the parameters, p)
    DEFAULTS: ClassVar[dict[str, Default]] = {
        "placements": Default("random", "pre-screen by single-point energies",
                              shown="{p.placements} random positions and orientations, every guest atom >= "
                              "{p.min_distance_A:g} A from the framework (seed {p.seed})"),
        "relaxations": Default("the lowest placements", "the lowest single-point placements are the candidates for "
                               "the binding minimum", shown="the {p.relaxations} lowest placements, framework fixed, "
                               "BFGS to fmax {p.fmax:g} eV/A (at most {p.max_steps} steps)"),
        "framework geometry": Default("as in the CIF", "one guest at 0 K; the framework's own relaxation is not part "
                                      "of E_bind here", shown="as in the CIF ({p.framework}), not relaxed"),
    }

    model: str
    framework: str
    source: str
    guest: str
    ase_name: str
    cell: list[list[float]]
    symbols: list[str]
    fractional: list[list[float]]
    placements: int = 20
    relaxations: int = 3
    min_distance_A: float = 2.5
    fmax: float = 0.05
    max_steps: int = 150
    seed: int = 0
    time_limit_s: float = Field(default=1800.0)


def is_guest_binding(spec: TaskSpec) -> bool:
    return bool(spec.system and spec.system.kind == "framework" and spec.system.guests and spec.properties
                and {p.name for p in spec.properties} <= {"interaction_energy"})


def framework_and_guest(spec: TaskSpec):
    if len(spec.system.guests) != 1:
        raise RequestError("the guest binding energy is computed for one guest species; name one (e.g. CO2)")
    guest = forcefields.canonical_guest(spec.system.guests[0])
    ase_name = forcefields.guest_table()[guest].get("ase_name")
    if not ase_name:
        raise RequestError(f"no molecular geometry for {guest}")
    resolved = rfw.resolve(spec.system.structure or spec.system.name or "")
    return resolved, rfw.read_cif(resolved.path, resolved.name), guest, ase_name
