"""Water + ethanol (+ ions) in a described simulation (simagent.described.ethanol): the OPLS-AA model checked
against GROMACS's own OPLS-AA files, the stated atom types matched to the models' sites by their LJ values,
the 1-4 scaling, ion counts, a per-step displacement cap in prose, molecule files the text names and a real
run of the template. The texts are paraphrases written for these tests."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest
from described_helpers import run_inputs

from simagent.described import ethanol
from simagent.described.reading import read_description
from simagent.solve import MDGymTask, missing_files
from tools.lammps import described_molecular
from tools.lammps.described import render

OPLS_GROMACS = Path("/usr/share/gromacs/top/oplsaa.ff")
KJ = 4.184

# numbered water first, then the alcohol's six sites, the ions last, in a ';' list one 'pair_coeff' opens
MIXTURE = ("We study a dilute brine-alcohol solution in real units. The periodic cubic box runs from 0 to 26 A along "
           "every axis and holds 90 TIP4P/2005 water molecules, 30 ethanol molecules (OPLS-AA all-atom force field) "
           "and 4 Na+ and 4 Cl- ions, 548 atoms in all. Per-type LJ parameters are pair_coeff 1 1 0.1852 3.1589; 2 2 "
           "0.0 0.0; 3 3 0.066 3.5; 4 4 0.17 3.12; 5 5 0.03 2.5; 6 6 0.0 0.0; 7 7 0.066 3.5; 8 8 0.03 2.5; 9 9 0.13 "
           "2.35; 10 10 0.1 4.4. Lennard-Jones and Coulomb act within a 9 A cutoff, with lj/cut/tip4p/long and the "
           "long-range part by PPPM, arithmetic mixing, and the 1-4 pairs are not scaled. Bond lengths are held by "
           "SHAKE. All molecules are placed randomly in the box, no two atoms closer than 1.8 A. We first run NVE "
           "with a Berendsen thermostat at 310 K for 30 steps, atoms moving at most 0.05 A per timestep, then NPT at "
           "310 K and 1 atm for 30 steps.")


def _rb_to_opls(c: list[float]) -> tuple[float, float, float, float]:
    """GROMACS Ryckaert-Bellemans C0..C5 (kJ/mol, polymer convention) -> OPLS V1..V4 (kcal/mol)."""
    v3, v4 = -c[3] / 2, -c[4] / 4
    return ((3 * v3 - 2 * c[1]) / KJ, (4 * v4 - c[2]) / KJ, v3 / KJ, v4 / KJ)


@pytest.mark.skipif(not OPLS_GROMACS.is_dir(), reason="GROMACS's oplsaa.ff is not installed")
def test_the_model_is_gromacs_opls_aa():
    """Every number of the model against GROMACS's OPLS-AA distribution (kJ/mol, nm, its own functional forms)."""
    nonbonded = (OPLS_GROMACS / "ffnonbonded.itp").read_text()
    bonded = (OPLS_GROMACS / "ffbonded.itp").read_text()

    def atom(name: str) -> tuple[float, float, float]:
        f = re.search(rf"^\s*{name}\s.*$", nonbonded, flags=re.M).group(0).split()
        return float(f[4]), float(f[6]) * 10, float(f[7]) / KJ  # charge, sigma A, epsilon kcal/mol

    for site, opls in (("C_ch3", "opls_135"), ("H_ch3", "opls_140"), ("C_ch2", "opls_157"), ("H_ch2", "opls_140"),
                       ("O_oh", "opls_154"), ("H_oh", "opls_155")):
        cls, charge = ethanol.SITES[site]
        _, _, eps, sigma = ethanol.CLASSES[cls]
        assert (charge, sigma, eps) == pytest.approx(atom(opls), abs=2e-4)

    def terms(n: int, kind: int) -> dict[tuple[str, ...], list[float]]:
        out = {}
        for line in bonded.splitlines():
            f = line.split(";")[0].split()
            if len(f) > n and f[n] == str(kind) and all(x in ("CT", "HC", "OH", "HO") for x in f[:n]):
                out.setdefault(tuple(f[:n]), [float(x) for x in f[n + 1:]])
                out.setdefault(tuple(reversed(f[:n])), [float(x) for x in f[n + 1:]])
        return out

    bonds, angles, dihedrals = terms(2, 1), terms(3, 1), terms(4, 3)
    for key, (k, r0) in ethanol.BONDS.items():  # GROMACS 1/2 kb (r - b0)^2 in kJ/mol/nm^2
        b0, kb = bonds[key]
        assert (k, r0) == pytest.approx((kb / 2 / KJ / 100, b0 * 10), rel=1e-3)
    for key, (k, theta) in ethanol.ANGLES.items():
        th0, kth = angles[key]
        assert (k, theta) == pytest.approx((kth / 2 / KJ, th0), rel=1e-3)
    for key, v in ethanol.DIHEDRALS.items():
        assert v == pytest.approx(_rb_to_opls(dihedrals[key]), abs=1e-3)


