"""Recognizing a screening request in plain language ("Screen the CoRE MOF database and give me the
10 MOFs with the highest methane uptake at 65 bar and 298 K").

Kept apart from the request reader (simagent.backends.expert.reader): a screen is not a property of
one material, so it never becomes a TaskSpec; `simagent ask` hands a recognized screen to the funnel
(agents.screening). A request is a screen when it names a database of many structures (CoRE MOF, "all
MOFs") or asks for the N best/top materials, and names an uptake or adsorption of a gas. Conditions
that are missing are not guessed: the reply says what to add.
"""

from __future__ import annotations

import re

from agents.screening import ScreenSpec
from simagent.errors import RequestError
from simagent.models import Quantity
from simagent.units import to_canonical

_GASES = {"methane": "CH4", "ch4": "CH4", "krypton": "Kr", "kr": "Kr", "xenon": "Xe", "xe": "Xe",
          "argon": "Ar", "ar": "Ar", "co2": "CO2", "carbon dioxide": "CO2", "n2": "N2", "nitrogen": "N2",
          "hydrogen": "H2", "h2": "H2"}
_MANY = re.compile(r"\b(core[\s-]?mof|database|all (?:the )?(?:mofs|frameworks|structures)|screen(?:ing)?|"
                   r"high[\s-]throughput)\b", re.I)
_TOP = re.compile(r"\b(?:top|best|first)\s+(\d+)\b|\b(\d+)\s+(?:best\s+|top\s+)?(?:mofs|frameworks|materials|"
                  r"structures|candidates)\b|\b(?:top|best)[\s-](ten|five|twenty|three)\b", re.I)
_WORDS = {"three": 3, "five": 5, "ten": 10, "twenty": 20}
_UPTAKE = re.compile(r"\b(uptakes?|adsorption|adsorb\w*|loadings?|capacity|capacities|storage)\b", re.I)
_NUMBER = r"(\d+(?:\.\d+)?)"
_PRESSURE = re.compile(_NUMBER + r"\s*(bar|kpa|mpa|pa|atm)\b", re.I)
_TEMPERATURE = re.compile(_NUMBER + r"\s*(k|kelvin|°c|degc|c)\b(?!\w)", re.I)
_FSR = re.compile(r"\bfsr\b|free solvent removed|bound solvent", re.I)


def looks_like_screen(request: str) -> bool:
    """True when the request asks to rank many structures of a database by a gas uptake."""
    return bool(_UPTAKE.search(request) and _MANY.search(request) and
                (_TOP.search(request) or re.search(r"\bscreen", request, re.I)))


def read_screen(request: str) -> ScreenSpec:
    """The ScreenSpec a screening request states; RequestError naming what is missing."""
    low = request.lower()
    guest = next((key for word, key in sorted(_GASES.items(), key=lambda kv: -len(kv[0]))
                  if re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])", low)), None)
    missing = []
    if guest is None:
        missing.append("the gas (e.g. methane)")
    pressure = _PRESSURE.search(request)
    temperature = _TEMPERATURE.search(request)
    if pressure is None:
        missing.append("the pressure (e.g. 65 bar)")
    if temperature is None:
        missing.append("the temperature (e.g. 298 K)")
    if missing:
        raise RequestError("to screen, say " + ", ".join(missing))
    top = _TOP.search(request)
    count = 10
    if top:
        count = int(top.group(1) or top.group(2)) if (top.group(1) or top.group(2)) else _WORDS[top.group(3).lower()]
    bar = to_canonical(Quantity(value=float(pressure.group(1)), unit=pressure.group(2)), "pressure").value
    unit = temperature.group(2)
    kelvin = to_canonical(Quantity(value=float(temperature.group(1)), unit="K" if unit.lower() in ("k", "kelvin")
                                   else "degC"), "temperature").value
    return ScreenSpec(guest=guest, pressure_bar=bar, temperature_K=kelvin, top_n=count,
                      dataset="2019-FSR" if _FSR.search(request) else "2019-ASR")
