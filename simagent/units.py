"""Unit handling in code (never in a model): canonical units per dimension and conversions.

Canonical units: temperature K, pressure bar, mass density g/cm^3, length angstrom,
energy eV, diffusion coefficient cm^2/s. Reduced Lennard-Jones quantities carry the unit 'reduced'.
Factors are from CODATA 2018 via ase.units where it has them.
"""

from __future__ import annotations

import re

from ase import units as ase_units

from simagent.errors import RequestError
from simagent.models import Quantity

REDUCED = "reduced"

_ALIASES = {
    "k": "K", "kelvin": "K",
    "°c": "degC", "ºc": "degC", "degc": "degC", "celsius": "degC", "c": "degC",
    "°f": "degF", "degf": "degF", "f": "degF",
    "bar": "bar", "bars": "bar", "kbar": "kbar", "mbar": "mbar", "atm": "atm", "pa": "Pa", "kpa": "kPa",
    "mpa": "MPa", "gpa": "GPa", "torr": "torr", "psi": "psi",
    "g/cm3": "g/cm^3", "g/cm^3": "g/cm^3", "g/cc": "g/cm^3", "g cm-3": "g/cm^3", "g/ml": "g/cm^3",
    "kg/m3": "kg/m^3", "kg/m^3": "kg/m^3", "kg m-3": "kg/m^3",
    "a": "angstrom", "å": "angstrom", "angstrom": "angstrom", "angstroms": "angstrom", "nm": "nm",
    "pm": "pm", "m": "m", "bohr": "bohr",
    "ev": "eV", "mev": "meV", "kj/mol": "kJ/mol", "kcal/mol": "kcal/mol", "j": "J", "ry": "Ry",
    "hartree": "Ha", "ha": "Ha",
    "cm2/s": "cm^2/s", "cm^2/s": "cm^2/s", "m2/s": "m^2/s", "m^2/s": "m^2/s",
    "a2/ps": "angstrom^2/ps", "å2/ps": "angstrom^2/ps", "angstrom^2/ps": "angstrom^2/ps",
    "nm2/ns": "nm^2/ns", "nm^2/ns": "nm^2/ns", "nm2/ps": "nm^2/ps", "nm^2/ps": "nm^2/ps",
    "reduced": REDUCED, "lj": REDUCED, "sigma": "sigma",
    "j/m2": "J/m^2", "j/m^2": "J/m^2", "mj/m2": "mJ/m^2", "mj/m^2": "mJ/m^2",
    "mev/a2": "meV/angstrom^2", "mev/angstrom^2": "meV/angstrom^2", "ev/a2": "eV/angstrom^2",
    "ev/angstrom^2": "eV/angstrom^2",
    "a2": "angstrom^2", "a^2": "angstrom^2", "å2": "angstrom^2", "angstrom^2": "angstrom^2", "angstrom2": "angstrom^2",
    "nm2": "nm^2", "nm^2": "nm^2",
    "n/m": "N/m", "mn/m": "mN/m", "dyn/cm": "dyn/cm",
    "a/ps": "angstrom/ps", "å/ps": "angstrom/ps", "angstrom/ps": "angstrom/ps", "a/fs": "angstrom/fs",
    "å/fs": "angstrom/fs", "angstrom/fs": "angstrom/fs", "km/s": "km/s", "m/s": "m/s", "nm/ps": "nm/ps",
    "ev/a3": "eV/angstrom^3", "ev/å3": "eV/angstrom^3", "ev/angstrom^3": "eV/angstrom^3",
}

