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
from replay import (
    ReplayCase,
    input_digits_agree,
    job_params,
    printed,
    recording,
    replay_request,
    same_answer,
    thermo_blocks,
    value,
)

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
               {"melt": {"n_chains": 20, "equilibration_steps": 2000, "production_steps": 5000}}),
    ReplayCase("lammps/framework_guest_md",
               "Self-diffusion coefficient of CH4 in IRMOF-1 at 300 K with 8 molecules per unit cell",
               {"equilibration_steps": 2000, "production_steps": 8000}),
    ReplayCase("lammps/framework_eos", "bulk modulus of IRMOF-1"),
    ReplayCase("lammps/described", DESCRIBED + " Report the average temperature and potential energy per atom.",
               select=True),
    # the driver's record and step outputs, the logs and energies; the .gro/.cpt a later stage reads are kept
    # as their stage's outputs anyway (not the .tpr/.trr, nor the stepNb.pdb dumps of SETTLE failures in EM)
    ReplayCase("gromacs/liquid_md", "Density of SPC/E water at 300 K and 1 bar with GROMACS",
               {"n_molecules": 350, "em_steps": 500, "nvt_steps": 1000, "npt_steps": 2000, "production_steps": 5000},
               outputs=("driver.json", "gmx-*.out", "*.edr", "*.log")),
    ReplayCase("zeopp/pore_geometry", "Pore limiting diameter and largest cavity diameter of IRMOF-1"),
    ReplayCase("raspa/gcmc_uptake", "Methane uptake in IRMOF-1 at 298 K and 35 bar",
               {"initialization_cycles": 200, "production_cycles": 500, "helium_cycles": 200}),
    # the gates and the analysis read RASPA's Output/ folder only (not its Movies/, VTK/, Restart/)
    ReplayCase("raspa/gcmc_mixture", "CO2/CH4 selectivity of an equimolar mixture in IRMOF-1 at 298 K and 1 bar",
               {"initialization_cycles": 200, "production_cycles": 500, "helium_cycles": 200},
               outputs=("Output/*",)),
    ReplayCase("raspa/widom", "Henry coefficient of CO2 in IRMOF-1 at 298 K",
               {"production_cycles": 500, "helium_cycles": 200}),
    ReplayCase("qe/eos", "Lattice constant and bulk modulus of silicon with DFT",
               {"cutoffs_Ry": [30.0], "kpts": (4, 4, 4), "strains": [0.98, 0.99, 1.0, 1.01, 1.02]}),
    ReplayCase("qe/band_gap", "Band gap of silicon with PBE", {"cutoffs_Ry": [30.0], "kpts": (4, 4, 4)}),
    # DFT on a 57-atom MOF cell does not fit this machine: the request is refused before any run
    ReplayCase("qe/guest_binding", "Binding energy of CO2 in Mg-MOF-74 with DFT", answered=False),
    ReplayCase("mlp/crystal", "Lattice constant of copper with CHGNet"),
    ReplayCase("mlp/guest_binding", "Binding energy of CO2 in Mg-MOF-74 with CHGNet",
               {"placements": 5, "relaxations": 1, "fmax": 0.1, "max_steps": 100}),
    # one moving image (climbing, at the saddle of the symmetric hop) keeps the recorded NEB to a minute
    ReplayCase("mlp/vacancy", "Vacancy migration barrier of copper with CHGNet", {"images": 1, "fmax": 0.1}),
    # a DFT NEB on the 31-atom cell does not fit this machine: the request is refused before any run
    ReplayCase("qe/vacancy_migration", "Vacancy migration barrier of copper with DFT", answered=False),
    ReplayCase("vasp/relax", "Lattice constant of silicon from DFT with VASP", env={"SIMAGENT_VASP_COMMAND": "true"},
               inputs_only=NO_VASP, answered=False),
    ReplayCase("vasp/band_gap", "What is the band gap of bulk silicon from DFT with VASP?",
               env={"SIMAGENT_VASP_COMMAND": "true"}, inputs_only=NO_VASP, answered=False),
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
PENDING: frozenset[str] = frozenset()


