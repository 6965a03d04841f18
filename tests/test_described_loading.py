"""Reading and rendering of uniaxial loading protocols in described simulations: a deformation with the
other axes' pressure stated, a barostat whose pressure the text leaves out (documented default), a run
length given as a time, the unit system implied by a setfl potential file, and exponents typeset with
braces. Every rule is tested on wordings written for these tests; the dev tasks that prompted them
(112, 113) are read from ../shared/mdgym when it is present, never copied."""

from __future__ import annotations

import pytest
from described_helpers import dev_text

from simagent.backends.expert.numbers import plain_numbers
from simagent.described.reading import read_description
from tools.lammps.described import render

# a compression test of copper, written for these tests
CU_SQUEEZE = ("Copper on an fcc lattice with a lattice parameter of 3.615 angstrom, 6 x 6 x 6 unit cells, periodic "
              "in x, y and z. Forces come from the Cu_mishin1.eam.alloy parameter file. Thermalise the crystal for "
              "5 ps with a timestep of 2 fs in the isothermal-isobaric ensemble at 250 K. Next squeeze the box "
              "along the y axis at an engineering strain rate of -5 x 10^{9} per second, the pressures along x and "
              "z being held at 0 bar, for 3000 steps.")


def test_braced_exponents_are_plain_numbers():
    assert plain_numbers("a rate of 2e{-3} per ps") == "a rate of 2e-3 per ps"
    assert plain_numbers("a rate of -2.5e^{-3}/ps") == "a rate of -2.5e-3/ps"
    assert plain_numbers("3 x 10^{8} per s and 10^{ -4 }") == "3e8 per s and 1e-4"
    assert plain_numbers("set e{3} aside") == "set e{3} aside"  # no number before the exponent: untouched


def test_a_squeeze_with_lateral_pressure_held_reads_and_renders_literally():
    d = read_description(CU_SQUEEZE)
    assert d.renderable, (d.missing, d.unsupported)
    assert d.units == "metal" and d.origin["units"].source == "rules"  # the setfl file's unit system
    assert "cu_mishin1.eam.alloy" in d.origin["units"].evidence
    assert d.potential.file == "Cu_mishin1.eam.alloy" and d.potential.style == "eam/alloy"
    warm, squeeze = d.stages
    assert warm.steps == 2500 and d.origin["run1.steps"].source == "rules"  # 5 ps / 2 fs
    assert (warm.dynamics.ensemble, warm.dynamics.t_stop, warm.dynamics.p_stop) == ("npt", 250.0, 0.0)
    assert d.origin["run1.p_stop"].source == "default"  # no pressure stated for the thermalisation
    assert squeeze.steps == 3000
    assert squeeze.deform.axis == "y" and squeeze.deform.rate == pytest.approx(-5e9 * 1e-12)
    assert (squeeze.dynamics.ensemble, squeeze.dynamics.p_axes, squeeze.dynamics.p_stop) == ("npt", "xz", 0.0)
    assert d.origin["deform2.lateral_pressure"].source == "rules"
    text = render(d)
    assert "fix             dyn1 all npt temp 250 250 0.2 iso 0 0 2" in text
    assert "fix             dyn1 all npt temp 250 250 0.2 x 0 0 2 z 0 0 2" in text  # y is left to fix deform
    assert "fix             deform all deform 1 y erate -0.005 remap x" in text
    assert "pair_coeff * * Cu_mishin1.eam.alloy Cu" in text
    assert text.count("run             2500") == 1 and text.count("run             3000") == 1


