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


def test_a_local_file_is_checked_against_its_sha1_before_lammps(tmp_path):
    """metrics.json "local_files": a potential neither LAMMPS nor its examples ship, read from a local
    path; absent or different (sha1), the reference stops before LAMMPS starts, naming the file."""
    import hashlib

    pot = tmp_path / "X.eam.alloy"
    pot.write_text("a setfl table\n")
    good = hashlib.sha1(pot.read_bytes()).hexdigest()
    assert refs.local_files({"local_files": [{"path": str(pot), "sha1": good}]}) == [pot]
    with pytest.raises(refs.LocalFileMismatch, match=r"X.eam.alloy has sha1 .* not the verified 0+"):
        refs.local_files({"local_files": [{"path": str(pot), "sha1": "0" * 40}]})
    folder = tmp_path / "112_x"
    folder.mkdir()
    (folder / "in.lammps").write_text("pair_coeff * * Y.eam.alloy Al\n")
    (folder / "metrics.json").write_text(json.dumps({
        "task": "x", "metrics": {"t": {"column": "Temp"}},
        "local_files": [{"path": str(tmp_path / "Y.eam.alloy"), "sha1": good}]}))
    with pytest.raises(refs.LocalFileMismatch, match=r"Y.eam.alloy not found"):  # a RuntimeError, as above
        refs.run_task(folder, lmp="/nonexistent/lmp")
    assert not (folder / "log.reference").exists()
