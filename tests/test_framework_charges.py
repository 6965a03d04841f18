"""Framework charges by charge equilibration (EQeq, pyeqeq) when a charged guest such as CO2 meets a
framework whose CIF has no charges, so CO2 answers are not LJ-only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simagent.materials import frameworks as fw
from simagent.materials.charges import eqeq_charges
from simagent.models import Conditions, PropertyRequest, Quantity, SystemSpec, TaskSpec
from tools.raspa.protocols.adsorption import GCMCUptake

BENZENE = Path(__file__).parent / "files" / "zeopp" / "benzene_box.cif"


def test_eqeq_charges_are_neutral_and_respect_symmetry():
    """Benzene (D6h): the six C are equivalent, as are the six H; C-H bonds polarise C- H+."""
    structure = fw.read_cif(BENZENE, name="benzene")
    q = eqeq_charges(structure)
    carbons = q[[s == "C" for s in structure.symbols]]
    hydrogens = q[[s == "H" for s in structure.symbols]]
    assert abs(q.sum()) < 0.01 and q.size == 12
    assert np.ptp(carbons) <= 0.002 and np.ptp(hydrogens) <= 0.002
    assert carbons.mean() < 0 < hydrogens.mean()


def uptake_spec(guest: str) -> TaskSpec:
    return TaskSpec(
        request="test", engine="raspa",
        system=SystemSpec(name="benzene box", kind="framework", structure=str(BENZENE), guests=[guest]),
        conditions=Conditions(temperature=Quantity(value=298, unit="K"), pressure=Quantity(value=1, unit="bar")),
        properties=[PropertyRequest(name="uptake")])


def test_co2_gets_framework_charges_and_ewald():
    params, defaults = GCMCUptake().parameters(uptake_spec("CO2"))
    assert params.framework_charges == "eqeq"
    electro = next(d for d in defaults if d.parameter == "electrostatics")
    assert "Ewald" in electro.value and "charge equilibration" in electro.value
    job = GCMCUptake().jobs(params)[-1]
    assert "UseChargesFromCIFFile          yes" in job.inputs["simulation.input"]


@pytest.mark.parametrize("guest", ["CH4", "Ar"])
def test_uncharged_guests_keep_lj_only(guest):
    params, defaults = GCMCUptake().parameters(uptake_spec(guest))
    assert params.framework_charges == "auto"
    assert not any(d.parameter == "framework charges" for d in defaults)


@pytest.mark.parametrize(("request_text", "level"), [
    ("methane isotherm in HKUST-1 at 298 K, 1 to 65 bar", "standard"),
    ("quick estimate of CO2 uptake in ZIF-8 at 1 bar", "quick"),
    ("rough CH4 loading in IRMOF-1, 35 bar, 298K?", "quick"),
    ("CH4 uptake in HKUST-1 at 65 bar within 5 %", "quick"),
    ("uptake of CO2 in UiO-66 at 1 bar, +/- 2%", "standard"),
    ("N2 isotherm, errors below 1 % please", "high"),
    ("high-precision methane isotherm in IRMOF-1", "high"),
])
def test_mc_cycles_follow_the_requested_precision(request_text, level):
    from tools.raspa.protocols.adsorption import GCMC_CYCLES, requested_precision

    assert requested_precision(request_text)[0] == level
    spec = uptake_spec("CH4").model_copy(update={"request": request_text})
    params, _ = GCMCUptake().parameters(spec)
    assert (params.initialization_cycles, params.production_cycles) == GCMC_CYCLES[level]
