"""The expert backend's generic repair: only a real sign of unstable integration halves the timestep."""
import pytest

from simagent.backends.expert import ExpertBackend

CURRENT = {"timestep": 2.0}


@pytest.mark.parametrize("diagnosis", [
    "ERROR: Lost atoms: original 500 current 498",
    "Step 1200: TotEng = nan",
    "WARNING: LINCS warning in step 40",
    "Water molecule starting at atom 12 can not be settled.",
])
def test_signs_of_an_unstable_run_halve_the_timestep(diagnosis):
    action = ExpertBackend().repair(diagnosis, "lammps/fluid_md", CURRENT, {})
    assert (action.action, action.parameter, action.value) == ("scale", "timestep", "0.5")


@pytest.mark.parametrize("diagnosis", [
    "ERROR: the nanoparticle data file was not found",
    "box edge 3.2 nanometre is smaller than twice the cutoff",
    "the average has not converged",
])
def test_a_word_that_only_contains_nan_is_not_instability(diagnosis):
    action = ExpertBackend().repair(diagnosis, "lammps/fluid_md", CURRENT, {})
    assert action.action == "give_up"
