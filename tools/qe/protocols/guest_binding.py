"""qe/guest_binding: a DFT binding energy of a guest in a framework is priced, not run, on this machine.

The request named DFT, so no ML potential answers in its place: the planner gets a RequestError that
states the cell size, the estimated serial cost (tools.qe cost model) and the nearest thing simagent
does (mlp/guest_binding, 'with CHGNet')."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from simagent.defaults import DefaultsLog
from simagent.errors import RequestError
from simagent.materials.guest_binding import GuestBindingParams, framework_and_guest, is_guest_binding
from simagent.models import TaskSpec
from simagent.protocols import register
from tools.qe import pseudos
from tools.qe.protocols.crystal import COST_LIMIT_S, PricedOnly, scf_seconds

# A Gamma-point calculation at the highest cutoff the ONCV scan uses; a relaxation of the guest takes
# tens of SCF cycles per placement (counted here as 30 ionic steps for each of 3 placements, plus the
# framework and the guest alone).
CUTOFF_RY = 80.0
IONIC_STEPS = 30
PLACEMENTS = 3


def dft_cost_s(symbols: list[str], volume_A3: float) -> tuple[float, float]:
    """(electrons, estimated serial seconds) of the DFT binding-energy workflow for these atoms."""
    electrons = sum(pseudos.pseudo(s, "PBE").z_valence for s in symbols)
    per_scf = scf_seconds(electrons, 1, CUTOFF_RY, volume_A3)
    return electrons, per_scf * (PLACEMENTS * IONIC_STEPS + 2)


@register
class QeGuestBinding(PricedOnly):
    name = "qe/guest_binding"
    engine = "qe"
    properties: ClassVar[frozenset[str]] = frozenset({"interaction_energy"})
    Params = GuestBindingParams
    description = "DFT binding energy of a guest in a framework: priced against this machine, refused when too large"

    def applies_to(self, spec: TaskSpec) -> bool:
        return spec.engine == self.engine and is_guest_binding(spec)

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> BaseModel:
        resolved, structure, guest, ase_name = framework_and_guest(spec)
        from ase.build import molecule

        symbols = list(structure.symbols) + molecule(ase_name).get_chemical_symbols()
        electrons, cost = dft_cost_s(symbols, structure.volume_A3)
        raise RequestError(
            f"a DFT (Quantum ESPRESSO, PBE) binding energy of {guest} in {resolved.name} does not fit this machine: "
            f"{len(symbols)} atoms, {electrons:g} valence electrons in {structure.volume_A3:.0f} A^3; relaxing "
            f"{PLACEMENTS} placements (~{IONIC_STEPS} SCF each, Gamma point, {CUTOFF_RY:g} Ry) would take about "
            f"{cost / 3600:.0f} h serial (limit {COST_LIMIT_S / 3600:g} h; estimate scaled from measured pw.x "
            f"timings). simagent does not answer a DFT request with another method. Nearest thing it can do: the "
            f"same binding energy with the CHGNet ML potential (mlp/guest_binding), e.g. 'Binding energy of "
            f"{guest} in {spec.system.name or resolved.name} with CHGNet'")
