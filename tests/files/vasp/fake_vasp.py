"""A stand-in for VASP in recovery tests (VASP is licensed and not installed): it replays the
recorded BRMIX failure until the INCAR carries custodian's correction (IMIX), then ends normally."""

import sys
from pathlib import Path

here = Path(__file__).parent
if "IMIX" not in Path("INCAR").read_text():
    sys.stdout.write((here / "brmix" / "vasp.out").read_text())
    sys.exit(1)
print(" entering main loop\n reached required accuracy - stopping structural energy minimisation")
Path("OUTCAR").write_text(" General timing and accounting informations for this job:\n")
