"""Request -> answer for every protocol with the engine replaced by a recorded real run
(tests/replay.py explains the fixture and how to re-record). Milliseconds per protocol instead of
engine minutes; the real-engine physics tests stay in the protocols' own test files.

Every expectation is computed here from the recorded output with our own small readers (not the
protocol's), so a test fails when the analysis, the gates or the response change what they report.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from replay import ReplayCase, job_params, printed, recording, replay_request, thermo_blocks, value

from simagent.protocols import PRECEDENCE

# tests/test_described.py's three-stage description, run literally by lammps/described
DESCRIBED = ("We work in reduced (LJ) units. Particles sit on a simple cubic lattice at a number density of 0.7, in a "
             "box of 6 lattice cells per side, periodic boundary conditions in all directions. They interact through a "
             "Lennard-Jones potential, epsilon = 1.0, sigma = 1.0, truncated at 3.0. Velocities are drawn at a "
             "temperature of 2.0 with random seed 4321. The equations of motion are integrated in the NVE ensemble: "
             "200 steps to settle and then a sampling run of 400 steps.")
NO_VASP = "VASP is licensed software and not installed here; no VASP run can be recorded"

CASES: dict[str, ReplayCase] = {c.protocol: c for c in [
    ReplayCase("lammps/crystal_relax", "Lattice constant and cohesive energy of fcc nickel"),
    ReplayCase("lammps/fluid_md", "Pressure and potential energy of a Lennard-Jones fluid at T* = 0.85 and rho* = 0.86",
               {"cells": [4, 4, 4], "melt_steps": 500, "equilibration_steps": 1000, "production_steps": 4000}),
    ReplayCase("lammps/tensile_test", "Young's modulus of aluminium from a tensile test at 10 K",
               {"repetitions": (3, 3, 3), "strain_rate_per_s": 2e9, "equilibration_steps": 500, "average_steps": 500,
                "samples_per_point": 5}),
    ReplayCase("lammps/elastic_constants", "Elastic constants of fcc aluminium"),
    ReplayCase("lammps/point_defects", "Vacancy formation energy of fcc copper"),
    ReplayCase("lammps/planar_defects", "Stacking fault energy of fcc copper"),
    ReplayCase("lammps/thermal_expansion", "Thermal expansion coefficient of copper at 300 K",
               {"temperatures": [200.0, 400.0], "repetitions": (3, 3, 3), "equilibration_steps": 500,
                "production_steps": 2000}),
    ReplayCase("lammps/minimize", "Minimized energy of fcc copper"),
    ReplayCase("lammps/melting_point", "What is the melting temperature of copper with the Mishin EAM potential?",
               {"repetitions": (3, 3, 9), "solid_steps": 500, "melt_steps": 1500, "liquid_steps": 500,
                "production_steps": 2500}),
    ReplayCase("lammps/shear_viscosity", "Shear viscosity of a Lennard-Jones fluid at T* = 0.722 and rho* = 0.8442",
               {"cells": (4, 4, 4), "production_steps": 20000}),
    ReplayCase("lammps/thermal_conductivity",
               "Thermal conductivity of a Lennard-Jones fluid at T* = 0.722 and rho* = 0.8442",
               {"production_steps": 21000}),
    ReplayCase("lammps/chain_conformation",
               "Radius of gyration and end-to-end distance of a Kremer-Grest melt of chains of 10 beads at T* = 1 "
               "and rho* = 0.85", {"n_chains": 20, "equilibration_steps": 2000, "production_steps": 5000}),
    ReplayCase("lammps/energy_components", "Energy components of a Kremer-Grest polymer melt with chains of 10 beads",
               {"n_chains": 20}),
    ReplayCase("lammps/framework_guest_md",
               "Self-diffusion coefficient of CH4 in IRMOF-1 at 300 K with 8 molecules per unit cell",
               {"equilibration_steps": 2000, "production_steps": 8000}),
    ReplayCase("lammps/framework_eos", "bulk modulus of IRMOF-1"),
    ReplayCase("lammps/described", DESCRIBED + " Report the average temperature and potential energy per atom.",
               select=True),
    ReplayCase("gromacs/liquid_md", "Density of SPC/E water at 300 K and 1 bar with GROMACS",
               {"n_molecules": 216, "em_steps": 500, "nvt_steps": 1000, "npt_steps": 2000, "production_steps": 5000}),
    ReplayCase("zeopp/pore_geometry", "Pore limiting diameter and largest cavity diameter of IRMOF-1"),
    ReplayCase("raspa/gcmc_uptake", "Methane uptake in IRMOF-1 at 298 K and 35 bar",
               {"initialization_cycles": 200, "production_cycles": 500, "helium_cycles": 200}),
    ReplayCase("raspa/gcmc_mixture", "CO2/CH4 selectivity of an equimolar mixture in IRMOF-1 at 298 K and 1 bar",
               {"initialization_cycles": 200, "production_cycles": 500, "helium_cycles": 200}),
    ReplayCase("raspa/widom", "Henry coefficient of CO2 in IRMOF-1 at 298 K",
               {"production_cycles": 500, "helium_cycles": 200}),
    ReplayCase("qe/eos", "Lattice constant and bulk modulus of silicon with DFT",
               {"cutoffs_Ry": [30.0], "kpts": (4, 4, 4), "strains": [0.98, 0.99, 1.0, 1.01, 1.02]}),
    ReplayCase("qe/band_gap", "Band gap of silicon with PBE", {"cutoffs_Ry": [30.0], "kpts": (4, 4, 4)}),
    # DFT on a 57-atom MOF cell does not fit this machine: the request is refused before any run
    ReplayCase("qe/guest_binding", "Binding energy of CO2 in Mg-MOF-74 with DFT", answered=False),
    ReplayCase("mlp/crystal", "Lattice constant of copper with CHGNet"),
    ReplayCase("mlp/guest_binding", "Binding energy of CO2 in Mg-MOF-74 with CHGNet",
               {"placements": 5, "relaxations": 1, "max_steps": 50}),
    # one moving image (climbing, at the saddle of the symmetric hop) keeps the recorded NEB to a minute
    ReplayCase("mlp/vacancy", "Vacancy migration barrier of copper with CHGNet", {"images": 1, "fmax": 0.1}),
    # a DFT NEB on the 31-atom cell does not fit this machine: the request is refused before any run
    ReplayCase("qe/vacancy_migration", "Vacancy migration barrier of copper with DFT", answered=False),
    ReplayCase("vasp/relax", "Lattice constant of silicon from DFT with VASP", settings={"vasp_command": "true"},
               inputs_only=NO_VASP, answered=False),
    ReplayCase("vasp/band_gap", "What is the band gap of bulk silicon from DFT with VASP?",
               settings={"vasp_command": "true"}, inputs_only=NO_VASP, answered=False),
    ReplayCase("lammps/trappe_alkane", "Density of liquid n-butane at 273 K and 1 atm",
               {"n_molecules": 40, "cutoff": 9.0, "pushoff_steps": 300, "relax_steps": 300,
                "equilibration_steps": 500, "production_steps": 2000}),
]}


# Each recorded case's check: the numbers of the answer recomputed from the recorded output.
CHECKS: dict = {}


def check(protocol: str):
    def register(function):
        CHECKS[protocol] = function
        return function
    return register


# Protocols whose recording is not in the repository yet (each stays listed here until it is).
PENDING = frozenset({
    "lammps/tensile_test", "lammps/thermal_expansion", "lammps/melting_point",
    "lammps/shear_viscosity", "lammps/thermal_conductivity", "lammps/chain_conformation", "lammps/energy_components",
    "lammps/framework_guest_md", "lammps/framework_eos", "lammps/described", "gromacs/liquid_md",
    "zeopp/pore_geometry",
    "raspa/gcmc_uptake", "raspa/gcmc_mixture", "raspa/widom", "qe/eos", "qe/band_gap", "qe/guest_binding",
    "mlp/crystal", "mlp/guest_binding", "vasp/relax", "vasp/band_gap",
})


def test_every_protocol_in_precedence_has_a_replay_case():
    """A new protocol fails here until it has a recorded replay case and a check of its numbers."""
    missing = [name for name in PRECEDENCE if name not in CASES and name not in PENDING]
    assert not missing, (f"protocols without a replay case in tests/test_replay.py: {', '.join(missing)}; "
                         "add a ReplayCase, record it (tests/replay.py) and add its check to CHECKS")
    recorded = set(CASES) - PENDING
    assert all(CASES[name].folder.is_dir() for name in recorded), "a listed case has no recording"
    assert recorded == set(CHECKS), "every recorded case has its check (CHECKS)"


@pytest.mark.parametrize("name", [name for name in CASES if recording() or name not in PENDING])
def test_request_is_answered_from_the_recorded_run(name, settings, monkeypatch):
    """The graph answers every property the request names, each number with a unit and provenance:
    the job it came from is one the plan ran (here: replayed) in this thread's folder; then the
    protocol's own check recomputes the numbers from the recorded output."""
    replayed = replay_request(CASES[name], settings, monkeypatch)
    answer = replayed.answer
    if not CASES[name].answered:  # a documented refusal or an inputs-only case: never a number
        assert answer.status == "failed" and not answer.answers and answer.error, answer
        CHECKS[name](replayed)
        return
    assert answer.status == "answered", answer.error
    assert answer.answers and all(r.unit for r in answer.answers)
    for result in answer.answers:
        assert result.job in replayed.job_dirs, (result.job, list(replayed.job_dirs))
        assert replayed.job_dirs[result.job].resolve().is_relative_to(Path(settings.workdir).resolve())
        assert result.method, result
    CHECKS[name](replayed)


