"""Run RASPA2 on simulation.input in the current folder, with an exit code that tells the truth.

RASPA2's own `simulate` command runs the library in a multiprocessing child and always exits 0, even
when RASPA stops on a missing file. Here the library runs in this process: RASPA's fatal errors call
exit(1) and end the process with that code, and a run that returns without 'Simulation finished' in its
output file exits with code 2. Standard library only (run as a script inside the job folder).

Usage: python run.py [simulation.input]
"""

from __future__ import annotations

import ctypes
import importlib.util
import sys
from pathlib import Path

NOT_FINISHED = 2
NOT_INSTALLED = 3


def library() -> tuple[Path, Path]:
    """(RASPA2 package folder, libraspa2 shared library)."""
    spec = importlib.util.find_spec("RASPA2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the RASPA2 package is not installed (pip install raspa2==2.0.4)")
    package = Path(next(iter(spec.submodule_search_locations)))
    found = sorted((package / "simulations" / "lib").glob("libraspa*"))
    if not found:
        raise FileNotFoundError(f"no libraspa2 shared library under {package / 'simulations' / 'lib'}")
    return package, found[0]


def finished(folder: Path) -> bool:
    outputs = sorted((folder / "Output").glob("System_*/*.data"))
    return bool(outputs) and all("Simulation finished" in p.read_text(errors="replace") for p in outputs)


def main(argv: list[str]) -> int:
    input_name = argv[1] if len(argv) > 1 else "simulation.input"
    if not Path(input_name).is_file():
        print(f"ERROR: {input_name} not found in {Path.cwd()}", file=sys.stderr)
        return NOT_FINISHED
    try:
        package, lib_path = library()
    except FileNotFoundError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        return NOT_INSTALLED
    raspa = ctypes.cdll.LoadLibrary(str(lib_path))
    raspa.run.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_bool)
    raspa.run.restype = ctypes.c_void_p
    # RASPA builds '<dir>/share/raspa/...' from the package folder for files missing locally
    raspa.run(input_name.encode(), b"", str(package).encode(), False)
    sys.stdout.flush()
    if not finished(Path.cwd()):
        print("ERROR: RASPA returned without 'Simulation finished' in Output/System_*/*.data", file=sys.stderr)
        return NOT_FINISHED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
