"""A single-walled carbon nanotube in a described simulation: the chirality rule, the atoms' geometry,
the reading of its words (written for these tests, never a task's own), and a real AIREBO run on the
built tube. The tube's system (water, a hybrid pair style, fix gcmc) is not rendered yet: a text with a
tube is named as not rendered."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from described_helpers import run_inputs

from simagent.described.nanotube import Nanotube, choose_chirality, read_nanotube, stated_box, tube_diameter
from simagent.described.reading import normalise, read_description
from tools.lammps.described import render
from tools.lammps.described_nanotube import atom_lines


def test_diameters_follow_the_rolled_sheet():
    # D = sqrt(3) d sqrt(n^2 + n m + m^2) / pi: (10,10) with d = 1.42 A is 13.56 A, (10,0) 7.83 A
    assert tube_diameter(10, 10, 1.42) == pytest.approx(13.56, abs=0.01)
    assert tube_diameter(10, 0, 1.42) == pytest.approx(7.83, abs=0.01)


@pytest.mark.parametrize("diameter, edge, expected", [
    (10.0, 56.63, (7, 7, 23)),  # armchair periods 2.4595 A: 23 fill 56.63 (+0.11 %); zigzag 4.26 A: 13.29 do not
    (10.0, 42.6, (13, 0, 10)),  # zigzag: 10 periods exactly; armchair 17.32 periods do not fit; (13,0) is 10.18 A
    (13.6, 24.6, (10, 10, 10)),  # armchair 10 periods; (10,10) 13.56 A
    (10.0, 11.0, None),  # 4.47 armchair or 2.58 zigzag periods: no whole number within 1 %
    (30.0, 56.63, (22, 22, 23)),  # a wide tube: (22,22) is 29.83 A
    (2.0, 56.63, None),  # thinner than any tube built ((2,2) is 2.71 A, more than 10 % off)
])
def test_chirality_from_the_diameter_and_the_periodic_edge(diameter, edge, expected):
    got = choose_chirality(diameter, edge)
    if expected is None:
        assert got is None
        return
    assert got is not None and (got.n, got.m, got.cells) == expected
    assert abs(got.strain) <= 0.01


def _neighbours(tube: Nanotube, box_edge: float, cut: float = 1.6) -> tuple[np.ndarray, np.ndarray]:
    """Per atom: the number of atoms within `cut` and the nearest distance (periodic along the axis)."""
    x = np.array(tube.positions())
    axis = "xyz".index(tube.axis)
    delta = x[:, None, :] - x[None, :, :]
    delta[..., axis] -= box_edge * np.round(delta[..., axis] / box_edge)
    dist = np.linalg.norm(delta, axis=-1)
    np.fill_diagonal(dist, np.inf)
    return (dist < cut).sum(axis=1), dist.min(axis=1)


@pytest.mark.parametrize("n, m, cells, edge", [(7, 7, 23, 56.63), (8, 0, 5, 21.3), (5, 5, 4, 9.838)])
def test_every_atom_has_three_bonds_of_the_bond_length_on_the_cylinder(n, m, cells, edge):
    tube = Nanotube(n=n, m=m, bond_length=1.42, cells=cells, length=edge, center=(10.0, 10.0))
    x = np.array(tube.positions())
    assert len(x) == tube.atoms == 4 * n * cells
    radius = np.hypot(x[:, 0] - 10.0, x[:, 1] - 10.0)
    assert np.allclose(radius, tube.diameter / 2.0)
    assert x[:, 2].min() >= 0.0 and x[:, 2].max() < edge
    count, nearest = _neighbours(tube, edge)
    assert np.all(count == 3)  # sp2 carbon, also across the periodic seam
    # a bond around the circumference is a chord (a little shorter than d); the axial stretch is at most 1 %
    assert nearest.min() > 1.39 and nearest.max() < 1.44


def test_a_tube_along_y_is_placed_along_y():
    tube = Nanotube(n=6, m=6, bond_length=1.42, cells=4, length=4 * math.sqrt(3) * 1.42, axis="y", center=(5.0, 6.0))
    x = np.array(tube.positions())
    assert np.allclose(np.hypot(x[:, 0] - 6.0, x[:, 2] - 5.0), tube.diameter / 2.0)  # (z, x) across y
    assert x[:, 1].max() < tube.length


PARAPHRASES = [
    # (text, box, (n, m, cells, axis) or None, what the reading names)
    ("We model a (10,0) zigzag single-walled carbon nanotube, 4.26 nm long, in a periodic box.",
     (30.0, 30.0, 42.6), (10, 0, 10, "z"), ""),
    ("An armchair SWCNT with a diameter of 13.6 angstrom spans the cell; its length is 24.6 angstrom.",
     (40.0, 40.0, 24.6), (10, 10, 10, "z"), ""),
    ("The CNT (1.0 nm in diameter) runs along y and is 56.6 angstrom long.",
     (20.0, 56.63, 20.0), (7, 7, 23, "y"), ""),
    ("A multi-walled carbon nanotube of length 5 nm and diameter 2 nm.", (30.0, 30.0, 50.0), None, "multi-walled"),
    ("A chiral (6,4) nanotube 5 nm long.", (30.0, 30.0, 50.0), None, "chiral (6,4)"),
    ("A 3 nm long carbon nanotube of diameter 1 nm floats in the middle of the box.", (60.0, 60.0, 60.0), None,
     "finite length"),
    ("A carbon nanotube that is 5.66 nm long fills the box.", (20.0, 20.0, 56.63), None, "chirality or diameter"),
    ("A single-walled carbon nanotube of diameter 1 nm fills the box.", (20.0, 20.0, 56.63), None, "length"),
]


@pytest.mark.parametrize("text, box, expected, named", PARAPHRASES)
def test_tube_words(text, box, expected, named):
    reading = read_nanotube(normalise(text), box)
    if expected is None:
        assert reading.tube is None
        assert any(named in x for x in reading.unsupported + reading.missing), (reading.unsupported, reading.missing)
        return
    tube = reading.tube
    assert tube is not None and (tube.n, tube.m, tube.cells, tube.axis) == expected
    assert "bond_length" in reading.chosen  # d is not stated: the cited 1.42 A, listed
    assert ("chirality" in reading.stated) != ("chirality" in reading.chosen)


def test_no_tube_in_a_text_without_one():
    for text in ("A graphene sheet of 1008 carbon atoms under tension.", "Water in a slab of 20 x 20 x 60 angstrom."):
        assert read_nanotube(normalise(text), (20.0, 20.0, 60.0)).tube is None
        assert read_description(text).nanotube is None


def test_a_stated_bond_length_wins():
    reading = read_nanotube(normalise("An (8,8) carbon nanotube, 2.425 nm long, C-C bond length 1.40 angstrom."),
                            (30.0, 30.0, 24.25))
    assert reading.tube is not None and reading.tube.bond_length == 1.40 and "bond_length" in reading.stated


@pytest.mark.parametrize("words, box", [
    ("the simulation box is 20 x 20 x 56.63 angstrom^3", (20.0, 20.0, 56.63)),
    ("a box with dimensions 2*2*5.663 nm", (20.0, 20.0, 56.63)),
    ("box: 30 × 30 × 42.6 Å", (30.0, 30.0, 42.6)),
])
def test_box_edges(words, box):
    assert stated_box(normalise(words)) == pytest.approx(box)


# a water-filled tube in my own words: the tube is read and built, the rest is named as not rendered
FILLED = ("Model water entering a single-walled carbon nanotube 1 nm across (diameter 1 nm) and 5.66 nm in length, "
          "at 300 K, in metal units. The periodic simulation box measures 20 x 20 x 56.63 angstrom. Carbon interacts "
          "through AIREBO and the water is TIP4P/2005; PPPM handles the long-range Coulomb part (accuracy 1e-4) and "
          "the real-space cutoff is 12 angstrom. Water molecules are added inside a cylinder region spanning the "
          "tube's interior by grand canonical Monte Carlo at 300 K, with SHAKE keeping them rigid. Run 20000 steps "
          "of NVT with a Nose-Hoover thermostat at 300 K, then 10000 steps of NVE with a Berendsen thermostat at "
          "300 K; the timestep is 0.0005 ps.")


def test_a_water_filled_tube_is_read_and_named_as_not_rendered():
    desc = read_description(FILLED)
    tube = desc.nanotube
    assert tube is not None and (tube.n, tube.m, tube.cells, tube.atoms) == (7, 7, 23, 644)
    assert not desc.renderable
    (why,) = [u for u in desc.unsupported if "nanotube" in u]
    assert "fix gcmc" in why and "hybrid pair style" in why and "(7,7), 644 carbon atoms" in why
    assert "electrostatics (coul, kspace)" not in desc.unsupported  # said precisely by the tube's entry instead
    assert desc.defaults["nanotube.chirality"].startswith("(7,7) armchair")
    with pytest.raises(ValueError, match="cannot be rendered"):
        render(desc)


def test_the_built_tube_in_lammps_is_sp2_carbon_under_airebo(tmp_path: Path):
    """The atoms the lines place, run by LAMMPS under AIREBO (CH.airebo): every carbon has three
    neighbours within 1.8 A (compute coord/atom, across the periodic seam too), and the energy per atom
    is that of sp2 carbon: graphite's cohesive energy under AIREBO is about 7.4 eV/atom (Stuart, Tutein,
    Harrison, J. Chem. Phys. 112, 6472 (2000)); rolling into a 9.5 A tube costs a few tenths at most."""
    tube = Nanotube(n=7, m=7, bond_length=1.42, cells=8, length=8 * math.sqrt(3) * 1.42, center=(10.0, 10.0))
    text = "\n".join(["units metal", "atom_style atomic", "boundary p p p",
                      f"region box block 0 20 0 20 0 {tube.length:.8f} units box", "create_box 1 box",
                      *atom_lines(tube, 1), "mass 1 12.011", "pair_style airebo 3.0 1 1",
                      "pair_coeff * * CH.airebo C", "compute cn all coord/atom cutoff 1.8",
                      "compute cmin all reduce min c_cn", "compute cmax all reduce max c_cn",
                      "thermo_style custom step atoms pe c_cmin c_cmax", "thermo_modify norm yes", "run 0"])
    log = (run_inputs({"in.lammps": text}, tmp_path) / "log.lammps").read_text()
    row = re.search(r"^\s+Step\s+Atoms\s+PotEng\s+c_cmin\s+c_cmax\s*\n\s*0\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)", log, re.M)
    assert row is not None, log[-1500:]
    atoms, pe, cmin, cmax = int(row.group(1)), float(row.group(2)), float(row.group(3)), float(row.group(4))
    assert atoms == 4 * 7 * 8
    assert cmin == cmax == 3
    assert -7.6 < pe < -7.0


def test_a_named_family_limits_the_choice():
    # zigzag periods (4.26 A) fill 56.63 A only as 13.29 of them: a zigzag tube of 1 nm is not built there,
    # while the same words without the family give the armchair (7,7)
    text = "A zigzag carbon nanotube with a diameter of 1 nm and a length of 5.663 nm."
    reading = read_nanotube(normalise(text), (20.0, 20.0, 56.63))
    assert reading.tube is None and any("no zigzag (n,0) tube" in m for m in reading.missing)
    either = read_nanotube(normalise(text.replace("zigzag ", "")), (20.0, 20.0, 56.63))
    assert either.tube is not None and (either.tube.n, either.tube.m) == (7, 7)