# factor to the canonical unit of the dimension
_TO_CANONICAL: dict[str, tuple[str, float]] = {
    "K": ("temperature", 1.0),
    "bar": ("pressure", 1.0), "kbar": ("pressure", 1e3), "mbar": ("pressure", 1e-3),
    "atm": ("pressure", 1.01325), "Pa": ("pressure", 1e-5), "kPa": ("pressure", 1e-2),
    "MPa": ("pressure", 10.0), "GPa": ("pressure", 1e4), "torr": ("pressure", 1.01325 / 760),
    "psi": ("pressure", 0.0689476),
    "g/cm^3": ("density", 1.0), "kg/m^3": ("density", 1e-3),
    "angstrom": ("length", 1.0), "nm": ("length", 10.0), "pm": ("length", 0.01), "m": ("length", 1e10),
    "bohr": ("length", ase_units.Bohr),
    "angstrom^2": ("area", 1.0), "nm^2": ("area", 100.0),
    "eV": ("energy", 1.0), "meV": ("energy", 1e-3), "kJ/mol": ("energy", ase_units.kJ / ase_units.mol),
    "kcal/mol": ("energy", ase_units.kcal / ase_units.mol), "J": ("energy", ase_units.J),
    "Ry": ("energy", ase_units.Ry), "Ha": ("energy", ase_units.Hartree),
    "cm^2/s": ("diffusion", 1.0), "m^2/s": ("diffusion", 1e4), "angstrom^2/ps": ("diffusion", 1e-4),
    "nm^2/ns": ("diffusion", 1e-5), "nm^2/ps": ("diffusion", 1e-2),
    "J/m^2": ("energy_per_area", 1.0), "mJ/m^2": ("energy_per_area", 1e-3),
    "eV/angstrom^2": ("energy_per_area", ase_units.eV / ase_units.J * 1e20),
    "angstrom/ps": ("velocity", 1.0), "angstrom/fs": ("velocity", 1e3), "km/s": ("velocity", 10.0),
    "m/s": ("velocity", 0.01), "nm/ps": ("velocity", 10.0),
    "eV/angstrom^3": ("pressure", ase_units.eV / ase_units.J * 1e30 * 1e-5),  # J/m^3 = Pa, 1 bar = 1e5 Pa
    "meV/angstrom^2": ("energy_per_area", 1e-3 * ase_units.eV / ase_units.J * 1e20),
    "N/m": ("energy_per_area", 1.0), "mN/m": ("energy_per_area", 1e-3), "dyn/cm": ("energy_per_area", 1e-3),
}

CANONICAL = {"temperature": "K", "pressure": "bar", "density": "g/cm^3", "length": "angstrom",
             "energy": "eV", "diffusion": "cm^2/s", "energy_per_area": "J/m^2", "velocity": "angstrom/ps"}


def normalize_unit(unit: str) -> str:
    """Canonical spelling of a unit symbol ('g/cc' -> 'g/cm^3'); unknown units are returned as is."""
    key = re.sub(r"\s+", " ", unit.strip().lower().replace("²", "2").replace("³", "3"))
    key = key.replace("/atom", "").strip()
    return _ALIASES.get(key, unit.strip())


def dimension(unit: str) -> str | None:
    unit = normalize_unit(unit)
    if unit in ("degC", "degF"):
        return "temperature"
    entry = _TO_CANONICAL.get(unit)
    return entry[0] if entry else None


def to_canonical(q: Quantity, expected: str) -> Quantity:
    """Convert to the canonical unit of `expected` dimension; reduced values pass unchanged."""
    unit = normalize_unit(q.unit)
    if unit == REDUCED:
        return Quantity(value=q.value, unit=REDUCED)
    if unit == "degC":
        return Quantity(value=q.value + 273.15, unit="K")
    if unit == "degF":
        return Quantity(value=(q.value - 32) * 5 / 9 + 273.15, unit="K")
    entry = _TO_CANONICAL.get(unit)
    if entry is None or entry[0] != expected:
        raise RequestError(f"'{q.unit}' is not a unit of {expected}")
    return Quantity(value=q.value * entry[1], unit=CANONICAL[expected])


def convert_measured(value: float, uncertainty: float | None, from_unit: str,
                     to_unit: str) -> tuple[float, float | None]:
    """A measured value and its uncertainty in another unit of the same dimension; temperatures too
    (K, degC, degF: the value shifts, the uncertainty only scales)."""
    a, b = normalize_unit(from_unit), normalize_unit(to_unit)
    if dimension(a) == "temperature" == dimension(b):
        kelvin = to_canonical(Quantity(value=value, unit=a), "temperature").value
        out = {"K": kelvin, "degC": kelvin - 273.15, "degF": (kelvin - 273.15) * 9 / 5 + 32}[b]
        slope = {"K": 1.0, "degC": 1.0, "degF": 9 / 5}
        scale = slope[b] / slope[a]
    else:
        scale = convert(1.0, a, b)
        out = value * scale
    return out, None if uncertainty is None else abs(uncertainty * scale)


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert a value between two units of the same dimension (not temperature offsets)."""
    a, b = normalize_unit(from_unit), normalize_unit(to_unit)
    if a == b:
        return value
    ea, eb = _TO_CANONICAL.get(a), _TO_CANONICAL.get(b)
    if ea is None or eb is None or ea[0] != eb[0]:
        raise RequestError(f"cannot convert {from_unit} to {to_unit}")
    return value * ea[1] / eb[1]
