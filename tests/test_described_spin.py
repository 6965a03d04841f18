"""Spin-lattice dynamics (simagent/described/spin.py, tools/lammps/described_spin.py): a text retelling
LAMMPS examples/SPIN/bfo or examples/SPIN/dipole_spin gets the example's unstated coefficients through
example_fill, each listed; a stated number that differs from the example's stops the fill and is
named. Every reading rule is tested on wordings written here and on the MDGym dev tasks' own texts
(skipped when absent). The real runs are tens of steps and check physical outcomes: the spin norm
stays at the stated magnitude, a random spin state has a net moment of order sqrt(N) mu, an aligned
one N mu, and a spin bath at 0 K with transverse damping lowers the magnetic energy."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from described_helpers import dev_text, run_inputs

from simagent.described.reading import read_description
from simagent.models import PropertyRequest, TaskSpec
from simagent.solve import read_metric
from tools.lammps.described import render
from tools.lammps.parse import read_output
from tools.lammps.protocols.described import DescribedRun

# our own wordings of the two examples' setups (not the dev tasks' sentences)
OURS_BFO = ("In metal units, place magnetic atoms on a simple cubic lattice (lattice parameter 3.96 Å) filling a "
            "34 x 34 x 5 block of cells; the boundaries are periodic along x and y and non-periodic along z. Every "
            "site carries a classical spin of 2.5 μB with a randomly chosen initial orientation. The spins couple "
            "through three overlaid magnetic terms: a Heisenberg exchange with a cutoff of 6.0 Å and an exchange "
            "constant of -0.01575 eV (antiferromagnetic), a magnetoelectric term with cutoff 4.5 and a "
            "Dzyaloshinskii-Moriya (DMI) term with cutoff 4.5. Keep the lattice frozen and integrate only the spins "
            "with fix nve/spin, with a uniaxial anisotropy along the z axis from a precession fix and a Langevin spin "
            "bath in the temperature range of 0.0-0.1. Use a timestep of 0.0002 ps and run 5000 steps. Report the "
            "average total magnetization in μB and the average magnetic energy in eV.")
OURS_IRON = ("Iron atoms sit on a body-centred cubic (bcc) lattice with lattice constant 2.8665 Å in metal units, in a "
             "12 x 12 x 12 cell box, periodic in all three directions, atomic mass 55.845. Each atom starts with a "
             "magnetic moment of 2.2 μB pointing along the -x direction. Atoms interact through an embedded-atom "
             "potential (Mishin 2006) overlaid with Heisenberg exchange between spins (cutoff 3.4) and long-range "
             "magnetic dipole interactions (cutoff 8.0) summed with Ewald (ewald/dipole/spin) to an accuracy of 1e-4. "
             "Draw initial velocities at 100 K from a Gaussian distribution. Spins precess with a cubic anisotropy and "
             "are coupled to a Langevin spin bath at 0 K, the lattice moving with the spins under fix nve/spin. Use a "
             "0.1 fs timestep and run for 1000 steps.")


def _body(desc) -> list[str]:
    return [line for line in render(desc).splitlines() if not line.startswith("#")]


def test_our_wording_and_the_dev_task_read_to_the_same_bfo_spin_lattice():
    ours, dev = read_description(OURS_BFO), read_description(dev_text("lammps_3/84_spin.json"))
    for desc in (ours, dev):
        assert desc.renderable, (desc.missing, desc.unsupported)
        sp = desc.spin
        assert (sp.magnitude, sp.orientation, sp.lattice_moving) == (2.5, "random", False)
        assert [(p.style, p.cutoff) for p in sp.pairs] == [("spin/exchange", 6.0), ("spin/magelec", 4.5),
                                                            ("spin/dmi", 4.5)]
        assert sp.pairs[0].coeffs[:2] == (6.0, -0.01575)  # R_c and the stated exchange parameter a
        assert (sp.bath_temperature, sp.damping) == (0.0, 0.1) and sp.precession.anisotropy[1:] == (0.0, 0.0, 1.0)
        assert desc.boundary == ("p", "p", "f") and desc.atom_style == "spin" and desc.timestep == 0.0002
        assert desc.lattice.style == "sc" and desc.box.hi == (34.0, 34.0, 5.0) and desc.velocity is None
        assert [s.steps for s in desc.stages] == [5000]
        for key in ("spin.magelec", "spin.dmi", "spin.precession", "spin.seed", "boundary.nonperiodic", "masses"):
            assert "examples/SPIN/bfo" in desc.defaults[key], key
        assert "5000 are run" in desc.origin["example.departures"].evidence  # the example runs 500
        assert "transverse damping" in desc.origin["spin.bath"].evidence  # the 'range' is the example's T and damping
    assert _body(ours) == _body(dev)


def test_our_wording_and_the_dev_task_read_to_the_same_iron_dipole_lattice():
    ours, dev = read_description(OURS_IRON), read_description(dev_text("lammps/85_dipole_spin.json"))
    for desc in (ours, dev):
        assert desc.renderable, (desc.missing, desc.unsupported)
        sp = desc.spin
        assert (sp.magnitude, sp.orientation, sp.direction, sp.lattice_moving) == (2.2, "aligned", (-1.0, 0.0, 0.0),
                                                                                  True)
        assert sp.eam_file == "Fe_Mishin2006.eam.alloy" and sp.kspace == ("ewald/dipole/spin", 1e-4)
        assert [p.style for p in sp.pairs] == ["spin/exchange", "spin/dipole/long"] and sp.pairs[0].coeffs[0] == 3.4
        assert sp.precession.cubic[:2] == (0.001, 0.0005) and sp.bath_temperature == 0.0
        assert desc.velocity.temperature == 100.0 and desc.velocity.distribution == "gaussian"
        assert desc.masses == {1: 55.845} and desc.boundary == ("p", "p", "p") and math.isclose(desc.timestep, 1e-4)
        assert [s.steps for s in desc.stages] == [1000]
        assert "in.spin.iron_dipole_ewald" in desc.defaults["spin.exchange"]
    assert _body(ours) == _body(dev)
    text = render(ours)
    assert text.index("fix             spin_prec") < text.index("langevin/spin") < text.index("nve/spin lattice moving")
    assert "pair_style      hybrid/overlay eam/alloy spin/exchange 3.5 spin/dipole/long 8" in text


def test_a_stated_number_that_differs_from_the_example_is_named_and_nothing_is_filled():
    desc = read_description(OURS_BFO.replace("a cutoff of 6.0", "a cutoff of 5.0"))
    assert desc.spin is None and not desc.renderable
    assert "exchange_cutoff 5 where LAMMPS examples/SPIN/bfo (in.spin.bfo) has 6" in \
        desc.origin["example.spin_bfo"].evidence
    iron = read_description(OURS_IRON.replace("2.2 μB", "2.0 μB"))
    assert iron.spin is None and "magnitude 2 where" in iron.origin["example.spin_dipole_spin"].evidence


def test_a_number_no_rule_reads_stops_the_fill():
    desc = read_description(OURS_BFO.replace("Report", "Dump the spins every 100 steps. Report"))
    assert desc.spin is None and any("100" in m for m in desc.missing)


def test_a_dipole_text_names_its_solver_or_gets_no_example():
    pppm = read_description(OURS_IRON.replace("Ewald (ewald/dipole/spin)", "a PPPM solver"))
    assert pppm.spin is not None and pppm.spin.kspace[0] == "pppm/dipole/spin"
    none = read_description(OURS_IRON.replace(" summed with Ewald (ewald/dipole/spin) to an accuracy of 1e-4", ""))
    assert none.spin is None and not none.renderable


@pytest.mark.parametrize(("name", "prop", "label", "unit"), [
    ("average_total_magnetization", "magnetization", None, "muB"),
    ("Mean magnetization per atom (mu_B)", "magnetization", "per_atom", "muB"),
    ("normalized magnetization", "magnetization", "normalized", None),
    ("average_total_magnetic_energy", "magnetic_energy", None, "eV"),
    ("magnetic energy per atom (eV)", "magnetic_energy", "per_atom", "eV"),
    ("spin temperature", "spin_temperature", None, None),
])
def test_magnetic_metric_names(name, prop, label, unit):
    text = "Compute the average of total magnetization in μB and total magnetic energy in eV of a spin lattice."
    target = read_metric(name, text if "average" in name else "")
    assert (target.property, target.label, target.unit) == (prop, label, unit)


def _run(desc, tmp_path, properties, probe: bool = True):
    """The described protocol's job on `desc`, run; with `probe`, the averaged stage also prints the
    smallest and largest spin norm (compute property/atom sp), which the analysis ignores."""
    spec = TaskSpec(request="spin lattice", engine="lammps", properties=[PropertyRequest(name=p) for p in properties],
                    described=desc.model_dump(mode="json"))
    protocol = DescribedRun()
    assert protocol.applies_to(spec)
    params, _ = protocol.parameters(spec)
    job = protocol.jobs(params)[0]
    text = job.inputs["in.lammps"]
    if probe:
        text = text.replace("thermo_style    custom step temp pe ke etotal press vol density atoms v_spin_mx",
                            "compute         spn all property/atom sp\ncompute         spmin all reduce min c_spn\n"
                            "compute         spmax all reduce max c_spn\nthermo_style    custom step temp pe ke etotal "
                            "press vol density atoms c_spmin c_spmax v_spin_mx")
    folder = run_inputs({**job.inputs, "in.lammps": text}, tmp_path / "described")
    results = protocol.analyze(params, {"described": folder}, spec)
    return {(r.property, r.label): r for r in results}, read_output(folder).runs[-1]


def test_a_short_bfo_run_keeps_the_spin_norms_and_damps_the_magnetic_energy(tmp_path):
    desc = read_description(OURS_BFO.replace("run 5000 steps", "run 40 steps"))
    assert desc.stages[0].steps == 40
    desc.thermo_every = 10
    results, block = _run(desc, tmp_path, ["magnetization", "magnetic_energy"])
    n = 34 * 34 * 5  # simple cubic cells, one site each; z = 5 is the fixed boundary, not a plane of sites
    assert np.all(block["Atoms"] == n)
    assert np.allclose(block["c_spmin"], 2.5) and np.allclose(block["c_spmax"], 2.5)  # nve/spin keeps |s| = mu
    total = results[("magnetization", None)]
    assert total.unit == "muB" and 0 < total.value < n * 2.5
    assert 0.2 < total.value / (2.5 * math.sqrt(n)) < 3  # random orientations: a net moment of order sqrt(N) mu
    assert math.isclose(results[("magnetization", "per_atom")].value * n, total.value, rel_tol=1e-9)
    emag = block["v_spin_emag"]
    assert emag[-1] < emag[0] < 0  # a 0 K bath with transverse damping 0.1 takes energy out of the spins
    assert results[("magnetic_energy", None)].unit == "eV"


def test_a_short_iron_run_keeps_aligned_spins_aligned(tmp_path):
    desc = read_description(OURS_IRON.replace("run for 1000 steps", "run for 20 steps"))
    desc.box = desc.box.model_copy(update={"hi": (4.0, 4.0, 4.0)})  # 128 atoms: seconds, not minutes
    desc.thermo_every = 5
    results, block = _run(desc, tmp_path, ["magnetization", "magnetic_energy"])
    n = 2 * 4**3
    assert np.all(block["Atoms"] == n)
    assert np.allclose(block["c_spmin"], 2.2) and np.allclose(block["c_spmax"], 2.2)
    assert math.isclose(block["v_spin_mx"][0], -1.0, abs_tol=1e-12)  # every spin along -x at the start
    assert math.isclose(results[("magnetization", None)].value, n * 2.2, rel_tol=1e-3)  # 0 K bath: they stay
    assert 50 < block["Temp"][0] < 150  # the lattice moves: velocities drawn at 100 K
    assert results[("magnetic_energy", None)].value < 0  # ferromagnetic exchange (J > 0) of parallel spins


def test_the_rendered_bfo_input_sets_the_map_before_the_box():
    text = render(read_description(OURS_BFO))
    assert text.index("atom_modify     map array") < text.index("create_box")
    assert re.search(r"set +group all spin/atom/random 11 2.5\n", text)
    assert "fix             spin_bath all langevin/spin 0 0.1 21" in text and " nve\n" not in text


def test_a_magnetic_metric_without_a_spin_lattice_is_named_and_the_others_stay():
    from simagent.solve import _spin_targets

    liquid = read_description("Liquid argon in LJ units: fcc lattice at reduced density 0.8442, 10 x 10 x 10 cells, "
                              "LJ cutoff 2.5, velocities at 1.44, NVE for 1000 steps.")
    targets = [read_metric(m, "") for m in ("average_magnetization", "average_temperature")]
    _spin_targets(liquid, targets)
    assert targets[0].property is None and "states no spin lattice" in targets[0].reason
    assert targets[1].property == "temperature"
    spin = [read_metric("average_magnetization", "")]
    _spin_targets(read_description(OURS_BFO), spin)
    assert spin[0].property == "magnetization"


OURS_NICKEL = ("Nickel atoms sit on an fcc lattice with a lattice constant of 3.524 Å in a periodic 5 x 5 x 5 cell "
               "box, metal units; each atom has mass 58.69 and a spin of 0.63 μB with a random orientation. The atoms "
               "interact through an EAM potential overlaid with an exchange interaction between spins with cutoff "
               "4.0. Velocities are created at 100 K from a Gaussian distribution; a Langevin spin bath at 0 K acts on "
               "the spins, and fix nve/spin integrates spins and atoms together (lattice moving). Use a timestep of "
               "0.1 fs and run 2000 steps.")
OURS_COBALT = ("Cobalt atoms are arranged on a hexagonal close-packed (hcp) lattice with lattice constant 2.5071 Å, "
               "5 x 5 x 5 cells, periodic in all directions, metal units, mass 58.93. Every atom carries a 1.72 μB "
               "spin with random initial orientation. Interactions: an embedded-atom potential by Purja Pun (2012) "
               "plus a spin exchange term with a cutoff of 4.0 Å. A uniaxial anisotropy of 0.01 eV along z acts on "
               "the spins through a precession fix; the spin bath (Langevin) is at 0 K. Velocities start at 100 K "
               "(Gaussian). Lattice moving; a timestep of 0.1 fs; run 1000 steps.")


def test_eam_exchange_examples_are_told_apart_by_their_numbers():
    nickel, cobalt = read_description(OURS_NICKEL), read_description(OURS_COBALT)
    for desc in (nickel, cobalt):
        assert desc.renderable, (desc.missing, desc.unsupported)
        assert desc.dimension == 3 and desc.boundary == ("p", "p", "p") and desc.spin.lattice_moving
    assert nickel.spin.eam_file == "Ni99.eam.alloy" and nickel.spin.example_folder == "SPIN/nickel"
    assert nickel.spin.pairs[0].coeffs == (4.0, 0.50, 0.2280246862, 1.229983475) and not nickel.spin.pairs[0].offset
    assert "2000 are run" in nickel.origin["example.departures"].evidence  # the example runs 1000
    assert cobalt.lattice.style == "hcp" and cobalt.spin.eam_file == "Co_PurjaPun_2012.eam.alloy"
    assert cobalt.spin.pairs[0].offset and cobalt.spin.precession.anisotropy == (0.01, 0.0, 0.0, 1.0)
    assert "offset yes" in render(cobalt)
    other = read_description(OURS_NICKEL.replace("0.63 μB", "0.6 μB"))  # cobalt_fcc's lattice is not 3.524 either
    assert other.spin is None and "magnitude 0.6 where LAMMPS examples/SPIN/nickel" in \
        other.origin["example.spin_nickel"].evidence


def test_a_short_hcp_cobalt_run_keeps_its_spin_norms(tmp_path):
    desc = read_description(OURS_COBALT.replace("run 1000 steps", "run 20 steps"))
    desc.thermo_every = 5
    results, block = _run(desc, tmp_path, ["magnetization", "magnetic_energy"])
    n = 4 * 5**3  # LAMMPS's hcp cell holds 4 atoms
    assert np.all(block["Atoms"] == n)
    assert np.allclose(block["c_spmin"], 1.72) and np.allclose(block["c_spmax"], 1.72)
    assert 0 < results[("magnetization", None)].value < n * 1.72
    assert 50 < block["Temp"][0] < 150
