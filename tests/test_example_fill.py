"""The one way to fill a text's gaps from the LAMMPS example it retells (simagent/described/
example_fill.py): a number agrees at the precision the text states it, every signature number must be
stated and agree, a stated number that differs or that no rule reads stops the fill and is named, a
stated run setting wins and is listed, each filled value is listed with its source. The friction
wordings are ours (numbers of LAMMPS examples/friction, in.friction)."""

from __future__ import annotations

from simagent.described.example_fill import Example, StatedNumbers, agrees
from simagent.described.reading import read_description

TOY = Example(name="LAMMPS examples/toy", signature={"units": "lj", "lattice": ("hex", 0.9), "box": (16.0, 2.828427)},
              optional={"skin": 0.3}, fills={"seed": 4321}, runs={"steps": 20000})


def test_numbers_agree_at_the_precision_the_text_states():
    assert agrees(2.83, 2.828427) and agrees(2.828427, 2.828427) and agrees(16, 16.0)
    assert not agrees(2.9, 2.828427) and not agrees(2, 2.5) and not agrees(1, 1.1)  # rounding, not nearness
    assert agrees(("hex", 0.9), ("hex", 0.9)) and not agrees(("sq", 0.9), ("hex", 0.9))
    assert not agrees((1.0, 2.0), (1.0, 2.0, 3.0)) and not agrees((1.0, 1.0), 1.0)


def test_the_example_fills_only_when_every_signature_number_is_stated_and_agrees():
    from simagent.described.model import SimulationDescription

    desc = SimulationDescription()
    same = TOY.compare({"units": "lj", "lattice": ("hex", 0.9), "box": (16, 2.83), "steps": None}, extra_ok=("steps",))
    fill = TOY.fill(desc, same)
    assert same.identified and fill is not None
    fill.note("velocity.seed", f"{TOY.fills['seed']}")
    assert desc.origin["velocity.seed"].source == "default"
    assert desc.defaults["velocity.seed"].startswith("4321: not stated; LAMMPS examples/toy's, whose setup the text "
                                                     "states (units lj, lattice hex 0.9, box 16 2.83)")
    # a stated run setting wins and is listed; an equal one is not a departure
    assert fill.departures({"steps": 5000}) == {"steps": 5000} and "5000" in desc.origin["example.departures"].evidence
    assert fill.departures({"steps": 20000}) == {}

    absent = TOY.compare({"units": "lj", "lattice": ("hex", 0.9)})
    assert absent.absent == ["box"] and TOY.fill(SimulationDescription(), absent) is None


def test_a_stated_number_that_differs_stops_the_fill_and_is_named():
    from simagent.described.model import SimulationDescription

    desc = SimulationDescription()
    other = TOY.compare({"units": "lj", "lattice": ("hex", 0.9), "box": (16.0, 3.5), "skin": 0.4})
    assert TOY.fill(desc, other) is None
    named = desc.origin["example.toy"].evidence
    assert "box 16 3.5 where LAMMPS examples/toy has 16 2.828427" in named and "skin 0.4" in named
    assert desc.defaults == {}  # nothing filled
    # a setup number the example does not have at all
    extra = TOY.compare({"units": "lj", "lattice": ("hex", 0.9), "box": (16.0, 2.83), "cutoff": 3.0})
    assert not extra.identified and "which LAMMPS examples/toy does not have" in extra.named()
    # a text that is not this example at all gets no note about it
    unrelated = SimulationDescription()
    assert TOY.fill(unrelated, TOY.compare({"units": "metal", "box": (5.0, 5.0)})) is None
    assert "example.toy" not in unrelated.origin


def test_a_number_no_rule_reads_stops_the_fill_and_is_named_missing():
    from simagent.described.model import SimulationDescription

    low = "a hex lattice of 0.9 in a 16 x 2.83 box, lj units, with 7 walls"
    s = StatedNumbers(low)
    lattice = s.take("lattice", r"hex lattice of (\d+(?:\.\d+)?)")
    box = s.take("box", r"(\d+) x (\d+(?:\.\d+)?) box", groups=(1, 2))
    assert s.unread() == ["7"]
    desc = SimulationDescription()
    comparison = TOY.compare({"units": "lj", "lattice": ("hex", lattice), "box": box}, unread=s.unread())
    assert comparison.signature_agrees and not comparison.identified
    assert TOY.fill(desc, comparison) is None
    assert desc.missing == ["what the numbers 7 are (stated, not understood)"]


FRICTION_WORDS = (
    "Two-dimensional LJ solid in reduced units, epsilon = 1, sigma = 1, cut-off radius 2.5, on a hex lattice with "
    "constant 0.9; the box spans x = 0 to 50 and y = 0 to 22. Periodic along x, shrink-wrapped along y. Four types: "
    "slab atoms (type 1), asperity atoms (type 2 & 3), boundary atoms (type 4). The lower slab covers y = 0 to 7 and "
    "the upper slab covers y = 15 to 22; the boundary layers at the bottom (y = 0 to 1.1) and the top (y = 20.9 to "
    "22) are held with zero force. Hemispherical asperities of radius {radius} sit centred at (32, 7, 0) on the lower "
    "slab and (18, 15, 0) on the upper slab. Initial velocities at temperature 0.1 go to the mobile atoms; the upper "
    "slab is driven at a velocity of 1.0 along the x direction. A velocity rescaling thermostat acts on the mobile "
    "atoms at 0.1, only on non-sliding degrees of freedom. NVE, timestep 0.0025, 5000 steps. Friction coefficient: "
    "the total force on the upper slab in the x direction over the normal force in the y direction.")


def test_a_retold_friction_set_up_with_another_asperity_radius_is_named_not_filled():
    """The friction example's signature through the real reader: radius 8 (the example's) fills the seed;
    radius 6 keeps the text's own default seed and report.md names the difference."""
    filled = read_description(FRICTION_WORDS.format(radius=8))
    assert filled.velocity is not None and filled.velocity.seed == 482748
    assert "LAMMPS examples/friction" in filled.defaults["velocity.seed"]
    other = read_description(FRICTION_WORDS.format(radius=6))
    assert other.velocity is not None and other.velocity.seed != 482748
    assert "examples/friction" not in " ".join(other.defaults.values())
    named = other.origin["example.friction"].evidence
    assert named.startswith("not filled from LAMMPS examples/friction") and "spheres 32 7 6 18 15 6 where" in named