def check_provenance(replayed, result, job_suffix: str) -> None:
    assert result.job.endswith(job_suffix), result.job
    assert replayed.answer.status == "answered", replayed.answer.error
    assert any(d.endswith(result.job) for d in replayed.answer.jobs), (result.job, replayed.answer.jobs)


@check("lammps/crystal_relax")
def check_crystal_relax(replayed):
    log = replayed.job_dirs["crystal_relax-relax"] / "log.lammps"
    # the relaxed box edge over the 4 cells the input builds; cohesive energy = E(isolated) - E/atom
    a = value(log, "lx_A") / job_params(log.parent)["repetitions"][0]
    e_coh = value(log, "isolated_atom_energy_eV") - value(log, "energy_per_atom_eV")
    lattice, cohesive = replayed.result("lattice_constant"), replayed.result("cohesive_energy")
    assert lattice.unit == "angstrom" and math.isclose(lattice.value, a, rel_tol=1e-9)
    assert cohesive.unit == "eV/atom" and math.isclose(cohesive.value, e_coh, rel_tol=1e-9)
    check_provenance(replayed, lattice, "relax")
    assert lattice.value == pytest.approx(3.52, abs=0.01)  # Foiles' Ni_u3.eam fits a = 3.52 A (Foiles 1986)
    # the final thermo block is the run 0 at the relaxed box: its pressure is near zero
    assert abs(thermo_blocks(log)[-2]["Press"][-1]) < 100