def test_every_protocol_in_precedence_has_a_replay_case():
    """A new protocol fails here until it has a recorded replay case and a check of its numbers."""
    missing = [name for name in PRECEDENCE if name not in CASES and name not in PENDING]
    assert not missing, (f"protocols without a replay case in tests/test_replay.py: {', '.join(missing)}; "
                         "add a ReplayCase, record it (tests/replay.py) and add its check to CHECKS")
    recorded = set(CASES) - PENDING
    assert all(CASES[name].folder.is_dir() for name in recorded), "a listed case has no recording"
    assert recorded <= set(CHECKS), f"recorded cases without a check (CHECKS): {sorted(recorded - set(CHECKS))}"


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


@check("lammps/tensile_test")
def check_tensile_test(replayed):
    # E = least-squares slope of the recorded stress (tension positive, bar -> GPa) against strain over
    # the window the method names
    result = replayed.result("youngs_modulus")
    window = re.search(r"over strain ([\d.e+-]+)-([\d.e+-]+) \((\d+) points", result.method)
    start, end, points = float(window.group(1)), float(window.group(2)), int(window.group(3))
    table = np.loadtxt(replayed.job_dirs["tensile_test-tensile"] / "stress_strain.dat")
    strain, stress = table[:, 1], -table[:, 2] * 1e-4
    inside = (strain >= start * (1 - 1e-3)) & (strain <= end * (1 + 1e-3))
    assert inside.sum() == points
    slope = np.polyfit(strain[inside], stress[inside], 1)[0]
    assert result.unit == "GPa" and math.isclose(result.value, slope, rel_tol=1e-6), (result.value, slope)
    assert 0 < result.uncertainty < 0.1 * result.value
    check_provenance(replayed, result, "tensile")


@check("vasp/relax")
@check("vasp/band_gap")
def check_vasp_inputs_only(replayed):
    # inputs only (VASP cannot run here): the rendered INCAR, KPOINTS and POSCAR equal the recorded
    # references (replay_request checked them), the job says why it did not run, and no number appears
    assert NO_VASP in replayed.answer.error, replayed.answer.error
    (job_dir,) = replayed.job_dirs.values()
    assert all((job_dir / name).is_file() for name in ("INCAR", "KPOINTS", "POSCAR"))


@check("qe/guest_binding")
def check_dft_guest_binding_refused(replayed):
    # 57 atoms of DFT do not fit the machine's 1 h limit: refused before any job, naming what can be done
    error = replayed.answer.error
    assert not replayed.job_dirs and "does not fit this machine" in error and "CHGNet" in error, error


@check("zeopp/pore_geometry")
def check_zeopp_pore_geometry(replayed):
    # Zeo++'s .res line: file name, Di (largest included sphere), Df (largest free sphere = pore limiting
    # diameter), Dif, ... in angstrom
    (job_dir,) = replayed.job_dirs.values()
    words = (job_dir / "framework.res").read_text().split()
    di, df = float(words[1]), float(words[2])
    for quantity, expected in (("largest_cavity_diameter", di), ("pore_limiting_diameter", df)):
        result = replayed.result(quantity)
        assert result.unit == "angstrom" and result.value == expected, (quantity, result.value, expected)
        assert result.job == job_dir.name
    assert di >= df > 0  # a cavity is at least as wide as the window that leads to it


