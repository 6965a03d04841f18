"""Zeo++ adapter: output parsing and channel analysis (fast), the protocol on small CoRE MOF 2019
entries against the database's own table (engine), and requests end to end through the graph."""

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simagent.errors import ReadError
from simagent.jobrun import run_plan
from simagent.materials.structures import core_reference_values, resolve
from simagent.models import Conditions, Plan, PropertyRequest, Quantity, SystemSpec, TaskSpec
from simagent.protocols import get_protocol
from simagent.session import Session
from tools.zeopp import check, inputs, parse

FILES = Path(__file__).parent / "files" / "zeopp"
GEOMETRY = "zeopp/pore_geometry"


# ---------------------------------------------------------------------------------------------
# Parsing, preparation, channel analysis (no engine)
# ---------------------------------------------------------------------------------------------

SA_TEXT = (b"@ x.sa Unitcell_volume: 4570.19   Density: 0.879099   ASA_A^2: 966.386 ASA_m^2/cm^3: 2114.54 "
           b"ASA_m^2/g: 2405.35 NASA_A^2: 0 NASA_m^2/cm^3: 0 NASA_m^2/g: 0\nNumber_of_channels: 2 "
           b"Channel_surface_area_A^2: 900.5 65.886  \nNumber_of_pockets: 0 Pocket_surface_area_A^2: \n")


def test_parse_zeopp_outputs():
    sa = parse.parse_key_values(SA_TEXT)
    assert sa["ASA_m^2/g"] == 2405.35 and sa["Number_of_channels"] == 2
    assert sa["Channel_surface_area_A^2"] == [900.5, 65.886] and sa["Pocket_surface_area_A^2"] == []
    res = parse.parse_res("    x.res    4.45543 2.49720  4.40653  2.49720  0.79311  0.75084  4.40653  4.43237  4.42919")
    assert res["Di"] == 4.45543 and res["Df_c"] == 0.75084 and res["Dif_b"] == 4.43237


def test_cif_for_zeopp_has_no_oxidation_states_and_nudge_is_1e_3_angstrom():
    from pymatgen.core import Lattice, Structure

    salt = Structure(Lattice.cubic(5.64), ["Na", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]])
    salt.add_oxidation_state_by_element({"Na": 1, "Cl": -1})
    text = inputs.write_cif(inputs.from_structure(salt, "NaCl"))
    assert "+" not in text and "Na1 Na 0.00000000" in text
    cell = inputs.read_cif(text)
    moved = inputs.nudged(cell)
    matrix = np.array(inputs.cell_matrix(cell))
    shifts = (np.array(moved.frac) - np.array(cell.frac)) @ matrix
    assert np.allclose(np.linalg.norm(shifts, axis=1), inputs.NUDGE_ANGSTROM)
    assert inputs.nudged(cell).frac == moved.frac  # fixed seed


def _graph(edges, radius=2.0):
    nodes = sorted({a for a, _b, _s in edges} | {b for _a, b, _s in edges})
    return parse.VoronoiGraph(
        ids=np.array(nodes), xyz=np.zeros((len(nodes), 3)), radius=np.full(len(nodes), radius),
        edges=np.array([[nodes.index(a), nodes.index(b)] for a, b, _s in edges]),
        edge_radius=np.full(len(edges), radius), edge_shift=np.array([s for _a, _b, s in edges]),
    )


def test_channel_dimensionality_from_periodic_loops():
    one_d = _graph([(0, 1, (0, 0, 0)), (1, 0, (0, 0, 1))])
    assert parse.channels(one_d, 1.0).dimensionality == 1
    three_d = _graph([(0, 1, (0, 0, 0)), (1, 0, (1, 0, 0)), (1, 0, (0, 1, 0)), (0, 0, (0, 0, 1))])
    assert parse.channels(three_d, 1.0).dimensionality == 3
    two_d = _graph([(0, 1, (0, 0, 0)), (1, 2, (0, 0, 0)), (2, 0, (1, 1, 0)), (2, 0, (1, -1, 0))])
    assert parse.channels(two_d, 1.0).dimensionality == 2
    pocket = _graph([(0, 1, (0, 0, 0)), (1, 2, (0, 0, 0))])
    report = parse.channels(pocket, 1.0)
    assert report.dimensionality == 0 and len(report.pockets) == 1
    assert parse.channels(one_d, 2.5).channels == []  # probe wider than every node


