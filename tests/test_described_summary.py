"""report.md's "What was run" for a described run: the typed description that was executed, field by
field, with where each value came from (rules / llm / default) and the fixes each stage ran."""

from __future__ import annotations

from simagent.described.reading import read_description
from simagent.described.summary import executed_lines, stage_fixes

# a paraphrase written for this test (not an MDGym task's wording)
TEXT = ("Simulate a 2D Lennard-Jones fluid in lj units. The atoms are placed on a square lattice at a reduced "
        "density of 0.7 in a box of 12 x 12 lattice units, periodic in x and y. Use mass 1, epsilon 1, sigma 1 "
        "and a cutoff of 2.5 sigma. Give the atoms velocities at a temperature of 1.1 using seed 12345. First run "
        "2000 steps in NVE with a Langevin thermostat at 1.1 with damping 1.0. Then the thermostat is switched "
        "off and the system runs 3000 steps in NVE. Report the average potential energy per atom.")


def test_every_field_shows_its_value_and_origin():
    desc = read_description(TEXT)
    assert desc.renderable, desc.missing
    lines = executed_lines(desc)
    text = "\n".join(lines)
    assert "units = lj [units: rules" in text
    assert "lattice = {style: sq, scale: 0.7, scale_is: density} [lattice: rules" in text
    assert "timestep = 0.005 [timestep: default 0.005 (LAMMPS's default timestep for lj units)]" in text
    # stages in order, each with its own dynamics and the words it was read from
    one = next(i for i, line in enumerate(lines) if line.startswith("  - stage 1 (run1, run): steps = 2000"))
    assert "thermostat: langevin" in lines[one] and "t_damp: 1" in lines[one]
    assert lines[one + 1].startswith("    - stated: “first run 2000 steps")
    two = next(line for line in lines if line.startswith("  - stage 2 (run2, run)"))
    assert two == "  - stage 2 (run2, run): steps = 3000, dynamics = {ensemble: nve}"  # thermostat switched off
    # a default of a stage is listed under that stage, with its reason
    assert "    - run1.seed: default 87288 (Langevin seed (none stated))" in lines
    # every origin the description recorded appears once
    for key in desc.origin:
        assert sum(f"{key}:" in line for line in lines) >= 1, key


def test_a_language_model_reading_is_labelled_with_its_quote():
    desc = read_description(TEXT)
    desc.note("pair.cutoff", "llm", "a cutoff of 2.5 sigma")
    text = "\n".join(executed_lines(desc))
    assert "pair.cutoff: llm “a cutoff of 2.5 sigma”" in text


def test_unplaced_origins_are_not_dropped():
    desc = read_description(TEXT)
    desc.note("pressure", "rules", "zero external pressure")
    assert "  - other readings (pressure): pressure: rules “zero external pressure”" in executed_lines(desc)


def test_fixes_are_read_per_stage_from_the_input_that_ran():
    text = ("fix             wall all wall/reflect xlo EDGE\n"
            "# stage 1: run1: first run\n"
            "fix             dyn1 all nve\n"
            "fix             dyn2 all langevin 1.1 1.1 1 87288\n"
            "run             2000\n"
            "# stage 2: run2: then\n"
            "unfix           dyn2\n"
            "fix             e2d mobile enforce2d\n")
    assert stage_fixes(text) == {1: ["wall/reflect xlo EDGE on all", "nve on all", "langevin 1.1 1.1 1 87288 on all"],
                                 2: ["enforce2d on mobile"]}
    desc = read_description(TEXT)
    lines = executed_lines(desc, text)
    assert "    - fixes as run: enforce2d on mobile" in lines
