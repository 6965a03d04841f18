"""The universal ML potentials simagent ships: weights inside the PyPI wheels, CPU only, no download.

CHGNet 0.3.0 (Deng et al., Nat. Mach. Intell. 5, 1031 (2023); trained on MPtrj, PBE/PBE+U) from
chgnet 0.4.2; SevenNet-0 11Jul2024 (Park et al., J. Chem. Theory Comput. 20, 4857 (2024); MPtrj)
from sevenn 0.13.0."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from importlib import metadata

from simagent.defaults import Default, DefaultsLog
from simagent.errors import EngineNotFound, RequestError
from simagent.models import TaskSpec

DEFAULT_MODEL = "chgnet"
# Reported when a request names no model (every mlp protocol)
ML_DEFAULTS = {
    "ML potential": Default(DEFAULT_MODEL, "no model was named; CHGNet is simagent's default universal potential",
                            shown="{info.label} ({info.citation})"),
}


@dataclass(frozen=True)
class ModelInfo:
    key: str
    label: str
    package: str
    citation: str


MODELS = {
    "chgnet": ModelInfo("chgnet", "CHGNet 0.3.0", "chgnet",
                        "B. Deng et al., Nat. Mach. Intell. 5, 1031 (2023); trained on MPtrj (PBE/PBE+U)"),
    "sevennet": ModelInfo("sevennet", "SevenNet-0 (11Jul2024)", "sevenn",
                          "Y. Park et al., J. Chem. Theory Comput. 20, 4857 (2024); trained on MPtrj (PBE/PBE+U)"),
}


def model_info(name: str | None) -> ModelInfo:
    key = (name or DEFAULT_MODEL).lower().replace("-", "").replace(" ", "")
    if key not in MODELS:
        raise RequestError(f"unknown ML potential {name!r}; available: {', '.join(m.label for m in MODELS.values())}")
    info = MODELS[key]
    if importlib.util.find_spec(info.package) is None:
        raise EngineNotFound(f"{info.label} needs the Python package {info.package}; install it with `make setup`")
    return info


def requested_model(spec: TaskSpec, log: DefaultsLog) -> ModelInfo:
    """The model the request names, else the default one (reported to `log`)."""
    named = spec.potential.name_hint if spec.potential else None
    info = model_info(named)
    if named is None:
        log.applied.append(ML_DEFAULTS["ML potential"].applied("ML potential", info=info))
    return info


def package_version(info: ModelInfo) -> str:
    try:
        return metadata.version(info.package)
    except metadata.PackageNotFoundError:
        return "not installed"


def calculator(info: ModelInfo):
    """The ASE calculator (loaded in the job's own process; imports torch)."""
    if info.key == "chgnet":
        from chgnet.model import CHGNet
        from chgnet.model.dynamics import CHGNetCalculator

        model = CHGNet.load(model_name="0.3.0", use_device="cpu", verbose=False)
        return CHGNetCalculator(model=model, use_device="cpu")
    from sevenn.calculator import SevenNetCalculator

    return SevenNetCalculator("7net-0_11July2024", device="cpu")