def test_precheck_rejects_bad_settings_and_bad_structures():
    good = {"cif": "framework.cif", "tasks": ["free_sphere"], "high_accuracy": "DEF"}
    assert check.settings_problems(json.dumps(good)) == []
    bad = {**good, "cif": "../etc/passwd", "tasks": ["free_sphere", "rm"], "high_accuracy": "MAX",
           "surface_area": {"probe_radius": -1}}
    problems = " ".join(check.settings_problems(json.dumps({**bad, "tasks": ["surface_area", "rm"]})))
    assert "plain file name" in problems and "tasks" in problems and "MAX" in problems and "probe_radius" in problems
    # overlapping atoms do not stop pure geometry (the structure agent warns; energy-based runs refuse)
    overlap = (FILES / "overlapping_atoms.cif").read_text()
    assert not any("overlapping" in p for p in check.structure_problems(overlap))
    assert check.structure_problems((FILES / "malformed.cif").read_text())


# ---------------------------------------------------------------------------------------------
# The protocol on small CoRE MOF 2019 entries (engine)
# ---------------------------------------------------------------------------------------------


def geometry(tmp_path, structure, properties, probe=None):
    spec = TaskSpec(request="test", system=SystemSpec(name=structure, kind="framework", structure=structure),
                    properties=[PropertyRequest(name=p) for p in properties], engine="zeopp",
                    conditions=Conditions(probe_radius=Quantity(value=probe, unit="angstrom") if probe else None))
    protocol = get_protocol(GEOMETRY)
    assert protocol.applies_to(spec)
    params, defaults = protocol.parameters(spec)
    jobs = protocol.jobs(params)
    records = run_plan(Plan(jobs=jobs), tmp_path)
    assert all(r.status.value == "succeeded" for r in records.values()), {k: r.message for k, r in records.items()}
    results = protocol.analyze(params, {j.id: tmp_path / j.id for j in jobs}, spec)
    return {r.quantity: r for r in results}, defaults, tmp_path / jobs[0].id


@pytest.mark.engine
@pytest.mark.parametrize("entry", ["VOGTIV_clean_h", "IDIWIB_clean", "ABAVIJ_clean", "SABWAU_SL"])
def test_core_table_is_reproduced(tmp_path, entry):
    """LCD and PLD within 1 %, ASA within 5 % of the CoRE MOF 2019 table (its own Zeo++ run)."""
    ref = f"CoRE2019-ASR:{entry}"
    results, defaults, _ = geometry(tmp_path, ref, ["largest_cavity_diameter", "pore_limiting_diameter",
                                                    "accessible_surface_area", "void_fraction"])
    table = core_reference_values("2019-ASR", entry)
    for quantity, tolerance in (("largest_cavity_diameter", 0.01), ("pore_limiting_diameter", 0.01),
                                ("void_fraction", 0.01)):
        assert math.isclose(results[quantity].value, table[quantity], rel_tol=tolerance), quantity
    asa = results["accessible_surface_area"]
    assert asa.unit == "m^2/g" and math.isclose(asa.value, table["accessible_surface_area"], rel_tol=0.05, abs_tol=1.0)
    assert results["largest_cavity_diameter"].unit == "angstrom"
    assert entry in results["largest_cavity_diameter"].method and "-ha DEF" in results["largest_cavity_diameter"].method
    assert any(d.parameter == "surface-area probe radius" and d.value.startswith("1.655") for d in defaults)


