"""Rendering RASPA inputs from the templates in tools/raspa/templates (Jinja2, strict).

`job_files` returns every file of one RASPA job (name -> text): simulation.input, the P1 framework CIF,
pseudo_atoms.def, force_field_mixing_rules.def, force_field.def, one <molecule>.def per guest and an
optional .block file. The job folder is then self-contained: RASPA reads nothing from its share folder."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from simagent.materials.forcefields import ForceFieldData, FrameworkTypes, GuestModel
from simagent.materials.frameworks import BlockingSphere, FrameworkStructure, block_file, p1_cif
from simagent.rendering import render_template

MAIN_INPUT = "simulation.input"
# Ewald relative precision (RASPA keyword EwaldPrecision; RASPA's default is 1e-6).
EWALD_PRECISION = 1e-6


def render(template: str, **params: object) -> str:
    """Render templates/<template> with the given parameters."""
    return render_template("tools.raspa", template, **params)


def file_stem(name: str) -> str:
    """A name RASPA can use as a file stem (it builds output file names from it)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "framework"
    return stem[:60]


@dataclass
class Component:
    """One adsorbate component of simulation.input."""

    molecule: str  # file stem of its .def (the canonical molecule key)
    moves: list[tuple[str, str]]
    mol_fraction: float | None = None
    fugacity_coefficient: float | None = None
    block: str | None = None  # .block file stem


def gcmc_moves(guest: GuestModel, n_components: int, index: int) -> list[tuple[str, str]]:
    """Move mix of the RASPA manual's adsorption examples: translation, rotation (multi-site), reinsertion
    and swap (insertion/deletion, CBMC for flexible chains); identity changes between mixture components.
    No Widom moves during GCMC: with 10 trial positions each they would cost about a third of the run."""
    moves = [("TranslationProbability", "0.5")]
    if len(guest.sites) > 1:
        moves.append(("RotationProbability", "0.5"))
    moves.append(("ReinsertionProbability", "0.5"))
    if not guest.rigid:
        moves.append(("PartialReinsertionProbability", "0.5"))
    moves.append(("SwapProbability", "1.0"))
    if n_components > 1:
        others = " ".join(str(i) for i in range(n_components))
        moves += [("IdentityChangeProbability", "1.0"), ("NumberOfIdentityChanges", str(n_components)),
                  ("IdentityChangesList", others)]
    return moves


def widom_moves() -> list[tuple[str, str]]:
    return [("WidomProbability", "1.0")]


@dataclass
class JobSpec:
    """Everything one RASPA job depends on (built by a protocol from its parameters)."""

    protocol: str
    job_id: str
    purpose: str
    structure: FrameworkStructure
    framework: FrameworkTypes
    force_field: ForceFieldData
    components: list[Component]
    temperature_K: float
    pressure_Pa: float | None
    cycles: int
    init_cycles: int
    print_every: int
    unit_cells: tuple[int, int, int]
    ewald: bool
    helium_void_fraction: float = 1.0
    blocking_spheres: list[BlockingSphere] = field(default_factory=list)
    seed: int | None = None


def job_files(spec: JobSpec) -> dict[str, str]:
    """name -> text of every file the job folder needs."""
    stem = file_stem(spec.structure.name)
    ff = spec.force_field
    files = {
        f"{stem}.cif": p1_cif(spec.structure, spec.framework.labels, spec.framework.charges),
        "pseudo_atoms.def": render("pseudo_atoms.def.j2", atoms=ff.atoms),
        "force_field_mixing_rules.def": render(
            "force_field_mixing_rules.def.j2", truncation=ff.truncation, tail_corrections=ff.tail_corrections,
            terms=ff.self_terms, mixing_rule=ff.mixing_rule),
        "force_field.def": render("force_field.def.j2", pairs=ff.pairs),
    }
    for guest in ff.guests:
        tc, pc, omega = guest.critical
        files[f"{guest.molecule}.def"] = render("molecule.def.j2", guest=guest, tc=tc, pc=pc, omega=omega)
    if spec.blocking_spheres:
        files[f"{stem}.block"] = block_file(spec.blocking_spheres)
        for component in spec.components:
            component.block = stem
    files[MAIN_INPUT] = render(
        "simulation.input.j2", protocol=spec.protocol, job_id=spec.job_id, purpose=spec.purpose,
        framework=stem, cycles=spec.cycles, init_cycles=spec.init_cycles, print_every=spec.print_every,
        seed=spec.seed, cutoff=spec.framework.cutoff_A, ewald=spec.ewald, ewald_precision=EWALD_PRECISION,
        unit_cells=spec.unit_cells, helium_void_fraction=spec.helium_void_fraction,
        temperature=spec.temperature_K, pressure=spec.pressure_Pa,
        components=[{"name": c.molecule, "mol_fraction": c.mol_fraction,
                     "fugacity_coefficient": c.fugacity_coefficient, "block": c.block, "moves": c.moves}
                    for c in spec.components],
    )
    return files
