"""VASP without VASP: inputs from pymatgen's Materials Project sets, the INCAR policy, recovery through
custodian's handlers on a recorded failure (replayed by a stand-in executable), and a clear refusal
when VASP is not configured."""

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from pymatgen.io.vasp.inputs import Incar, Kpoints
from pymatgen.io.vasp.sets import MPRelaxSet

from simagent.protocols import get_protocol
from tools.vasp.check import incar_findings
from tools.vasp.protocols.crystal import VaspCrystalParams
from tools.vasp.run import VaspJob, run

FILES = Path(__file__).parent / "files" / "vasp"
SIMAGENT = str(Path(sys.executable).parent / "simagent")


def test_si_relaxation_inputs_are_mprelaxsets():
    protocol = get_protocol("vasp/relax")
    params = VaspCrystalParams(element="Si", lattice="diamond", a_initial=5.43)
    (job,) = protocol.jobs(params)
    reference = MPRelaxSet(protocol.structure(params))
    assert Incar.from_str(job.inputs["INCAR"]) == reference.incar
    assert str(Kpoints.from_str(job.inputs["KPOINTS"])) == str(reference.kpoints)
    assert job.inputs["POSCAR"] == str(reference.poscar)
    # no licensed POTCAR library here: the symbols go to POTCAR.spec (MP uses the plain Si PAW)
    assert "POTCAR" not in job.inputs and job.inputs["POTCAR.spec"].split() == ["Si"]
    # the Materials Project relaxation settings (MPRelaxSet.yaml): 520 eV, full cell relaxation
    incar = Incar.from_str(job.inputs["INCAR"])
    assert incar["ENCUT"] == 520 and incar["ISIF"] == 3 and incar["IBRION"] == 2


def test_user_overrides_reach_the_incar():
    params = VaspCrystalParams(element="Si", lattice="diamond", a_initial=5.43, incar_overrides={"ENCUT": 600})
    (job,) = get_protocol("vasp/relax").jobs(params)
    assert Incar.from_str(job.inputs["INCAR"])["ENCUT"] == 600


def test_incar_policy_and_pymatgen_checks():
    assert incar_findings(Incar({"ENCUT": 520, "ISMEAR": 0, "SIGMA": 0.05})) == []
    problems = incar_findings(Incar({"ENCUT": 5000, "NPAR": 2, "NCORE": 4, "FOOBAR": 1}))
    text = " | ".join(problems)
    assert "ENCUT = 5000" in text and "NPAR and NCORE" in text and "FOOBAR" in text


def test_recorded_brmix_failure_is_corrected_by_custodian(tmp_path):
    folder = tmp_path / "relax"
    shutil.copytree(FILES / "brmix", folder)
    (folder / "vasp.out").unlink()
    code = run(folder, VaspJob(), [sys.executable, str(FILES / "fake_vasp.py")])
    assert code == 0
    (record,) = json.loads((folder / "corrections.json").read_text())
    assert record["handler"] == "custodian.VaspErrorHandler" and record["errors"] == ["brmix"]
    assert record["actions"][0]["dict"] == "INCAR"
    assert "IMIX" in Incar.from_file(folder / "INCAR")


def test_unfixable_failure_stops_with_a_message(tmp_path):
    folder = tmp_path / "relax"
    shutil.copytree(FILES / "brmix", folder)
    fail = tmp_path / "fail.py"
    fail.write_text("import sys; print('segmentation fault'); sys.exit(139)\n")
    assert run(folder, VaspJob(), [sys.executable, str(fail)]) == 1


