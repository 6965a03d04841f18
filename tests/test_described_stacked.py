"""Two crystal blocks of different lattices stacked along an axis (simagent.described.stacked), and a
description of minimisations alone measured in its minimised state: reading rules on wordings written
for these tests (never a task's own), the rendered input, and one small real run (CuNi, ~250 atoms,
seconds). The dev task that prompted them is read from ../shared/mdgym when present (not copied)."""

from __future__ import annotations

import re

import pytest
from described_helpers import dev_text, run_job

from simagent.described.reading import read_description
from simagent.models import PropertyRequest, TaskSpec
from tools.lammps.described import render
from tools.lammps.protocols.described import DescribedRun

# written for these tests: a Cu film on a Ni substrate with the CuNi EAM file LAMMPS ships
CU_ON_NI = ("A copper film on a nickel substrate, metal units, with periodic boundaries in every direction. The "
            "bottom slab holds an fcc Ni crystal whose lattice constant is 3.52 Å; the top film is an fcc Cu lattice "
            "with a lattice constant of 3.615 Å. The bottom slab measures 14.08 x 14.08 x 7.04 Å and the top film "
            "has a size of 14.46 x 14.46 x 7.23 Å. The two pieces are stacked along the z axis with an overlap of "
            "0.3 Å. The EAM alloy file CuNi.eam.alloy gives the interactions. Relax the structure by a "
            "conjugate-gradient energy minimization with energy and force tolerances of 1e-10.")


def test_two_stacked_blocks_each_of_its_own_lattice_are_read():
    d = read_description(CU_ON_NI)
    assert d.renderable, (d.missing, d.unsupported)
    assert d.potential.type_elements == ["Cu", "Ni"] and d.lattice is None
    lower, upper = d.layout.regions
    assert lower.bounds == (0, 14.08, 0, 14.08, 0, 7.04) and lower.box_units
    assert upper.bounds == (0, 14.46, 0, 14.46, 7.04 - 0.3, 7.04 - 0.3 + 7.23)
    fills = [(f.region, f.atom_type, f.lattice_style, f.lattice_scale) for f in d.layout.fills]
    assert fills == [("lower_block", 2, "fcc", 3.52), ("upper_block", 1, "fcc", 3.615)]
    assert (d.box.lo, d.box.hi, d.box.lattice_units) == ((0, 0, 0), (14.46, 14.46, 7.04 - 0.3 + 7.23), False)
    assert d.origin["box"].source == "default" and d.origin["layout.lateral"].source == "default"
    (stage,) = d.stages
    assert (stage.kind, stage.minimize.etol, stage.minimize.ftol) == ("minimize", 1e-10, 1e-10)
    assert d.origin["stages"].source == "rules"  # minimisation only: no dynamics stated


def test_each_block_is_made_with_its_own_lattice_and_nothing_is_deleted():
    text = render(read_description(CU_ON_NI))
    ni = text.index("lattice         fcc 3.52\n")
    assert ni < text.index("create_atoms    2 region lower_block") < text.index("lattice         fcc 3.615\n") < \
        text.index("create_atoms    1 region upper_block")
    assert "region          box block 0 14.46 0 14.46 0 13.97 units box" in text
    assert "delete_atoms" not in text and "run " not in text


def test_an_overlap_without_a_distance_is_missing():
    d = read_description(CU_ON_NI.replace("with an overlap of 0.3 Å", "with a slight overlap"))
    assert "the overlap of the two blocks (a distance)" in d.missing and not d.renderable


def test_an_overlap_as_thick_as_a_block_is_refused():
    d = read_description(CU_ON_NI.replace("with an overlap of 0.3 Å", "with an overlap of 9 Å"))
    assert not d.renderable and d.layout is None
    assert any("overlap of 9 Å" in u and "7.04 Å thick" in u for u in d.unsupported), d.unsupported


def test_minimisation_alone_is_not_the_protocol_when_the_text_speaks_of_dynamics():
    d = read_description(CU_ON_NI.replace("1e-10.", "1e-10, then heat the bilayer to 600 K."))
    assert "a run length (steps)" in d.missing and not d.renderable


def test_the_minimised_bilayer_gives_its_potential_energy_per_atom(tmp_path):
    spec = TaskSpec(request=CU_ON_NI, engine="lammps", properties=[PropertyRequest(name="potential_energy_per_atom")])
    proto = DescribedRun()
    assert proto.applies_to(spec)
    params, _ = proto.parameters(spec)
    (job,) = proto.jobs(params)
    folder = run_job(job, tmp_path)
    per_atom, total = proto.analyze(params, {job.id: folder}, spec)
    # EAM Cu and Ni bind by 3.5-4.5 eV per atom; close pairs in the overlap and at the periodic faces cost some
    assert -5.0 < per_atom.value < -2.0 and per_atom.unit == "eV/atom" and total.label == "total"
    assert "final state of the last minimisation" in per_atom.method
    # by hand from the log: the minimisation summary's final energy over the atoms LAMMPS reports
    log = (folder / "log.lammps").read_text()
    final = float(re.search(r"Energy initial, next-to-last, final =\s*\n\s*\S+\s+\S+\s+(\S+)", log).group(1))
    atoms = int(re.findall(r"^Loop time of .* with (\d+) atoms", log, re.MULTILINE)[-1])
    assert total.value == pytest.approx(final, abs=1e-6) and per_atom.value == pytest.approx(final / atoms, abs=1e-9)


def test_dev_task_116_reads_the_two_blocks_and_the_minimisation():
    d = read_description(dev_text("lammps/116_relaxed_bilayer.json"))
    assert d.renderable, (d.missing, d.unsupported)
    assert [(f.lattice_scale, d.potential.type_elements[f.atom_type - 1]) for f in d.layout.fills] == [
        (4.05, "Al"), (3.52, "Ni")]
    assert [r.bounds[4:] for r in d.layout.regions] == [(0, 6.5), (6.0, 13.0)]
    assert d.example_system is None and [s.minimize.etol for s in d.stages] == [1e-15]


def test_minimisation_then_an_unmeasured_simulation_is_not_minimisation_alone():
    for tail in (", and then simulate the bilayer.", ", then let the system evolve.", " before the production run."):
        d = read_description(CU_ON_NI.replace("1e-10.", "1e-10" + tail))
        assert "a run length (steps)" in d.missing and not d.renderable, tail
