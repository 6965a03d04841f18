"""A point defect made between two minimisations of a described crystal (simagent.described.defects):
the reading rules on wordings written for these tests (never a task's own), the rendered input, the
formation-energy formula on made-up energies, and one small real run (Cu, 256 + 1 atoms, about a second).
The dev task that prompted them is read from ../shared/mdgym when present (not copied)."""

from __future__ import annotations

import re

import pytest
from described_helpers import dev_text, run_job

from simagent.described.reading import read_description
from simagent.errors import CalculationFailed
from simagent.materials.defects import formation_energy
from simagent.models import PropertyRequest, TaskSpec
from tools.lammps.described import render
from tools.lammps.protocols.described import DescribedRun, _formation_energy

# written for these tests: a self-interstitial in Cu with the Foiles u3 EAM file LAMMPS ships
CU_OCTAHEDRAL = ("We want the energy needed to form one interstitial in copper, metal units. Atoms sit on an fcc "
                 "lattice with a lattice constant of 3.615 Å, and the periodic cell spans -2 to 2 lattice spacings "
                 "along every axis. Interactions come from the EAM file Cu_u3.eam. Relax the pristine crystal first; "
                 "then insert one extra Cu atom at (1.8075, 0, 0) Å, the point a tiny spherical region is centred "
                 "on, and relax the (N+1)-atom cell again. Take E_form = E_def - (N+1)/N x E_perfect. Both "
                 "relaxations are energy minimizations by conjugate gradients with energy and force tolerances of "
                 "1e-12.")
# the same calculation with another formula, stated without the atom ratio, and no element for the atom
PLAIN_DIFFERENCE = CU_OCTAHEDRAL.replace("one extra Cu atom", "one extra atom").replace(
    "Take E_form = E_def - (N+1)/N x E_perfect.", "Report E_def - E_perfect.")
NO_FORMULA = CU_OCTAHEDRAL.replace(" Take E_form = E_def - (N+1)/N x E_perfect.", "")


def test_an_interstitial_between_two_minimisations_is_read():
    d = read_description(CU_OCTAHEDRAL)
    assert d.renderable, (d.missing, d.unsupported)
    assert (d.box.lo, d.box.hi, d.box.lattice_units) == ((-2, -2, -2), (2, 2, 2), True)
    assert d.potential.type_elements == ["Cu"] and d.atom_types == 1  # 'N+1', '(N+1)/N' are no nitrogen
    perfect, defect = d.stages
    assert (perfect.kind, defect.kind) == ("minimize", "minimize")
    assert (perfect.minimize.style, perfect.minimize.etol, perfect.minimize.ftol) == ("cg", 1e-12, 1e-12)
    assert defect.minimize == perfect.minimize
    assert d.defect.positions == [(1.8075, 0.0, 0.0)] and d.defect.position_units == "box"
    assert (d.defect.atom_type, d.defect.reference) == (1, "per_atom")
    assert d.origin["defect.formula"].source == "rules"
    assert d.origin["defect.region"].source == "rules"  # the small sphere locates the one atom
    assert d.origin["perfect_crystal.max_iterations"].source == "default"
    assert not any(k.startswith("min1.") for k in d.origin)  # the replaced stage's notes are gone


def test_the_rendered_input_adds_the_atom_between_the_two_minimisations():
    text = render(read_description(CU_OCTAHEDRAL))
    assert "region          box block -2 2 -2 2 -2 2\n" in text  # lattice units: no 'units box'
    assert "pair_coeff * * Cu_u3.eam" in text
    first = text.index("minimize        1e-12 1e-12")
    added = text.index("create_atoms    1 single 1.8075 0 0 units box")
    assert first < added < text.index("minimize        1e-12 1e-12", first + 1)
    assert "region site" not in text and "delete_atoms" not in text  # nothing the text does not state


@pytest.mark.parametrize("text, reference, source", [
    (PLAIN_DIFFERENCE, "total", "rules"),
    (NO_FORMULA, "per_atom", "default"),
])  # fmt: skip
def test_the_formula_is_the_stated_one_or_the_documented_default(text, reference, source):
    d = read_description(text)
    assert d.renderable, (d.missing, d.unsupported)
    assert d.defect.reference == reference and d.origin["defect.formula"].source == source