@pytest.mark.parametrize("words, axes, pressure", [
    ("stretch the box along x at an engineering strain rate of 1e10 /s while the lateral pressure stays at zero",
     "yz", 0.0),
    ("pull along z at a strain rate of 0.02 /ps with zero transverse pressure", "xy", 0.0),
    ("the crystal is elongated in the x-direction at a strain rate of 1e9 s^-1, keeping the y and z pressures at "
     "1 atm", "yz", 1.01325),
    ("compress along y at a strain rate of 1e9 /s with the pressure on the x and z axes equal to 0", "xz", 0.0),
])
def test_a_pressure_held_on_the_other_axes_is_a_barostat_on_them(words, axes, pressure):
    text = ("Metal units. Nickel fcc lattice, lattice constant 3.52 angstrom, 4 x 4 x 4 unit cells. Ni_u3.eam "
            f"potential. Velocities at 300 K. Hold the crystal at 300 K in the NVT ensemble for 100 steps; then "
            f"{words}, for 200 steps.")
    d = read_description(text)
    assert d.renderable, (d.missing, d.unsupported)
    pull = d.stages[-1]
    assert pull.deform is not None
    # NVT before: the stated lateral pressure adds the barostat (fix npt), the thermostat stays
    assert (pull.dynamics.ensemble, pull.dynamics.p_axes, pull.dynamics.t_stop) == ("npt", axes, 300.0)
    assert pull.dynamics.p_stop == pytest.approx(pressure)


def test_without_a_stated_lateral_pressure_an_nvt_deformation_keeps_its_box_sides():
    text = ("Metal units. Nickel fcc lattice, lattice constant 3.52 angstrom, 4 x 4 x 4 unit cells. Ni_u3.eam "
            "potential. Velocities at 300 K. Hold the crystal at 300 K in the NVT ensemble for 100 steps; then "
            "stretch it along x at a strain rate of 1e10 /s for 200 steps.")
    pull = read_description(text).stages[-1]
    assert (pull.dynamics.ensemble, pull.dynamics.p_axes) == ("nvt", None)


@pytest.mark.parametrize("sentence, steps", [
    ("Equilibrate in the NVT ensemble at 300 K over 0.5 ns.", 500000),
    ("Equilibrate in the NVT ensemble at 300 K for a period of 10 picoseconds.", 10000),
    ("Equilibrate in the NVT ensemble at 300 K for 10 ps (10000 steps).", 10000),  # one run, said twice
    ("Equilibrate in the NVT ensemble at 300 K, the thermostat relaxing the temperature over 0.1 ps, for 400 steps.",
     400),
])
def test_a_run_length_stated_as_a_time(sentence, steps):
    text = ("Metal units, fcc aluminium with lattice constant 4.05 angstrom in 3 x 3 x 3 unit cells, "
            f"Al_zhou.eam.alloy potential, timestep 1 fs. Velocities at 300 K. {sentence}")
    d = read_description(text)
    assert [s.steps for s in d.stages] == [steps], (d.stages, d.missing)


def test_a_time_that_is_no_whole_number_of_steps_is_named():
    text = ("Metal units, fcc aluminium with lattice constant 4.05 angstrom in 3 x 3 x 3 unit cells, "
            "Al_zhou.eam.alloy potential, timestep 2 fs. Velocities at 300 K. Run NVE for 3 fs.")
    d = read_description(text)
    assert not d.renderable and any("3 fs" in m for m in d.missing)


@pytest.mark.parametrize("words, units", [
    ("The atoms interact via the eam/fs pair style with the file Fe_mm.eam.fs.", "metal"),
    ("Interactions: the Ni-Al setfl table NiAl_custom.eam.alloy.", "metal"),
    ("Interactions: Al_zhou.eam.alloy, in real units.", "real"),  # a stated unit system is not overridden
    ("Interactions: the funcfl file Ni_u3.eam.", None),  # not a setfl file: the unit system stays unstated
])
def test_a_setfl_potential_states_metal_units(words, units):
    text = (f"A block of 3 x 3 x 3 fcc unit cells with lattice constant 3.6 angstrom. {words} Velocities at 300 K; "
            "run 100 steps of NVE.")
    d = read_description(text)
    assert d.units == units
    assert ("unit system" in d.missing) == (units is None)


