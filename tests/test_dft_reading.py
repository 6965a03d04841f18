"""Method words choose the DFT / ML-potential engines, in several wordings; no silent substitute."""

import pytest

from agents.planner import candidates
from simagent.backends.expert.reader import read_request


@pytest.mark.parametrize("request_text, engine, props", [
    ("What is the PBE lattice constant of silicon?", "qe", ["lattice_constant"]),
    ("Using density functional theory, compute silicon's equilibrium lattice parameter", "qe", ["lattice_constant"]),
    ("Bulk modulus of fcc aluminium with DFT (PBE)", "qe", ["bulk_modulus"]),
    ("Run Quantum ESPRESSO to get the bulk modulus of aluminum", "qe", ["bulk_modulus"]),
    ("Band gap of bulk silicon?", "qe", ["band_gap"]),
    ("How large is the electronic band-gap of Si in LDA?", "qe", ["band_gap"]),
    ("What is the band gap of bulk silicon from DFT with VASP?", "vasp", ["band_gap"]),
    ("Lattice constant of fcc Cu with CHGNet", "mlp", ["lattice_constant"]),
    ("Copper lattice parameter from a universal machine-learning potential", "mlp", ["lattice_constant"]),
    ("fcc copper bulk modulus using SevenNet", "mlp", ["bulk_modulus"]),
])
def test_method_words_choose_the_engine(request_text, engine, props):
    spec = read_request(request_text)
    assert spec.engine == engine
    assert [p.name for p in spec.properties] == props
    assert spec.system is not None and spec.system.kind == "crystal"


def test_named_model_is_kept():
    assert read_request("Lattice constant of fcc Cu with CHGNet").potential.name_hint == "chgnet"
    assert read_request("fcc Cu lattice constant, SevenNet").potential.name_hint == "sevennet"
    assert read_request("Cu lattice constant with an ML potential").potential.name_hint is None


def test_classical_requests_keep_their_engine():
    assert read_request("Lattice constant of fcc nickel with the Foiles EAM potential").engine == "lammps"


def test_a_dft_request_gets_only_dft_protocols():
    """Asked with DFT, the LAMMPS crystal protocols are no candidates (never a silent substitute)."""
    names = [c.name for c in candidates(read_request("PBE lattice constant of diamond silicon"))]
    assert names and all(n.startswith("qe/") for n in names)
    names = [c.name for c in candidates(read_request("Lattice constant of fcc Cu with CHGNet"))]
    assert names == ["mlp/crystal"]


@pytest.mark.parametrize("request_text, engine, protocol", [
    ("cohesive energy of Si with PBE", "qe", "qe/eos"),
    ("How strongly bound is diamond silicon? Give the DFT cohesive energy per atom", "qe", "qe/eos"),
    ("Cohesive energy of fcc copper with CHGNet", "mlp", "mlp/crystal"),
    ("band structure of Si with VASP inputs", "vasp", "vasp/band_gap"),
    ("Give me the VASP input files for the bands of silicon along the high-symmetry path", "vasp", "vasp/band_gap"),
    ("Plot the electronic band structure of diamond silicon with PBE", "qe", "qe/band_gap"),
])
def test_cohesive_energy_and_band_structure_requests_reach_their_protocols(request_text, engine, protocol):
    spec = read_request(request_text)
    assert spec.engine == engine and not spec.missing
    assert [c.name for c in candidates(spec)] == [protocol]


def test_a_band_structure_request_names_the_band_structure_sets():
    from tools.vasp.cli import wants_band_structure

    assert wants_band_structure("band structure of Si with VASP inputs")
    assert wants_band_structure("VASP inputs for the bands of Si along the high-symmetry lines")
    assert not wants_band_structure("band gap of Si with VASP")