def test_relaxations_that_never_say_minimise_are_the_two_minimisations():
    """'Relax' at 0 K with a minimiser and tolerances is the minimisation: the stated calculation, not the
    named point-defect protocol with its own supercell and tolerances."""
    text = ("Find the interstitial formation energy in eV of copper in metal units. The crystal is fcc with a lattice "
            "constant of 3.615 Å and the periodic box spans -2 to 2 lattice spacings along every axis. Forces come "
            "from the EAM file Cu_u3.eam. Relax the perfect crystal first; then add one Cu atom at (1.8075, 0, 0) Å "
            "and relax again. Both relaxations use conjugate gradients with energy and force tolerances of 1e-10.")
    d = read_description(text)
    assert d.renderable and d.defect is not None, (d.missing, d.unsupported)
    assert [(s.minimize.style, s.minimize.etol, s.minimize.ftol) for s in d.stages] == [("cg", 1e-10, 1e-10)] * 2


def test_an_unnamed_added_atom_is_the_crystals_own_type():
    d = read_description(PLAIN_DIFFERENCE)
    assert d.defect.atom_type == 1 and d.origin["defect.atom_type"].source == "default"


def test_a_position_without_a_unit_is_missing_in_metal_units():
    d = read_description(CU_OCTAHEDRAL.replace("(1.8075, 0, 0) Å", "(1.8075, 0, 0)"))
    assert d.defect is None and any("unit of the interstitial position" in m for m in d.missing)


def test_a_position_in_lattice_units_is_rendered_in_lattice_units():
    d = read_description(CU_OCTAHEDRAL.replace("(1.8075, 0, 0) Å", "(0.5, 0, 0) lattice units"))
    assert d.defect.position_units == "lattice"
    assert "create_atoms    1 single 0.5 0 0 units lattice" in render(d)


@pytest.mark.parametrize("site, named", [
    ("(9.0, 0, 0) Å", "outside the box (-7.23 to 7.23 Å along x)"),  # the box is -2..2 spacings of 3.615 Å
    ("(0, 0, 2.5) lattice units", "outside the box (-2 to 2 lattice units along z)"),
])  # fmt: skip
def test_a_site_outside_the_box_is_refused_before_any_run(site, named):
    d = read_description(CU_OCTAHEDRAL.replace("(1.8075, 0, 0) Å", site))
    assert not d.renderable and d.defect is None
    assert any(named in u for u in d.unsupported), d.unsupported


def test_without_the_perfect_crystal_no_defect_calculation_is_read():
    d = read_description(CU_OCTAHEDRAL.replace("Relax the pristine crystal first; then insert", "Insert"))
    assert d.defect is None and not d.renderable


@pytest.mark.parametrize("words, lo, hi, lattice", [
    ("the simulation domain runs from -5 to 5 unit cells in each direction", -5, 5, True),
    ("the periodic cell spans -3 to 3 lattice spacings along every axis", -3, 3, True),
    ("the box extends from -20 to 20 angstrom in all three dimensions", -20, 20, False),
    ("the cell runs from -6 to 6 unit cells on each axis", -6, 6, True),  # not 0 to 6: the lower bound kept
])  # fmt: skip
def test_one_span_for_every_axis_is_the_box(words, lo, hi, lattice):
    text = (f"Copper in metal units on an fcc lattice with a lattice constant of 3.615 Å; {words}. The EAM file "
            "Cu_u3.eam describes it. Velocities at 300 K, then 100 steps in the NVE ensemble.")
    d = read_description(text)
    assert (d.box.lo, d.box.hi, d.box.lattice_units) == ((lo,) * 3, (hi,) * 3, lattice)


def test_a_count_in_a_formula_is_not_the_stated_particle_count():
    text = CU_OCTAHEDRAL.replace("in copper, metal units", "in copper (256 atoms), metal units")
    assert read_description(text).stated_atoms == 256  # 'the (N+1)-atom cell' states no second count


