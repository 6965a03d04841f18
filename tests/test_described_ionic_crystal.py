"""Na+ and Cl- on the rock-salt lattice in typed simulation descriptions (simagent.described.ionic_crystal):
the crystal read from a box and an ion count, or from a lattice constant; the published ion LJ set as a listed
default; the rendered crystal checked against the Madelung energy of rock salt. Every wording here is written
for these tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from described_helpers import run_text

from simagent.described.ionic_crystal import ION_LJ
from simagent.described.reading import read_description
from tools.lammps.described import render

# 512 = 8 x 4^3 ions in a 22.56 A cube: four cells of 5.64 A per edge
BOX_AND_COUNT = ("Model rock salt in real units: 512 ions (Na+ and Cl-) sit on a face-centred cubic arrangement "
                 "inside a "
                 "periodic cubic box with edge length of 22.56 A. Pair style lj/cut/coul/long with a 9 A cutoff, a "
                 "PPPM solver for the long-range part, arithmetic mixing. Velocities are drawn at 250 K and a "
                 "Nose-Hoover NVT thermostat holds 250 K for 2000 steps.")
CONSTANT_AND_CELLS = ("A sodium chloride crystal of 3 x 3 x 3 unit cells with a lattice constant of 5.64 A, real "
                      "units, "
                      "periodic in all directions. LJ plus Coulomb via lj/cut/coul/long (cutoff 8 A) and PPPM. "
                      "Initial velocities at 300 K, then 1000 steps of NVE.")


def test_crystal_from_box_and_count():
    desc = read_description(BOX_AND_COUNT)
    assert desc.renderable, (desc.unsupported, desc.missing)
    system = desc.molecular
    assert system is not None and system.crystal is not None and system.water is None
    assert system.crystal.constant == pytest.approx(5.64)
    assert system.crystal.cells == (4, 4, 4) and system.crystal.n_ions == 512
    assert system.crystal.origin == pytest.approx((0.25, 0.25, 0.25))  # box from 0: sites a/4 inside the faces
    assert [(k.element, k.charge) for k in system.kinds] == [("Na", 1.0), ("Cl", -1.0)]
    assert system.cutoff == 9.0 and system.kspace == "pppm" and system.mixing == "arithmetic"
    assert {k.element: (k.epsilon, k.sigma) for k in system.kinds} == ION_LJ
    assert "Joung" in desc.defaults["molecular.lj"]  # the published set, listed as the text's gap
    assert desc.atom_style == "charge" and desc.masses == {1: pytest.approx(22.98977), 2: pytest.approx(35.453)}


def test_crystal_from_constant_and_cells():
    desc = read_description(CONSTANT_AND_CELLS)
    assert desc.renderable, (desc.unsupported, desc.missing)
    crystal = desc.molecular.crystal
    assert crystal.cells == (3, 3, 3) and crystal.n_ions == 216
    assert desc.box.hi == pytest.approx((16.92,) * 3) and desc.box.lo == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("text, lacks", [
    (BOX_AND_COUNT.replace("512 ions", "500 ions"), "neither stated nor fixed"),  # 500 = 8 x 62.5: no whole cells
    (BOX_AND_COUNT.replace("512 ions", "520 ions"), "not a cube of cells"),  # 520 = 8 x 65
    (BOX_AND_COUNT.replace("inside a periodic cubic box with edge length of 22.56 A",
                           "inside a periodic box of 22.56 x 22.56 x 28.2 A^3"), "the box is not cubic"),
    (CONSTANT_AND_CELLS.replace("5.64 A", "5.64 A, 220 ions in all"), "a consistent ion count"),
    (BOX_AND_COUNT.replace("arithmetic mixing.", "arithmetic mixing; the sodium epsilon is 0.13 kcal/mol."),
     "stated, not understood"),
])
def test_what_does_not_fix_the_crystal_is_named(text, lacks):
    desc = read_description(text)
    assert not desc.renderable
    assert any(lacks in m for m in desc.missing), desc.missing


def test_stated_pair_coefficients_win_over_the_published_set():
    desc = read_description(BOX_AND_COUNT.replace("arithmetic mixing.", "arithmetic mixing, with pair_coeff 1 1 "
                                                  "0.1301 2.35 and pair_coeff 2 2 0.1 4.4."))
    assert [(k.epsilon, k.sigma) for k in desc.molecular.kinds] == [(0.1301, 2.35), (0.1, 4.4)]
    assert "molecular.lj" not in desc.defaults


@pytest.mark.parametrize("text", [
    "A box of 500 SPC/E water molecules with NaCl (5) in a cubic box of edge 25 A, real units, 10 A cutoff, PPPM, "
    "SHAKE, NVT at 300 K for 100 steps.",  # an aqueous solution: the molecular liquid, not a crystal
    "Na+ and Cl- ions (216 in all) are placed at random in a cubic box of edge 20 A, real units.",  # no crystal
])
def test_other_ion_systems_are_not_read_as_a_crystal(text):
    desc = read_description(text)
    assert desc.molecular is None or desc.molecular.crystal is None


MADELUNG_NACL = 1.747565  # rock salt (e.g. Kittel, Introduction to Solid State Physics, ch. 3)
COULOMB_KCAL = 332.06371  # e^2 / (4 pi eps0 angstrom) in kcal/mol: LAMMPS's qqr2e in real units


def test_rendered_crystal_has_the_rock_salt_madelung_energy(tmp_path: Path):
    """64 ions, 2 x 2 x 2 cells of 5.64 A: at step 0 (the perfect lattice) the Coulomb energy per ion is
    -M e^2 / (4 pi eps0 r0) / 2 with r0 = a/2. Another arrangement of the same ions (a wrong basis, ions on
    the boundary counted twice) gives another energy or another count."""
    text = ("Simulate 64 ions of Na+ and Cl- arranged on a rock-salt lattice in a periodic cubic box from 0 A to "
            "11.28 A, real units. Use lj/cut/coul/long with a 5.5 A cutoff and PPPM with an accuracy of 1e-6. "
            "Velocities at 10 K; then NVE for 2 steps.")
    desc = read_description(text)
    assert desc.renderable, (desc.unsupported, desc.missing)
    log = run_text(render(desc, coulomb=True), tmp_path / "nacl")
    assert "Created 64 atoms" in log and "not charge neutral" not in log.lower()
    lines = log.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == ["Step"] and "E_long" in line)
    row = dict(zip(lines[at].split(), map(float, lines[at + 1].split()), strict=True))
    per_ion = (row["E_coul"] + row["E_long"]) / 64
    madelung = -COULOMB_KCAL * MADELUNG_NACL / (2 * 2.82)
    assert per_ion == pytest.approx(madelung, rel=2e-3)
    # the analysis: the electrostatic energy (k-space part included) is the Madelung energy; LAMMPS's Coulombic
    # energy (thermo ecoul) is the pair style's real-space part alone, far from it
    from tools.lammps.protocols.described import COULOMB, ELECTROSTATIC, UNITS, _coulomb

    rows = [dict(zip(lines[at].split(), map(float, line.split()), strict=True)) for line in lines[at + 1:]
            if line.split() and line.split()[0].isdigit() and len(line.split()) == len(lines[at].split())]
    block = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    whole = _coulomb(ELECTROSTATIC, block, UNITS["real"], "the run", total=False)
    pair = _coulomb(COULOMB, block, UNITS["real"], "the run", total=False)
    assert whole.property == ELECTROSTATIC and whole.value == pytest.approx(madelung, rel=2e-3)
    assert whole.unit == "kcal/mol/atom" and "ecoul + elong" in whole.method
    assert pair.property == COULOMB and abs(pair.value - madelung) > 0.1 * abs(madelung)
    assert f"{whole.value:.6g}" in pair.method  # the sum is named beside LAMMPS's Coulombic energy
    total = _coulomb(ELECTROSTATIC, block, UNITS["real"], "the run", total=True)
    assert total.label == "total" and total.value == pytest.approx(64 * whole.value)
