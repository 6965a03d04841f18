"""Structure agent: names, REFCODEs, CoRE entries and CIF paths -> one checked structure; CIF checks
on small crafted bad files; the curated synonym table against the CoRE MOF 2019 database; the guest
library; the expert reader's framework domain."""

import json
import math
import shutil
from pathlib import Path

import pytest

from agents.structure import structure_node
from simagent.backends.expert import ExpertBackend
from simagent.errors import RequestError
from simagent.materials import structures as st
from simagent.models import PropertyRequest
from simagent.paths import forcefields_dir

FILES = Path(__file__).parent / "files" / "zeopp"


# ---------------------------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "ref"),
    [
        ("HKUST-1", "CoRE2019-ASR:FIQCEN_clean"),
        ("Cu-BTC", "CoRE2019-ASR:FIQCEN_clean"),
        ("cu btc", "CoRE2019-ASR:FIQCEN_clean"),
        ("MOF-5", "CoRE2019-ASR:EDUSIF_clean"),
        ("IRMOF-1", "CoRE2019-ASR:EDUSIF_clean"),
        ("ZIF-8", "CoRE2019-ASR:OFERUN_clean"),
        ("UiO-66", "CoRE2019-ASR:RUBTAK02_SL"),
        ("CPO-27-Mg", "CoRE2019-ASR:VOGTIV_clean_h"),
        ("Mg-MOF-74", "CoRE2019-ASR:VOGTIV_clean_h"),
        ("MIL-53(Al)", "CoRE2019-ASR:SABVUN_clean_h_min"),
        ("MIL-47", "CoRE2019-ASR:IDIWIB_clean"),
    ],
)
def test_common_names_resolve_without_extraction(name, ref):
    resolved = st.resolve(name, fetch=False)
    assert resolved.ref == ref
    assert "mof_synonyms.json" in resolved.how


def test_dataset_preference_and_refcode_rule():
    assert st.resolve("HKUST-1", dataset="FSR", fetch=False).ref == "CoRE2019-FSR:FIQCEN_freeONLY"
    by_code = st.resolve("FIQCEN", fetch=False)
    assert by_code.ref == "CoRE2019-ASR:FIQCEN_clean" and "CoRE2019-FSR:FIQCEN_freeONLY" in by_code.candidates
    assert st.resolve("OFERUN06", fetch=False).id == "OFERUN06_clean"  # a numbered re-determination
    assert st.resolve("fiqcen_freeONLY", fetch=False).ref == "CoRE2019-FSR:FIQCEN_freeONLY"  # entry name
    assert st.resolve("CoRE2019-ASR:RUBTAK01_SL", fetch=False).id == "RUBTAK01_SL"  # canonical reference


def test_ambiguous_names_list_candidates():
    with pytest.raises(st.AmbiguousStructure) as family:
        st.resolve("MIL-53", fetch=False)
    assert any("SABVUN_clean_h_min" in c for c in family.value.candidates)
    assert any("MINVUA_SL" in c for c in family.value.candidates)
    with pytest.raises(st.AmbiguousStructure) as refcode:
        st.resolve("RUBTAK", fetch=False)  # no plain RUBTAK entry, nine re-determinations
    assert "RUBTAK02_SL" in refcode.value.candidates and "RUBTAK01_SL" in refcode.value.candidates
    question = st.structure_question("MOF-74")
    assert "VOGTIV_clean_h" in question and "ORIWET_clean" in question


def test_unknown_name_is_a_clear_error():
    with pytest.raises(RequestError, match="unknown framework 'ZIF-1000'.*Did you mean ZIF-8"):
        st.resolve("ZIF-1000", fetch=False)
    with pytest.raises(RequestError, match="no CIF file"):
        st.resolve("/nonexistent/folder/x.cif")


def test_user_cif_uses_the_file_name_as_id(tmp_path):
    path = tmp_path / "my_framework.cif"
    shutil.copy(FILES / "benzene_box.cif", path)  # its data_ block is called 'benzene'
    resolved = st.resolve(str(path))
    assert resolved.id == "my_framework" and resolved.source == "user CIF" and resolved.ref == str(path)
    report, structure = st.checked(resolved)
    assert report.id == "my_framework" and len(structure) == 12


