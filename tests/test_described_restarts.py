"""Runs that start from an earlier run's restart file (simagent.described.restarts), the installed
LAMMPS example that restarts its runs so (examples/relres, in.22DMH.real: one pair style per run), and
the readings such a text needs: the thermo interval beside a dump interval, a run named again for the
analysis, a 'reference run' that is no literature request, the neighbor settings against the example's."""

from __future__ import annotations

from pathlib import Path

import pytest

from simagent.backends.expert import method_words
from simagent.backends.expert.protocol_text import read_controls
from simagent.described.reading import read_description
from simagent.described.restarts import RESTART_UNSUPPORTED
from tests.described_helpers import dev_text, run_inputs
from tools.lammps.examples import example_folder

needs_relres = pytest.mark.skipif(example_folder("relres") is None, reason="LAMMPS examples not installed")

# written for these tests: another wording and order than the dev task's
RELRES = ("Liquid 2,2-dimethylhexane is modelled with the relative resolution (RelRes) Lennard-Jones model. Use real "
          "units, periodic boundaries on every side and the molecular atom style, with harmonic bond and angle terms "
          "and Fourier dihedral terms. Pair interactions are lj/relres in the first runs and lj/smooth in the last "
          "run, all shifted so that they vanish at the cutoff. Neighbor lists use bins with a 2.0 Angstrom skin and "
          "are rebuilt every 2 steps. A Nose-Hoover thermostat keeps the temperature at 290 K with a damping time of "
          "200 fs, and the timestep is 1 fs. The four runs share one restart file: first an lj/relres run with "
          "Rso = 6.25 for {0} steps, next a run with Rso = 7.25 for {0} steps, next a run mixing Rso 6.25 and 7.25 "
          "for {0} steps, and last the lj/smooth reference run for {1} steps. Print thermodynamic output every {2} "
          "steps and write the positions to a dump file every 7 steps. Report the mean temperature and the mean "
          "potential energy per particle of the last run only.")


def _relres(steps: int = 300, last: int = 600, every: int = 50) -> str:
    return RELRES.format(steps, last, every)


@needs_relres
def test_paraphrased_relres_is_the_relres_example_with_four_runs_from_the_first_runs_restart():
    desc = read_description(_relres())
    assert desc.renderable, (desc.unsupported, desc.missing)
    example = desc.example_system
    assert example is not None and (example.name, example.input) == ("relres", "in.22DMH.real")
    assert [s.steps for s in desc.stages] == [300, 300, 300, 600]
    assert [s.restart_from for s in desc.stages] == [None, 0, 0, 0]
    assert desc.average_stage == 3 and desc.thermo_every == 50  # not the dump's 7
    assert (desc.neighbor_skin, desc.neighbor_every) == (2.0, 2)
    assert "relres" in desc.origin["run4.example_run"].evidence and "lj/smooth" in desc.origin[
        "run4.example_run"].evidence
    particles = desc.defaults["particles"]
    assert "8000 sites" in particles and "united atoms" in particles and "kcal/mol" in particles
    assert "every 7 steps" in desc.origin["dump"].evidence and "not written" in desc.origin["dump"].evidence


@needs_relres
def test_dev_relres_reads_its_four_runs_and_averages_the_reference_run():
    desc = read_description(dev_text("lammps/24_relres.json"))
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.example_system is not None and desc.example_system.input == "in.22DMH.real"
    assert [s.steps for s in desc.stages] == [1000, 5000, 5000, 10000]  # the analysis sentence states no 5th run
    assert [s.restart_from for s in desc.stages] == [None, 0, 0, 0]
    assert desc.average_stage == 3 and desc.origin["average_stage"].source == "rules"
    assert desc.thermo_every == 100
    assert all(s.dynamics.t_stop == 290 and s.dynamics.t_damp == 200 for s in desc.stages)