def test_the_template_geometry_and_topology():
    xyz = np.array(ethanol.coordinates())
    for a, b in ethanol.BOND_LIST:
        assert np.linalg.norm(xyz[a - 1] - xyz[b - 1]) == pytest.approx(ethanol.BONDS[ethanol.bond_key(a, b)][1])
    assert sum(ethanol.SITES[s][1] for s in ethanol.ATOMS) == pytest.approx(0.0, abs=1e-12)
    assert len(ethanol.angles()) == 13 and len(ethanol.dihedrals()) == 12
    assert min(np.linalg.norm(p - q) for p, q in itertools.combinations(xyz, 2)) > 0.9


def test_the_mixture_is_read_with_the_stated_numbering():
    desc = read_description(MIXTURE)
    assert desc.renderable, (desc.unsupported, desc.missing)
    m = desc.molecular
    assert m is not None and m.ethanol is not None and m.ethanol.one_four == 1.0
    assert [(s.template, s.count) for s in m.species] == [("water", 90), ("na", 4), ("cl", 4), ("ethanol", 30)]
    roles = {k.label: k.type for k in m.kinds}
    assert (roles["O"], roles["H"], roles["Na"], roles["Cl"], roles["O_oh"]) == (1, 2, 9, 10, 4)
    assert {roles["C_ch3"], roles["C_ch2"]} == {3, 7} and {roles["H_ch3"], roles["H_ch2"]} == {5, 8}
    assert roles["H_oh"] == 6
    assert m.overlap == 1.8 and not m.prepare
    assert [s.dynamics.limit for s in desc.stages] == [0.05, None]


def test_the_rendered_force_field():
    desc = read_description(MIXTURE)
    text = render(desc)
    assert "pair_style      lj/cut/tip4p/long 1 2 1 1 0.1546 9" in text
    assert "dihedral_style  opls" in text and "dihedral_coeff  3 -0.356 -0.174 0.492 0  # CT-CT-OH-HO" in text
    assert "special_bonds   lj 0.0 0.0 1 coul 0.0 0.0 1" in text
    assert "bond_coeff      3 268 1.529  # CT-CT" in text
    assert "fix             shake all shake 0.0001 20 0 b 1 2 5 a 1" in text  # water, C-H, O-H
    assert "fix             dyn1 all nve/limit 0.05" in text
    assert "molecule        ethanol ethanol.mol" in text
    with_opls = read_description(MIXTURE.replace("1-4 pairs are not scaled", "Coulomb is summed"))
    assert with_opls.molecular.ethanol.one_four == 0.5 and "molecular.one_four" in with_opls.defaults


@pytest.mark.parametrize("change, why", [
    ("(OPLS-AA all-atom force field)", "ethanol force field"),  # no model named
    ("(TraPPE united-atom model)", "trappe"),  # another model: refused by name
])
def test_ethanol_without_opls_is_not_rendered(change, why):
    desc = read_description(MIXTURE.replace("(OPLS-AA all-atom force field)", change if "TraPPE" in change else ""))
    assert not desc.renderable
    assert any(why in r for r in desc.unsupported + desc.missing), (desc.unsupported, desc.missing)


def test_a_stated_type_matching_no_site_is_missing():
    desc = read_description(MIXTURE.replace("3 3 0.066 3.5", "3 3 0.3 1.2"))
    assert not desc.renderable and any("which stated type" in m for m in desc.missing)


@pytest.mark.parametrize("words, factor", [
    ("the 1-4 pairs are not scaled", 1.0),
    ("1-4 interactions are scaled by 0.5", 0.5),
    ("with a 1-4 weighting factor of 0.8333", 0.8333),
    ("with full 1-4 interactions", 1.0),
    ("bonded neighbours are excluded", None),  # negative: nothing about 1-4
    ("the 14 A cutoff is scaled by 2", None),  # negative: not a 1-4 pair
])
def test_one_four_scaling(words, factor):
    found = ethanol.one_four(words.lower())
    assert (found[0] if found else None) == factor


