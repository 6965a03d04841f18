"""Where LAMMPS's own examples and distribution potentials are (tools.lammps.examples)."""

from tools.lammps import examples


def test_installed_examples_hold_their_data_files(monkeypatch):
    monkeypatch.delenv(examples.EXAMPLES_ENV, raising=False)
    folder = examples.example_folder("peptide")
    assert folder is not None, examples.INSTALL_HINT
    header = (folder / "data.peptide").read_text().splitlines()[:6]
    assert any(line.split()[1:] == ["atoms"] for line in header if len(line.split()) == 2)
    assert (examples.example_folder("reaxff/AuO") / "data.AuO").is_file()
    assert (examples.distribution_potentials_dir() / "SiO.tersoff").is_file()


def test_another_examples_folder_and_unknown_names(tmp_path, monkeypatch):
    (tmp_path / "melt").mkdir()
    monkeypatch.setenv(examples.EXAMPLES_ENV, str(tmp_path))
    assert examples.examples_dir() == tmp_path
    assert examples.example_folder("melt") == tmp_path / "melt"
    assert examples.example_folder("no-such-example") is None
    assert examples.example_folder("../melt") is None  # no way out of the examples folder
    monkeypatch.setenv(examples.EXAMPLES_ENV, str(tmp_path / "absent"))
    assert examples.examples_dir() is None and examples.example_folder("melt") is None