def test_extraction_is_byte_identical_to_the_archive_member():
    import tarfile

    entry = "ABAVIJ_clean"  # near the start of the archive: a plain streaming read is quick there
    path = st.extract_core_cifs("2019-ASR", [entry])[entry]
    with tarfile.open(st.core_data_dir() / "2019-ASR.tar.xz", "r|xz") as tar:
        member = next(m for m in tar if m.name.endswith(f"/{entry}.cif") or m.name == f"{entry}.cif")
        original = tar.extractfile(member).read()
    assert path.read_bytes() == original
    assert st._index_path("2019-ASR").is_file()  # later look-ups stop at the member


# ---------------------------------------------------------------------------------------------
# The curated table against the database
# ---------------------------------------------------------------------------------------------


def _records():
    return [r for r in st.synonyms_table()["frameworks"] if not r.get("ambiguous")]


def test_every_curated_entry_exists_in_core_mof():
    for record in st.synonyms_table()["frameworks"]:
        if record.get("ambiguous"):
            for variant in record["variants"]:
                dataset, entry = variant["entry"].split(":")
                assert entry in st.core_table(dataset.replace("CoRE", "")), variant
            continue
        assert record["citation"] or record["refcode_source"], record["name"]
        for dataset, entry in record["entries"].items():
            assert entry in st.core_table(dataset), (record["name"], entry)
            assert entry.startswith(record["refcode"]), (record["name"], entry)


def test_curated_entries_have_the_published_composition():
    """Each name's CoRE CIF has the stoichiometry of the framework it is named after."""
    by_dataset: dict[str, list[str]] = {}
    for record in _records():
        for dataset, entry in record["entries"].items():
            by_dataset.setdefault(dataset, []).append(entry)
    paths = {}
    for dataset, entries in by_dataset.items():
        for entry, path in st.extract_core_cifs(dataset, entries).items():
            paths[(dataset, entry)] = path
    for record in _records():
        expected = record["expect"]["stoichiometry"]
        for dataset, entry in record["entries"].items():
            report, structure = st.check_cif(paths[(dataset, entry)])
            if dataset == "2019-FSR" and "freeONLY" in entry:
                continue  # bound solvent kept: extra O and H
            assert report.ok, (entry, report.problems)
            counts = structure.composition.get_el_amt_dict()
            metal = next(iter(expected))
            scale = counts[metal] / expected[metal]
            for element, n in expected.items():
                assert math.isclose(counts.get(element, 0), n * scale, rel_tol=1e-6), (record["name"], entry, counts)


# ---------------------------------------------------------------------------------------------
# CIF checks
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("malformed.cif", "not a readable CIF"),
        ("missing_hydrogens.cif", "hydrogens are probably missing"),
        ("charged.cif", "charges sum to +0.5000 e"),
        ("partial_occupancy.cif", "partial occupancies"),
    ],
)
def test_bad_cifs_are_stopped_with_a_message(name, message):
    report, _structure = st.check_cif(FILES / name)
    assert not report.ok
    assert any(message in p for p in report.problems), report.problems
    resolved = st.resolve(str(FILES / name))
    with pytest.raises(RequestError, match="did not pass the structure checks"):
        st.checked(resolved)


def test_good_cif_passes():
    report, structure = st.check_cif(FILES / "benzene_box.cif")
    assert report.ok and report.n_atoms == 12 and report.formula == "C6 H6"


# ---------------------------------------------------------------------------------------------
# Mentions in text and the expert reader's framework domain
# ---------------------------------------------------------------------------------------------


def test_mentions_in_text():
    text = "PLD of HKUST-1 (Cu-BTC), Mg-MOF-74, MIL-53(Al), FIQCEN_clean, RUBTAK02 and ./x/my.cif but not IRMOF-10"
    found = [(m.text, m.kind) for m in st.find_mentions(text)]
    assert found == [("HKUST-1", "name"), ("Cu-BTC", "name"), ("Mg-MOF-74", "name"), ("MIL-53(Al)", "name"),
                     ("FIQCEN_clean", "core_entry"), ("RUBTAK02", "refcode"), ("./x/my.cif", "cif")]


def _spec(request):
    return ExpertBackend().task_spec(request)