@pytest.mark.parametrize("words, count", [
    ("200 ethanol molecules", 200), ("ethanol molecules (64)", 64), ("12 flexible ethanol molecules", 12),
    ("an ethanol mole fraction of 0.2", None),  # negative
])
def test_ethanol_count(words, count):
    found = ethanol.ethanol_count(words)
    assert (found[0] if found else None) == count


@pytest.mark.parametrize("sentence, limit", [
    ("We run NVE for 100 steps with a displacement limit of 0.1 A per timestep.", 0.1),
    ("NVE dynamics for 100 steps, limiting the atomic displacement to 0.2 A each step.", 0.2),
    ("NVE for 100 steps with the maximum displacement per step set to 0.05 A.", 0.05),
    ("An NVE run of 100 steps in which atoms move at most 0.3 A per time step.", 0.3),
    ("An NVE run of 100 steps with a 0.1 A displacement of the top layer.", None),  # negative: no cap
    ("An NVE run of 100 steps; each step the box is displaced by 0.1 A.", None),  # negative
])
def test_per_step_displacement_cap(sentence, limit):
    text = ("Argon in real units: an fcc lattice with a lattice constant of 5.26 A, a 4x4x4 box, LJ epsilon 0.238 "
            "kcal/mol and sigma 3.4 A, cutoff 8.5 A. Velocities at 90 K. " + sentence)
    desc = read_description(text)
    assert desc.stages and desc.stages[0].dynamics is not None
    assert desc.stages[0].dynamics.limit == limit


def test_the_cap_is_not_read_in_a_thermostatted_ensemble():
    desc = read_description(MIXTURE.replace("We first run NVE with a Berendsen thermostat at 310 K",
                                            "We first run NVT at 310 K"))
    assert desc.stages[0].dynamics.limit is None


@pytest.mark.parametrize("words, atoms, each", [
    ("and 20 each of Na+ and Cl- ions,", 580, (20, 20)),
    ("and 6 sodium ions and 6 chloride ions,", 552, (6, 6)),
    ("and 6 Na+ and 5 Cl- ions,", 551, None),  # negative: not a neutral salt
])
def test_ion_counts(words, atoms, each):
    desc = read_description(MIXTURE.replace("and 4 Na+ and 4 Cl- ions, 548", f"{words} {atoms}"))
    if each is None:
        assert any("neutral salt" in m for m in desc.missing)
        return
    counts = {s.template: s.count for s in desc.molecular.species}
    assert (counts["na"], counts["cl"]) == each


@pytest.mark.parametrize("words, overlap", [
    ("with an overlap check of 1.4-2.1 A", 2.1),  # a range: its larger end satisfies both
    ("with an overlap check of 1.7 A", 1.7),
    ("with an overlap check", 1.6),  # negative: no distance stated, the listed default
    ("checking overlaps in 2 passes", 1.6),  # negative: a number that is no distance
])
def test_overlap_distance(words, overlap):
    desc = read_description(MIXTURE.replace("no two atoms closer than 1.8 A", words))
    assert desc.molecular.overlap == overlap


def test_named_molecule_files_are_written_from_the_cited_models(tmp_path: Path):
    named = MIXTURE.replace("All molecules are placed randomly", "All molecules are placed randomly from the "
                            "templates h2o-tip4p.mol and etoh-opls.mol")
    desc = read_description(named)
    assert desc.molecular.files == {"water": "h2o-tip4p.mol", "ethanol": "etoh-opls.mol"}
    assert set(described_molecular.files(desc)) == {"h2o-tip4p.mol", "etoh-opls.mol", "na.mol", "cl.mol"}
    assert "molecular.file.ethanol" in desc.defaults
    task = MDGymTask(id="t", problem_description=named, metrics=["average_temperature"], engine="lammps")
    assert missing_files(task, []) == []
    other = MDGymTask(id="t", problem_description=named.replace("etoh-opls.mol", "solute.mol"),
                      metrics=["average_temperature"], engine="lammps")
    assert missing_files(other, []) == ["solute.mol"]  # names none of the species: a file simagent lacks
    supplied = tmp_path / "etoh-opls.mol"
    supplied.write_text("# a user's template\n")
    (why,) = missing_files(task, [supplied.name], [supplied])
    assert why.startswith("etoh-opls.mol (supplied, but simagent writes")


