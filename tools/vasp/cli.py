"""`simagent vasp-inputs REQUEST --out DIR`: the VASP inputs simagent would run for a request, written
for a machine that has VASP (POTCAR when PMG_VASP_PSP_DIR is configured, else POTCAR.spec)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from simagent.defaults import DefaultsLog
from simagent.errors import InputError, RequestError


def register(app: typer.Typer) -> None:
    @app.command("vasp-inputs")
    def vasp_inputs(
        request: Annotated[str, typer.Argument(help="e.g. 'Lattice constant of diamond silicon with VASP'")],
        out: Annotated[Path, typer.Option("--out", help="folder to write INCAR, KPOINTS, POSCAR, POTCAR(.spec)")]
        = Path("vasp-inputs"),
    ) -> None:
        """Write the VASP inputs (pymatgen Materials Project sets) for a request, without running VASP."""
        from simagent.backends.expert import ExpertBackend
        from simagent.protocols import all_protocols

        spec = ExpertBackend().task_spec(request).model_copy(update={"engine": "vasp"})
        chosen = [p for p in all_protocols() if p.engine == "vasp" and p.applies_to(spec)]
        if not chosen:
            wanted = ", ".join(p.name for p in spec.properties) or "no property"
            raise RequestError(f"no VASP protocol computes {wanted} for this request (VASP protocols: lattice "
                               "constant and band gap of one-element cubic crystals)")
        protocol = chosen[0]
        params = protocol.choose_inputs(spec, DefaultsLog(protocol.Params.DEFAULTS))
        out.mkdir(parents=True, exist_ok=True)
        if wants_band_structure(request):
            _write_band_structure(protocol, params, out)
            return
        (job,) = protocol.jobs(params)
        for name, text in job.inputs.items():
            (out / name).write_text(text)
        typer.echo(f"{protocol.name}: wrote {', '.join(sorted(job.inputs))} to {out}")
        _potcar_note("POTCAR" in job.inputs)


def wants_band_structure(request: str) -> bool:
    """A band structure named (not only a gap): simagent.backends.expert.domains.electronic's reading."""
    from simagent.backends.expert.domains.electronic import BAND_STRUCTURE

    return re.search(BAND_STRUCTURE, request.lower()) is not None


def _write_band_structure(protocol, params, out: Path) -> None:
    """The Materials Project band-structure workflow: a static SCF (MPStaticSet), then non-self-consistent
    runs on its charge density (MPNonSCFSet: k-points along the symmetry lines, and a uniform mesh for the DOS)."""
    from tools.vasp.check import incar_findings
    from tools.vasp.inputs import BAND_STRUCTURE_STEPS, input_set, input_texts

    structure = protocol.structure(params)
    has_potcar = False
    for kind in BAND_STRUCTURE_STEPS:
        vis = input_set(kind, structure, params.incar_overrides, params.kpoints_density)
        problems = incar_findings(vis.incar)
        if problems:
            raise InputError(f"the {kind} INCAR does not pass the checks: " + "; ".join(problems))
        texts, has_potcar = input_texts(vis)
        folder = out / kind
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            (folder / name).write_text(text)
        typer.echo(f"{kind}/: pymatgen {type(vis).__name__}{_mode(vis)}: {', '.join(sorted(texts))}")
    typer.echo("run static/ first, then copy its CHGCAR into bands/ and dos/ (their INCARs read it: ICHARG = 11)")
    _potcar_note(has_potcar)


def _mode(vis) -> str:
    mode = getattr(vis, "mode", None)
    return f" (mode {mode})" if mode else ""


def _potcar_note(has_potcar: bool) -> None:
    if not has_potcar:
        typer.echo("POTCAR not written: no VASP pseudopotential library is configured (PMG_VASP_PSP_DIR); "
                   "POTCAR.spec lists the PAW datasets to concatenate")