@needs_relres
def test_runs_stated_in_another_order_than_the_examples_are_refused_by_name():
    text = _relres().replace("Rso = 6.25 for", "Rso = X for").replace("Rso = 7.25 for", "Rso = 6.25 for")
    desc = read_description(text.replace("Rso = X for", "Rso = 7.25 for"))
    assert desc.example_system is None
    assert any("run 1 states 7.25" in u and "run 2 states 6.25" in u for u in desc.unsupported), desc.unsupported


@needs_relres
def test_another_molecule_than_the_examples_is_refused_by_name():
    desc = read_description(_relres().replace("2,2-dimethylhexane", "n-octane"))
    assert desc.example_system is None
    assert any("n-octane" in u and "relres" in u for u in desc.unsupported), desc.unsupported


@needs_relres
def test_a_stated_neighbor_skin_the_example_does_not_use_is_refused_by_name():
    desc = read_description(_relres().replace("2.0 Angstrom skin", "3.0 Angstrom skin"))
    assert desc.example_system is None
    assert any("neighbor skin of 3" in u for u in desc.unsupported), desc.unsupported


LJ_SHARED = ("An LJ fluid in reduced units: fcc lattice at density 0.8442 in a 5x5x5 box, epsilon 1, sigma 1, cutoff "
             "2.5, velocities at 1.0. Run three NVT stages at T = 1.0 (damping 0.5): 100 steps, then 200 steps, then "
             "300 steps; all later runs start from the restart file that the first run writes.")


def test_a_restart_structure_no_example_sets_up_is_refused_by_name():
    desc = read_description(LJ_SHARED)
    assert [s.restart_from for s in desc.stages] == [None, 0, 0]
    assert RESTART_UNSUPPORTED in desc.unsupported


def test_a_restart_file_written_at_the_end_starts_no_run_from_it():
    desc = read_description(LJ_SHARED.replace("all later runs start from the restart file that the first run writes",
                                              "a restart file is written at the end"))
    assert all(s.restart_from is None for s in desc.stages)
    assert RESTART_UNSUPPORTED not in desc.unsupported


@needs_relres
def test_the_examples_own_restarts_are_the_protocols_and_a_foreign_restart_is_refused(tmp_path: Path):
    from tools.lammps.example_system import read_example

    folder = example_folder("relres")
    example = read_example(folder, folder / "in.22DMH.real", "relres")
    assert example is not None and example.refused is None
    assert example.runs == 4 and example.restarts == {1: 1, 2: 1, 3: 1}
    assert [line.text.split()[1] for line in example.kept if line.text.startswith("pair_style")] == [
        "lj/relres", "lj/relres", "lj/relres", "lj/smooth"]
    assert "clear" in example.protocol and not any(k.text.startswith(("clear", "read_restart")) for k in example.kept)
    # a restart the example did not write itself is a state that cannot be known
    (tmp_path / "data.x").write_text("x\n\n1 atoms\n1 atom types\n\n0 1 xlo xhi\n0 1 ylo yhi\n0 1 zlo zhi\n\n"
                                     "Masses\n\n1 1.0\n\nAtoms\n\n1 1 0.5 0.5 0.5\n")
    (tmp_path / "in.x").write_text("units lj\nread_data data.x\npair_style lj/cut 2.5\npair_coeff 1 1 1 1\nrun 10\n"
                                   "clear\nread_restart other.restart\nrun 10\n")
    foreign = read_example(tmp_path, tmp_path / "in.x", "x")
    assert foreign is not None and foreign.refused is not None and "clear" in foreign.refused