@check("mlp/crystal")
def check_mlp_crystal(replayed):
    (job_dir,) = replayed.job_dirs.values()
    data = json.loads((job_dir / "results.json").read_text())
    result = replayed.result("lattice_constant")
    assert result.unit == "angstrom" and result.value == data["a_relaxed_A"]
    # fcc: the primitive cell of the relaxed run holds one atom in a^3/4
    assert math.isclose((4 * data["relaxed_volume_A3"] / data["natoms"]) ** (1 / 3), result.value, rel_tol=1e-6)
    # the E(V) points bracket a minimum near the relaxed volume (parabola through the recorded points)
    c2, c1, _ = np.polyfit(data["volumes_A3"], data["energies_eV"], 2)
    assert c2 > 0 and math.isclose(-c1 / (2 * c2), data["relaxed_volume_A3"], rel_tol=0.01)
    assert "CHGNet" in result.method
    check_provenance(replayed, result, job_dir.name)


RY_IN_EV = 13.605693122994  # CODATA 2018 Rydberg energy
BOHR_IN_A = 0.529177210903  # CODATA 2018 Bohr radius
EV_PER_A3_IN_GPA = 160.21766208


def pw_number(out: Path, label: str) -> float:
    """The last number pw.x printed after `label` (e.g. '!    total energy', 'unit-cell volume')."""
    found = re.findall(rf"{re.escape(label)}\s*=\s*(-?[\d.]+)", out.read_text())
    assert found, f"{out}: no {label}"
    return float(found[-1])


@check("qe/eos")
def check_qe_eos(replayed):
    # our own E(V) from the pw.x outputs (energies in Ry, volumes in bohr^3) and a cubic through it:
    # V0 where E'(V) = 0 and B = V0 E''(V0) agree with the protocol's Birch-Murnaghan fit within the
    # difference of the two fits over strains of +/- 2 %
    (job_dir,) = replayed.job_dirs.values()
    outs = sorted(job_dir.glob("eos_*.out"))
    volumes = np.array([pw_number(o, "unit-cell volume") * BOHR_IN_A**3 for o in outs])
    energies = np.array([pw_number(o, "!    total energy") * RY_IN_EV for o in outs])
    cubic = np.poly1d(np.polyfit(volumes, energies, 3))
    (v0,) = [r.real for r in cubic.deriv().roots if abs(r.imag) < 1e-12 and volumes.min() < r.real < volumes.max()]
    a = (4 * v0) ** (1 / 3)  # diamond: 2 atoms in the fcc primitive cell of volume a^3/4
    lattice, bulk = replayed.result("lattice_constant"), replayed.result("bulk_modulus")
    assert lattice.unit == "angstrom" and math.isclose(lattice.value, a, rel_tol=1e-3), (lattice.value, a)
    b = v0 * cubic.deriv(2)(v0) * EV_PER_A3_IN_GPA
    assert bulk.unit == "GPa" and math.isclose(bulk.value, b, rel_tol=0.02), (bulk.value, b)
    # PBE silicon: a = 5.47 A (Haas, Tran & Blaha, PRB 79, 085104 (2009)); 1 % for 30 Ry and a 4x4x4 mesh
    assert abs(lattice.value - 5.47) / 5.47 < 0.01
    check_provenance(replayed, lattice, job_dir.name)


def pw_bands(out: Path) -> np.ndarray:
    """Eigenvalues (eV) per k-point from the 'bands (ev):' blocks of a pw.x output."""
    blocks, current = [], None
    for line in out.read_text().splitlines():
        if "bands (ev)" in line:
            current = []
            blocks.append(current)
        elif current is not None:
            numbers = re.findall(r"-?\d+\.\d+", line)
            if numbers and not re.search(r"[a-zA-Z]", line):
                current += [float(x) for x in numbers]
            elif current and not numbers:
                current = None
    return np.array(blocks)


@check("qe/band_gap")
def check_qe_band_gap(replayed):
    (job_dir,) = replayed.job_dirs.values()
    n_occ = round(pw_number(job_dir / "scf.out", "number of electrons") / 2)
    eig = pw_bands(job_dir / "bands.out")
    gap = eig[:, n_occ].min() - eig[:, n_occ - 1].max()
    result = replayed.result("band_gap")
    assert result.unit == "eV" and math.isclose(result.value, gap, abs_tol=2e-4), (result.value, gap)
    assert "indirect" in result.method  # silicon's gap is indirect (in PBE as in experiment)
    check_provenance(replayed, result, job_dir.name)