@check("lammps/point_defects")
def check_point_defects(replayed):
    perfect = replayed.job_dirs["point_defects-perfect"] / "log.lammps"
    vacancy = replayed.job_dirs["point_defects-vacancy"] / "log.lammps"
    n, e = value(perfect, "natoms", case="perfect"), value(perfect, "pe_eV", case="perfect")
    n_v, e_v = value(vacancy, "natoms", kind="vacancy"), value(vacancy, "pe_eV", kind="vacancy")
    assert n_v == n - 1
    result = replayed.result("vacancy_formation_energy")
    assert result.unit == "eV" and math.isclose(result.value, e_v - n_v / n * e, rel_tol=1e-9)
    check_provenance(replayed, result, "vacancy")


@check("lammps/elastic_constants")
def check_elastic_constants(replayed):
    log = replayed.job_dirs["elastic_constants-static"] / "log.lammps"

    def modulus(direction: int, key: str) -> float:
        """C = -dP/de by central differences over the printed +/- strains, bar -> GPa."""
        plus, minus = (printed(log, case="strain", dir=str(direction), sign=s)[-1] for s in ("1", "-1"))
        return -(float(plus[key]) - float(minus[key])) / (float(plus["strain"]) - float(minus["strain"])) * 1e-4

    c11, c44 = modulus(1, "pxx_bar"), modulus(4, "pyz_bar")
    c12 = 0.5 * (modulus(2, "pxx_bar") + modulus(1, "pyy_bar"))  # C_ij and C_ji averaged (Voigt symmetry)
    for label, expected in (("C11", c11), ("C12", c12), ("C44", c44)):
        result = replayed.result(f"elastic_constants_{label}")
        assert result.unit == "GPa" and math.isclose(result.value, expected, rel_tol=1e-9), (label, result.value)
        check_provenance(replayed, result, "static")
    assert c11 > c12 > 0 and c44 > 0  # Born stability of a cubic crystal


EV_PER_A2_IN_MJ_PER_M2 = 1.602176634e-19 / 1e-20 * 1e3  # CODATA elementary charge; 1 A^2 = 1e-20 m^2


