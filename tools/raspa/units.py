"""Adsorption units, converted in code from molecules per unit cell.

Loadings: molecules/uc (the CIF's cell), molecules/cell (the simulated supercell), mol/kg = mmol/g,
mg/g, cm3(STP)/g, cm3(STP)/cm3 (= v/v), g/L (adsorbate mass per litre of crystal). STP is 273.15 K and
1 atm, molar volume 22.413969 L/mol (CODATA 2018 R), as RASPA uses. Henry coefficients: mol/kg/Pa and
per bar, mmol/g/bar. Energies go through simagent.units."""

from __future__ import annotations

import re
from dataclasses import dataclass

from simagent.errors import RequestError

AVOGADRO = 6.02214076e23
MOLAR_VOLUME_STP_CM3 = 22413.969  # cm^3/mol at 273.15 K, 101325 Pa (ideal gas, CODATA 2018 R)
GAS_CONSTANT_KJ = 8.314462618e-3  # kJ/(mol K)

LOADING_UNITS = ("mol/kg", "mmol/g", "mg/g", "cm3(STP)/g", "cm3(STP)/cm3", "g/L", "molecules/uc", "molecules/cell")
DEFAULT_LOADING_UNIT = "mol/kg"

_LOADING_ALIASES = {
    "mol/kg": "mol/kg", "molkg-1": "mol/kg", "mol/kgframework": "mol/kg",
    "mmol/g": "mmol/g", "mmolg-1": "mmol/g",
    "mg/g": "mg/g", "mgg-1": "mg/g",
    "cm3(stp)/g": "cm3(STP)/g", "cm3/g": "cm3(STP)/g", "cc/g": "cm3(STP)/g", "ccstp/g": "cm3(STP)/g",
    "cc(stp)/g": "cm3(STP)/g", "scc/g": "cm3(STP)/g", "cm3stp/g": "cm3(STP)/g", "ml/g": "cm3(STP)/g",
    "cm3(stp)/cm3": "cm3(STP)/cm3", "cm3/cm3": "cm3(STP)/cm3", "v/v": "cm3(STP)/cm3", "cc/cc": "cm3(STP)/cm3",
    "cm3stp/cm3": "cm3(STP)/cm3", "vstp/v": "cm3(STP)/cm3", "v(stp)/v": "cm3(STP)/cm3",
    "g/l": "g/L", "kg/m3": "g/L",
    "molecules/uc": "molecules/uc", "molecules/unitcell": "molecules/uc", "molec/uc": "molecules/uc",
    "molecules/unitcells": "molecules/uc", "molecule/uc": "molecules/uc", "moleculesperunitcell": "molecules/uc",
    "molecules/cell": "molecules/cell", "moleculespercell": "molecules/cell",
}


def _key(unit: str) -> str:
    text = unit.strip().lower().replace("^", "").replace("³", "3").replace(" ", "").replace("·", "")
    return re.sub(r"\(stp\)|stp", lambda m: "(stp)" if m.group(0) == "(stp)" else "stp", text)


def loading_unit(unit: str | None) -> str:
    """Canonical loading unit for a user's spelling (None -> mol/kg)."""
    if not unit:
        return DEFAULT_LOADING_UNIT
    canonical = _LOADING_ALIASES.get(_key(unit))
    if canonical is None:
        raise RequestError(f"unknown loading unit {unit!r}; known: {', '.join(LOADING_UNITS)}")
    return canonical


@dataclass(frozen=True)
class LoadingBasis:
    """What converting a loading needs: one unit cell of the framework and the guest."""

    framework_mass_g_mol: float  # per unit cell
    framework_density_g_cm3: float
    guest_molar_mass_g_mol: float
    cells_in_box: int = 1

    def factor(self, unit: str) -> float:
        """Multiply molecules/uc by this to get `unit`."""
        unit = loading_unit(unit)
        mol_per_kg = 1000.0 / self.framework_mass_g_mol
        return {
            "molecules/uc": 1.0,
            "molecules/cell": float(self.cells_in_box),
            "mol/kg": mol_per_kg,
            "mmol/g": mol_per_kg,
            "mg/g": mol_per_kg * self.guest_molar_mass_g_mol,
            "cm3(STP)/g": mol_per_kg * MOLAR_VOLUME_STP_CM3 / 1000.0,
            "cm3(STP)/cm3": mol_per_kg * MOLAR_VOLUME_STP_CM3 / 1000.0 * self.framework_density_g_cm3,
            "g/L": mol_per_kg * self.guest_molar_mass_g_mol * self.framework_density_g_cm3,
        }[unit]

    def convert(self, molecules_per_uc: float, unit: str) -> float:
        return molecules_per_uc * self.factor(unit)

    def all_units(self, molecules_per_uc: float) -> dict[str, float]:
        return {u: self.convert(molecules_per_uc, u) for u in LOADING_UNITS if u != "mmol/g"}


HENRY_UNITS = {"mol/kg/pa": ("mol/kg/Pa", 1.0), "mol/(kgpa)": ("mol/kg/Pa", 1.0), "molkg-1pa-1": ("mol/kg/Pa", 1.0),
               "mol/kg/bar": ("mol/kg/bar", 1e5), "mmol/g/bar": ("mmol/g/bar", 1e5),
               "mol/(kgbar)": ("mol/kg/bar", 1e5), "mmol/g/kpa": ("mmol/g/kPa", 1e3),
               "mol/kg/kpa": ("mol/kg/kPa", 1e3), "mmol/g/pa": ("mmol/g/Pa", 1.0)}


def henry_unit(unit: str | None) -> tuple[str, float]:
    """(unit label, factor from mol/kg/Pa)."""
    if not unit:
        return "mol/kg/Pa", 1.0
    found = HENRY_UNITS.get(_key(unit))
    if found is None:
        raise RequestError(f"unknown Henry-coefficient unit {unit!r}; use mol/kg/Pa, mol/kg/bar or mmol/g/bar")
    return found