def tail_start(series, value: float, rel_tol: float = 1e-9) -> int | None:
    """The first sample from which on the series' mean is `value` (None: no such sample)."""
    series = np.asarray(series, dtype=float)
    tails = np.cumsum(series[::-1])[::-1] / np.arange(len(series), 0, -1)
    found = np.flatnonzero(np.isclose(tails, value, rtol=rel_tol, atol=0.0))
    return int(found[0]) if found.size else None


def is_tail_mean(series, value: float, rel_tol: float = 1e-9) -> bool:
    """True when `value` is the mean of the series from some sample on (the protocols average the
    production after a detected equilibration point; here only that it is such a mean is checked)."""
    return tail_start(series, value, rel_tol) is not None


@check("gromacs/liquid_md")
def check_gromacs_liquid_md(replayed):
    import pyedr  # the .edr reader GROMACS users use, read here directly

    job_dir = next(d for name, d in replayed.job_dirs.items() if name.endswith("prod"))
    density = np.asarray(pyedr.edr_to_dict(str(job_dir / "prod.edr"))["Density"]) / 1000  # kg/m^3 -> g/cm^3
    result = replayed.result("density")
    # consistency only: the number is a tail mean of the recorded production series
    assert result.unit == "g/cm^3" and is_tail_mean(density, result.value, 1e-6), (result.value, density[:5])
    # SPC/E water near 300 K and 1 bar: 0.994 g/cm^3 at 298 K (Vega & de Miguel, J. Chem. Phys. 126,
    # 154707 (2007)); 3 % for 350 molecules and 10 ps of production
    assert abs(result.value - 0.994) < 0.03
    check_provenance(replayed, result, "prod")


@check("lammps/described")
def check_described(replayed):
    # the description's averaged stage is its last run: the log's last thermo table, all of it
    log = replayed.job_dirs["described-described"] / "log.lammps"
    table = thermo_blocks(log)[-1]
    n = int(re.search(r"^Created (\d+) atoms", log.read_text(), re.MULTILINE).group(1))
    assert n == 6**3  # a simple cubic lattice of 6 cells per side, as the description says
    energy, temperature = replayed.result("potential_energy_per_atom"), replayed.result("temperature")
    assert math.isclose(energy.value, float(np.mean(table["PotEng"])) / n, rel_tol=1e-9)
    assert math.isclose(temperature.value, float(np.mean(table["Temp"])), rel_tol=1e-9)
    assert len(table["Temp"]) == 401 and table["Step"][-1] - table["Step"][0] == 400  # the 400-step sampling run
    check_provenance(replayed, energy, "described")


@check("lammps/framework_guest_md")
def check_framework_guest_md(replayed):
    # our own Einstein MSD of the recorded unwrapped guest positions (all time origins), slope over
    # the lag window the method names, D = slope/6 (A^2/ps -> m^2/s)
    from MDAnalysis.lib.formats.libdcd import DCDFile

    job_dir = replayed.job_dirs["framework_guest_md-guest_md"]
    with DCDFile(str(job_dir / "guests.dcd")) as dcd:
        frames = np.array([frame.xyz.copy() for frame in dcd])
    lines = (job_dir / "in.lammps").read_text()
    every = int(re.search(r"^dump \S+ guest dcd (\d+)", lines, re.MULTILINE).group(1))
    dt_ps = float(re.search(r"^timestep (\S+)", lines, re.MULTILINE).group(1)) * 1e-3 * every  # real: fs
    result = replayed.result("self_diffusion_coefficient")
    start, end = (float(x) for x in re.search(r"over lag ([\d.]+)-([\d.]+) ps", result.method).groups())
    lags = np.arange(1, len(frames))
    msd = np.array([np.mean(np.sum((frames[k:] - frames[:-k]) ** 2, axis=2)) for k in lags])
    inside = (lags * dt_ps >= start - 1e-9) & (lags * dt_ps <= end + 1e-9)
    d = np.polyfit(lags[inside] * dt_ps, msd[inside], 1)[0] / 6 * 1e-8
    assert result.unit == "m^2/s" and math.isclose(result.value, d, rel_tol=1e-5), (result.value, d)
    assert 0 < result.uncertainty < result.value
    check_provenance(replayed, result, "guest_md")


