"""Electronic-structure requests: DFT (Quantum ESPRESSO, VASP) and universal ML potentials.

The method words choose the engine: "VASP" -> vasp; "Quantum ESPRESSO", "DFT", "PBE", "LDA",
"density functional" -> qe; "CHGNet", "SevenNet", "machine-learning/ML/universal potential" -> mlp
(the model named goes to potential.name_hint). A band gap with no method named goes to qe, and the
protocol states that default. Properties only these engines compute (the band gap) are read here."""

from __future__ import annotations

import re

from simagent.models import PotentialSpec, PropertyRequest, TaskSpec

VASP = r"\bvasp\b"
QE = r"quantum[- ]?espresso|\bpw\.x\b|\bqe\b"
DFT = r"\bdft\b|density[- ]functional|\bpbe(?:sol)?\b|\blda\b|\bgga\b|first[- ]principles|\bab[- ]initio\b"
ML_MODELS = {r"\bchgnet\b": "chgnet", r"\bseven ?net\b": "sevennet"}
ML_GENERIC = (r"machine[- ]learn(?:ed|ing)[- ](?:interatomic )?potential|\bml[- ]?(?:interatomic )?potential|"
              r"\bmlips?\b|universal (?:interatomic |ml |machine[- ]learning )?potential")
BAND_GAP = r"band[- ]?gaps?\b|\bgap of\b|\benergy gap\b"
# a band structure is computed by the band-gap protocols (qe/band_gap plots it; vasp-inputs writes the
# static + non-self-consistent line-mode sets)
BAND_STRUCTURE = (r"band[- ]?structures?\b|\bband (?:diagram|dispersion)s?\b|\belectronic bands\b|"
                  r"\bbands\b[^.?;]{0,40}\b(?:along|high[- ]symmetry|brillouin)")
BAND_GAP_PROPERTIES = {"band_gap"}


def refine(text: str, low: str, spec: TaskSpec) -> None:
    if re.search(r"density[- ]functional", low) and not re.search(r"\bdensity\b(?![- ]functional)", low):
        spec.properties = [p for p in spec.properties if p.name != "density"]  # the method, not a property
    named_gap = re.search(BAND_GAP, low) or re.search(BAND_STRUCTURE, low)
    if named_gap and not any(p.name == "band_gap" for p in spec.properties):
        spec.properties.append(PropertyRequest(name="band_gap", unit=_unit_after(low)))
        if "property" in spec.missing:
            spec.missing.remove("property")
    engine = method_engine(low)
    if engine is None and {p.name for p in spec.properties} & BAND_GAP_PROPERTIES:
        engine = "qe"  # the only engine here with electrons; qe/band_gap records the default
    if engine is None:
        return
    spec.engine = engine  # type: ignore[assignment]
    if engine == "mlp":
        model = next((name for pattern, name in ML_MODELS.items() if re.search(pattern, low)), None)
        spec.potential = (spec.potential or PotentialSpec()).model_copy(update={"name_hint": model})


def method_engine(low: str) -> str | None:
    """The engine the request's method words name, None when it names none."""
    if re.search(VASP, low):
        return "vasp"
    if any(re.search(p, low) for p in ML_MODELS) or re.search(ML_GENERIC, low):
        return "mlp"
    if re.search(QE, low) or re.search(DFT, low):
        return "qe"
    return None


def _unit_after(low: str) -> str | None:
    match = re.search(r"band[- ]?gap.*?\bin (ev|mev)\b", low)
    return {"ev": "eV", "mev": "meV"}.get(match.group(1)) if match else None
