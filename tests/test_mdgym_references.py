"""benchmarks/mdgym_dev/run_references.py: a reference may read files from an installed LAMMPS example
folder (metrics.json "example"); they are found there at run time, and a missing folder or file is named
with how to install it, before LAMMPS starts. The examples folder here is built in tmp_path; no engine runs."""

from __future__ import annotations

import json

import pytest

from benchmarks.mdgym_dev import run_references as refs


def _examples(tmp_path, monkeypatch):
    root = tmp_path / "examples"
    (root / "reaxff" / "AuO").mkdir(parents=True)
    (root / "reaxff" / "AuO" / "data.AuO").write_text("960 atoms\n")
    monkeypatch.setenv(refs.EXAMPLES_ENV, str(root))
    return root


def test_example_files_are_found_in_the_installed_folder(tmp_path, monkeypatch):
    root = _examples(tmp_path, monkeypatch)
    spec = {"example": {"folder": "reaxff/AuO", "files": ["data.AuO"]}}
    assert refs.example_files(spec) == [root / "reaxff" / "AuO" / "data.AuO"]
    assert refs.example_files({"metrics": {}}) == []  # a reference that borrows nothing


def test_a_missing_example_folder_or_file_is_named(tmp_path, monkeypatch):
    _examples(tmp_path, monkeypatch)
    with pytest.raises(refs.ExampleFilesMissing, match=r"examples/peptide not found.*lammps-examples"):
        refs.example_files({"example": {"folder": "peptide", "files": ["data.peptide"]}})
    with pytest.raises(refs.ExampleFilesMissing, match=r"ffield.reax.AuO not found in the LAMMPS example folder"):
        refs.example_files({"example": {"folder": "reaxff/AuO", "files": ["data.AuO", "ffield.reax.AuO"]}})


def test_run_task_stops_before_lammps_when_the_example_is_missing(tmp_path, monkeypatch):
    _examples(tmp_path, monkeypatch)
    folder = tmp_path / "7_x"
    folder.mkdir()
    (folder / "in.lammps").write_text("read_data data.peptide\n")
    (folder / "metrics.json").write_text(json.dumps({
        "task": "x", "metrics": {"t": {"column": "Temp"}},
        "example": {"folder": "peptide", "files": ["data.peptide"]}}))
    with pytest.raises(refs.ExampleFilesMissing):  # a RuntimeError: main() reports it and goes on
        refs.run_task(folder, lmp="/nonexistent/lmp")
    assert not (folder / "log.reference").exists()


def test_a_named_published_file_is_extracted_with_its_sha1_or_named_when_absent(tmp_path, monkeypatch):
    """metrics.json "kim_files": the file is taken from the installed OpenKIM item that embeds it,
    with the SHA-1 that item publishes; without the collection the run stops before LAMMPS, naming
    the file and the package."""
    from tools.lammps import kim_files as kim

    assert refs.kim_files({"metrics": {}}, tmp_path) == {}  # a reference that names none
    if kim.kim_models_dir() is not None:
        got = refs.kim_files({"kim_files": ["Al99.eam.alloy"]}, tmp_path / "run")
        # the SHA-1 OpenKIM's item EAM_Dynamo_MishinFarkasMehl_1999_Al__MO_651801486679_005 publishes
        assert got["Al99.eam.alloy"]["sha1"] == "fd0ef42ac3c46795a88edf53b07a4d4b331b64a7"
        assert got["Al99.eam.alloy"]["kim_item"].endswith("MO_651801486679_005")
        assert (tmp_path / "run" / "Al99.eam.alloy").is_file()
    monkeypatch.setenv(kim.KIM_ENV, str(tmp_path / "no-kim"))
    folder = tmp_path / "112_x"
    folder.mkdir()
    (folder / "in.lammps").write_text("pair_coeff * * Al99.eam.alloy Al\n")
    (folder / "metrics.json").write_text(json.dumps({
        "task": "x", "metrics": {"e": {"column": "PotEng"}}, "kim_files": ["Al99.eam.alloy"]}))
    with pytest.raises(refs.PublishedFileMissing, match=r"Al99.eam.alloy: .*openkim-models.*make setup"):
        refs.run_task(folder, lmp="/nonexistent/lmp")
    assert not (folder / "log.reference").exists()


def test_a_metric_may_average_consecutive_runs_joined(tmp_path):
    """metrics.json "runs": [first, last] (0-based, inclusive, -1 the last): the rows of those runs, in order."""
    log = "\n".join(["LAMMPS (test)", "Step Temp", "0 1", "10 3", "Loop time of 1", "Step Temp", "10 5", "20 7",
                     "Loop time of 1", "Step Temp", "20 9", "30 11", "Loop time of 1"])
    spec = {"task": "x.json", "metrics": {"t": {"column": "Temp", "runs": [1, -1]}}}
    entry = refs.summarise(tmp_path, spec, log, 1.0)
    assert entry["metrics"]["t"]["value"] == pytest.approx((5 + 7 + 9 + 11) / 4)
    assert "runs 1-2" in entry["metrics"]["t"]["how"]
    block, _ = refs.joined_runs(refs.thermo_runs(log), 0, 1)
    assert block["Temp"] == [1, 3, 5, 7]