@check("lammps/thermal_expansion")
def check_thermal_expansion(replayed):
    # <a>(T) = mean of (la + lb + lc)/3 over each recorded production; two temperatures: the line is
    # through both points and alpha = (da/dT) / a(300 K)
    mean_a = {}
    for t in (200, 400):
        table = np.loadtxt(replayed.job_dirs[f"thermal_expansion-npt_{t}K"] / "lattice.dat")
        mean_a[t] = float(np.mean(table[:, 1:4]))
    slope = (mean_a[400] - mean_a[200]) / 200
    alpha = slope / (0.5 * (mean_a[200] + mean_a[400]))
    result = replayed.result("thermal_expansion_coefficient")
    assert result.unit == "1/K" and math.isclose(result.value, alpha, rel_tol=1e-4), (result.value, alpha)
    # copper: 1.65e-5 /K at 300 K in experiment; the band of tests/test_solid_protocols.py's quick run
    assert 1.0e-5 < result.value < 2.4e-5
    check_provenance(replayed, result, "npt_200K")


@check("lammps/melting_point")
def check_melting_point(replayed):
    table = np.loadtxt(replayed.job_dirs["melting_point-coexistence"] / "coexistence.dat")
    result = replayed.result("melting_point")
    # consistency only: the number is the mean coexistence temperature over a tail of the recorded run
    assert result.unit == "K" and is_tail_mean(table[:, 1], result.value, 1e-6), result.value
    # Mishin's Cu potential melts at 1327 K (Mishin et al., PRB 63, 224106 (2001)); 10 % for 324 atoms
    assert abs(result.value - 1327) < 0.10 * 1327
    check_provenance(replayed, result, "coexistence")


@check("lammps/chain_conformation")
def check_chain_conformation(replayed):
    got = {r.quantity: r for r in replayed.answer.answers}
    # consistency only (the trajectory analysis is the protocol's): root mean squares and their squares
    assert math.isclose(got["radius_of_gyration"].value ** 2, got["radius_of_gyration_squared"].value, rel_tol=1e-9)
    assert math.isclose(got["end_to_end_distance"].value ** 2, got["end_to_end_distance_squared"].value,
                        rel_tol=1e-9)
    ratio = got["end_to_end_distance_squared"].value / got["radius_of_gyration_squared"].value
    assert math.isclose(got["end_to_end_distance_squared_over_radius_of_gyration_squared"].value, ratio, rel_tol=0.02)
    # Kremer-Grest bonds are 0.97 sigma long (Kremer & Grest, J. Chem. Phys. 92, 5057 (1990)): 9 bonds
    # of a 10-bead chain span at least 9 x 0.97^2 in <R^2> for a chain stiffer than a random walk
    assert got["end_to_end_distance_squared"].value > 9 * 0.97**2
    check_provenance(replayed, got["radius_of_gyration"], "md")


KCAL_PER_MOL_A3_IN_GPA = 4184 / 6.02214076e23 / 1e-30 / 1e9  # LAMMPS real units: kcal/mol over A^3