def test_ask_with_vasp_not_configured_says_so_and_offers_qe(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_"))}
    env["SIMAGENT_CONFIG"] = str(tmp_path / "none.toml")
    request = "What is the band gap of bulk silicon from DFT with VASP?"
    proc = subprocess.run([SIMAGENT, "ask", "--yes", "--json", request, "--workdir", str(tmp_path / "runs")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "VASP is not configured" in out and "Quantum ESPRESSO" in out and "Traceback" not in out


def test_vasp_inputs_command_writes_the_set_and_says_potcar_spec(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_"))}
    env["SIMAGENT_CONFIG"] = str(tmp_path / "none.toml")
    proc = subprocess.run([SIMAGENT, "vasp-inputs", "Lattice constant of diamond silicon with VASP", "--out",
                           str(tmp_path / "si")], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "POTCAR.spec" in proc.stdout
    assert Incar.from_file(tmp_path / "si" / "INCAR")["ENCUT"] == 520
    assert (tmp_path / "si" / "POTCAR.spec").read_text().split() == ["Si"]


def ask_with_stand_in(request, tmp_path):
    """`simagent ask` with VASP configured as the stand-in (tests/files/vasp/fake_vasp.py): the graph
    writes, checks, runs and recovers the job as it would with VASP; the stand-in's numbers are plumbing."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_", "PMG_"))}
    env.update(SIMAGENT_CONFIG=str(tmp_path / "none.toml"), SIMAGENT_BACKEND="expert",
               SIMAGENT_VASP_COMMAND=" ".join([sys.executable, str(FILES / "fake_vasp.py")]))
    proc = subprocess.run([SIMAGENT, "ask", "--yes", "--json", request, "--workdir", str(tmp_path / "runs")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    (job_dir,) = [Path(j) for j in answer["jobs"]]
    return answer, job_dir



def test_ask_si_relaxation_with_vasp_writes_mprelaxsets_inputs_and_recovers_through_custodian(tmp_path):
    """Through `simagent ask`, VASP configured as the stand-in:
    - the inputs the job ran first (custodian's backup error.1.tar.gz) are exactly MPRelaxSet's INCAR, KPOINTS
      and POSCAR for diamond Si (a = 5.43 A, the experimental start), with POTCAR.spec, which the answer states;
    - the stand-in replays the recorded BRMIX failure; custodian's VaspErrorHandler sets IMIX, the run is
      repeated and ends, and the answer lists the correction."""
    answer, job_dir = ask_with_stand_in("Relax bulk silicon with VASP and give me its lattice parameter", tmp_path)
    assert answer["status"] == "answered" and [r["quantity"] for r in answer["answers"]] == ["lattice_constant"]
    reference = MPRelaxSet(get_protocol("vasp/relax").structure(
        VaspCrystalParams(element="Si", lattice="diamond", a_initial=5.43)))
    with tarfile.open(job_dir / "error.1.tar.gz") as backup:
        first = {Path(m.name).name: backup.extractfile(m).read().decode() for m in backup.getmembers() if m.isfile()}
    assert Incar.from_str(first["INCAR"]) == reference.incar
    assert str(Kpoints.from_str(first["KPOINTS"])) == str(reference.kpoints)
    assert first["POSCAR"] == str(reference.poscar)
    assert (job_dir / "POTCAR.spec").read_text().split() == ["Si"]
    assert any("POTCAR.spec" in d["value"] for d in answer["defaults_applied"])
    (correction,) = answer["corrections"]
    assert correction["handler"] == "custodian.VaspErrorHandler" and correction["reason"] == "brmix"
    assert "IMIX" in correction["action"]
    assert Incar.from_file(job_dir / "INCAR") == Incar({**reference.incar, "IMIX": 1})


def test_vasp_inputs_for_a_band_structure_are_the_static_and_non_scf_sets(tmp_path):
    """'band structure ... VASP': MPStaticSet, then MPNonSCFSet along the symmetry lines and on a uniform
    mesh (the Materials Project band-structure workflow), each equal to pymatgen's own set."""
    from pymatgen.io.vasp.sets import MPNonSCFSet, MPStaticSet

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_", "PMG_"))}
    env["SIMAGENT_CONFIG"] = str(tmp_path / "none.toml")
    proc = subprocess.run([SIMAGENT, "vasp-inputs", "band structure of Si with VASP inputs", "--out",
                           str(tmp_path / "si")], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "copy its CHGCAR" in proc.stdout
    structure = get_protocol("vasp/band_gap").structure(VaspCrystalParams(element="Si", lattice="diamond",
                                                                          a_initial=5.43))
    for folder, reference in (("static", MPStaticSet(structure)), ("bands", MPNonSCFSet(structure, mode="line")),
                              ("dos", MPNonSCFSet(structure, mode="uniform"))):
        assert Incar.from_file(tmp_path / "si" / folder / "INCAR") == reference.incar, folder
        assert (tmp_path / "si" / folder / "KPOINTS").read_text() == str(reference.kpoints), folder
    bands = Incar.from_file(tmp_path / "si" / "bands" / "INCAR")
    assert bands["ICHARG"] == 11 and bands["NSW"] == 0
    assert "Gamma" in (tmp_path / "si" / "bands" / "KPOINTS").read_text() or \
        "\\Gamma" in (tmp_path / "si" / "bands" / "KPOINTS").read_text()