@pytest.mark.parametrize("words, pressure, source", [
    ("at 400 K in the NPT ensemble", 0.0, "default"),
    ("at 400 K and ambient pressure in the NPT ensemble", 1.01325, "rules"),  # 1 atm in bar
    ("at 400 K under atmospheric pressure in the NPT ensemble", 1.01325, "rules"),
    ("in the NPT ensemble at 400 K and one atmosphere", 1.01325, "rules"),
    ("at 400 K and 5 bar in the NPT ensemble", 5.0, "rules"),
])
def test_an_unstated_barostat_pressure_is_a_listed_default(words, pressure, source):
    text = ("Metal units, fcc aluminium with lattice constant 4.05 angstrom in 3 x 3 x 3 unit cells, Al_zhou.eam.alloy "
            f"potential. Velocities at 400 K; equilibrate {words} for 1000 steps.")
    d = read_description(text)
    assert d.renderable, d.missing
    assert d.stages[0].dynamics.p_stop == pytest.approx(pressure)
    assert ("run1.p_stop" in d.origin and d.origin["run1.p_stop"].source == "default") == (source == "default")
    if source == "default":
        assert "run1.p_stop" in d.defaults  # listed in report.md


@pytest.mark.parametrize("task, rate", [("lammps/112_stress_strain_100_plane_Al.json", 0.01),
                                        ("lammps/113_stress_strain_100_compression_Al.json", -0.01)])
def test_the_al_loading_dev_tasks_read_completely(task, rate):
    d = read_description(dev_text(task))
    assert d.renderable, (d.missing, d.unsupported)
    assert d.units == "metal" and d.potential.file == "Al99.eam.alloy"
    equilibrate, load = d.stages
    assert (equilibrate.steps, equilibrate.dynamics.ensemble, equilibrate.dynamics.p_stop) == (20000, "npt", 0.0)
    assert load.steps == 20000 and load.deform.axis == "x" and load.deform.rate == pytest.approx(rate)
    assert (load.dynamics.ensemble, load.dynamics.p_axes, load.dynamics.p_stop) == ("npt", "yz", 0.0)


def test_a_lateral_pressure_beside_a_langevin_thermostat_is_refused_not_replaced():
    """fix nph beside fix langevin is not rendered; the Langevin thermostat is never swapped for Nose-Hoover.
    Without any thermostat the stated pressure is fix nph on the two axes."""
    start = ("Metal units. Nickel fcc lattice, lattice constant 3.52 angstrom, 4 x 4 x 4 unit cells. Ni_u3.eam "
             "potential. Velocities at 300 K. ")
    pull = "then stretch it along x at a strain rate of 1e10 /s with zero lateral pressure, for 200 steps."
    langevin = read_description(start + "Run 100 steps of NVE with a Langevin thermostat at 300 K; " + pull)
    assert not langevin.renderable
    assert any("beside the langevin thermostat" in u for u in langevin.unsupported), langevin.unsupported
    plain = read_description(start + "Run 100 steps of NVE; " + pull)
    assert plain.renderable, (plain.missing, plain.unsupported)
    assert (plain.stages[-1].dynamics.ensemble, plain.stages[-1].dynamics.p_axes) == ("nph", "yz")
    assert "fix             dyn1 all nph y 0 0 1 z 0 0 1" in render(plain)


def test_a_deformation_at_a_zero_strain_rate_is_named_not_rendered():
    """A rate of 0 deforms nothing: a named gap (it once reached the renderer and divided by zero)."""
    text = ("Metal units. Nickel fcc lattice, lattice constant 3.52 angstrom, 4 x 4 x 4 unit cells. Ni_u3.eam "
            "potential. Velocities at 300 K. Hold the crystal at 300 K in the NVT ensemble for 100 steps; then "
            "pull it along x at a strain rate of 0 /ps with zero lateral pressure, for 200 steps.")
    d = read_description(text)
    assert not d.renderable and any("non-zero strain rate" in m for m in d.missing), d.missing