def _dihedral(p: np.ndarray) -> float:
    b0, b1, b2 = p[0] - p[1], p[2] - p[1], p[3] - p[2]
    b1 = b1 / np.linalg.norm(b1)
    v, w = b0 - b0 @ b1 * b1, b2 - b2 @ b1 * b1
    return math.atan2(np.cross(b1, v) @ w, v @ w)


def test_lammps_energy_of_one_template_matches_the_model(tmp_path: Path):
    """One molecule from the rendered template (no pairs), its atoms moved off equilibrium at random: LAMMPS's
    bond, angle and torsion energies equal the OPLS-AA formulas evaluated here on the same coordinates."""
    desc = read_description(MIXTURE)
    m = desc.molecular
    files = described_molecular.files(desc)
    lines = [x for x in described_molecular.interaction_lines(desc) if x.split()[0] in (
        "bond_style", "bond_coeff", "angle_style", "angle_coeff", "dihedral_style", "dihedral_coeff")]
    box = described_molecular.system_lines(desc)[5].split(" box ", 1)[1]  # the create_box counts
    text = "\n".join(["units real", "atom_style full", "boundary f f f", "region box block -10 10 -10 10 -10 10",
                      f"create_box {len(m.kinds)} box {box}"] + [f"mass {k.type} {k.mass}" for k in m.kinds]
                     + ["molecule eth ethanol.mol", "create_atoms 0 single 0 0 0 mol eth 1 rotate 0 0 0 1 units box",
                        "pair_style zero 5.0", "pair_coeff * *", *lines,
                        "thermo_style custom step ebond eangle edihed", "run 0"]) + "\n"
    xyz = np.array(ethanol.coordinates()) + np.random.default_rng(7).normal(0.0, 0.08, (9, 3))  # off equilibrium
    head, tail = files["ethanol.mol"].split("Coords\n\n")
    template = head + "Coords\n\n" + "".join(f"{i + 1} {x:.8f} {y:.8f} {z:.8f}\n" for i, (x, y, z) in enumerate(xyz))
    template += "\nTypes" + tail.split("\nTypes", 1)[1]
    log = (run_inputs({"in.lammps": text, "ethanol.mol": template}, tmp_path) / "log.lammps").read_text()
    row = log.split("E_dihed")[1].split("\n")[1].split()
    ebond, eangle, edihed = (float(x) for x in row[1:4])
    bond_e = sum(ethanol.BONDS[ethanol.bond_key(a, b)][0] * (np.linalg.norm(xyz[a - 1] - xyz[b - 1])
                                                             - ethanol.BONDS[ethanol.bond_key(a, b)][1]) ** 2
                 for a, b in ethanol.BOND_LIST)
    angle_e = 0.0
    for t in ethanol.angles():
        k, theta0 = ethanol.ANGLES[ethanol.angle_key(t)]
        u, v = xyz[t[0] - 1] - xyz[t[1] - 1], xyz[t[2] - 1] - xyz[t[1] - 1]
        angle_e += k * (math.acos(u @ v / np.linalg.norm(u) / np.linalg.norm(v)) - math.radians(theta0)) ** 2
    dihedral_e = 0.0
    for t in ethanol.dihedrals():
        k1, k2, k3, k4 = ethanol.DIHEDRALS[ethanol.dihedral_key(t)]
        phi = _dihedral(xyz[[i - 1 for i in t]])
        dihedral_e += 0.5 * (k1 * (1 + math.cos(phi)) + k2 * (1 - math.cos(2 * phi)) + k3 * (1 + math.cos(3 * phi))
                             + k4 * (1 - math.cos(4 * phi)))
    assert ebond == pytest.approx(bond_e, rel=1e-4) and ebond > 1.0
    assert eangle == pytest.approx(angle_e, rel=1e-4) and eangle > 0.1
    assert edihed == pytest.approx(dihedral_e, rel=1e-4) and edihed > 0.01