@pytest.mark.engine
def test_channels_psd_and_probe_occupiable_volume(tmp_path):
    """Mg-MOF-74 has one-dimensional hexagonal channels; the probe-occupiable volume lies between
    the probe-centre volume and the geometric pore volume."""
    results, _defaults, job_dir = geometry(tmp_path, "Mg-MOF-74", ["channel_dimensionality", "pore_size_distribution",
                                                                  "probe_occupiable_volume", "void_fraction",
                                                                  "largest_cavity_diameter"])
    assert results["channel_dimensionality"].value == 1
    assert (job_dir / "framework.block").read_text().startswith("0\n")  # no pockets to block
    psd = results["pore_size_distribution"]
    assert Path(psd.data_file).is_file() and (job_dir / "psd.png").stat().st_size > 1000
    assert 8.0 < psd.value <= results["largest_cavity_diameter"].value + 0.1
    pov = results["probe_occupiable_volume_fraction"].value
    data = json.loads((job_dir / "zeopp_results.json").read_text())
    assert data["pov"]["centre_accessible_fraction"] < pov < results["void_fraction"].value


@pytest.mark.engine
def test_narrow_pores_have_no_channel_for_nitrogen(tmp_path):
    results, _d, job_dir = geometry(tmp_path, "MIL-53(Al)-np", ["channel_dimensionality", "pore_limiting_diameter"])
    assert results["pore_limiting_diameter"].value < 2 * 1.655
    assert results["channel_dimensionality"].value == 0


@pytest.mark.engine
def test_user_cif_with_oxidation_states_and_symmetry(tmp_path):
    """A user CIF in a symmetric setting with oxidation states (which abort Zeo++ unless stripped):
    expanded to P1 by pymatgen, same pore geometry as the CoRE P1 file."""
    from pymatgen.io.cif import CifWriter

    original = resolve("CoRE2019-ASR:VOGTIV_clean_h")
    structure = inputs_structure(original.path)
    structure.add_oxidation_state_by_element({"Mg": 2, "O": -2, "C": 0, "H": 1})
    path = tmp_path / "mg_mof74_user.cif"
    CifWriter(structure, symprec=0.01).write_file(path)
    assert "Mg2+" in path.read_text()
    results, defaults, job_dir = geometry(tmp_path / "run", str(path), ["largest_cavity_diameter"])
    assert "Mg2+" not in (job_dir / "framework.cif").read_text()
    table = core_reference_values("2019-ASR", "VOGTIV_clean_h")
    assert math.isclose(results["largest_cavity_diameter"].value, table["largest_cavity_diameter"], rel_tol=0.01)
    assert "mg_mof74_user" in results["largest_cavity_diameter"].method


def inputs_structure(path):
    from pymatgen.io.cif import CifParser

    return CifParser(path).parse_structures(primitive=False)[0]


# ---------------------------------------------------------------------------------------------
# End to end through the graph
# ---------------------------------------------------------------------------------------------


def independent_zeopp_asa(cif: str, probe: float) -> float:
    """Zeo++ run straight through pyzeo (none of simagent's code): ASA in m^2/g."""
    script = (
        "import sys\nfrom pyzeo.extension import AtomNetwork, high_accuracy_atomnet, surface_area\n"
        "a = AtomNetwork.read_from_CIF(sys.argv[1])\nha = a.copy()\nhigh_accuracy_atomnet(ha, 'DEF')\n"
        "text = surface_area(a, float(sys.argv[2]), float(sys.argv[2]), 5000, high_accuracy_atmnet=ha)\n"
        "sys.stderr.write(text.decode())\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, cif, str(probe)], capture_output=True, text=True,
                          timeout=300, check=True)
    return float(re.search(r"ASA_m\^2/g: (\S+)", proc.stderr).group(1))


@pytest.mark.engine
def test_ask_largest_cavity_diameter_of_uio66(settings):
    with Session(settings) as session:
        answer = session.ask("largest cavity diameter of UiO-66").answer
    assert answer.status == "answered", answer.error
    lcd = next(r for r in answer.answers if r.quantity == "largest_cavity_diameter")
    assert lcd.unit == "angstrom"
    table = core_reference_values("2019-ASR", "RUBTAK02_SL")["largest_cavity_diameter"]  # 8.49537 A
    assert math.isclose(lcd.value, table, rel_tol=0.01)
    assert "UiO-66" in answer.summary and "RUBTAK02_SL" in answer.summary
    structure = next(d for d in answer.defaults_applied if d.parameter == "structure")
    assert "UiO-66" in structure.value and "RUBTAK" in structure.reason


