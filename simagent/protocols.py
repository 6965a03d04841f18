"""Named, validated protocols: the only way simagent produces engine inputs.

A protocol is a recipe (like a pymatgen InputGenerator): it holds no system state. Given a TaskSpec
it returns typed parameters (recording every default it applied), the jobs to run (inputs rendered
from templates, dependencies explicit), and the analysis that turns finished job folders into
Results. Decision backends select a protocol and override parameters; they never write scripts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from simagent.defaults import DefaultsLog
from simagent.errors import RequestError
from simagent.models import DefaultApplied, Job, Result, TaskSpec


class Protocol(ABC):
    name: ClassVar[str]  # e.g. "lammps/crystal_relax"
    engine: ClassVar[str]
    properties: ClassVar[frozenset[str]]  # PropertyName values it answers
    Params: ClassVar[type[BaseModel]]
    description: ClassVar[str]  # one line: what it does and how it measures

    @abstractmethod
    def applies_to(self, spec: TaskSpec) -> bool:
        """True when this protocol can answer the spec's system and properties."""

    def parameters(self, spec: TaskSpec) -> tuple[BaseModel, list[DefaultApplied]]:
        """Typed parameters for this spec and the defaults applied: `choose` builds the parameters on a
        DefaultsLog over `Params.DEFAULTS` (simagent/defaults.py), and what that log recorded is the
        answer's defaults_applied. A table declared per variant (units style, method) starts empty:
        `choose` sets `log.declared` to the variant's. Raises RequestError with a clear message when
        the spec cannot be simulated (e.g. no potential covers the elements)."""
        declared = getattr(self.Params, "DEFAULTS", {})
        log = DefaultsLog({} if any(isinstance(d, dict) for d in declared.values()) else declared)
        return self.choose(spec, log), log.applied

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> BaseModel:
        """The typed parameters for this spec; every default applied is reported on `log` (`take` what
        the request may set, `report` what is always applied, `note` a decision derived from it).
        Every protocol defines it, except one whose defaults come with the request itself
        (lammps/described overrides `parameters`)."""
        raise NotImplementedError(f"{self.name} defines no choose()")

    @abstractmethod
    def jobs(self, params: BaseModel) -> list[Job]:
        """Jobs with rendered `inputs`, ids unique within the protocol, dependencies explicit."""

    @abstractmethod
    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        """Results from finished job folders (job id -> folder). Raises CalculationFailed when a
        physics check fails, ReadError when outputs cannot be parsed."""

    def validate_params(self, raw: dict) -> BaseModel:
        """Parameters from a dict (checkpoint, LLM override, reviewer feedback), validated."""
        return self.Params.model_validate(raw)

    def as_params(self, params: BaseModel | dict) -> Any:
        """This protocol's Params from its own model, another model with the same fields, or a dict."""
        return self.Params.model_validate(params if isinstance(params, dict) else params.model_dump())


_REGISTRY: dict[str, Protocol] = {}


def register(protocol_cls: type[Protocol]) -> type[Protocol]:
    """Class decorator: make a protocol selectable by name."""
    _REGISTRY[protocol_cls.name] = protocol_cls()
    return protocol_cls


def _load_builtin() -> None:
    """Every registered engine loads its protocol modules (their @register decorators run)."""
    from simagent.engines import all_engines

    for adapter in all_engines():
        adapter.load_protocols()


def get_protocol(name: str) -> Protocol:
    _load_builtin()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise RequestError(f"unknown protocol {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


# Precedence: when several protocols answer the same property, the earlier one is offered first (the
# planner hands the decision backend its candidates in this order). Declared here instead of coming
# from import order; tests/test_protocol_precedence.py checks that every registered protocol is
# listed. A protocol missing here comes after all listed ones.
PRECEDENCE: tuple[str, ...] = (
    # crystals and liquids with LAMMPS, the default engine for classical MD
    "lammps/crystal_relax",
    "lammps/fluid_md",
    # solids: tensile_test (applies only to stress-strain wordings) before elastic_constants, which
    # also answers Young's modulus from the elastic tensor
    "lammps/tensile_test",
    "lammps/elastic_constants",
    "lammps/point_defects",
    "lammps/planar_defects",
    "lammps/thermal_expansion",
    "lammps/minimize",
    "lammps/melting_point",
    # transport coefficients, bead-spring chains, energy terms
    "lammps/shear_viscosity",
    "lammps/thermal_conductivity",
    "lammps/chain_conformation",
    "lammps/energy_components",
    # TraPPE-UA liquid alkanes and polyethylene melts (molecules from a name, formula or SMILES)
    "lammps/trappe_alkane",
    # porous frameworks: MOF-guest MD (rigid framework), framework E(V) (flexible) after the
    # elastic constants of dense solids
    "lammps/framework_guest_md",
    "lammps/framework_eos",
    # the simulation a detailed description prescribes, run literally (solve prefers it when complete)
    "lammps/described",
    # molecular liquids named for GROMACS (a request's engine decides which of the two fluid protocols)
    "gromacs/liquid_md",
    # pore geometry, then adsorption by GCMC (pure, mixtures) and Henry coefficients by Widom insertion
    "zeopp/pore_geometry",
    "raspa/gcmc_uptake",
    "raspa/gcmc_mixture",
    "raspa/widom",
    # engines a request names by its method words (never a substitute for another's answer)
    "qe/eos",
    "qe/band_gap",
    "qe/guest_binding",
    "qe/vacancy_migration",
    "mlp/crystal",
    "mlp/guest_binding",
    "mlp/vacancy",
    "vasp/relax",
    "vasp/band_gap",
)


def precedence(name: str) -> int:
    """Position of a protocol in PRECEDENCE (unlisted: after every listed one)."""
    return PRECEDENCE.index(name) if name in PRECEDENCE else len(PRECEDENCE)


def all_protocols() -> list[Protocol]:
    """Every registered protocol, in declared precedence (PRECEDENCE)."""
    _load_builtin()
    return sorted(_REGISTRY.values(), key=lambda protocol: precedence(protocol.name))


# Engines a request names by its method words (DFT, VASP, an ML potential): when the spec asks for one,
# no protocol of another engine may answer in its place (never a silent substitute).
NAMED_ONLY_ENGINES = frozenset({"qe", "vasp", "mlp"})


def engine_allowed(protocol: Protocol, spec: TaskSpec) -> bool:
    return spec.engine not in NAMED_ONLY_ENGINES or protocol.engine == spec.engine


def protocols_for(spec: TaskSpec) -> list[Protocol]:
    """Protocols that apply to the spec, in declared precedence."""
    return [p for p in all_protocols() if engine_allowed(p, spec) and p.applies_to(spec)]