def test_small_mixture_runs(tmp_path: Path):
    """The whole rendered input on a small box: every molecule placed, SHAKE's clusters as planned, finite energies."""
    desc = read_description(MIXTURE)
    inputs = {"in.lammps": render(desc), **described_molecular.files(desc)}
    log = (run_inputs(inputs, tmp_path) / "log.lammps").read_text()
    assert "Created 270 atoms" in log and "Created 270 atoms" in log  # 90 waters and 30 ethanols
    assert re.search(r"30 = # of size 4 clusters", log) and re.search(r"90 = # of frozen angles", log)
    last = log.split("Loop time")[-2].strip().splitlines()[-1].split()
    assert all(math.isfinite(float(x)) for x in last) and int(last[-1]) == 548


@pytest.mark.parametrize("atoms, where, words", [
    (548, None, None),
    (560, "unsupported", "the rest of the stated 560 atoms"),  # more atoms than the molecules: others unread
    (12, "missing", "a consistent system size (the stated molecules make 548 atoms"),  # fewer: contradictory
])
def test_the_stated_total_of_atoms(atoms, where, words):
    desc = read_description(MIXTURE.replace("548 atoms in all", f"{atoms} atoms in all"))
    if where is None:
        assert desc.renderable
        return
    assert not desc.renderable and any(words in r for r in getattr(desc, where)), (desc.unsupported, desc.missing)


# one water and one alcohol, the pair style without an M site named (written for these tests)
PAIR = ("In real units, a periodic cubic box from 0 to 40 A along every axis holds 1 TIP4P/2005 water molecule "
        "and 1 ethanol molecule (OPLS-AA), 12 atoms in all. Van der Waals and electrostatics use pair style "
        "lj/cut/coul/long with a 10 A cutoff and a PPPM mesh for the long-range part. Both molecules are put in "
        "the middle of the box. Then an NVT run at 280 K lasts 200 steps.")


def test_a_four_site_water_under_lj_cut_coul_long_gets_an_explicit_m_site():
    desc = read_description(PAIR)
    assert desc.renderable, (desc.unsupported, desc.missing)
    m = desc.molecular
    assert m.explicit_m and m.pair_style == "lj/cut/coul/long" and m.kspace == "pppm" and m.rigid == ["water"]
    kinds = {k.label: k for k in m.kinds}
    assert kinds["O"].charge == 0.0 and kinds["M"].charge == pytest.approx(-2 * 0.5564)
    assert (kinds["M"].epsilon, kinds["M"].sigma) == (0.0, 0.0) and kinds["M"].mass < 0.01
    text = render(desc)
    assert "pair_style      lj/cut/coul/long 10" in text and "kspace_style    pppm 0.0001" in text
    assert "tip4p" not in text.split("# stage 1")[0].replace("tip4p/2005", "")
    assert "rigid/nvt/small molecule temp 280 280" in text and "fix             shake" not in text
    water = described_molecular.files(desc)["water.mol"]
    assert "4 atoms" in water and "3 2 1 4" in water  # the O-M bond (type 2) excludes the M site's pairs


@pytest.mark.parametrize("style, outcome", [
    ("lj/cut/tip4p/long", "implicit"),  # the tip4p style carries the M site itself, as before
    ("lj/cut/coul/cut", "lj/cut/coul/cut"),  # refused by name: no M site and no explicit rendering for it
    ("lj/charmm/coul/long", "lj/charmm/coul/long"),
])
def test_the_named_pair_style_decides_how_the_m_site_is_carried(style, outcome):
    desc = read_description(PAIR.replace("lj/cut/coul/long", style) + " Bonds are held by SHAKE.")
    if outcome == "implicit":
        assert desc.renderable and not desc.molecular.explicit_m and desc.molecular.kspace == "pppm/tip4p"
        return
    assert not desc.renderable and any(outcome in u and "4-site" in u for u in desc.unsupported), desc.unsupported


def test_a_tip4p_style_with_a_three_site_water_is_refused():
    desc = read_description(PAIR.replace("TIP4P/2005", "TIP3P").replace("lj/cut/coul/long", "lj/cut/tip4p/long")
                            + " Bonds are held by SHAKE.")
    assert not desc.renderable and any("3-site tip3p" in u for u in desc.unsupported), desc.unsupported
    plain = read_description(PAIR.replace("TIP4P/2005", "TIP3P") + " Bonds are held by SHAKE.")
    assert plain.renderable and not plain.molecular.explicit_m and plain.molecular.pair_style == "lj/cut/coul/long"