@pytest.mark.engine
def test_ask_pld_and_asa_of_hkust1_with_a_186_probe(settings):
    with Session(settings) as session:
        answer = session.ask("pore limiting diameter and accessible surface area of HKUST-1 with a 1.86 Å probe").answer
    assert answer.status == "answered", answer.error
    values = {r.quantity: r for r in answer.answers}
    pld = values["pore_limiting_diameter"]
    assert math.isclose(pld.value, core_reference_values("2019-ASR", "FIQCEN_clean")["pore_limiting_diameter"],
                        rel_tol=0.01)
    asa = values["accessible_surface_area"]
    assert asa.unit == "m^2/g" and "-sa 1.86 1.86 5000" in asa.method and "FIQCEN_clean" in asa.method
    reference = independent_zeopp_asa(resolve("HKUST-1").path, 1.86)
    assert math.isclose(asa.value, reference, rel_tol=0.01)
    assert asa.value < core_reference_values("2019-ASR", "FIQCEN_clean")["accessible_surface_area"]  # 1.655 A probe
    assert "HKUST-1" in answer.summary
    assert not any(d.parameter == "surface-area probe radius" for d in answer.defaults_applied)  # the user chose it


@pytest.mark.engine
def test_ambiguous_name_asks_then_answers(settings):
    with Session(settings) as session:
        first = session.ask("largest cavity diameter of MIL-53")
        assert first.answer.status == "needs_clarification"
        second = session.resume(first.thread_id, "MIL-53(Al)")
    answer = second.answer
    assert answer.status == "answered", answer.error
    lcd = next(r for r in answer.answers if r.quantity == "largest_cavity_diameter")
    assert "SABVUN_clean_h_min" in lcd.method
    table = core_reference_values("2019-ASR", "SABVUN_clean_h_min")["largest_cavity_diameter"]
    assert math.isclose(lcd.value, table, rel_tol=0.01)


def test_retry_rule():
    from tools.zeopp.run import retry_with_nudge

    assert retry_with_nudge(-6, "terminate called... Unable to add edge because nodes have not been added")
    assert retry_with_nudge(-11, "")  # a segfault inside Zeo++
    assert retry_with_nudge(1, "Exiting ...")  # Zeo++'s own exit(1)
    assert not retry_with_nudge(1, "Unable to find radius for Qq in table")  # nudging cannot help
    assert not retry_with_nudge(1, "Traceback (most recent call last):\n  ValueError")  # our bug, not Zeo++'s


@pytest.mark.engine
def test_worker_failure_is_reported_not_raised(tmp_path):
    """Zeo++ ends the whole process on an atom type without a radius; the supervisor survives, writes
    zeopp_error.json with Zeo++'s message and exits non-zero; the analysis raises ReadError."""
    text = (FILES / "benzene_box.cif").read_text().replace(" H ", " Qq ")
    (tmp_path / "framework.cif").write_text(text)
    settings = {"cif": "framework.cif", "tasks": ["free_sphere"], "high_accuracy": "DEF"}
    (tmp_path / "zeopp.json").write_text(json.dumps(settings))
    from tools.zeopp import engine

    proc = subprocess.run(engine.command(), cwd=tmp_path, env=engine.environment(), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode != 0
    error = json.loads((tmp_path / "zeopp_error.json").read_text())
    assert "Unable to find radius for Qq" in error["message"] and len(error["attempts"]) == 1
    with pytest.raises(ReadError, match="Unable to find radius"):
        parse.read_results(tmp_path)


@pytest.mark.engine
def test_dense_structure_has_no_channels(tmp_path):
    from pymatgen.core import Lattice, Structure

    iron = Structure.from_spacegroup("Im-3m", Lattice.cubic(2.87), ["Fe"], [[0, 0, 0]])
    path = tmp_path / "bcc_iron.cif"
    iron.to(filename=str(path))
    results, _d, _job = geometry(tmp_path / "run", str(path), ["channel_dimensionality", "accessible_surface_area"])
    assert results["channel_dimensionality"].value == 0 and results["accessible_surface_area"].value == 0
