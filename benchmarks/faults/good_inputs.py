"""The project's own good inputs, for the false-alarm rate of the pre-run and post-run checks:
every registered protocol rendered for a few TaskSpecs it applies to (up to three each).

Candidate requests span the systems the protocols cover (metals and covalent crystals, LJ and
argon fluids, water, chains, frameworks with guests); each protocol keeps those it applies to and
can parameterise."""

from __future__ import annotations

from itertools import islice

from simagent.models import (
    Conditions,
    Job,
    PotentialSpec,
    PropertyRequest,
    Quantity,
    SystemSpec,
    TaskSpec,
)
from simagent.protocols import all_protocols

MAX_SPECS_PER_PROTOCOL = 3


def _q(value: float, unit: str) -> Quantity:
    return Quantity(value=value, unit=unit)


def _systems() -> list[tuple[SystemSpec, PotentialSpec | None, Conditions]]:
    room = Conditions(temperature=_q(300, "K"), pressure=_q(1, "bar"))
    out: list[tuple[SystemSpec, PotentialSpec | None, Conditions]] = []
    for element, lattice in (("Ni", "fcc"), ("Cu", "fcc"), ("Al", "fcc"), ("Fe", "bcc"), ("W", "bcc"),
                             ("Mg", "hcp"), ("Si", "diamond"), ("Ge", "diamond")):
        out.append((SystemSpec(name=element, kind="crystal", elements=[element], lattice=lattice), None,
                    room.model_copy(update={"temperatures": [_q(300, "K"), _q(600, "K")]})))
    out.append((SystemSpec(name="LJ fluid", kind="lj_fluid", phase="liquid"), PotentialSpec(family="lj"),
                Conditions(temperature=_q(1.5, "reduced"), density=_q(0.8, "reduced"))))
    out.append((SystemSpec(name="LJ fluid", kind="lj_fluid", phase="liquid"), PotentialSpec(family="lj"),
                Conditions(temperature=_q(1.0, "reduced"), density=_q(0.6, "reduced"))))
    out.append((SystemSpec(name="argon", kind="atomic_fluid", elements=["Ar"], phase="liquid"),
                PotentialSpec(family="lj"), Conditions(temperature=_q(94.4, "K"), density=_q(1.374, "g/cm^3"))))
    out.append((SystemSpec(name="water", kind="molecular_fluid", molecule="water", phase="liquid"),
                PotentialSpec(force_field="SPC/E"), Conditions(temperature=_q(298, "K"), pressure=_q(1, "bar"),
                                                               density=_q(0.997, "g/cm^3"))))
    out.append((SystemSpec(name="methanol", kind="molecular_fluid", molecule="methanol", phase="liquid"),
                PotentialSpec(force_field="OPLS-AA"), room))
    chains = SystemSpec(name="bead-spring polymer", kind="polymer", phase="liquid", molecule="chains of 20 beads")
    out.append((chains, None,
                Conditions(temperature=_q(1.0, "reduced"), density=_q(0.85, "reduced"))))
    single = Conditions(temperature=_q(298, "K"), pressure=_q(1, "bar"), pressures=[_q(0.1, "bar"), _q(1, "bar")],
                        probe_radius=_q(1.86, "angstrom"))
    mixture = single.model_copy(update={"composition": _composition()})
    for name, guests, conditions in (("IRMOF-1", ["CH4"], single), ("MFI", ["CO2", "N2"], mixture),
                                     ("IRMOF-1", ["CO2", "N2"], mixture),
                                     ("HKUST-1", ["CO2"], single)):
        out.append((SystemSpec(name=name, kind="framework", structure=name, guests=guests), None, conditions))
    return out


def candidate_specs(protocol) -> list[TaskSpec]:
    """Requests for one protocol: each system with each of its properties alone and all together."""
    specs = []
    names = sorted(protocol.properties)
    groups = [[n] for n in names] + [names]
    for system, potential, conditions in _systems():
        unit = "reduced" if system.kind == "polymer" else None
        wordings = [""] + ([" from a tensile test"] if system.kind == "crystal" else [])
        if system.kind == "polymer":
            wordings = [" for chains of 20 beads"]
        for group in groups:
            for wording in wordings:
                specs.append(TaskSpec(request=f"{system.name}: {', '.join(group)}{wording}", system=system,
                                      potential=potential, engine=protocol.engine, conditions=conditions,
                                      properties=[PropertyRequest(name=n, unit=unit) for n in group]))
    return specs


def _rendered(protocol):
    for spec in candidate_specs(protocol):
        try:
            if not protocol.applies_to(spec):
                continue
            params, _ = protocol.parameters(spec)
            jobs = protocol.jobs(params)
        except Exception:  # noqa: BLE001 - a request this protocol cannot take is simply not a candidate
            continue
        yield spec, jobs


def good_jobs(max_specs: int = MAX_SPECS_PER_PROTOCOL) -> list[tuple[str, Job]]:
    """(label, job) for every protocol and up to `max_specs` requests it takes."""
    out = []
    for protocol in all_protocols():
        for spec, jobs in islice(_rendered(protocol), max_specs):
            for job in jobs:
                out.append((f"{protocol.name} [{spec.request}] {job.id}", job))
    return out


def coverage() -> dict[str, int]:
    """Requests rendered per protocol (0: the false-alarm check does not cover it)."""
    return {p.name: sum(1 for _ in islice(_rendered(p), MAX_SPECS_PER_PROTOCOL)) for p in all_protocols()}


def _composition() -> list:
    """CO2 0.15 + N2 0.85 in whatever form simagent.models.Conditions takes (list of components)."""
    from simagent import models

    component = getattr(models, "Component", None)
    if component is None:
        return []
    fields = component.model_fields
    name_key = next((k for k in ("species", "name", "molecule") if k in fields), None)
    fraction_key = next((k for k in ("mole_fraction", "fraction", "x") if k in fields), None)
    if not name_key or not fraction_key:
        return []
    return [component(**{name_key: "CO2", fraction_key: 0.15}), component(**{name_key: "N2", fraction_key: 0.85})]


def good_plans(max_specs: int = 1) -> list[tuple[str, list[Job]]]:
    """(label, the jobs of one protocol run) for every protocol and up to `max_specs` requests."""
    out = []
    for protocol in all_protocols():
        for spec, jobs in islice(_rendered(protocol), max_specs):
            out.append((f"{protocol.name} [{spec.request}]", jobs))
    return out