@check("lammps/framework_eos")
def check_framework_eos(replayed):
    # our own E(V) from the printed EV_POINT lines (volume A^3, energy kcal/mol) and a cubic through it:
    # B = V0 E''(V0), within the difference of a cubic and the protocol's Birch-Murnaghan fit
    log = replayed.job_dirs["framework_eos-eos"] / "log.lammps"
    points = np.array([[float(w) for w in line.split()[3:5]] for line in log.read_text().splitlines()
                       if line.startswith("EV_POINT")])
    volumes, energies = points[:, 0], points[:, 1]
    cubic = np.poly1d(np.polyfit(volumes, energies, 3))
    (v0,) = [r.real for r in cubic.deriv().roots if abs(r.imag) < 1e-12 and volumes.min() < r.real < volumes.max()]
    b = v0 * cubic.deriv(2)(v0) * KCAL_PER_MOL_A3_IN_GPA
    result = replayed.result("bulk_modulus")
    assert result.unit == "GPa" and math.isclose(result.value, b, rel_tol=0.03), (result.value, b)
    # IRMOF-1 (MOF-5) from DFT: 15.4-18.2 GPa (the band of tests/test_framework_md.py); accepted 12-22 GPa
    assert 12.0 < result.value < 22.0
    check_provenance(replayed, result, "eos")


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


@check("raspa/gcmc_uptake")
def check_raspa_gcmc_uptake(replayed):
    # the absolute loading RASPA printed (its block average and error), read from its output file
    job_dir = replayed.job_dirs["gcmc_uptake-gcmc-0"]
    (output,) = (job_dir / "Output" / "System_0").glob("output_*.data")
    found = re.search(r"Average loading absolute \[mol/kg framework\]\s+(\S+) \+/-\s+(\S+)", output.read_text())
    result = replayed.result("uptake")
    assert result.unit == "mol/kg" and math.isclose(result.value, float(found.group(1)), rel_tol=1e-9)
    assert math.isclose(result.uncertainty, float(found.group(2)), rel_tol=1e-6)
    check_provenance(replayed, result, "gcmc-0")


@check("lammps/shear_viscosity")
def check_shear_viscosity(replayed):
    result = replayed.result("shear_viscosity")
    # Ferrario et al. (1991): eta* = 3.24 +/- 0.04 at T* = 0.722, rho* = 0.8442; a 256-atom, 200 tau
    # Green-Kubo run: 3 standard errors plus 5 % (the band of tests/test_transport_protocols.py)
    assert result.unit == "reduced" and 0 < result.uncertainty < 0.2 * result.value
    assert abs(result.value - 3.24) < 3 * math.hypot(result.uncertainty, 0.04) + 0.05 * 3.24
    check_provenance(replayed, result, "md")


@check("lammps/thermal_conductivity")
def check_thermal_conductivity(replayed):
    result = replayed.result("thermal_conductivity")
    # Muller-Plathe (1997) and the values compared there: kappa* = 6.6-7.0 at the LJ triple point
    # (the band and NEMD allowance of tests/test_transport_protocols.py)
    assert result.unit == "reduced" and result.uncertainty > 0
    assert 6.6 - 3 * result.uncertainty - 0.05 * 7.0 < result.value < 7.0 + 3 * result.uncertainty + 0.05 * 7.0
    check_provenance(replayed, result, "md")


@check("raspa/widom")
def check_raspa_widom(replayed):
    # the Henry coefficient RASPA printed from its Widom insertions (block average and error)
    (output,) = (replayed.job_dirs["widom-widom"] / "Output" / "System_0").glob("output_*.data")
    found = re.search(r"\[CO2\] Average Henry coefficient:\s+(\S+) \+/-\s+(\S+) \[mol/kg/Pa\]", output.read_text())
    result = replayed.result("henry_coefficient")
    assert result.unit == "mol/kg/Pa" and math.isclose(result.value, float(found.group(1)), rel_tol=1e-9)
    assert math.isclose(result.uncertainty, float(found.group(2)), rel_tol=1e-6)
    check_provenance(replayed, result, "widom")