@check("lammps/planar_defects")
def check_planar_defects(replayed):
    log = replayed.job_dirs["planar_defects-gsf_0"] / "log.lammps"
    start, fault = printed(log, case="gsf", shift="0.0")[-1], printed(log, case="gsf", shift="1.0")[-1]
    gamma = (float(fault["pe_eV"]) - float(start["pe_eV"])) / float(start["area_A2"]) * EV_PER_A2_IN_MJ_PER_M2
    result = replayed.result("stacking_fault_energy")
    assert result.unit == "mJ/m^2" and math.isclose(result.value, gamma, rel_tol=1e-6), (result.value, gamma)
    check_provenance(replayed, result, "gsf_0")


@check("lammps/minimize")
def check_minimize(replayed):
    log = replayed.job_dirs["minimize-minimize"] / "log.lammps"
    total = value(log, "pe_eV", case="minimized")
    result = replayed.result("minimized_energy")
    assert result.unit == "eV/atom" and math.isclose(result.value, total / value(log, "natoms", case="minimized"),
                                                     rel_tol=1e-9)
    assert math.isclose(replayed.result("minimized_energy_total").value, total, rel_tol=1e-9)
    assert result.value == pytest.approx(-3.54, abs=1e-3)  # Foiles' Cu_u3.eam fits E_coh = 3.54 eV (Foiles 1986)
    assert value(log, "pe_eV", case="minimized") <= value(log, "pe_eV", case="start")  # a minimiser goes down
    check_provenance(replayed, result, "minimize")




@check("lammps/fluid_md")
def check_fluid_md(replayed):
    # the production run is the log's last thermo table; the protocol detects equilibration in it
    # (its method names the sample window), here the window is the whole table, checked as such
    log = replayed.job_dirs["fluid_md-md"] / "log.lammps"
    table = thermo_blocks(log)[-1]
    n = int(re.search(r"^Created (\d+) atoms", log.read_text(), re.MULTILINE).group(1))
    energy, pressure = replayed.result("potential_energy_per_atom"), replayed.result("pressure")
    assert f"samples 0..{len(table['PotEng']) - 1}" in energy.method
    assert math.isclose(energy.value, float(np.mean(table["PotEng"])) / n, rel_tol=1e-9)
    assert math.isclose(pressure.value, float(np.mean(table["Press"])), rel_tol=1e-9)
    for result, series in ((energy, np.array(table["PotEng"]) / n), (pressure, np.array(table["Press"]))):
        assert result.unit == "reduced" and 0 < result.uncertainty < np.std(series)  # a standard error
        check_provenance(replayed, result, "md")
@check("lammps/trappe_alkane")
def check_trappe_alkane(replayed):
    from simagent.stats import block_average, detect_equilibration

    log = replayed.job_dirs["trappe_alkane-md"] / "log.lammps"
    production = thermo_blocks(log)[-1]
    density = np.asarray(production["Density"])
    assert production["Step"][0] == 0 and production["Step"][-1] == job_params(log.parent)["production_steps"]
    mean, _ = block_average(density[detect_equilibration(density):])
    result = replayed.result("density")
    assert result.unit == "g/cm^3" and math.isclose(result.value, mean, rel_tol=1e-9), (result.value, mean)
    assert density.min() <= result.value <= density.max()
    assert "40 n-butane molecules, TraPPE-UA" in result.method
    check_provenance(replayed, result, "md")


@check("mlp/vacancy")
def check_mlp_vacancy(replayed):
    data = json.loads((replayed.job_dirs["vacancy-vacancy"] / "results.json").read_text())
    energies = data["path_energies_eV"]
    saddle = max(range(len(energies)), key=energies.__getitem__)
    result = replayed.result("vacancy_migration_energy")
    assert result.unit == "eV" and math.isclose(result.value, energies[saddle] - energies[0], rel_tol=1e-9)
    assert 0 < saddle < len(energies) - 1 and data["neb_converged"]  # the top of the band is an image, not an end
    assert abs(energies[-1] - energies[0]) < 0.01  # the hop ends in an equivalent vacancy site
    check_provenance(replayed, result, "vacancy")


@check("qe/vacancy_migration")
def check_qe_vacancy_migration(replayed):
    error = replayed.answer.error
    assert "31 atoms" in error and "would take about" in error and "with CHGNet" in error
    assert not replayed.job_dirs