def test_formation_energy_on_made_up_energies():
    # a 4-atom perfect cell at -3 eV per atom: an interstitial cell of 5 atoms at -13 eV costs 2 eV,
    # a vacancy cell of 3 atoms at -8 eV costs 1 eV
    assert formation_energy(-13.0, 5, -12.0, 4) == pytest.approx(2.0)
    assert formation_energy(-8.0, 3, -12.0, 4) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        formation_energy(-8.0, 3, -12.0, 0)


def _summary(energy: float, stop: str = "energy tolerance", fmax: float = 1e-9) -> str:
    return ("Minimization stats:\n  Stopping criterion = " + stop + "\n  Energy initial, next-to-last, final = \n"
            f"  {energy} {energy} {energy}\n  Force two-norm initial, final = 1 {fmax}\n"
            f"  Force max component initial, final = 1 {fmax}\n  Iterations, force evaluations = 7 14\n")


def test_the_protocol_combines_the_two_minimisations_by_the_read_formula():
    d = read_description(CU_OCTAHEDRAL)
    runs = [{"Atoms": [4.0, 4.0]}, {"Atoms": [5.0, 5.0]}]
    result = _formation_energy(runs, _summary(-12.0) + _summary(-13.0), d)
    assert result.value == pytest.approx(2.0) and result.unit == "eV" and not result.warnings
    d.defect.reference = "total"
    assert _formation_energy(runs, _summary(-12.0) + _summary(-13.0), d).value == pytest.approx(-1.0)
    unrelaxed = _formation_energy(runs, _summary(-12.0) + _summary(-13.0, "max iterations", 0.5), d)
    assert "not relaxed" in unrelaxed.warnings[0]  # reported with the finding, not refused (prescribed run)
    with pytest.raises(CalculationFailed):
        _formation_energy([{"Atoms": [4.0]}, {"Atoms": [6.0]}], _summary(-12.0) + _summary(-13.0), d)


def test_a_small_cu_interstitial_runs_and_costs_a_few_ev(tmp_path):
    spec = TaskSpec(request=CU_OCTAHEDRAL, engine="lammps",
                    properties=[PropertyRequest(name="interstitial_formation_energy")])
    proto = DescribedRun()
    assert proto.applies_to(spec)
    params, _ = proto.parameters(spec)
    (job,) = proto.jobs(params)
    folder = run_job(job, tmp_path)
    (result,) = proto.analyze(params, {job.id: folder}, spec)
    # EAM self-interstitials in Cu cost a few eV (about 3 eV for published Cu EAMs); a 257-atom cell
    assert 1.0 < result.value < 6.0 and not result.warnings
    assert "N = 256" in result.method and "257 atoms" in result.method
    # independently of the analysis: the two minimised energies read here from the log, by hand. The perfect
    # crystal at the stated 3.615 A is Foiles-Baskes-Daw Cu at its own lattice constant, so its energy per atom
    # is that potential's published cohesive energy, 3.54 eV (Foiles, Baskes, Daw, Phys. Rev. B 33, 7983 (1986),
    # Table I); the answer is E_def - (257/256) E_perfect, the formula the text states
    finals = [float(block.split()[2]) for block in
              re.findall(r"Energy initial, next-to-last, final =\s*\n\s*(\S+\s+\S+\s+\S+)",
                         (folder / "log.lammps").read_text())]
    e_perfect, e_defect = finals
    assert e_perfect / 256 == pytest.approx(-3.54, abs=0.005)
    assert result.value == pytest.approx(e_defect - 257 / 256 * e_perfect, abs=1e-6)


def test_dev_task_118_reads_the_box_the_site_and_the_two_minimisations():
    d = read_description(dev_text("lammps/118_interstitial_fault_energy.json"))
    assert d.renderable, (d.missing, d.unsupported)
    assert (d.box.lo, d.box.hi, d.box.lattice_units) == ((-4, -4, -4), (4, 4, 4), True)
    assert d.potential.type_elements == ["Cu"] and d.stated_atoms == 2048
    assert d.defect.positions == [(0.0, -1.8075, 0.0)] and d.defect.reference == "per_atom"
    assert [(s.minimize.etol, s.minimize.ftol) for s in d.stages] == [(1e-15, 1e-15)] * 2
