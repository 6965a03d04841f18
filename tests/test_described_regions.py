"""Solids built from regions (simagent/described/region_reading.py, groups.py; tools/lammps/
described_groups.py, described_regions.py): slabs, asperities and held layers of their own types,
groups of regions and types, velocities set on groups, excluded type pairs, and the friction and
tensile-stress measurements. Every reading rule is tested on wordings written here (not the MDGym
task's); the renderings run in real LAMMPS on small systems (seconds)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from described_helpers import run_named as run_lammps

from simagent.described.reading import read_description
from tools.lammps.described import render

# our own wording of a sliding-contact set-up, numbers unlike LAMMPS examples/friction
SLIDING = ("A two-dimensional Lennard-Jones solid in reduced units (epsilon 1, sigma 1, cutoff of 2.5) on a hex "
           "lattice of density 0.9. The box spans x = 0 to 24 and y = 0 to 12, periodic along x and shrink-wrapped "
           "along y. "
           "We use four atom types of mass 1: substrate atoms (type 1), bump atoms (type 2 and 3) and frozen edge "
           "atoms (type 4). The bottom block spans y from 0 to 4 and the top block spans y from 8 to 12; the edge "
           "layers at the bottom (y = 0 to 0.9) and at the top (y = 11.1 to 12) are rigid, their forces zeroed. "
           "Semicircular bumps with a radius of 4 sit centred at (9, 4, 0) on the lower block and (14, 8, 0) on the "
           "upper block. The neighbour list uses a skin of 0.4 and is rebuilt every 10 steps. Thermal velocities "
           "for a temperature of 0.2 are given to the mobile atoms, while the top block is moved at a speed of 0.5 "
           "in the x direction. A velocity-rescaling thermostat keeps the mobile atoms at 0.2, acting only on the "
           "non-sliding velocity components. Use NVE with timestep 0.002 for 400 steps; thermodynamic data are "
           "written every 100 steps. "
           "The friction coefficient is the total force on the upper block along the x axis divided by the "
           "normal force, the force along the y axis.")


def printed(log: str, name: str) -> float:
    return float(re.findall(rf"^{name} (\S+)$", log, flags=re.M)[-1])


def test_a_sliding_contact_is_read_from_our_wording():
    desc = read_description(SLIDING)
    assert desc.renderable, (desc.missing, desc.unsupported)
    layout = desc.layout
    assert layout is not None
    regions = {r.name: r for r in layout.regions}
    assert regions["lower_slab"].bounds == (None, None, 0.0, 4.0, None, None)
    assert regions["upper_slab"].bounds == (None, None, 8.0, 12.0, None, None)
    assert regions["lower_sphere"].center == (9.0, 4.0, 0.0) and regions["lower_sphere"].radius == 4.0
    assert regions["upper_asperity"].members == ["upper_sphere", "upper_beyond"]
    assert [(f.atom_type, f.region) for f in layout.fills] == [
        (1, "lower_slab"), (1, "upper_slab"), (2, "lower_asperity"), (3, "upper_asperity")]
    assert layout.retype == [("lower_fixed", 4), ("upper_fixed", 4)]
    groups = {g.name: g for g in layout.groups}
    assert groups["upper"].types == [3] and groups["mobile"].subtract == ["lower_fixed", "upper_fixed"]
    assert {(f.group, f.force) for f in layout.forces} == {("lower_fixed", (0.0, 0.0, 0.0)),
                                                          ("upper_fixed", (0.0, 0.0, 0.0))}
    assert layout.velocity_group == "mobile" and layout.thermostat_group == "mobile"
    assert layout.temperature_axes == "y"
    assert [(v.group, v.velocity) for v in layout.velocities] == [("upper", (0.5, None, None))]
    assert layout.friction is not None and (layout.friction.body, layout.friction.sliding,
                                            layout.friction.normal) == ("upper", "x", "y")
    assert desc.neighbor_skin == 0.4 and desc.neighbor_every == 10
    # the numbers are not LAMMPS examples/friction's: nothing is filled from it
    assert "examples/friction" not in " ".join(desc.defaults.values())


def test_the_friction_example_fills_only_what_a_text_stating_its_numbers_leaves_out():
    """Our wording of examples/friction's set-up (its numbers): the example's seed, drive added to the
    thermal velocities and rescaling interval/window fill the gaps; each is listed naming the example."""
    text = ("2D LJ solid, reduced units, epsilon = 1, sigma = 1, cut-off radius 2.5, hex lattice with constant 0.9, "
            "box x = 0 to 50 and y = 0 to 22. Periodic in x, shrink-wrapped in y. Four types: slab atoms (type 1), "
            "asperity atoms (type 2 & 3), boundary atoms (type 4). The lower slab spans y = 0 to 7, the upper slab "
            "spans y = 15 to 22, and the boundary layers at the bottom (y = 0 to 1.1) and the top (y = 20.9 to 22) "
            "are fixed with zero force. Hemispherical asperities of radius 8 are centred at (32, 7, 0) on the lower "
            "slab and (18, 15, 0) on the upper slab. Initial velocities at temperature 0.1 are assigned to the "
            "mobile atoms; the upper slab is driven at a velocity of 1.0 along the x direction. A velocity "
            "rescaling thermostat acts on the mobile atoms at 0.1, only on non-sliding degrees of freedom. NVE, "
            "timestep 0.0025, 5000 steps. Friction coefficient: the total force on the upper slab in the x "
            "direction over the normal force in the y direction.")
    desc = read_description(text)
    assert desc.renderable, (desc.missing, desc.unsupported)
    assert desc.velocity is not None and desc.velocity.seed == 482748
    dyn = desc.stages[0].dynamics
    assert dyn is not None and (dyn.rescale_every, dyn.rescale_window) == (200, 0.02)
    assert desc.layout is not None and desc.layout.velocities[0].add
    assert desc.stages[0].steps == 5000  # the stated run length, not the example's 20000
    assert "LAMMPS examples/friction" in desc.defaults["velocity.seed"]


def test_a_built_solid_runs_with_its_types_and_held_layers(tmp_path):
    """LAMMPS builds the parts without overlapping atoms, the held upper layer keeps the drive (its
    forces are zero), the lower one stays still, and the friction force (compute group/group) equals
    the total force on the upper block counted independently: fix setforce's record of the held
    layer's force before zeroing plus the sum over the rest of the block (Newton's third law)."""
    desc = read_description(SLIDING)
    text = render(desc, friction=True)
    assert "create_atoms    2 region lower_asperity" in text and "neigh_modify    every 10" in text
    checks = ["group           upper_rest subtract upper upper_fixed",
              "compute         fsum upper_rest reduce sum fx fy",
              "variable        fx equal c_friction[1]-(c_fsum[1]+f_force2[1])",
              "variable        fy equal c_friction[2]-(c_fsum[2]+f_force2[2])",
              "variable        fn equal abs(c_friction[2])",
              "thermo_style    custom step v_fx v_fy v_fn"]
    assert "thermo          100\n" in text
    text = text.replace("thermo          100\n", "\n".join(checks) + "\nthermo          100\n")
    text += "\n".join([
        'print "VUP $(vcm(upper_fixed,x))"', 'print "VLO $(vcm(lower_fixed,x))"',
        "group           t2 type 2", "group           t4 type 4",
        'print "N2 $(count(t2))"', 'print "N4 $(count(t4))"']) + "\n"
    log = run_lammps(text, tmp_path, "built")
    spacing = (2 / (0.9 * np.sqrt(3))) ** 0.5  # hex lattice of reduced density 0.9: 2 atoms per a x sqrt(3) a
    assert printed(log, "VUP") == pytest.approx(0.5 * spacing, rel=1e-9)  # 0.5 in lattice units (velocity default)
    assert printed(log, "VLO") == pytest.approx(0.0, abs=1e-9)
    assert printed(log, "N2") > 0 and printed(log, "N4") > 0
    rows = [line.split() for line in re.findall(r"^\s+\d+ +\S+ +\S+ +\S+\s*$", log, flags=re.M)]
    values = np.array([[float(v) for v in row] for row in rows])
    assert values.shape[0] >= 4 and np.isfinite(values).all()  # no two atoms made on one site
    assert values[:, 3].max() > 1e-3  # the blocks do touch (a normal force)
    np.testing.assert_allclose(values[:, 1:3], 0.0, atol=1e-6 * max(1.0, values[:, 3].max()))


CRACKED = ("We pull apart a 2D Lennard-Jones sheet (epsilon 1.0, sigma 1.0, cut off at 2.5) to watch a crack grow. "
           "The atoms sit on a hex lattice with lattice constant 0.93; the boundaries are shrink-wrapped in x and "
           "y and periodic in z. There are five atom types of equal mass: bulk atoms (type 1), crack-flank atoms "
           "(type 2 & 3) and boundary atoms (type 4 & 5). A pre-crack is cut on the left by giving the two flanks "
           "types 2 and 3 and excluding interactions between them (exclude type 2 3). The sample starts at a low "
           "temperature; the top boundary is pulled upward, a linear velocity ramp spans the mobile atoms and the "
           "bottom boundary cannot move vertically. Integrate with an energy-conserving ensemble, timestep 0.003, "
           "for 2000 timesteps.")


def test_the_crack_example_fills_a_text_stating_its_setup():
    desc = read_description(CRACKED)
    assert desc.renderable, (desc.missing, desc.unsupported)
    assert desc.box is not None and desc.box.hi[:2] == (100.0, 40.0)
    assert desc.velocity is not None and (desc.velocity.temperature, desc.velocity.seed) == (0.01, 887723)
    layout = desc.layout
    assert layout is not None and layout.excluded_pairs == [(2, 3)]
    assert [(r.component, r.v_hi, r.lo, r.hi) for r in layout.ramps] == [("y", 0.02, 1.25, 38.75)]
    assert desc.stages[0].dynamics is not None and desc.stages[0].dynamics.ensemble == "nve"
    assert desc.stages[0].steps == 2000
    assert "LAMMPS examples/crack" in desc.defaults["box"]


def test_a_crack_text_with_its_own_numbers_is_not_filled_from_the_example():
    """A lattice of another density: not examples/crack; the box and temperature stay missing (named)."""
    desc = read_description(CRACKED.replace("0.93", "0.85"))
    assert not desc.renderable
    assert "box size" in desc.missing and "the initial temperature" in desc.missing


@pytest.mark.parametrize("words, pair", [
    ("interactions between types 2 and 3 are excluded", (2, 3)),
    ("the pair list excludes type 1 and type 4 pairs", (1, 4)),
    ("exclude type 3 5 from the neighbor list", (3, 5)),
])
def test_excluded_type_pairs_in_our_words(words, pair):
    from simagent.described.model import SimulationDescription
    from simagent.described.region_reading import read_exclusions

    desc = SimulationDescription()
    read_exclusions(desc, words)
    assert desc.layout is not None and desc.layout.excluded_pairs == [pair]


@pytest.mark.parametrize("words, skin, every", [
    ("a neighbor skin of 0.5 sigma, with the list rebuilt every 2 steps", 0.5, 2),
    ("neighbour list: skin distance 0.3, updated every ten timesteps", 0.3, None),
    ("neighbor lists use 0.25 skin and are checked every five steps", 0.25, 5),
])
def test_neighbor_settings_in_our_words(words, skin, every):
    from simagent.described.model import SimulationDescription
    from simagent.described.region_reading import read_neighbor

    desc = SimulationDescription()
    read_neighbor(desc, words)
    assert desc.neighbor_skin == skin and desc.neighbor_every == every


@pytest.mark.parametrize("metric, prop", [
    ("Average_Tensile_Stress", "tensile_stress"), ("mean tensile stress (reduced)", "tensile_stress"),
    ("coefficient_of_friction", "friction_coefficient"), ("Friction-Coefficient", "friction_coefficient"),
    ("peak tensile stress", "ultimate_stress"),
])
def test_metric_names(metric, prop):
    from simagent.solve import read_metric

    assert read_metric(metric, "", True).property == prop


def test_a_pulled_crack_runs_and_the_excluded_pair_weakens_it(tmp_path):
    """A small cracked sheet pulled apart: the top boundary keeps its imposed vy, the bottom stays, the
    tensile stress (-Pyy) grows as the sheet stretches, and with the crack's pair excluded the sheet
    carries less stress at the same stretch than the intact one."""
    desc = read_description(CRACKED)
    assert desc.box is not None and desc.layout is not None
    desc.box = desc.box.model_copy(update={"hi": (30.0, 16.0, 0.25)})  # a small sheet: seconds
    ramp = desc.layout.ramps[0]
    bottom, top = 1.25, 14.75
    desc.layout.ramps[0] = ramp.model_copy(update={"lo": bottom, "hi": top})
    for r in desc.layout.regions:
        if r.name == "upper_region":
            r.bounds = (None, None, top, None, None, None)
        elif r.name.startswith("crack_"):
            r.bounds = tuple({20.0: 8.0}.get(b, b) if b is not None else None for b in r.bounds)  # type: ignore
    desc.stages[0].steps = 1500
    y_spacing = np.sqrt(3) * (2 / (0.93 * np.sqrt(3))) ** 0.5  # hex lattice of reduced density 0.93
    stress = {}
    for name, exclude in (("cracked", True), ("intact", False)):
        text = render(desc, tensile="y")
        if not exclude:
            text = text.replace("neigh_modify    exclude type 2 3\n", "")
        text += 'print "VTOP $(vcm(upper,y))"\nprint "VBOT $(vcm(lower,y))"\n'
        log = run_lammps(text, tmp_path, name)
        assert printed(log, "VTOP") == pytest.approx(0.02 * y_spacing, rel=1e-9)  # lattice units (y: sqrt(3) a)
        assert printed(log, "VBOT") == pytest.approx(0.0, abs=1e-9)
        header = re.search(r"^\s*Step .*$", log, flags=re.M).group(0).split()  # type: ignore[union-attr]
        rows = [line.split() for line in log.splitlines() if re.match(r"\s+\d+ ", line)
                and len(line.split()) == len(header)]
        pyy = np.array([float(r[header.index("Pyy")]) for r in rows])
        stress[name] = -pyy
        assert -pyy[-20:].mean() > -pyy[:20].mean() + 0.05  # stretched: the tensile stress grows
    assert stress["cracked"][-1] < stress["intact"][-1]


@pytest.mark.parametrize("words, z", [
    ("a box from x = 0 to 10 and y = 0 to 5, and in the z direction from -0.4 to 0.4", (-0.4, 0.4)),
    ("the cell spans x=0 to 8, y=0 to 8 and along the z-axis from -1 to 1", (-1.0, 1.0)),
])
def test_a_z_extent_named_by_its_direction(words, z):
    from simagent.described.reading import _axes, normalise

    extents = _axes(normalise(words))
    assert extents is not None and (extents[0][2], extents[1][2]) == z


def test_the_friction_ratio_and_its_warning_when_no_normal_load_is_resolved():
    """abs(<F_t> / <F_n>) over the interval means (the step-0 row left out); an unresolved normal
    force (mean within two standard errors of zero) is said with the number."""
    from tools.lammps.described_regions import friction_coefficient

    desc = read_description(SLIDING)
    rng = np.random.default_rng(7)
    n = 64
    tangential = np.concatenate([[0.0], -2.0 + 0.1 * rng.standard_normal(n)])
    loaded = np.concatenate([[0.0], 4.0 + 0.1 * rng.standard_normal(n)])
    unloaded = np.concatenate([[0.0], 3.0 * rng.standard_normal(n)])
    block = {"f_friction[1]": tangential, "f_friction[2]": loaded}
    result = friction_coefficient(block, desc, "j", "stage 1")
    assert result.value == pytest.approx(abs(tangential[1:].mean() / loaded[1:].mean()))
    assert result.value == pytest.approx(0.5, rel=0.02) and not result.warnings
    result = friction_coefficient({**block, "f_friction[2]": unloaded}, desc, "j", "stage 1")
    assert result.warnings and "within two standard errors of zero" in result.warnings[0]


def test_a_sliding_contact_in_other_words():
    """Extents as inequalities and brackets, types named after their number, a bump on each block."""
    text = ("Reduced LJ units in 2D: epsilon = 1, sigma = 1, cutoff 2.5; hex lattice, density 0.85; box x = 0 to 30, "
            "y = 0 to 16; boundaries periodic in x and shrink-wrapped in y. Type 1 for the block atoms, types 2 and "
            "3 are the bump atoms, type 4 marks the boundary atoms. The bottom block occupies 0 <= y <= 5 and the "
            "top block y in [11, 16]. The boundary atoms at the bottom (0 < y < 1) and the top (15 < y < 16) are "
            "frozen: zero force on them. Hemispherical bumps of radius 5 are placed with centres (8, 5, 0) on the "
            "lower block and (22, 11, 0) on the upper block. Velocities for temperature 0.05 are drawn for the "
            "mobile atoms; the top block is pulled with a velocity of 0.2 along the x axis. NVE, timestep 0.005, "
            "1000 steps.")
    desc = read_description(text)
    assert desc.renderable, (desc.missing, desc.unsupported)
    layout = desc.layout
    assert layout is not None
    regions = {r.name: r for r in layout.regions}
    assert regions["lower_slab"].bounds == (None, None, 0.0, 5.0, None, None)
    assert regions["upper_slab"].bounds == (None, None, 11.0, 16.0, None, None)
    assert regions["upper_fixed_region"].bounds == (None, None, 15.0, 16.0, None, None)
    assert regions["upper_sphere"].center == (22.0, 11.0, 0.0)
    assert [(f.atom_type, f.region) for f in layout.fills][2:] == [(2, "lower_asperity"), (3, "upper_asperity")]
    assert layout.retype == [("lower_fixed", 4), ("upper_fixed", 4)]
    assert layout.velocity_group == "mobile"
    assert [(v.group, v.velocity) for v in layout.velocities] == [("upper", (0.2, None, None))]
    assert layout.thermostat_group is None and layout.friction is None  # neither is stated


def test_a_layer_between_two_bounds_is_not_everything_below_the_upper_one():
    """'the top wall (9 < y < 10)': a block from 9 to 10 (it was read as y < 10, nearly every atom)."""
    from simagent.described.group_reading import _layers
    from simagent.described.groups import Layout
    from simagent.described.model import SimulationDescription

    layout = Layout()
    assert _layers(layout, "the top wall (9 < y < 10) and the bottom wall (y < 1) are held fixed",
                   SimulationDescription())
    bounds = {g.name: next(r.bounds for r in layout.regions if r.name == g.region) for g in layout.groups}
    assert bounds == {"upper": (None, None, 9.0, 10.0, None, None), "lower": (None, None, None, 1.0, None, None)}


def test_a_driven_nve_run_is_not_judged_by_energy_conservation():
    """The crack's top boundary moves at an imposed velocity (setforce on a group given a velocity): the
    boundary does work, so the total energy changes physically; the drift gate does not call that an
    integration error (which would halve a prescribed timestep). A held layer at rest is no drive."""
    from simagent import gates
    from tools.lammps.check import Fix
    from tools.lammps.handlers import driving_fix

    text = render(read_description(CRACKED), tensile="y")
    fixes = [Fix(id=line.split()[1], group=line.split()[2], style=line.split()[3], args=line.split()[4:], line=n)
             for n, line in enumerate(text.splitlines()) if line.startswith("fix ")]
    assert driving_fix(fixes, text).startswith("fix setforce on group")
    assert driving_fix(fixes, text.replace("velocity        upper set", "# ")) == ""
    drift = {"total_energy": np.linspace(-3.25, -3.24, 50), "temperature": np.full(50, 0.01)}
    data = gates.RunData(engine="lammps", ensemble="nve", per_atom=True, series=drift)
    assert gates.energy_drift_gate(data).outcome == gates.Outcome.FAIL
    data.driven = driving_fix(fixes, text)
    assert gates.energy_drift_gate(data).outcome == gates.Outcome.PASS