def raspa_blocks(output: Path, component: str, what: str = "absolute") -> tuple[list[float], float]:
    """The block values RASPA printed for a component's loading (molecules in the simulation box)
    under 'Number of molecules', and the '+/-' it printed with their average (`what`: absolute or excess)."""
    text = output.read_text()
    section = text[text.index("Number of molecules:"):]
    part = section[section.index(f"[{component}]\n"):]
    blocks, found = [], []
    for line in part.splitlines()[2:]:
        block = re.match(r"\s*Block\[\s*\d+\]\s+(\S+)", line)
        if block:
            blocks.append(float(block.group(1)))
        elif line.strip().startswith(f"Average loading {what} "):
            found.append(float(re.search(r"\+/-\s+(\S+)", line).group(1)))
            break
        elif line.strip().startswith("Average loading"):
            blocks = []  # the other kind's block values
    return blocks, found[0]


@check("raspa/gcmc_mixture")
def check_raspa_gcmc_mixture(replayed):
    # S = (x_CO2/x_CH4)/(y_CO2/y_CH4) for an equimolar gas (y ratio 1): the ratio of the mean absolute
    # loadings, each the mean of RASPA's printed block values (molecules in the same box, so the
    # per-unit-cell conversion cancels); its uncertainty from the two printed block errors
    (output,) = (replayed.job_dirs["gcmc_mixture-mixture-0"] / "Output" / "System_0").glob("output_*.data")
    (co2, e_co2), (ch4, e_ch4) = raspa_blocks(output, "CO2"), raspa_blocks(output, "CH4")
    assert len(co2) == len(ch4) == 5  # RASPA's five blocks
    n_co2, n_ch4 = float(np.mean(co2)), float(np.mean(ch4))
    result = replayed.result("selectivity")
    assert result.unit == "-" and math.isclose(result.value, n_co2 / n_ch4, rel_tol=1e-6), (result.value, n_co2 / n_ch4)
    assert math.isclose(result.uncertainty, result.value * math.hypot(e_co2 / n_co2, e_ch4 / n_ch4), rel_tol=1e-4)
    # CO2 binds more strongly than CH4 (its quadrupole and larger dispersion): the gas is enriched in CO2
    assert result.value - 2 * result.uncertainty > 1
    check_provenance(replayed, result, "mixture-0")


EV_IN_KJ_PER_MOL = 96.48533212  # CODATA 2018: e x N_A / 1000


def ase_log_energies(log: Path) -> list[float]:
    """The energies (eV) of an ASE optimizer log ('BFGS:  step  time  energy  fmax'), in step order."""
    return [float(line.split()[3]) for line in log.read_text().splitlines() if line.startswith("BFGS:")]


@check("mlp/guest_binding")
def check_mlp_guest_binding(replayed):
    # E_bind = E(framework + CO2, relaxed) - E(framework) - E(CO2, relaxed alone): the complex's energy and
    # forces from our own read of the relaxed extxyz, the isolated guest's from its optimizer log
    (job_dir,) = replayed.job_dirs.values()
    data = json.loads((job_dir / "results.json").read_text())
    lines = (job_dir / "relaxed_0.xyz").read_text().splitlines()
    natoms, comment = int(lines[0]), lines[1]
    e_complex = float(re.search(r"\benergy=(\S+)", comment).group(1))
    atoms = [line.split() for line in lines[2:2 + natoms]]  # species x y z move_mask fx fy fz magmom
    guest = [a for a in atoms if a[4] == "T"]  # the framework is held fixed (move_mask F)
    assert [a[0] for a in guest] == ["C", "O", "O"] and natoms - len(guest) == data["natoms_framework"]
    params = job_params(job_dir)
    assert max(math.dist((0, 0, 0), [float(f) for f in a[5:8]]) for a in guest) <= params["fmax"]  # relaxed
    carbon, *oxygens = (np.array([float(x) for x in a[1:4]]) for a in guest)
    # still a CO2 molecule: C=O 1.16 A in the gas (NIST CCCBDB), nearly linear
    assert all(1.10 < np.linalg.norm(o - carbon) < 1.25 for o in oxygens)
    assert np.dot(oxygens[0] - carbon, oxygens[1] - carbon) < 0
    assert math.isclose(ase_log_energies(job_dir / "relax_0.log")[-1], e_complex, abs_tol=1e-5)
    e_guest = ase_log_energies(job_dir / "guest_relax.log")[-1]
    e_bind = (e_complex - data["framework_energy_eV"] - e_guest) * EV_IN_KJ_PER_MOL
    result = replayed.result("interaction_energy")
    assert result.unit == "kJ/mol" and math.isclose(result.value, e_bind, abs_tol=0.01), (result.value, e_bind)
    assert result.value < 0  # the lowest relaxed placement is bound, not repelled
    assert "CHGNet" in result.method
    check_provenance(replayed, result, job_dir.name)


