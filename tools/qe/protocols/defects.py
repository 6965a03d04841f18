"""qe/vacancy_migration: a DFT vacancy migration barrier (NEB) is priced, not run, on this machine.

The request named DFT, so the ML potential does not answer in its place: the planner gets a
RequestError with the supercell, its electrons, the estimated serial cost (tools.qe cost model) and
the nearest thing simagent does (mlp/vacancy, 'with CHGNet')."""

from __future__ import annotations

from typing import ClassVar

from ase.build import bulk
from pydantic import BaseModel

from simagent.defaults import DefaultsLog
from simagent.errors import RequestError
from simagent.models import TaskSpec
from simagent.protocols import register
from tools import crystals
from tools.qe import pseudos
from tools.qe.inputs import mesh_for_spacing
from tools.qe.protocols.crystal import COST_LIMIT_S, KSPACING_METAL, PricedOnly, is_metal, scf_seconds

# The smallest cell the ML protocol uses (2x2x2 conventional cells, one site empty), a k mesh at the
# metals' spacing, 60 Ry; two end-point relaxations (~10 ionic steps each) and a 3-image band
# (~50 NEB iterations), each ionic step one SCF.
REPEAT = 2
CUTOFF_RY = 60.0
ENDPOINT_STEPS = 10
IMAGES = 3
NEB_STEPS = 50


def neb_cost_s(element: str, lattice: str, a: float) -> tuple[int, float, tuple[int, int, int], float]:
    """(atoms, electrons, k mesh, estimated serial seconds) of a DFT vacancy-migration NEB."""
    supercell = bulk(element, lattice, a=a, cubic=True).repeat(REPEAT)
    atoms = len(supercell) - 1
    electrons = pseudos.pseudo(element, "PBE").z_valence * atoms
    kpts = mesh_for_spacing(supercell, KSPACING_METAL if is_metal(element) else 0.3)
    per_scf = scf_seconds(electrons, kpts[0] * kpts[1] * kpts[2], CUTOFF_RY, supercell.get_volume())
    return atoms, electrons, kpts, per_scf * (2 * ENDPOINT_STEPS + IMAGES * NEB_STEPS)


@register
class QeVacancyMigration(PricedOnly, crystals.NamedEngineCrystalProtocol):
    name = "qe/vacancy_migration"
    engine = "qe"
    properties: ClassVar[frozenset[str]] = frozenset({"vacancy_migration_energy"})
    Params = BaseModel
    description = "DFT vacancy migration barrier (NEB): priced against this machine, refused when too large"

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> BaseModel:
        choice = crystals.crystal_from_spec(spec, DefaultsLog(), lattices=("fcc", "bcc"))  # refused: nothing reported
        atoms, electrons, kpts, cost = neb_cost_s(choice.element, choice.lattice, choice.a_initial)
        if cost <= COST_LIMIT_S:  # not reached for any metal the pseudopotential library holds
            raise RequestError("a DFT nudged-elastic-band calculation is not implemented; ask with CHGNet")
        raise RequestError(
            f"a DFT (Quantum ESPRESSO, PBE) vacancy migration barrier in {choice.lattice} {choice.element} does not "
            f"fit this machine: the smallest supercell ({REPEAT}x{REPEAT}x{REPEAT} conventional cells) has {atoms} "
            f"atoms and {electrons:g} valence electrons; {ENDPOINT_STEPS} relaxation steps per end point and "
            f"{IMAGES} images x {NEB_STEPS} NEB iterations, {'x'.join(map(str, kpts))} k-points, {CUTOFF_RY:g} Ry, "
            f"would take about {cost / 3600:,.0f} h serial (limit {COST_LIMIT_S / 3600:g} h; estimate scaled from "
            "measured pw.x timings). simagent does not answer a DFT request with another method. Nearest thing it "
            f"can do: the same barrier with the CHGNet ML potential (mlp/vacancy), e.g. 'Vacancy migration barrier "
            f"in {choice.element} with CHGNet'")
