"""The web page in a real browser: Debian's Chromium driven by Playwright against `simagent web`'s
app under uvicorn on 127.0.0.1. Each flow ends in a screenshot (pytest's tmp folder, or
$SIMAGENT_SCREENSHOTS) and checks that its key elements are visible.

Runs: the Foiles Ni EAM relaxation (real LAMMPS, about a second). Reference values: Foiles, Baskes &
Daw, Phys. Rev. B 33, 7983 (1986), Table I: Ni a0 = 3.52 angstrom, E_coh = 4.45 eV."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer
from test_review_repairs import halts_at_large_vmax, repair_replies  # noqa: F401  (a fixture, used by name)
from web_browser import CHROMIUM, chromium, serve

from simagent.config import load_settings

pytest.importorskip("playwright.sync_api", reason="playwright is installed by `make setup`")
if not Path(CHROMIUM).is_file():
    pytest.skip("Debian's chromium is installed by `make setup`", allow_module_level=True)

pytestmark = pytest.mark.engine

NICKEL = "Cohesive energy and lattice constant of fcc nickel with the Foiles (u3) EAM potential"
JOB = "crystal_relax-relax"
SIMAGENT = str(Path(sys.executable).parent / "simagent")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    folder = tmp_path_factory.mktemp("web")
    with pytest.MonkeyPatch.context() as mp:
        for name in ("SIMAGENT_BACKEND", "SIMAGENT_BASE_URL", "OPENAI_BASE_URL", "SIMAGENT_API_KEY",
                     "OPENAI_API_KEY", "SIMAGENT_LMP", "SIMAGENT_WEB_TOKEN"):
            mp.delenv(name, raising=False)
        mp.setenv("SIMAGENT_CONFIG", str(folder / "no-config.toml"))
        yield folder


@pytest.fixture(scope="module")
def settings_mod(env):
    return load_settings(workdir=env / "runs", backend="expert")


@pytest.fixture(scope="module")
def url(settings_mod):
    with serve(settings_mod) as base:
        yield base


@pytest.fixture(scope="module")
def screens(tmp_path_factory):
    folder = os.environ.get("SIMAGENT_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screens")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    p = context.new_page()
    p.set_default_timeout(60_000)
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    yield p
    context.close()
    assert errors == [], errors  # no script error on the page


def shot(page, screens: Path, name: str) -> Path:
    path = screens / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000  # a rendered page, not a blank one
    return path


def visible(page, selector: str) -> None:
    page.wait_for_selector(selector, state="visible")


def ask(page, url: str, request: str, review: bool) -> None:
    page.goto(url)
    page.fill("#request-input", request)
    if not review:
        page.uncheck("#review-inputs")
    page.click("#send")


def results(page) -> dict[str, str]:
    rows = page.locator("#results tbody tr")
    return {rows.nth(i).locator("td").nth(0).inner_text(): rows.nth(i).locator("td").nth(1).inner_text()
            for i in range(rows.count())}


def test_request_is_answered(page, url, screens):
    ask(page, url, NICKEL, review=False)
    visible(page, "#answer")
    assert page.inner_text("#status") == "answered"
    values = results(page)
    assert abs(float(values["lattice_constant"]) - 3.52) < 0.01  # Foiles 1986
    assert abs(abs(float(values["cohesive_energy"])) - 4.45) < 0.01
    visible(page, "#plan-dag g.job.succeeded")
    visible(page, "#defaults tbody tr")
    assert "job crystal_relax-relax: succeeded in" in page.inner_text("#events")
    visible(page, "#thread-list .badge.answered")
    visible(page, "#archive")
    shot(page, screens, "answered")
    # the job's log opens read-only from the results table
    href = page.locator("#results tbody tr").first.locator("a", has_text="log").get_attribute("href")
    log = page.request.get(url + href)
    assert log.ok and "Loop time" in log.text()


def test_clarification_answered_in_place(page, url, screens):
    ask(page, url, "What is the lattice constant?", review=False)
    visible(page, "#clarify")
    assert "material" in page.inner_text("#question")
    assert page.inner_text("#status") == "clarification"
    shot(page, screens, "clarification")
    page.fill("#reply-input", "fcc nickel with the Foiles EAM potential")
    page.click("#reply-send")
    visible(page, "#answer")
    assert abs(float(results(page)["lattice_constant"]) - 3.52) < 0.01
    assert "fcc nickel with the Foiles EAM potential" in page.inner_text("#chat")


def test_review_with_an_edit_lands_in_the_run(page, url, screens, settings_mod):
    ask(page, url, NICKEL, review=True)
    visible(page, "#review")
    area = page.locator(f'textarea.input-file[data-job="{JOB}"][data-name="in.lammps"]')
    text = area.input_value()
    assert "pair_coeff * * Ni_u3.eam" in text
    edited = text.replace("thermo          50\n", 'thermo          50\nprint           "SIMAGENT browser edit"\n')
    assert edited != text
    area.fill(edited)
    shot(page, screens, "review")
    page.click("#approve")
    visible(page, "#answer")
    assert page.inner_text("#status") == "answered"
    assert "reviewer" in page.inner_text("#corrections")
    thread_id = page.inner_text("#thread-id")
    job_dir = settings_mod.workdir.resolve() / thread_id / "jobs" / JOB
    assert "SIMAGENT browser edit" in (job_dir / "in.lammps").read_text()
    assert "SIMAGENT browser edit" in (job_dir / "log.lammps").read_text()  # LAMMPS ran the edit


def test_resume_a_thread_started_in_the_cli(page, url, screens, settings_mod, env):
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_"))}
    environ["SIMAGENT_CONFIG"] = str(env / "no-config.toml")
    proc = subprocess.run([SIMAGENT, "ask", "--json", "--backend", "expert", "--workdir", str(settings_mod.workdir),
                           "What is the lattice constant?"], capture_output=True, text=True, env=environ,
                          timeout=300)
    assert proc.returncode == 3, proc.stderr
    thread_id = json.loads(proc.stdout)["thread_id"]
    page.goto(url)
    page.click(f'#thread-list a[data-thread="{thread_id}"]')
    visible(page, "#clarify")
    assert page.inner_text("#thread-id") == thread_id
    page.fill("#reply-input", "fcc nickel with the Foiles EAM potential")
    page.click("#reply-send")
    visible(page, "#review")  # the web reviews inputs before running
    page.click("#approve")
    visible(page, "#answer")
    assert page.inner_text("#status") == "answered"
    shot(page, screens, "resumed-from-cli")
    saved = json.loads((settings_mod.workdir.resolve() / thread_id / "answer.json").read_text())
    assert saved["status"] == "answered" and saved["thread_id"] == thread_id


# A repair only an LLM proposes, as in tests/test_review_repairs.py: the input halts while
# vmax > 0.0005, the scripted LLM lowers vmax, and the reviewer rejects that in the page.
@pytest.mark.usefixtures("halts_at_large_vmax")
def test_rejected_repair(page, env, tmp_path, screens):
    with FakeOpenAIServer(repair_replies) as base_url:
        settings = load_settings(workdir=tmp_path / "runs", backend="hybrid", hybrid_llm="openai",
                                 base_url=base_url, model="fake-model", llm_retries=0)
        with serve(settings) as url:
            ask(page, url, NICKEL, review=True)
            visible(page, "#review")
            page.click("#approve")  # the first run halts; the LLM proposes a repair
            visible(page, "#repair-diff")
            visible(page, "#reject-repair")
            assert page.inner_text("#review-title") == "Review the proposed repair"
            diff = page.inner_text("#repair-diff")
            assert "+fix             relax all box/relax iso 0.0 vmax 0.0005" in diff
            assert "-fix             relax all box/relax iso 0.0 vmax 0.001" in diff
            assert "vmax: 0.001 -> 0.0005" in page.inner_text("#repair-changes")
            shot(page, screens, "repair")
            page.click("#reject-repair")
            visible(page, "#answer")
            assert page.inner_text("#status") == "failed"
            assert re.search(r"rejected\s+by the reviewer", page.inner_text("#summary"))
            thread_id = page.inner_text("#thread-id")
    jobs = settings.workdir.resolve() / thread_id / "jobs"
    assert sorted(p.name for p in jobs.iterdir()) == [f"{JOB}.failed1"]  # the repair never ran


LJ_FLUID = ("Self-diffusion coefficient, radial distribution function and coordination number of a "
            "Lennard-Jones fluid at T* = 1.5 and rho* = 0.6 with 256 atoms, 1000 equilibration steps and "
            "5000 production steps")


@pytest.mark.slow  # a 6000-step LJ MD run with trajectory analysis (about 10 s of CPU)
def test_fluid_plots_are_shown(page, url, screens):
    ask(page, url, LJ_FLUID, review=False)
    visible(page, "#answer")
    assert page.inner_text("#status") == "answered"
    assert set(results(page)) == {"rdf_first_peak", "coordination_number", "self_diffusion_coefficient"}
    for name in ("thermo.png", "gr.png", "msd.png"):
        image = page.locator(f'#plots img[alt="jobs/fluid_md-md/{name}"]')
        image.wait_for(state="visible")
        assert image.evaluate("img => img.complete && img.naturalWidth") > 300  # loaded, not broken
    shot(page, screens, "fluid-plots")


def test_interrupted_thread_resumed_with_the_button(page, url, screens, monkeypatch):
    """The process 'crashes' in the analysis once: the thread is listed as interrupted, and Resume
    continues it from its checkpoint without running the finished job again."""
    from simagent.protocols import get_protocol

    protocol = get_protocol("lammps/crystal_relax")
    original, calls = protocol.analyze, {"n": 0}

    def crash_once(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("simulated crash")
        return original(*args, **kwargs)

    monkeypatch.setattr(protocol, "analyze", crash_once)
    ask(page, url, NICKEL, review=False)
    visible(page, "#resume")
    assert page.inner_text("#status") == "interrupted"
    assert "simulated crash" in page.inner_text("#events")
    shot(page, screens, "interrupted")
    page.click("#resume")
    visible(page, "#answer")
    assert page.inner_text("#status") == "answered" and calls["n"] == 2
    events = page.inner_text("#events")
    assert events.count("job crystal_relax-relax: succeeded") == 1  # resumed at the analysis: not run again
    assert events.rindex("analysis: analysing outputs") > events.index("simulated crash")


def test_token_login(page, env, tmp_path):
    token = "browser-token-0123456789"
    settings = load_settings(workdir=tmp_path / "runs", backend="expert")
    with serve(settings, token=token) as url:
        page.goto(url)
        visible(page, "#login")
        page.fill("#login-token", "wrong-token-wrong-token")
        page.click("#login-form button")
        page.locator("#login-error", has_text="wrong token").wait_for()
        page.fill("#login-token", token)
        page.click("#login-form button")
        page.wait_for_selector("#login", state="hidden")
        assert page.request.get(url + "/api/threads").ok  # the HttpOnly cookie is set
        assert token not in page.content()