def test_reader_sets_a_framework_system_and_overrides_element_guesses():
    spec = _spec("What is the pore limiting diameter of Cu-BTC?")
    assert spec.system.kind == "framework" and spec.system.structure == "CoRE2019-ASR:FIQCEN_clean"
    assert spec.system.elements == [] and spec.engine == "zeopp" and not spec.missing
    spec = _spec("Void fraction of Mg-MOF-74")
    assert spec.system.structure == "CoRE2019-ASR:VOGTIV_clean_h" and spec.system.elements == []
    assert _spec("LCD of HKUST-1, FSR").system.structure == "CoRE2019-FSR:FIQCEN_freeONLY"
    with pytest.raises(RequestError, match="no 2019-FSR entry"):
        _spec("largest cavity diameter of Mg-MOF-74 in the FSR set")


def test_reader_probe_radius_guests_mixture_and_pressures():
    spec = _spec("pore limiting diameter and accessible surface area of HKUST-1 with a 1.86 Å probe")
    assert spec.conditions.probe_radius.value == 1.86 and spec.conditions.probe_radius.unit == "angstrom"
    assert [p.name for p in spec.properties] == ["pore_limiting_diameter", "accessible_surface_area"]
    spec = _spec("ASA of UiO-66 with a probe diameter of 3.72 A")
    assert spec.conditions.probe_radius.value == 1.86
    spec = _spec("CO2 uptake from a 15:85 CO2/N2 mixture in Mg-MOF-74 at 298 K and 0.1, 1 and 10 bar")
    assert spec.system.guests == ["CO2", "N2"] and spec.engine == "raspa"
    assert {c.species: c.mole_fraction for c in spec.conditions.composition} == {"CO2": 0.15, "N2": 0.85}
    assert [q.value for q in spec.conditions.pressures] == [0.1, 1.0, 10.0] and spec.conditions.pressure is None
    spec = _spec("methane uptake in IRMOF-1 at 35 bar and 298 K")
    assert spec.system.guests == ["CH4"] and spec.conditions.pressure.value == 35


def test_reader_asks_for_ambiguous_or_missing_frameworks_and_rejects_unknown_ones():
    spec = _spec("largest cavity diameter of MIL-53")
    assert spec.missing == ["structure"] and spec.system.name == "MIL-53" and spec.system.structure is None
    spec = _spec("largest cavity diameter of MIL-53\nMIL-53(Al)")  # the reply settles it
    assert not spec.missing and spec.system.structure == "CoRE2019-ASR:SABVUN_clean_h_min"
    spec = _spec("What is the pore limiting diameter?")
    assert spec.missing == ["structure"]
    with pytest.raises(RequestError, match="unknown framework 'zif-1000'"):
        _spec("pore limiting diameter of ZIF-1000")
    assert _spec("Lattice constant of fcc nickel").system.kind == "crystal"  # other domains untouched


# ---------------------------------------------------------------------------------------------
# Guest library
# ---------------------------------------------------------------------------------------------


def test_guest_library_is_complete_and_neutral():
    guests = json.loads((forcefields_dir() / "guests.json").read_text())["molecules"]
    assert set(guests) == {"CH4", "CO2", "N2", "O2", "H2", "Ar", "Kr", "Xe", "H2O", "ethane", "propane", "n-butane"}
    for name, entry in guests.items():
        assert entry["default_model"] in entry["models"], name
        for model_name, model in entry["models"].items():
            assert model["citation"], (name, model_name)
            assert abs(sum(s["charge"] for s in model["sites"])) < 1e-9, (name, model_name)
        assert entry["all_atom_geometry_A"] and entry["probe_radius_A"] > 1.0
    assert guests["N2"]["probe_radius_A"] == 1.655  # the CoRE MOF surface-area probe
    sites = guests["CO2"]["models"]["TraPPE"]["sites"]
    trappe = {s["name"]: (s["epsilon_K"], s["sigma_A"], s["charge"]) for s in sites}
    assert trappe == {"O_co2": (79.0, 3.05, -0.35), "C_co2": (27.0, 2.80, 0.70)}
    assert "EPM2" in guests["CO2"]["models"]


