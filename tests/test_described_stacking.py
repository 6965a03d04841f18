"""Generalised stacking-fault scans in described simulations (simagent.described.stacking,
tools.lammps.described_stacking): reading on paraphrases written for these tests, the rendered input,
the GSF analysis on synthetic energies, and one small scan run by LAMMPS."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simagent.backends.expert.numbers import plain_numbers
from simagent.described.reading import read_description
from simagent.described.stacking import lattice_period, plane_spacing
from tests.described_helpers import dev_text, run_inputs
from tools.lammps.described import render
from tools.lammps.described_stacking import capped_minimisations, curve, result

# a paraphrase of a GSF scan in other words than any task's: nickel-like numbers on Cu's EAM file
COPPER_SCAN = (
    "Estimate the mean generalised stacking-fault energy of fcc copper. Use metal units; the box is 17.71 x 17.89 x "
    "60, periodic along x and y and shrink-wrapped in z. Build an fcc lattice with lattice constant 3.615 "
    "angstrom and crystal axes [1 1 -2] along x, [-1 1 0] along y and [1 1 1] along z. The Cu_u3.eam EAM file "
    "describes the atoms. Two slabs of 8 Å each sit on either side of the slip plane: the upper half and the lower "
    "half, each filled with atoms on its own. Forces are zeroed in x and y so that the atoms relax along z only. The "
    "upper half is shifted by 0.7 Å along x, repeated 3 times; after every shift the structure is minimised by "
    "conjugate gradient with energy and force tolerances of 1e-8.")

# another paraphrase: other words for the loop, the step's sign, the tolerances and the constraint
LOOP_SCAN = (
    "We want the average GSF energy of aluminium (J/m^2) with metal units. Box: 29.76 * 17.18 * 90, boundaries "
    "p p s. fcc lattice, lattice parameter 4.05 A; [1 1 2], [-1 1 0] and [-1 -1 1] crystal directions along x, y "
    "and z respectively. Al99.eam.alloy is the EAM potential. Two regions across the slip plane, each half 12 A "
    "thick, are called bottom half and top half. The bottom block is translated in steps of -0.8 A along the slip "
    "direction, in a loop of n = 5. Each configuration is relaxed (setforce 0 0 NULL) with CG, etol and ftol "
    "equal to 1e^{-9}.")


def test_numbers_written_with_a_caret_exponent():
    assert plain_numbers("etol 1e^{-10} and 5e^-8, 2.5e^(-6) then") == "etol 1e-10 and 5e-8, 2.5e-6 then"
    assert plain_numbers("a tolerance of 10^{-12}") == "a tolerance of 1e-12"


def test_orientation_listed_before_its_axes():
    d = read_description("Metal units; an fcc lattice of copper, lattice constant 3.615 angstrom, box 10 x 10 x 10. "
                         "Crystal axes "
                         "[1 -1 0], [1 1 -2] and [1 1 1] parallel to the y, z and x axes respectively. EAM file "
                         "Cu_u3.eam. Minimise once.")
    assert d.lattice is not None and d.lattice.orient == ((1, 1, 1), (1, -1, 0), (1, 1, -2))


def test_lattice_periods_and_plane_spacings():
    a = 4.0
    assert lattice_period("fcc", (1, 1, 2), a) == pytest.approx(a * math.sqrt(6) / 2)
    assert lattice_period("fcc", (-1, 1, 0), a) == pytest.approx(a * math.sqrt(2) / 2)
    assert lattice_period("fcc", (1, 0, 0), a) == pytest.approx(a)
    assert lattice_period("bcc", (1, 1, 1), a) == pytest.approx(a * math.sqrt(3) / 2)
    assert plane_spacing("fcc", (1, 1, 1), a) == pytest.approx(a / math.sqrt(3))
    assert plane_spacing("fcc", (0, 0, 1), a) == pytest.approx(a / 2)
    assert plane_spacing("bcc", (1, 1, 0), a) == pytest.approx(a / math.sqrt(2))


def test_paraphrase_read_into_a_scan():
    d = read_description(COPPER_SCAN)
    assert d.renderable, (d.unsupported, d.missing)
    scan = d.scan
    assert scan is not None
    assert (scan.moved, scan.held, scan.axis, scan.step, scan.count) == ("upper", "lower", "x", 0.7, 3)
    assert d.lattice is not None and d.lattice.orient == ((1, 1, -2), (-1, 1, 0), (1, 1, 1))
    # the box in Å, its periodic edges the whole lattice periods the text rounds (4 x 3.615 sqrt(6)/2, 7 x ...)
    assert d.box is not None and not d.box.lattice_units
    assert d.box.hi[0] == pytest.approx(4 * 3.615 * math.sqrt(6) / 2) and d.box.hi[1] == pytest.approx(
        7 * 3.615 * math.sqrt(2) / 2) and d.box.hi[2] == 60
    assert "box.x" in d.defaults and "box.y" in d.defaults
    regions = {r.name: r.bounds for r in d.layout.regions}
    assert regions == {"lower": (None, None, None, None, 22.0, 30.0), "upper": (None, None, None, None, 30.0, 38.0)}
    assert len(d.stages) == 4 and all(s.kind == "minimize" for s in d.stages)
    assert d.stages[0].displace is None and all(s.displace.group == "upper" and s.displace.move == (0.7, 0, 0)
                                                for s in d.stages[1:])
    m = d.stages[1].minimize
    assert (m.style, m.etol, m.ftol) == ("cg", 1e-8, 1e-8)
    assert "scan.axis" in d.origin and d.origin["scan.axis"].source == "rules"  # 'along x' stated


def test_second_paraphrase_loop_sign_and_caret_tolerances():
    d = read_description(LOOP_SCAN)
    assert d.renderable, (d.unsupported, d.missing)
    assert (d.scan.moved, d.scan.step, d.scan.count) == ("bottom", -0.8, 5)
    assert d.scan.axis == "x" and d.origin["scan.axis"].source == "default"  # 'the slip direction': <112> = x
    assert d.stages[-1].minimize.etol == 1e-9 and d.stages[-1].minimize.ftol == 1e-9
    assert len(d.stages) == 6


def test_no_timestep_is_asked_of_a_scan():
    """A scan minimises only: words such as 'increments' do not make the LLM fill a timestep."""
    from simagent.described.llm_fill import gaps

    text = COPPER_SCAN.replace("repeated 3 times", "in 3 equal increments")
    d = read_description(text)
    assert d.scan is not None and d.scan.count == 3
    assert [g.name for g in gaps(d, text)] == []


def test_an_unread_number_stops_the_scan():
    d = read_description(COPPER_SCAN.replace("Forces are zeroed", "The crystal is held at 300 K and forces are zeroed"))
    assert d.scan is None and any("300" in m and "not understood" in m for m in d.missing)


def test_missing_pieces_are_named():
    d = read_description(COPPER_SCAN.replace(", repeated 3 times", "").replace(
        " Forces are zeroed in x and y so that the atoms relax along z only.", ""))
    assert d.scan is None
    assert any("how many displacements" in m for m in d.missing)
    assert any("directions the atoms relax" in m for m in d.missing)


@pytest.mark.parametrize("old, new, named", [
    ("repeated 3 times", "repeated 0 times", "makes none"),
    ("shifted by 0.7 Å", "shifted by 0 Å", "moves nothing"),
])  # fmt: skip
def test_a_scan_that_makes_no_displacement_is_named_not_run(old, new, named):
    """Nonsense numbers are no scan: a clear gap, never a validation error or a curve of one point."""
    d = read_description(COPPER_SCAN.replace(old, new))
    assert d.scan is None and not d.renderable
    assert any(named in m for m in d.missing), d.missing


def test_rendered_input_states_the_scan():
    text = render(read_description(dev_text("lammps_1/114_SFG_cal_Al.json")))
    assert "lattice         fcc 4.05 orient x 1 1 2 orient y -1 1 0 orient z -1 -1 1" in text
    assert "boundary        p p s" in text
    assert "units box" in text.split("create_box")[0]
    assert "create_atoms    1 region bottom" in text and "create_atoms    1 region top" in text
    assert text.count("fix             slipfix all setforce 0 0 NULL") == 1
    assert text.count("displace_atoms  bottom move -1 0 0 units box") == 40
    assert text.count("minimize        1e-10 1e-10 ") == 41
    assert "pair_coeff * * Al99.eam.alloy Al" in text
    # the setforce comes before the first minimisation; each displacement before its minimisation
    assert text.index("setforce") < text.index("minimize")
    blocks = text.split("# stage ")[1:]
    assert "displace_atoms" not in blocks[0] and all(b.index("displace_atoms") < b.index("minimize")
                                                     for b in blocks[1:])
    assert "jump" not in text and "label" not in text


def _blocks(energies: list[float]) -> list[dict[str, np.ndarray]]:
    return [{"Step": np.array([0.0, 10.0]), "PotEng": np.array([e + 0.5, e])} for e in energies]


def test_gsf_analysis_on_synthetic_energies():
    d = read_description(COPPER_SCAN)
    area = (d.box.hi[0] - d.box.lo[0]) * (d.box.hi[1] - d.box.lo[1])
    energies = [-100.0, -99.0, -98.5, -100.0]  # E_0, then three displaced states
    shifts, gsf = curve(_blocks(energies), d)
    ev_a2 = 16.0217663  # J/m^2 per eV/Å^2
    assert list(shifts) == pytest.approx([0.7, 1.4, 2.1])
    assert list(gsf) == pytest.approx([1.0 / area * ev_a2, 1.5 / area * ev_a2, 0.0])
    r = result(_blocks(energies), d, "", "described")
    assert r.unit == "J/m^2" and r.value == pytest.approx((1.0 + 1.5 + 0.0) / 3 / area * ev_a2)
    assert not r.warnings
    below = result(_blocks([-100.0, -101.0, -99.0, -99.0]), d, "Stopping criterion = max iterations\n", "described")
    assert any("below the undisplaced" in w for w in below.warnings) and any("cap" in w for w in below.warnings)
    stops = "Stopping criterion = energy tolerance\nStopping criterion = max force evaluations"
    assert capped_minimisations(stops) == 1
    with pytest.raises(Exception, match="minimisation blocks"):
        curve(_blocks(energies[:3]), d)


def test_small_scan_run_by_lammps(tmp_path):
    """The copper paraphrase run: 4 minimisations of ~450 atoms (seconds); the displaced states lie above
    the undisplaced crystal and none stops at its cap."""
    from tools.lammps.parse import read_output

    d = read_description(COPPER_SCAN)
    folder = run_inputs({"in.lammps": render(d)}, tmp_path / "scan")
    out = read_output(folder)
    log = (folder / "log.lammps").read_text()
    assert len(out.runs) == 4 and capped_minimisations(log) == 0
    r = result(out.runs, d, log, "described")
    _, gsf = curve(out.runs, d)
    assert np.all(gsf > 0) and 0 < r.value < 2  # J/m^2: a faulted fcc metal, not an overlap of atoms
