"""Carbon dioxide in a described molecular liquid: the TraPPE model and how it is named.

- `TRAPPE_CO2`: J. J. Potoff, J. I. Siepmann, AIChE J. 47, 1676 (2001). Three sites on a line: C in the
  middle, O at 1.16 A on either side; LJ epsilon/k 27.0 K and sigma 2.80 A on C, 79.0 K and 3.05 A on O;
  charges +0.70 e on C and -0.35 e on each O. The model is rigid.
- `co2_model(low)`: which CO2 model a text names. TraPPE when it says so ('TraPPE', 'TraPPE-based');
  another named model (EPM2, Harris-Yung, Zhang-Duan, a flexible CO2) is refused by name, never
  replaced by TraPPE; a text that names CO2 but no model for it lacks the force field.

How the molecule is kept straight (a default the text leaves open when it says only 'TraPPE'): SHAKE
cannot hold a linear triatomic (its angle constraint degenerates at 180 degrees), so each CO2 is a
rigid body (LAMMPS fix rigid/small, one body per molecule), as LAMMPS's own examples/gcmc/in.gcmc.co2
keeps this model. Its two bonds and its angle carry no energy: they exist so that the pairs inside a
molecule are excluded from the non-bonded sum (special_bonds 0 0 0). Thermostats and barostats follow
the fix rigid manual's second way for a mixture of rigid bodies and other atoms: the stage's Nose-Hoover
integrator (fix nvt / npt, dilating every atom) moves the other molecules, and fix rigid/nvt/small
thermostats the bodies at the stage's temperature and damping (rigid/nve/small in NVE).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

K_B_KCAL = 0.0019872036  # kcal/mol/K (CODATA k_B * N_A), as simagent.described.molecular
CO2_TEMPLATE = "co2"  # the species' template name (and the label of its per-molecule energies)
CARBON, OXYGEN = "C_co2", "O_co2"  # the site labels of its atom kinds (distinct from a water's O)

_NAMED = re.compile(r"carbon dioxide|\bco2\b|co₂")
_TRAPPE = re.compile(r"\btrappe\b")
_OTHER_MODELS = re.compile(r"\bepm2?\b|elementary physical model|harris[- ]?(?:and[- ])?yung|"
                           r"zhang[- ]?(?:and[- ])?duan|flexible (?:carbon dioxide|co2)|"
                           r"(?:carbon dioxide|co2)[^.;]{0,40}\bflexible\b")


class LinearMolecule(BaseModel):
    """A rigid linear triatomic X-Y-X: the centre site, the two end sites at `bond` on either side."""

    name: str
    bond: float = Field(gt=0, description="centre to end, angstrom")
    centre: tuple[str, float, float, float, float] = Field(description="element, mass, charge, epsilon (kcal/mol), "
                                                           "sigma (angstrom)")
    end: tuple[str, float, float, float, float]
    citation: str

    def coordinates(self) -> list[tuple[float, float, float]]:
        """The centre at the origin, the ends along x."""
        return [(0.0, 0.0, 0.0), (self.bond, 0.0, 0.0), (-self.bond, 0.0, 0.0)]


TRAPPE_CO2 = LinearMolecule(
    name="TraPPE CO2", bond=1.16,
    centre=("C", 12.011, 0.70, 27.0 * K_B_KCAL, 2.80), end=("O", 15.9994, -0.35, 79.0 * K_B_KCAL, 3.05),
    citation="Potoff, Siepmann, AIChE J. 47, 1676 (2001)")


def names_co2(low: str) -> bool:
    return _NAMED.search(low) is not None


def co2_model(low: str) -> tuple[LinearMolecule | None, str]:
    """(the model, the words naming it) for a text that names CO2; (None, why) when the model is
    another one (prefix 'unsupported: ') or not named (prefix 'missing: ')."""
    other = _OTHER_MODELS.search(low)
    if other:
        return None, f"unsupported: CO2 in a model simagent has no template for ({other.group(0)})"
    trappe = _TRAPPE.search(low)
    if trappe is None:
        return None, "missing: the CO2 force field (simagent has TraPPE's, Potoff & Siepmann 2001)"
    return TRAPPE_CO2, trappe.group(0)


_COUNT = re.compile(r"(?<![\w/.-])(\d+) (?:(?:rigid|linear|trappe|trappe-based|model) ){0,2}(?:carbon dioxide|co2)"
                    r"(?: molecules?\b| gas\b)?|(?:carbon dioxide|co2)(?: molecules?)?\s*\((\d+)(?: molecules?)?\)")


def co2_count(low: str) -> tuple[int, str] | None:
    """'300 carbon dioxide molecules', '250 CO2 and 400 water molecules', '300 TraPPE CO2', 'CO2 (300)', 'CO2
    molecules (300 molecules)'."""
    hit = _COUNT.search(low)
    if hit is None:
        return None
    return int(hit.group(1) or hit.group(2)), hit.group(0)