@check("lammps/energy_components")
def check_energy_components(replayed):
    # the production (the log's last thermo table, our own read): each term per bead is the mean of its
    # column from one common sample on (the protocol's equilibration point), over the 200 beads
    log = replayed.job_dirs["energy_components-md"] / "log.lammps"
    table = {column: np.asarray(values) for column, values in thermo_blocks(log)[-1].items()}
    n = int(table["Atoms"][0])
    assert n == 20 * 10  # 20 chains of 10 beads (the case's melt)
    got = {r.quantity.removeprefix("energy_components_"): r for r in replayed.answer.answers}
    start = tail_start(table["PotEng"] / n, got["potential"].value)
    assert start is not None, got["potential"].value
    columns = {"bond": "E_bond", "angle": "E_angle", "dihedral": "E_dihed", "improper": "E_impro",
               "vdwl": "E_vdwl", "coul": "E_coul", "long": "E_long", "potential": "PotEng"}
    for name, column in columns.items():
        result, series = got[name], table[column][start:] / n
        assert result.unit == "reduced/atom" and math.isclose(result.value, float(np.mean(series)),
                                                             rel_tol=1e-9, abs_tol=1e-12), (name, result.value)
        # a Kremer-Grest melt has FENE bonds and WCA pairs only: the other terms are exactly zero
        assert (result.uncertainty is None) == (name not in ("bond", "vdwl", "potential")), name
        if result.uncertainty is not None:
            assert 0 < result.uncertainty < np.std(series)  # a standard error of a mean
        check_provenance(replayed, result, "md")
    # the terms add up to the potential energy (an identity of the thermo output)
    assert math.isclose(sum(got[name].value for name in columns if name != "potential"), got["potential"].value,
                        rel_tol=1e-9)


def test_replay_comparisons_forgive_summation_order_digits_only():
    """Recordings made on one machine replay on another whose BLAS sums in another order: the last
    digits of a double may differ (seen: 1.6890877514220436e-05 recorded, ...219846e-05 replayed);
    a change in a number that means something must still fail."""
    real = {"status": "answered", "answers": [{"value": 1.6890877514220436e-05, "unit": "1/K"}]}
    assert same_answer(real, {"status": "answered", "answers": [{"value": 1.6890877514219846e-05, "unit": "1/K"}]})
    assert not same_answer(real, {"status": "answered", "answers": [{"value": 1.68909e-05, "unit": "1/K"}]})
    assert not same_answer(real, {"status": "answered", "answers": [{"value": 1.6890877514220436e-05, "unit": "K"}]})
    assert not same_answer(real, {"status": "failed", "answers": [{"value": 1.6890877514220436e-05, "unit": "1/K"}]})
    assert input_digits_agree('"x": [0.03025999999999997, 0.7344]', '"x": [0.03025999999999999, 0.7344]')
    assert not input_digits_agree('"x": [0.03025999999999997, 0.7344]', '"x": [0.03026999999999997, 0.7344]')
    assert not input_digits_agree("run 1000\n", "run 1001\n")
