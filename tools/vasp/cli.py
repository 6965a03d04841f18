"""`simagent vasp-inputs REQUEST --out DIR`: the VASP inputs simagent would run for a request, written
for a machine that has VASP (POTCAR when PMG_VASP_PSP_DIR is configured, else POTCAR.spec)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from simagent.errors import RequestError


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
        params, _ = protocol.input_parameters(spec)
        (job,) = protocol.jobs(params)
        out.mkdir(parents=True, exist_ok=True)
        for name, text in job.inputs.items():
            (out / name).write_text(text)
        typer.echo(f"{protocol.name}: wrote {', '.join(sorted(job.inputs))} to {out}")
        if "POTCAR" not in job.inputs:
            typer.echo("POTCAR not written: no VASP pseudopotential library is configured (PMG_VASP_PSP_DIR); "
                       "POTCAR.spec lists the PAW datasets to concatenate")
