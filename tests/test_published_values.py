"""The foundation's reference requests, end to end with the expert backend and real LAMMPS.

Each request is checked against its published value; its alternative wordings must lead to the
same engine inputs (so the physics check of one wording covers all of them)."""

import pytest
from tests_wordings import ARGON, LJ, NICKEL, SILICON

from agents.input_writer import render_plan
from agents.planner import plan_runs
from simagent.backends.expert import ExpertBackend
from simagent.session import Session
from simagent.state import RunContext


def rendered_inputs(request, settings):
    context = RunContext(settings=settings, backend=ExpertBackend(), executor=None)
    spec = context.backend.task_spec(request)
    runs, _, _ = plan_runs(spec, context)
    return {job.id: job.inputs for job in render_plan(runs, settings.job_time_limit_s).jobs}


@pytest.mark.parametrize("wordings", [NICKEL, SILICON, LJ, ARGON], ids=["Ni", "Si", "LJ", "Ar"])
def test_wordings_lead_to_the_same_inputs(wordings, settings):
    first = rendered_inputs(wordings[0], settings)
    assert first
    for other in wordings[1:]:
        assert rendered_inputs(other, settings) == first, other


def answer_for(request, settings):
    with Session(settings) as session:
        answer = session.ask(request).answer
    assert answer.status == "answered", answer.error
    return {r.quantity: r for r in answer.answers}


@pytest.mark.engine
def test_nickel_foiles(settings):
    got = answer_for(NICKEL[0], settings)
    # Foiles, Baskes & Daw, Phys. Rev. B 33, 7983 (1986): a = 3.52 A, E_coh = 4.45 eV
    assert got["lattice_constant"].value == pytest.approx(3.52, abs=0.005)
    assert got["cohesive_energy"].value == pytest.approx(4.45, abs=0.005)


@pytest.mark.engine
def test_silicon_stillinger_weber(settings):
    got = answer_for(SILICON[0], settings)
    # Stillinger & Weber, Phys. Rev. B 31, 5262 (1985): a = 5.431 A, E_coh = 4.3366 eV
    assert got["lattice_constant"].value == pytest.approx(5.431, abs=0.002)
    assert got["cohesive_energy"].value == pytest.approx(4.337, abs=0.002)


@pytest.mark.engine
def test_lennard_jones_fluid_nist(settings):
    got = answer_for(LJ[0], settings)
    # NIST Standard Reference Simulation Website, LJ fluid, rc = 3 sigma with long-range corrections
    u, p = got["potential_energy_per_atom"], got["pressure"]
    assert u.unit == p.unit == "reduced"
    assert abs(u.value - (-6.0305)) < max(3 * u.uncertainty, 0.01 * 6.0305)
    assert abs(p.value - 1.2660) < max(3 * p.uncertainty, 0.03 * 1.2660)


@pytest.mark.engine
def test_argon_self_diffusion_rahman(asked):
    # the run tests/test_fluid_protocol.py's argon test analyses as well (the `asked` fixture)
    answer = asked(ARGON[0])
    assert answer.status == "answered", answer.error
    got = {r.quantity: r for r in answer.answers}
    d = got["self_diffusion_coefficient"]
    # Rahman, Phys. Rev. 136, A405 (1964): D = 2.43e-5 cm^2/s at 94.4 K, 1.374 g/cm^3
    assert d.unit == "cm^2/s"
    assert d.value == pytest.approx(2.43e-5, rel=0.10)
    assert d.uncertainty is not None and d.uncertainty < 0.1 * d.value


def test_density_question_ends_in_a_clarification(settings):
    with Session(settings) as session:
        answer = session.ask("What is the density?").answer
    assert answer.status == "needs_clarification" and answer.question
    assert answer.answers == []
