"""Runs one QE job folder: `python -m tools.qe.run qe_job.json` (see tools/qe/workflow.py).

Each pw.x run gets `<step>.in` / `<step>.out`; a failed run is corrected by the first handler of
tools/qe/recovery.py that recognises it and re-run (every correction goes to corrections.json);
steps.json and convergence.json record what ran. Exit code 0 only when every step converged."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from simagent.errors import EngineNotFound
from tools.jobfile import read_job_file
from tools.qe import recovery
from tools.qe.engine import pw_command
from tools.qe.inputs import PwInput
from tools.qe.parse import PwOutput, parse
from tools.qe.workflow import CONVERGENCE_FILE, JOB_FILE, STEPS_FILE, QeWorkflow

CORRECTIONS_FILE = "corrections.json"


class StepFailed(Exception):
    pass


class Runner:
    def __init__(self, folder: Path, workflow: QeWorkflow) -> None:
        self.folder = folder
        self.wf = workflow
        # the launcher comes from the adapter, never from the (editable) job file
        self.command = pw_command(workflow.ranks)
        self.steps: list[dict] = []
        self.corrections: list[dict] = []

    def pw(self, name: str, inp: PwInput) -> PwOutput:
        used: dict[str, int] = {}
        if self.wf.max_seconds and not inp.max_seconds:
            inp = inp.model_copy(update={"max_seconds": self.wf.max_seconds})
        restarts = recovery.Walltime.max_num_corrections
        for attempt in range(1, self.wf.max_attempts + restarts + 1):
            if attempt - used.get("Walltime", 0) > self.wf.max_attempts:
                break
            (self.folder / f"{name}.in").write_text(inp.render())
            start = time.monotonic()
            with open(self.folder / f"{name}.out", "w") as out:
                proc = subprocess.run([*self.command, "-in", f"{name}.in"], cwd=self.folder, stdout=out,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False)
            wall = time.monotonic() - start
            text = (self.folder / f"{name}.out").read_text(errors="replace")
            result = parse(self.folder / f"{name}.out")
            ok = proc.returncode == 0 and result.job_done and result.scf_converged and not result.stopped_by_time
            self.steps.append({"step": name, "attempt": attempt, "ecutwfc_Ry": inp.ecutwfc,
                               "returncode": proc.returncode, "converged": ok,
                               "scf_iterations": result.scf_iterations, "wall_s": round(wall, 3)})
            self._save()
            if ok:
                return result
            handler = recovery.first_handler(text, used)
            fix = handler.correct(inp) if handler else None
            if fix is None:
                why = "; ".join(result.errors) or f"pw.x exited with code {proc.returncode}"
                raise StepFailed(f"pw.x step {name} failed: {why}")
            used[handler.name] = used.get(handler.name, 0) + 1
            inp, change = fix
            self.corrections.append({"job": self.folder.name, "handler": handler.name, "category": handler.category,
                                     "errors": result.errors or [handler.category], "actions": [],
                                     "changes": [f"{name}.in: {change}"], "attempt": attempt, "source": "handler"})
            self._save()
        raise StepFailed(f"pw.x step {name} did not succeed in {self.wf.max_attempts} attempts")

    def _save(self) -> None:
        (self.folder / STEPS_FILE).write_text(json.dumps(self.steps, indent=1))
        if self.corrections:
            (self.folder / CORRECTIONS_FILE).write_text(json.dumps(self.corrections, indent=1))

    def cutoff(self) -> float:
        if not self.wf.cutoffs_Ry:
            return self.wf.base.ecutwfc
        cutoffs = sorted(self.wf.cutoffs_Ry)
        update = {"kpts": self.wf.cutoff_kpts} if self.wf.cutoff_kpts else {}
        energies = []
        for cut in cutoffs:
            out = self.pw(f"cutoff_{cut:g}", self.wf.base.model_copy(update={**update, "ecutwfc": cut,
                                                                            "prefix": f"cut{cut:g}"}))
            energies.append(out.energy_per_atom_eV)
        tol = self.wf.cutoff_tol_meV_per_atom / 1000
        chosen = cutoffs[-1]
        for i in range(len(cutoffs) - 1, -1, -1):
            if all(abs(e - energies[-1]) <= tol for e in energies[i:]):
                chosen = cutoffs[i]
        (self.folder / CONVERGENCE_FILE).write_text(json.dumps({
            "cutoffs_Ry": cutoffs, "energy_per_atom_eV": energies, "chosen_Ry": chosen,
            "tolerance_meV_per_atom": self.wf.cutoff_tol_meV_per_atom,
            "kpts": list(self.wf.cutoff_kpts or self.wf.base.kpts or [])}, indent=1))
        shutil.rmtree(self.folder / "tmp", ignore_errors=True)
        return chosen

    def run(self) -> None:
        cut = self.cutoff()
        base = self.wf.base.model_copy(update={"ecutwfc": cut})
        if self.wf.kind == "scf":
            self.pw("scf", base)
        elif self.wf.kind == "eos":
            for i, s in enumerate(self.wf.strains):
                cell = [tuple(x * s for x in vec) for vec in base.cell]
                self.pw(f"eos_{i:02d}", base.model_copy(update={"cell": cell, "prefix": f"eos{i}"}))
                shutil.rmtree(self.folder / "tmp", ignore_errors=True)
            if self.wf.atom is not None:
                self.pw("atom", self.wf.atom.model_copy(update={"ecutwfc": cut, "prefix": "atom"}))
        else:
            scf = base.model_copy(update={"nbnd": self.wf.nbnd})
            self.pw("scf", scf)
            self.pw("bands", scf.model_copy(update={"calculation": "bands", "kpts": None,
                                                    "kpoints": self.wf.bands_kpoints}))
        shutil.rmtree(self.folder / "tmp", ignore_errors=True)


def main(argv: list[str]) -> int:
    loaded = read_job_file(argv, JOB_FILE, QeWorkflow)
    if loaded is None:
        return 2
    path, workflow = loaded
    try:
        Runner(path.parent, workflow).run()
    except (StepFailed, EngineNotFound) as err:
        print(str(err), file=sys.stderr)
        return 1
    except OSError as err:
        print(f"could not start pw.x: {err}", file=sys.stderr)
        return 1
    print("QE workflow finished")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
