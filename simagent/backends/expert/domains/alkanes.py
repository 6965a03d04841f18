"""Expert-reader domain module for TraPPE-UA alkanes (see domains/__init__.py).

A linear alkane named by name ('n-hexane', 'hexane', 'normal hexane'), formula (C6H14, n-C6) or
SMILES (CCCCCC) is read as a molecular liquid for LAMMPS with TraPPE-UA
(tools/lammps/protocols/alkanes.py). A molecule outside that model (rings, branches, double bonds,
heteroatoms: benzene, cyclohexane, isobutane, CCCO ...; ethanol, CCO, is a GROMACS liquid) ends the
reading with a message naming what simagent can model instead; it is never replaced by a linear
alkane. Frameworks are left alone (an alkane there is a guest), and so are water and the GROMACS
liquids set before this module.
"""

from __future__ import annotations

import re

from simagent.errors import RequestError
from simagent.materials.alkanes import alkane_name, linear_alkane, outside_model, polyethylene, refusal
from simagent.models import PotentialSpec, SystemSpec, TaskSpec

TRAPPE = r"\btrappe(?:[- ]?ua)?\b"


def refine(text: str, low: str, spec: TaskSpec) -> None:
    """Set a TraPPE-UA liquid alkane where the text names one; refuse other organic molecules."""
    system = spec.system
    if system is not None and system.kind == "framework":
        return  # an alkane in a framework is a guest (adsorption, diffusion), not the liquid
    if system is not None and system.kind == "molecular_fluid" and system.molecule not in (None, ""):
        return  # water or a GROMACS liquid, named explicitly
    if polyethylene(text):
        return  # the polymer module reads it (domains/polymers.py)
    found = linear_alkane(text)
    if found is None:
        outside = outside_model(text)
        if outside is not None and (system is None or system.kind in ("crystal", "atomic_fluid")):
            raise RequestError(refusal(*outside))
        return
    n_carbons, _words = found
    molecule = alkane_name(n_carbons)
    spec.system = SystemSpec(name=f"liquid {molecule}", kind="molecular_fluid", molecule=molecule, phase="liquid")
    potential = spec.potential or PotentialSpec()
    force_field = "TraPPE-UA" if re.search(TRAPPE, low) else potential.force_field
    spec.potential = potential.model_copy(update={"family": None, "name_hint": None, "file": None,
                                                  "force_field": force_field})
    spec.units_style = "real"
    if spec.engine is None:
        spec.engine = "lammps"
    spec.missing = [m for m in spec.missing if m not in ("density", "system")]
    if spec.conditions.temperature is None and "temperature" not in spec.missing:
        spec.missing.append("temperature")
