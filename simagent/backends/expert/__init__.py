"""The expert backend: deterministic vocabulary, rules and protocol selection; no network."""

from __future__ import annotations

import re

from simagent.backends.base import (
    DecisionBackend,
    ParameterOverride,
    ParameterOverrides,
    ProtocolInfo,
    ProtocolSelection,
    RepairAction,
)
from simagent.backends.expert.reader import normalise, read_request, unknown_material
from simagent.errors import RequestError
from simagent.models import TaskSpec

# Signs of an unstable integration in an engine's failure message. Whole words only: a bare "nan"
# would also match "nanometre" or "nanoparticle" and halve a timestep that is not at fault.
_UNSTABLE = re.compile(r"lost atoms|out of range atoms|\bnan\b|non-numeric|lincs|\bsettle|diverge|blew up"
                       r"|blow-up|energy drift|wandered|missing on proc")


class ExpertBackend(DecisionBackend):
    name = "expert"

    def task_spec(self, request: str) -> TaskSpec:
        spec = read_request(request)
        if spec.unsupported:
            return spec  # refused or routed as a whole (simagent.capabilities); nothing to ask
        if spec.system is None and spec.properties:
            phrase = unknown_material(request)
            if phrase:
                raise RequestError(
                    f"unknown material '{phrase}': simagent knows chemical elements (e.g. 'fcc nickel', "
                    "'diamond silicon', 'liquid argon') and Lennard-Jones model fluids"
                )
        if spec.system is None and not spec.properties:
            raise RequestError(
                "could not find a property or a material in the request. Ask for example: "
                "'Lattice constant and cohesive energy of fcc nickel with the Foiles EAM potential' or "
                "'Self-diffusion coefficient of liquid argon at 94.4 K and 1.374 g/cm3'"
            )
        return spec

    def select_protocols(self, spec: TaskSpec, candidates: list[ProtocolInfo]) -> ProtocolSelection:
        """Each property goes to the first candidate protocol that answers it."""
        chosen: dict[str, list[str]] = {}
        for prop in spec.properties:
            for info in candidates:
                if prop.name in info.properties:
                    chosen.setdefault(info.name, [])
                    if prop.name not in chosen[info.name]:
                        chosen[info.name].append(prop.name)
                    break
        return ProtocolSelection(
            items=[ProtocolSelection.Item(protocol=p, properties=props) for p, props in chosen.items()],
            rationale="first registered protocol that answers each property",
        )

    def parameter_overrides(self, feedback: str, protocol: str, current: dict, schema: dict) -> ParameterOverrides:
        """Reads 'name = value', 'name to value' or 'value name' for the protocol's parameters."""
        text = normalise(feedback).lower()
        result = ParameterOverrides()
        names = list(schema.get("properties", {}))
        used = False
        for name in names:
            words = name.replace("_", "[ _]")
            match = re.search(rf"\b{words}\s*(?:=|to|of|:|as)?\s*([-\w.+]+)", text) or re.search(
                rf"([-\d.eE+]+)\s+{words}\b", text)
            if match:
                result.overrides.append(ParameterOverride(parameter=name, value=match.group(1)))
                used = True
        if not used:
            result.not_understood.append(feedback)
        return result

    def repair(self, diagnosis: str, protocol: str, current: dict, schema: dict) -> RepairAction:
        """Generic, physics-motivated repairs; specific handlers live in the error agent."""
        low = diagnosis.lower()
        step = next((name for name in ("timestep", "dt", "time_step") if name in current), None)
        if step and _UNSTABLE.search(low):
            return RepairAction(action="scale", parameter=step, value="0.5",
                                reason="unstable integration: halve the timestep")
        return RepairAction(action="give_up", reason="no rule applies to this failure")