def test_overlapping_atoms_stop_energy_runs_but_not_geometry():
    """Overlapping atoms (a disorder model): pore geometry runs with a warning, energy-based runs refuse
    and say what to use instead."""
    report, _structure = st.check_cif(FILES / "overlapping_atoms.cif")
    assert report.ok and any("overlapping atoms closer than 0.5 A (C1-C2 0.20 A)" in p for p in report.energy_problems)
    resolved = st.resolve(str(FILES / "overlapping_atoms.cif"))
    with pytest.raises(RequestError, match="energy-based run: .*overlapping.*cleaned CIF"):
        st.checked(resolved)
    report, structure = st.checked(resolved, "geometry")
    assert structure is not None and any("overlapping" in w and "pore geometry" in w for w in report.warnings)


@pytest.mark.skipif(not st.refcode_entries("PUPJER"), reason="CoRE MOF 2019 not installed")
def test_core_entry_with_a_disorder_model():
    """PUPJER_clean (CoRE MOF 2019 ASR): 18 pairs of atoms 0.36 A apart."""
    resolved = st.resolve("PUPJER_clean")
    report, _structure = st.check_cif(resolved.path)
    assert "18 pair(s)" in report.energy_problems[0] and "0.36 A" in report.energy_problems[0]
    with pytest.raises(RequestError, match="FSR has no other entry for PUPJER: give a cleaned CIF"):
        st.checked(resolved)
    assert st.checked(resolved, "geometry")[0].warnings


def test_structure_node_records_the_choice_and_asks_on_ambiguity():
    from types import SimpleNamespace

    from simagent.state import RunState

    runtime = SimpleNamespace(context=SimpleNamespace(report=lambda *args, **kwargs: None))
    spec = _spec("LCD of HKUST-1")
    command = structure_node(RunState(request="LCD of HKUST-1", thread_id="t", root="/tmp", spec=spec), runtime)
    assert command.goto == "planner" and "FIQCEN_clean" in command.update["decisions"][-1].detail
    spec.system.structure = "MIL-53"
    command = structure_node(RunState(request="LCD of MIL-53", thread_id="t", root="/tmp", spec=spec), runtime)
    assert command.goto == "clarify" and "SABVUN_clean_h_min" in command.update["question"]
    spec.system.structure = str(FILES / "overlapping_atoms.cif")
    command = structure_node(RunState(request="LCD", thread_id="t", root="/tmp", spec=spec), runtime)
    assert command.goto == "planner" and "overlapping" in command.update["decisions"][-1].detail
    spec.properties = [PropertyRequest(name="uptake")]
    command = structure_node(RunState(request="uptake", thread_id="t", root="/tmp", spec=spec), runtime)
    assert command.goto == "response" and "overlapping" in command.update["error"]


@pytest.mark.skipif(st.raspa_structure_dir() is None, reason="RASPA2 not installed")
@pytest.mark.parametrize("text", ["MFI", "mfi", "all-silica MFI", "the all-silica zeolite MFI", "Silicalite-1",
                                  "silicalite"])
def test_zeolite_code_and_description_find_the_all_silica_structure(text):
    assert st.resolve(text, fetch=False).ref == "RASPA:MFI_SI"


def test_a_description_alone_names_no_framework():
    with pytest.raises(RequestError, match="unknown framework"):
        st.resolve("the zeolite", fetch=False)


@pytest.mark.skipif(st.raspa_structure_dir() is None, reason="RASPA2 not installed")
@pytest.mark.parametrize("request_text", [
    "methane uptake in silicalite-1 at 300 K and 10 bar",
    "CH4 loading in Silicalite at 298 K, 5 bar?",
])
def test_alkanes_in_silicalite_use_the_zeolite_force_field(request_text):
    """Silicalite-1 is all-silica MFI; alkanes there default to Dubbeldam et al. 2004 (the force field
    RASPA users use for alkanes in all-silica zeolites), not UFF."""
    from simagent.protocols import protocols_for

    spec = ExpertBackend().task_spec(request_text)
    assert spec.system.structure == "RASPA:MFI_SI"
    params, defaults = protocols_for(spec)[0].parameters(spec)
    assert params.force_field == "Dubbeldam2004"
    assert any(d.parameter == "framework force field" and "alkanes" in d.reason for d in defaults)
