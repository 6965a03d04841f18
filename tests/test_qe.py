"""Quantum ESPRESSO adapter: pw.x inputs, output parsing, recovery handlers, and real PBE runs.

Reference values are published PBE numbers (the issue's targets): Si a = 5.47 angstrom and an
indirect Kohn-Sham gap of ~0.6 eV (e.g. Haas, Tran & Blaha, Phys. Rev. B 79, 085104 (2009):
a(PBE) = 5.475 A; Heyd et al., J. Chem. Phys. 123, 174101 (2005): PBE gap 0.59 eV); fcc Al
B = 77 GPa (Haas et al. 2009 give 77.3 GPa for PBE)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simagent.errors import RequestError
from simagent.jobrun import run_plan
from simagent.models import Plan, PropertyRequest, SystemSpec, TaskSpec
from simagent.protocols import get_protocol
from tools.crystals import crystal
from tools.qe import pseudos, recovery
from tools.qe.inputs import PwInput, mesh_for_spacing, sites_of
from tools.qe.parse import parse
from tools.qe.run import Runner
from tools.qe.workflow import QeWorkflow

FILES = Path(__file__).parent / "files" / "qe"
SIMAGENT = str(Path(sys.executable).parent / "simagent")
needs_pw = pytest.mark.skipif(shutil.which("pw.x") is None, reason="Quantum ESPRESSO (pw.x) not installed")


def si_input(**update) -> PwInput:
    atoms = crystal("Si", "diamond", 5.43)
    pp = pseudos.pseudo("Si")
    return PwInput(pseudo_dir=str(pp.path.parent), pseudopotentials={"Si": pp.file},
                   cell=[tuple(v) for v in atoms.cell.array], sites=sites_of(atoms), ecutwfc=20.0,
                   kpts=(2, 2, 2), **update)


def spec(element, lattice, props, request="PBE"):
    return TaskSpec(request=request, engine="qe", properties=[PropertyRequest(name=p) for p in props],
                    system=SystemSpec(name=element, kind="crystal", elements=[element], lattice=lattice))


def test_input_has_the_settings_and_the_mesh_follows_the_spacing():
    text = si_input(occupations="smearing", degauss=0.01, nbnd=8).render()
    for fragment in ("ecutwfc = 20", "occupations = 'smearing'", "degauss = 0.01", "nbnd = 8",
                     "K_POINTS automatic", "Si.UPF", "ATOMIC_POSITIONS crystal"):
        assert fragment in text
    # |b| of the Si primitive cell (a = 5.43 A) is 2*pi*sqrt(3)/a = 2.004 1/A: 0.3 -> 7 divisions
    assert mesh_for_spacing(crystal("Si", "diamond", 5.43), 0.3) == (7, 7, 7)


def test_element_without_pseudopotential_is_refused_with_the_alternatives():
    with pytest.raises(RequestError, match="no PBE pseudopotential for Nd.*Si"):
        pseudos.pseudo("Nd")
    with pytest.raises(RequestError, match="pseudopotential for Nd"):
        get_protocol("qe/eos").parameters(spec("Nd", "fcc", ["lattice_constant"]))


@pytest.mark.parametrize("fixture, handler, change", [
    ("scf_not_converged.out", "ScfNotConverged", {"mixing_beta": 0.35, "electron_maxstep": 200}),
    ("cholesky.out", "Diagonalization", {"diagonalization": "cg"}),
    ("too_few_bands.out", "TooFewBands", {"nbnd": 12}),
    ("walltime.out", "Walltime", {"restart_mode": "restart"}),
])
def test_recorded_failures_get_their_handler(fixture, handler, change):
    text = (FILES / fixture).read_text()
    found = recovery.first_handler(text, {})
    assert found is not None and found.name == handler
    fixed, note = found.correct(si_input(nbnd=8))
    assert {k: getattr(fixed, k) for k in change} == change, note
    assert recovery.first_handler(text, {handler: found.max_num_corrections}) is None or handler != found.name


@needs_pw
@pytest.mark.engine
def test_unconverged_scf_is_rerun_with_gentler_mixing(tmp_path):
    """A real pw.x SCF limited to 2 iterations fails; the handler lowers mixing_beta and it converges."""
    wf = QeWorkflow(kind="scf", base=si_input(electron_maxstep=2))
    Runner(tmp_path, wf).run()
    corrections = json.loads((tmp_path / "corrections.json").read_text())
    assert [c["handler"] for c in corrections] == ["ScfNotConverged"]
    assert "mixing_beta 0.7 -> 0.35" in corrections[0]["changes"][0]
    out = parse(tmp_path / "scf.out")
    assert out.job_done and out.scf_converged and out.total_energy_eV < 0


def run_protocol(name, task, tmp_path, **overrides):
    protocol = get_protocol(name)
    params, defaults = protocol.parameters(task)
    params = protocol.validate_params({**params.model_dump(), **overrides})
    jobs = protocol.jobs(params)
    records = run_plan(Plan(jobs=jobs), tmp_path)
    assert all(r.status == "succeeded" for r in records.values()), {k: r.message for k, r in records.items()}
    return protocol.analyze(params, {j.id: tmp_path / j.id for j in jobs}, task), defaults


@needs_pw
@pytest.mark.engine
def test_si_pbe_lattice_constant_small_settings(tmp_path):
    """Small but converged-enough settings (Si2, 4x4x4 k, 40 Ry after a 30/40 Ry check): within 1 % of
    the PBE value 5.47 A (Haas, Tran & Blaha 2009: 5.475 A)."""
    task = spec("Si", "diamond", ["lattice_constant"])
    results, defaults = run_protocol("qe/eos", task, tmp_path, cutoffs_Ry=[30.0, 40.0], kpts=(4, 4, 4),
                                     strains=[0.98, 0.99, 1.0, 1.01, 1.02])
    (a,) = results
    assert a.quantity == "lattice_constant" and a.unit == "angstrom"
    assert abs(a.value - 5.47) / 5.47 < 0.01
    assert "PBE" in a.method and "Si.UPF" in a.method and "4x4x4" in a.method
    assert any(d.parameter == "plane-wave cutoff" for d in defaults)
    conv = json.loads((tmp_path / "pw" / "convergence.json").read_text())
    assert conv["cutoffs_Ry"] == [30.0, 40.0] and conv["chosen_Ry"] in (30.0, 40.0)


def ask(request, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_"))}
    env["SIMAGENT_CONFIG"] = str(tmp_path / "none.toml")
    proc = subprocess.run([SIMAGENT, "ask", "--yes", "--json", request, "--workdir", str(tmp_path / "runs")],
                          capture_output=True, text=True, env=env, timeout=3000)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    return {r["quantity"]: r for r in answer["answers"]}, answer


@needs_pw
@pytest.mark.slow
def test_ask_si_pbe_lattice_constant(tmp_path):
    """Default settings (cutoff scan, 7x7x7): within 1 % of 5.47 A (Haas et al. 2009: 5.475 A)."""
    found, answer = ask("What is the PBE lattice constant of silicon?", tmp_path)
    a = found["lattice_constant"]
    assert a["unit"] == "angstrom" and abs(a["value"] - 5.47) / 5.47 < 0.01
    assert any(d["parameter"] == "k-points" for d in answer["defaults_applied"])


@needs_pw
@pytest.mark.slow
def test_ask_si_pbe_band_gap_is_indirect(tmp_path):
    """PBE gap of Si: 0.5-0.7 eV, indirect (VBM at Gamma, CBM ~85 % along Gamma-X; Heyd et al. 2005: 0.59 eV)."""
    found, _ = ask("Is the DFT-PBE band gap of bulk silicon direct or indirect, and how large is it?", tmp_path)
    gap = found["band_gap"]
    assert gap["unit"] == "eV" and 0.5 <= gap["value"] <= 0.7
    assert gap["method"].startswith("indirect") and "at G (0.000, 0.000, 0.000)" in gap["method"]
    assert Path(gap["data_file"]).with_name("band_structure.png").stat().st_size > 1000


@needs_pw
@pytest.mark.slow
def test_ask_al_pbe_bulk_modulus(tmp_path):
    """PBE bulk modulus of fcc Al within 10 % of 77 GPa (Haas et al. 2009: 77.3 GPa); about 10 minutes."""
    found, answer = ask("Bulk modulus of fcc aluminium from density functional theory", tmp_path)
    b = found["bulk_modulus"]
    assert b["unit"] == "GPa" and abs(b["value"] - 77) / 77 < 0.10
    assert "smearing" in b["method"]


def test_a_band_gap_with_no_method_states_the_default():
    task = spec("Si", "diamond", ["band_gap"], request="Band gap of silicon")
    _, defaults = get_protocol("qe/band_gap").parameters(task)
    stated = {d.parameter: d.value for d in defaults}
    assert stated["method"] == "DFT with Quantum ESPRESSO" and stated["functional"] == "PBE"


def test_a_calculation_beyond_the_budget_is_refused_with_its_cost(monkeypatch):
    from tools.qe.protocols import crystal as qe_crystal

    task = spec("Cu", "fcc", ["bulk_modulus"])
    _, defaults = get_protocol("qe/eos").parameters(task)
    stated = next(d.value for d in defaults if d.parameter == "estimated cost")
    monkeypatch.setattr(qe_crystal, "COST_LIMIT_S", 60.0)
    with pytest.raises(RequestError, match=r"19 electrons.*would take about .* h on this machine"):
        get_protocol("qe/eos").parameters(task)
    assert stated.startswith("about ")


def test_ask_for_an_element_without_pseudopotential_fails_cleanly(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_"))}
    env["SIMAGENT_CONFIG"] = str(tmp_path / "none.toml")
    proc = subprocess.run([SIMAGENT, "ask", "--yes", "--json", "PBE lattice constant of fcc neodymium",
                           "--workdir", str(tmp_path / "runs")], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode != 0
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    assert answer["status"] == "failed" and "no PBE pseudopotential for Nd" in answer["error"]
    assert "Traceback" not in proc.stderr and answer["answers"] == []


def test_a_cohesive_energy_adds_a_spin_polarised_isolated_atom_to_the_eos():
    task = spec("Si", "diamond", ["cohesive_energy"], request="cohesive energy of Si with PBE")
    protocol = get_protocol("qe/eos")
    params, defaults = protocol.parameters(task)
    assert params.cohesive and any(d.parameter == "isolated atom" for d in defaults)
    atom = protocol.workflow(params).atom
    text = atom.render()
    for fragment in ("nspin = 2", "starting_magnetization(1) = 0.5", "occupations = 'smearing'", "nat = 1"):
        assert fragment in text
    assert atom.atoms().get_volume() > 1000  # a 10 x 10.5 x 11 A box
    no_atom = protocol.parameters(spec("Si", "diamond", ["lattice_constant"]))[0]
    assert protocol.workflow(no_atom).atom is None


@needs_pw
@pytest.mark.slow
def test_si_pbe_cohesive_energy_small_settings(tmp_path):
    """PBE cohesive energy of Si: 4.55 eV/atom (Olsen & Thygesen, Phys. Rev. B 87, 075111 (2013); experiment
    4.68 eV/atom), the values the GPAW documentation's RPA exercise compares with (doc/exercises/rpa/rpa.rst of
    the GPAW repository, "RPA calculation of the cohesive energy of Si", read 24 Nov 2026). Stop 19 attributed
    4.55 eV to Paier et al. (2006) from memory, which could not be confirmed: the source is replaced, the value
    and the tolerance (set before any run) are unchanged.
    Small settings (30/40 Ry, 4x4x4 k) and a spherical (fractionally occupied) spin-polarised atom: within 5 %."""
    task = spec("Si", "diamond", ["cohesive_energy"], request="cohesive energy of Si with PBE")
    results, _ = run_protocol("qe/eos", task, tmp_path, cutoffs_Ry=[30.0, 40.0], kpts=(4, 4, 4),
                              strains=[0.98, 0.99, 1.0, 1.01, 1.02])
    (e_coh,) = results
    assert e_coh.quantity == "cohesive_energy" and e_coh.unit == "eV/atom"
    assert abs(e_coh.value - 4.55) / 4.55 < 0.05
    assert "isolated atom" in e_coh.method and "spin-polarised" in e_coh.method


def test_each_pw_run_of_a_protocol_job_stops_cleanly_before_the_job_limit():
    protocol = get_protocol("qe/eos")
    params, _ = protocol.parameters(spec("Si", "diamond", ["lattice_constant"]))
    (job,) = protocol.jobs(params)
    wf = QeWorkflow.model_validate_json(job.inputs["qe_job.json"])
    assert wf.max_seconds == round(0.9 * job.time_limit_s)


@needs_pw
@pytest.mark.engine
def test_a_run_stopped_by_max_seconds_is_continued_from_its_restart_files(tmp_path):
    """A real pw.x SCF (Si2, 12x12x12 k-points, tight threshold) run once whole, then limited to a third of
    that wall time per run: it stops with 'Maximum CPU time exceeded', each restart continues from the saved
    state, and the SCF converges to the energy of the uninterrupted run."""
    base = si_input(conv_thr=1e-10).model_copy(update={"kpts": (12, 12, 12)})
    for name in ("chunks", "whole"):
        (tmp_path / name).mkdir()
    Runner(tmp_path / "whole", QeWorkflow(kind="scf", base=base)).run()
    whole = parse(tmp_path / "whole" / "scf.out")
    (step,) = json.loads((tmp_path / "whole" / "steps.json").read_text())
    Runner(tmp_path / "chunks", QeWorkflow(kind="scf", base=base, max_seconds=max(1.0, step["wall_s"] / 3))).run()
    corrections = json.loads((tmp_path / "chunks" / "corrections.json").read_text())
    assert corrections and {c["handler"] for c in corrections} == {"Walltime"}
    assert "-> restart" in corrections[0]["changes"][0]
    chunked = parse(tmp_path / "chunks" / "scf.out")
    assert chunked.job_done and chunked.scf_converged
    assert abs(chunked.total_energy_eV - whole.total_energy_eV) < 1e-5