@needs_relres
def test_rendered_restarts_clear_read_back_and_set_each_run_up_again():
    from tools.lammps.described import render

    text = render(read_description(_relres()))
    lines = [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    names = [w[0] for w in lines]
    assert names.count("write_restart") == 1 and names.count("clear") == 3 and names.count("read_restart") == 3
    runs = [i for i, n in enumerate(names) if n == "run"]
    assert names.index("write_restart") == runs[0] + 1
    for i, n in enumerate(names):
        if n == "clear":  # the limit again, the first run's state, then that run's pair style before anything else
            after = names[i + 1:i + 6]
            assert after[:3] == ["variable", "variable", "if"] and after[3] == "read_restart"
            assert lines[i + 4][1] == "restart.run1" and after[4] == "pair_style"
    styles = [w[1] for w in lines if w[0] == "pair_style"]
    assert styles == ["lj/relres", "lj/relres", "lj/relres", "lj/smooth"]
    assert [w[3] for w in lines if w[0] == "pair_style"][:2] == ["6.25", "7.25"]  # the stated Rso, run by run
    assert sum(1 for w in lines if w[0] == "thermo_style") == 4  # `clear` resets it


@needs_relres
def test_rendered_relres_runs_each_later_run_from_the_first_runs_end_state(tmp_path: Path):
    """4 x 6 steps of the example's 8000 sites: every later run starts at the first run's last step with its
    velocities (the same temperature), while its pair style gives another potential energy."""
    from tools.lammps.described import render
    from tools.lammps.example_system import job_files
    from tools.lammps.parse import parse_thermo

    desc = read_description(_relres(steps=6, last=6, every=3))
    inputs = {"in.lammps": render(desc), **job_files(desc.example_system)}
    log = (run_inputs(inputs, tmp_path / "relres") / "log.lammps").read_text()
    tables = parse_thermo(log)
    assert len(tables) == 4
    first = tables[0]
    for table in tables[1:]:
        assert table["Step"][0] == first["Step"][-1] == 6
        assert table["Temp"][0] == pytest.approx(first["Temp"][-1], rel=1e-6)
    assert tables[3]["PotEng"][0] != pytest.approx(tables[1]["PotEng"][0], rel=1e-3)  # lj/smooth vs lj/relres


@pytest.mark.parametrize("words, every", [
    ("atom positions are dumped every 30 steps. thermodynamic quantities are printed every 100 steps.", 100),
    ("a trajectory snapshot is saved every 250 steps, while energies are printed every 50 steps", 50),
    ("thermo output every 20 steps; dump coordinates every 400 steps", 20),
    ("the trajectory is dumped every 25 steps.", 25),  # no other interval: as before
])
def test_the_thermo_interval_is_not_a_dump_interval_stated_beside_it(words, every):
    assert read_controls(words)["thermo_every"] == every


TWO_RUNS = ("An LJ fluid in reduced units: fcc lattice at density 0.8442 in a 5x5x5 box, epsilon 1, sigma 1, cutoff "
            "2.5, velocities at 1.0, NVT at T = 1.0 with damping 0.5. Equilibrate for 1000 steps, then run "
            "3000 steps of production. {}")


@pytest.mark.parametrize("sentence, stages, averaged", [
    ("Averages are computed over the production run of 3000 steps only.", [1000, 3000], 1),
    ("Analyse only the equilibration run of 1000 steps.", [1000, 3000], 0),
    ("Then continue with a further run of 3000 steps and average it.", [1000, 3000, 3000], 2),
])
def test_a_run_named_again_by_its_length_for_the_analysis_is_no_new_run(sentence, stages, averaged):
    desc = read_description(TWO_RUNS.format(sentence))
    assert [s.steps for s in desc.stages] == stages
    assert desc.average_stage == averaged


@pytest.mark.parametrize("words, literature", [
    ("the last run is the lj/smooth reference run of 10000 steps", False),
    ("compare with a reference simulation that uses lj/cut", False),
    ("the final reference phase uses a smoothed potential", False),
    ("compute the density and give the reference values from the papers", True),
])
def test_a_reference_run_is_part_of_the_protocol_not_a_literature_ask(words, literature):
    assert any(u.capability == "literature" for u in method_words.find(words)) == literature


def test_a_neighbor_rebuild_interval_stated_after_a_long_clause_is_read():
    desc = read_description("An LJ fluid in reduced units: fcc lattice at density 0.8442 in a 5x5x5 box, epsilon 1, "
                            "sigma 1, cutoff 2.5, velocities at 1.0. Neighbor lists are built with the binning "
                            "algorithm and a skin distance of 0.3 sigma around every particle and are updated every "
                            "four steps. Run 100 steps of NVE.")
    assert (desc.neighbor_skin, desc.neighbor_every) == (0.3, 4)
