"""A stand-in for VASP in recovery and plumbing tests (VASP is licensed and not installed).

It replays the recorded BRMIX failure until the INCAR carries custodian's correction (IMIX), then ends
normally: OUTCAR's end marker and a minimal vasprun.xml whose final structure is the POSCAR as given
(this stand-in relaxes nothing, so any number read from it is plumbing, never physics)."""

import sys
from pathlib import Path

here = Path(__file__).parent


def vasprun_text(folder: Path) -> str:
    from pymatgen.core import Structure
    from pymatgen.io.vasp.inputs import Incar

    structure = Structure.from_file(folder / "POSCAR")
    incar = Incar.from_file(folder / "INCAR")
    elements = [str(site.specie) for site in structure]

    def tag(key, value):
        if isinstance(value, bool):
            return f'  <i type="logical" name="{key}">{"T" if value else "F"}</i>'
        kind = "string" if isinstance(value, str) else "int" if isinstance(value, int) else None
        return f'  <i type="{kind}" name="{key}">{value}</i>' if kind else f'  <i name="{key}">{value}</i>'

    def block(name):
        basis = "\n".join("     <v>{:.8f} {:.8f} {:.8f}</v>".format(*v) for v in structure.lattice.matrix)
        pos = "\n".join("     <v>{:.8f} {:.8f} {:.8f}</v>".format(*f) for f in structure.frac_coords)
        return (f' <structure name="{name}">\n  <crystal>\n   <varray name="basis">\n{basis}\n   </varray>\n'
                f'   <i name="volume">{structure.volume:.8f}</i>\n  </crystal>\n  <varray name="positions">\n'
                f'{pos}\n  </varray>\n </structure>\n')

    energy = ("   <energy>\n    <i name=\"e_fr_energy\">-10.85</i>\n    <i name=\"e_wo_entrp\">-10.85</i>\n"
              "    <i name=\"e_0_energy\">-10.85</i>\n   </energy>\n")
    counts = {e: elements.count(e) for e in elements}
    return "\n".join([
        '<?xml version="1.0" encoding="ISO-8859-1"?>', "<modeling>",
        ' <generator>\n  <i name="program" type="string">vasp </i>\n  <i name="version" type="string">stand-in </i>\n'
        " </generator>",
        " <incar>", *(tag(k, v) for k, v in incar.items() if not isinstance(v, list)), " </incar>",
        ' <kpoints>\n  <varray name="kpointlist">\n   <v> 0.0 0.0 0.0</v>\n  </varray>\n'
        '  <varray name="weights">\n   <v> 1.0</v>\n  </varray>\n </kpoints>',
        ' <parameters>\n  <separator name="electronic">\n   <i type="int" name="NELM">100</i>\n  </separator>\n'
        f'  <separator name="ionic">\n   <i type="int" name="NSW">{incar.get("NSW", 0)}</i>\n'
        f'   <i type="int" name="IBRION">{incar.get("IBRION", -1)}</i>\n'
        f'   <i name="EDIFFG">{incar.get("EDIFFG", -0.05)}</i>\n  </separator>\n </parameters>',
        f" <atominfo>\n  <atoms>{len(elements)}</atoms>\n  <types>{len(counts)}</types>",
        '  <array name="atoms">\n   <set>', *(f"    <rc><c>{e}</c><c>1</c></rc>" for e in elements),
        "   </set>\n  </array>",
        '  <array name="atomtypes">\n   <set>',
        *(f"    <rc><c>{n}</c><c>{e}</c><c>1.0</c><c>4.0</c><c>  PAW_PBE {e} stand-in</c></rc>"
          for e, n in counts.items()),
        "   </set>\n  </array>\n </atominfo>",
        block("initialpos") + " <calculation>\n  <scstep>\n" + energy + "  </scstep>\n" + block(""),
        '  <varray name="forces">', *("   <v> 0.0 0.0 0.0 </v>" for _ in elements), "  </varray>",
        '  <varray name="stress">', *("   <v> 0.0 0.0 0.0 </v>" for _ in range(3)), "  </varray>",
        energy + " </calculation>",
        block("finalpos") + "</modeling>", ""])


if "IMIX" not in Path("INCAR").read_text():
    sys.stdout.write((here / "brmix" / "vasp.out").read_text())
    sys.exit(1)
print(" entering main loop\n reached required accuracy - stopping structural energy minimisation")
Path("vasprun.xml").write_text(vasprun_text(Path(".")))
Path("OUTCAR").write_text(" General timing and accounting informations for this job:\n")
