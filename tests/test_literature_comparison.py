"""A computed answer with literature values from the user's own corpus beside it (issue 12, item 4c):
cited, labelled, never mixed with the computed number, only when the quoted unit fits the property.

The corpora are written here; their sentences are test text, not claims about the materials. The
computed answer is the recorded lammps/framework_guest_md run (tests/test_replay.py), replayed through
the whole graph; the embedding model is the real all-MiniLM-L6-v2."""

from __future__ import annotations

from pathlib import Path

import pytest
from replay import replay_request
from test_replay import CASES

from simagent.knowledge import comparison, embed, library
from simagent.knowledge.index import IndexSettings, VectorIndex
from simagent.models import Answer, Result, SystemSpec, TaskSpec

# the passage a comparison must find: same material, same guest, a diffusion coefficient in m2 s-1, and
# in the same passage an activation energy (kJ/mol: not a unit of a diffusion coefficient)
IRMOF_METHANE = """# Methane mobility in the cubic framework IRMOF-1

## Results

Pulsed-field-gradient NMR was used on the methane-loaded crystals at room temperature.
The self-diffusion coefficient of methane in IRMOF-1 was 3.0 × 10−8 m2 s−1 at 298 K and low loading.
The activation energy of methane diffusion in IRMOF-1 was 4.1 kJ/mol.
For comparison, the self-diffusion coefficient of methane in ZIF-8 is about 1.5 × 10−10 m2 s−1.
"""
# the same property and guest in another framework
ZIF8_METHANE = """# Slow methane transport in ZIF-8

## Results

The self-diffusion coefficient of methane in ZIF-8 was 1.2 × 10−10 m2 s−1 at 298 K.
"""
# nothing to do with the question
WATER = """# Heat transport in water models

## Discussion

The thermal conductivity of TIP4P/2005 water was 0.79 W/(m K) at 300 K and 1 bar.
"""
# the right material and guest, but only a number whose unit is not one of a diffusion coefficient
IRMOF_ENERGY_ONLY = """# Energetics of methane hopping in IRMOF-1

## Results

Transition-state theory gives an activation energy of 3.9 kJ/mol for methane diffusion in IRMOF-1.
"""


def user_index(folder: Path, texts: dict[str, str], settings: IndexSettings | None = None) -> Path:
    papers = folder / "papers"
    papers.mkdir(parents=True)
    for name, text in texts.items():
        (papers / name).write_text(text)
    library.add_files(VectorIndex(folder / "rag_index", settings), sorted(papers.iterdir()), kind="literature")
    return folder / "rag_index"


def computed(value: float = 3.4e-8) -> tuple[Answer, TaskSpec]:
    request = "Self-diffusion coefficient of CH4 in IRMOF-1 at 300 K"
    spec = TaskSpec(request=request, system=SystemSpec(name="IRMOF-1", kind="framework", guests=["CH4"]))
    result = Result(quantity="self_diffusion_coefficient", value=value, unit="m^2/s", uncertainty=5e-9,
                    job="guest_md", method="MSD slope of the guest molecules")
    reply = Answer(status="answered", request=request, answers=[result], summary="The self-diffusion coefficient ...")
    return reply, spec


@pytest.mark.parametrize(("sentence", "expected"), [
    ("D was 3.0 × 10−8 m2 s−1 at 298 K", [(3.0e-8, "m2/s"), (298.0, "K")]),
    ("D = (2.1 ± 0.2) x 10^-9 m^2/s", [(2.1e-9, "m^2/s")]),
    ("we find 5.8e-10 m2/s", [(5.8e-10, "m2/s")]),
    ("about 1.2×10⁻⁴ cm²/s.", [(1.2e-4, "cm^2/s")]),
    ("a density of 0.59 g cm-3.", [(0.59, "g/cm3")]),
    ("the framework IRMOF-1 and ZIF-8", []),  # names with numbers are not values
])
def test_numbers_with_units_are_read_as_quoted(sentence, expected):
    found = comparison.quoted_values(sentence)
    assert [(pytest.approx(v, rel=1e-12), u) for v, u in expected] == found


def test_replayed_answer_gets_the_cited_literature_value_beside_the_computed_one(tmp_path, settings, monkeypatch):
    data = tmp_path / "data"
    user_index(data, {"irmof1.md": IRMOF_METHANE, "zif8.md": ZIF8_METHANE, "water.md": WATER})
    monkeypatch.setenv("SIMAGENT_DATA", str(data))

    reply = replay_request(CASES["lammps/framework_guest_md"], settings, monkeypatch).answer

    assert reply.status == "answered"
    [result] = reply.answers  # the computed number stays the only result
    assert result.quantity == "self_diffusion_coefficient" and result.unit == "m^2/s"
    # not the ZIF-8 values (its own paper, or quoted for comparison in the IRMOF-1 paper), not the kJ/mol
    # activation energy, nothing about water
    [value] = reply.literature
    assert value.value == pytest.approx(3.0e-8) and value.unit == "m2/s"
    assert value.value_in_result_unit == pytest.approx(3.0e-8) and value.result_unit == "m^2/s"
    assert "IRMOF-1" in value.quote and "kJ/mol" not in value.quote
    cited = reply.citations[value.citation - 1]
    assert cited.kind == "literature" and cited.source.endswith("irmof1.md") and cited.section.endswith("Results")
    head, _, literature = reply.summary.partition(comparison.HEADER)
    assert literature and "3e-08 m2/s" in literature and f"[{value.citation}]" in literature
    assert "3e-08" not in head and f"{result.value:.6g}" in head  # the computed sentence has no literature number


def test_no_user_corpus_adds_nothing_and_loads_no_model(tmp_path, monkeypatch):
    monkeypatch.setattr(embed, "encode", lambda *a, **k: pytest.fail("no corpus: nothing may be embedded"))
    reply, spec = computed()
    kb = library.KnowledgeBase({"user": tmp_path / "no-index"})
    assert comparison.add_literature(reply, spec, kb) == reply


@pytest.mark.parametrize("texts", [
    {"zif8.md": ZIF8_METHANE, "water.md": WATER},  # another framework; an unrelated paper
    {"irmof1-energy.md": IRMOF_ENERGY_ONLY},  # right material and guest, but no unit of a diffusion coefficient
], ids=["unrelated", "unit-mismatch"])
def test_passages_that_do_not_fit_add_nothing(tmp_path, texts):
    kb = library.KnowledgeBase({"user": user_index(tmp_path, texts)})
    reply, spec = computed()
    assert kb.search(comparison.query(reply.answers[0], spec.system), k=3)  # the corpus is searched ...
    assert comparison.add_literature(reply, spec, kb) == reply  # ... and nothing is added


def test_a_failed_answer_gets_no_literature(tmp_path):
    kb = library.KnowledgeBase({"user": user_index(tmp_path, {"irmof1.md": IRMOF_METHANE})})
    reply, spec = computed()
    failed = reply.model_copy(update={"status": "failed", "answers": []})
    assert comparison.add_literature(failed, spec, kb) == failed
    assert comparison.add_literature(reply, spec, kb).literature  # the same corpus does answer a computed one


def test_a_corpus_indexed_under_other_settings_is_named_not_searched(tmp_path):
    folder = user_index(tmp_path, {"irmof1.md": IRMOF_METHANE}, IndexSettings(chunk_size=400))
    kb = library.KnowledgeBase({"user": folder})
    reply, spec = computed()
    updated = comparison.add_literature(reply, spec, kb)
    assert updated.literature == [] and updated.answers == reply.answers and updated.citations == []
    assert "no literature comparison" in updated.summary and "simagent rag rebuild" in updated.summary
