"""Expert-reader domain module for molecular liquids run with GROMACS (see domains/__init__.py).

Recognises water and its models (SPC, SPC/E, TIP3P, TIP4P, TIP4P/2005), the simple liquids
simagent builds with OPLS-AA (methanol, ethanol), and "with/in/using GROMACS" (which also sends
e.g. liquid argon to GROMACS). It runs after the generic rules and overrides a system they may
have guessed from words such as "hydrogen" or "oxygen" in a water request."""

from __future__ import annotations

import re

from simagent.models import PotentialSpec, SystemSpec, TaskSpec

# (pattern on the lower-case request, force-field name as PotentialSpec.force_field); the first
# match wins, so the more specific names come first.
WATER_MODELS: list[tuple[str, str]] = [
    (r"\btip4p\s*[/-]?\s*2005\b", "TIP4P/2005"),
    (r"\btip4p\b(?![/-]?\s*(?:2005|ew\b))", "TIP4P"),
    (r"\btip3p\b", "TIP3P"),
    (r"\bspc\s*/\s*e\b|\bspce\b|\bspc-e\b", "SPC/E"),
    (r"\bspc\b(?!\s*/\s*e\b|-e\b)", "SPC"),
]
WATER_WORDS = r"\bwater\b|\bh2o\b"
LIQUIDS: dict[str, str] = {  # molecule -> pattern
    "methanol": r"\bmethanol\b|\bmethyl alcohol\b|\bch3oh\b",
    "ethanol": r"\bethanol\b|\bethyl alcohol\b|\bc2h5oh\b|\bch3ch2oh\b",
}
# SMILES of these liquids, matched in the original case (methanol's 'CO' is also carbon monoxide: not read)
LIQUID_SMILES: dict[str, str] = {"ethanol": r"CCO|OCC|C\(O\)C|C\(C\)O"}
OPLS = r"\bopls(?:[- ]?aa)?\b"
GROMACS = r"\bgromacs\b|\bgmx\b"
OTHER_ENGINE = r"\blammps\b"
GRO_FILE = r"((?:[\w.~-]*/)*[\w.-]+\.gro)\b"


def _water_model(low: str) -> str | None:
    for pattern, name in WATER_MODELS:
        if re.search(pattern, low):
            return name
    return None


def refine(text: str, low: str, spec: TaskSpec) -> None:
    """Set a molecular-liquid system and force field, and the GROMACS engine, where the text says so."""
    if re.search(GROMACS, low):
        spec.engine = "gromacs"
    if spec.system is not None and spec.system.kind == "framework":
        return  # water or an alcohol is a guest here (adsorption), not the liquid to simulate
    supplied = re.search(GRO_FILE, text)
    if supplied:  # a system given as GROMACS files (.gro with its .top next to it)
        path = supplied.group(1)
        spec.system = SystemSpec(name=f"system in {path}", kind="molecular_fluid", structure=path, phase="liquid")
        cutoff = spec.potential.cutoff if spec.potential else None  # the topology is the force field
        spec.potential = PotentialSpec(cutoff=cutoff) if cutoff else None
        spec.engine = "gromacs"
        spec.units_style = None
        if spec.conditions.temperature is None and "temperature" not in spec.missing:
            spec.missing.append("temperature")
        return
    model = _water_model(low)
    molecule = None
    if model or re.search(WATER_WORDS, low):
        molecule = "water"
    else:
        for name, pattern in LIQUIDS.items():
            if re.search(pattern, low):
                molecule = name
                break
        for name, smiles in LIQUID_SMILES.items():
            if molecule is None and re.search(rf"(?<![\w/])(?:{smiles})(?![\w/])", text):
                molecule = name
    if molecule is None:
        return
    force_field = model
    if molecule != "water" and re.search(OPLS, low):
        force_field = "OPLS-AA"
    label = f"{model} water" if model else ("liquid water" if molecule == "water" else f"liquid {molecule}")
    spec.system = SystemSpec(name=label, kind="molecular_fluid", molecule=molecule, phase="liquid")
    potential = spec.potential or PotentialSpec()
    # A molecular force field is not an LJ/EAM family; keep a stated cutoff or tail correction.
    spec.potential = potential.model_copy(update={"family": None, "name_hint": None, "file": None,
                                                  "force_field": force_field or potential.force_field})
    if not re.search(OTHER_ENGINE, low):  # 'ethanol with LAMMPS' keeps LAMMPS: the planner says what can run
        spec.engine = "gromacs"
    spec.units_style = None
    if spec.conditions.temperature is None and "temperature" not in spec.missing:
        spec.missing.append("temperature")