@pytest.mark.parametrize("sentence, centred", [
    ("Both molecules are put in the middle of the box.", True),
    ("The water and the alcohol molecules start positioned near the box center.", True),
    ("We place the two molecules at the centre of the periodic cell before the run.", True),
    ("The molecules are inserted at random; the box centre is the origin of the frame.", False),  # random
    ("The molecules are placed inside a sphere of 5 A at the centre of the box.", False),  # a region: not read
    ("The centre of mass momentum of the molecules is removed.", False),  # no placement
])
def test_a_start_at_the_box_centre(sentence, centred):
    desc = read_description(PAIR.replace("Both molecules are put in the middle of the box.", sentence))
    assert bool(desc.molecular.centred) == centred
    if centred:
        assert desc.renderable and not desc.molecular.prepare and desc.placements == []
        assert "molecular.centre_row" in desc.defaults


def test_the_centre_row_in_lammps_keeps_the_molecules_apart(tmp_path: Path):
    """The rendered start, run for 0 steps: the two molecules straddle the box centre, no two atoms of different
    molecules are closer than the largest sigma (3.5 A, CT), and the water's M site sits 0.1546 A from its O."""
    desc = read_description(PAIR)
    dump = "run 0\nwrite_dump all custom atoms.dump id mol type x y z modify sort id"
    text = re.sub(r"run\s+200", dump, render(desc))
    folder = run_inputs({"in.lammps": text, **described_molecular.files(desc)}, tmp_path)
    rows = (folder / "atoms.dump").read_text().split("ITEM: ATOMS id mol type x y z\n")[1].split("\n")
    atoms = np.array([[float(v) for v in r.split()] for r in rows if r.strip()])
    assert len(atoms) == 13  # 3 water atoms, the M site, 9 ethanol atoms
    water, alcohol = atoms[atoms[:, 1] == 1][:, 3:], atoms[atoms[:, 1] == 2][:, 3:]
    closest = min(np.linalg.norm(p - q) for p in water for q in alcohol)
    assert closest >= 3.5
    assert water[:, 0].mean() < 20.0 < alcohol[:, 0].mean() and closest < 8.0  # near the centre (20, 20, 20)
    assert np.linalg.norm(water[3] - water[0]) == pytest.approx(0.1546, abs=1e-5)


def test_a_centre_start_that_does_not_fit_is_missing():
    desc = read_description(PAIR.replace("1 TIP4P/2005 water molecule and 1 ethanol molecule",
                                         "30 TIP4P/2005 water molecules and 30 ethanol molecules").replace(
        "12 atoms in all", "360 atoms in all"))
    assert not desc.renderable and any("do not fit in one row" in m for m in desc.missing), desc.missing


@pytest.mark.parametrize("total, reading", [
    ("2 atoms in all", "molecules"),  # 1 + 1 molecules: the total counts molecules, the counts win
    ("12 atoms in all", "atoms"),  # consistent
    ("5 atoms in all", "missing"),  # neither the atoms (12) nor the molecules (2): contradictory
])
def test_a_total_that_counts_molecules(total, reading):
    desc = read_description(PAIR.replace("12 atoms in all", total))
    if reading == "missing":
        assert not desc.renderable and any("not their number of molecules, 2" in m for m in desc.missing)
        return
    assert desc.renderable and [s.count for s in desc.molecular.species] == [1, 1]
    assert ("molecular.stated_total" in desc.defaults) == (reading == "molecules")
    assert desc.stated_atoms == (None if reading == "molecules" else 12)


def test_a_total_that_counts_molecules_in_a_larger_mixture():
    desc = read_description(MIXTURE.replace("548 atoms in all", "128 atoms in all"))  # 90 + 30 + 4 + 4 molecules
    assert desc.renderable and "128 atoms" in desc.defaults["molecular.stated_total"]


def _water_dimer_data(sites: list[tuple[float, float, float]], types: list[int], charges: list[float],
                      explicit: bool) -> str:
    """Two waters from one template (the second turned 90 degrees about z and 60 about x, 2.9 A away), as a LAMMPS
    data file: with the M site (explicit) or without it, its charge then on the oxygen (LAMMPS's tip4p styles)."""
    turn_z = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    c, s = math.cos(math.radians(60)), math.sin(math.radians(60))
    turn_x = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    xyz = np.array(sites if explicit else sites[:3])
    q = list(charges) if explicit else [charges[3], charges[1], charges[2]]
    molecules = [xyz + [15.0, 15.0, 15.0], xyz @ (turn_x @ turn_z).T + [15.0, 17.9, 15.3]]
    n = len(xyz)
    atoms = [f"{m * n + i + 1} {m + 1} {types[i]} {q[i]:.10g} {x:.8f} {y:.8f} {z:.8f}"
             for m, mol in enumerate(molecules) for i, (x, y, z) in enumerate(mol)]
    bonds = [(1, 1, 2), (1, 1, 3)] + [(2, 1, 4)] * explicit
    angles = [(1, 2, 1, 3)] + [(2, 2, 1, 4), (2, 3, 1, 4)] * explicit
    kinds = 3 if explicit else 2
    lines = ["water dimer", "", f"{2 * n} atoms", f"{2 * len(bonds)} bonds", f"{2 * len(angles)} angles",
             f"{kinds} atom types", f"{1 + explicit} bond types", f"{1 + explicit} angle types", "",
             "0 30 xlo xhi", "0 30 ylo yhi", "0 30 zlo zhi", "", "Masses", "", "1 15.9994", "2 1.008"]
    lines += ["3 0.001"] * explicit + ["", "Atoms # full", "", *atoms, "", "Bonds", ""]
    lines += [f"{m * len(bonds) + k + 1} {t} {m * n + a} {m * n + b}" for m in range(2)
              for k, (t, a, b) in enumerate(bonds)]
    lines += ["", "Angles", ""] + [f"{m * len(angles) + k + 1} {t} {m * n + a} {m * n + b} {m * n + c}"
                                   for m in range(2) for k, (t, a, b, c) in enumerate(angles)]
    return "\n".join(lines) + "\n"


def test_the_explicit_m_site_gives_lammps_own_tip4p_energy(tmp_path: Path):
    """The explicit 4-site water the reading builds (types, charges, template from the rendered water.mol) under
    lj/cut/coul/long + pppm gives the same LJ and electrostatic energy of a water dimer as LAMMPS's own TIP4P styles
    (lj/cut/tip4p/long + pppm/tip4p, the M site implicit) on the same O and H positions."""
    desc = read_description(PAIR)
    m = desc.molecular  # the tip4p styles place M from the O-H length and H-O-H angle of bond and angle type 1
    water = described_molecular.files(desc)["water.mol"]
    sites = [tuple(float(v) for v in row.split()[1:]) for row in
             water.split("Coords\n\n")[1].split("\n\n")[0].splitlines()]
    types = [int(row.split()[1]) for row in water.split("Types\n\n")[1].split("\n\n")[0].splitlines()]
    charges = [float(row.split()[1]) for row in water.split("Charges\n\n")[1].split("\n\n")[0].splitlines()]
    assert len(sites) == 4 and charges[0] == 0.0
    lj = [line for line in described_molecular.interaction_lines(desc) if line.startswith("pair_coeff      1 1")]
    energies = {}
    for explicit in (True, False):
        style = ("pair_style lj/cut/coul/long 10\nkspace_style pppm 1e-6" if explicit else
                 "pair_style lj/cut/tip4p/long 1 2 1 1 0.1546 10\nkspace_style pppm/tip4p 1e-6")
        text = "\n".join(["units real", "atom_style full", "boundary p p p", "read_data dimer.data",
                          style.split("\n")[0], "pair_coeff * * 0 0", lj[0], "bond_style zero",
                          f"bond_coeff * {m.water.bond}", "angle_style zero", f"angle_coeff * {m.water.angle}",
                          style.split("\n")[1],
                          "thermo_style custom step evdwl ecoul elong", "run 0"]) + "\n"
        folder = run_inputs({"in.lammps": text, "dimer.data": _water_dimer_data(sites, types, charges, explicit)},
                            tmp_path / str(explicit))
        row = (folder / "log.lammps").read_text().split("E_long")[1].split("\n")[1].split()
        energies[explicit] = (float(row[1]), float(row[2]) + float(row[3]))
    assert energies[True][0] == pytest.approx(energies[False][0], rel=1e-9) and energies[True][0] > 0.01
    assert energies[True][1] == pytest.approx(energies[False][1], abs=2e-3)
    assert abs(energies[True][1]) > 0.3  # a real electrostatic interaction (-0.45 kcal/mol), not zero against zero
