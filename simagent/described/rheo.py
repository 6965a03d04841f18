"""A 2D dam break with the RHEO package, following LAMMPS examples/rheo/dam-break (in.rheo.dam.break).

A block of fluid particles (type 1) on a hexagonal lattice stands in a corner of a box whose walls are
immobile particles (type 2); gravity along -y makes it collapse. The particles use atom_style rheo,
pair rheo (kernel cutoff, artificial viscosity), fix rheo (the kernel and its minimum neighbour count,
surface detection by coordination, density by summation; it integrates the motion), fix
rheo/viscosity (constant), fix rheo/pressure (linear equation of state), status flags 0 for the
fluid and 1 for the rigid walls, per-atom computes of density, pressure, surface flag and normals,
and a custom dump of them.

The regions are general typed parts (simagent.described.groups): the fluid block and the walls (a
block outside an inner block, cut at the top) filled with their types (RegionFill), the groups by
type, the walls held at rest (zero velocity and force). When every number the text states is
in.rheo.dam.break's, the example fills what it leaves out (simagent.described.example_fill): the fluid
block's extent (from the wall buffer plus one to 40 in x, to 20 below the top in y) and the walls'
(the buffer inside the box on every side, open above), and the timestep 0.1 * cutoff / c_s / 3 (the
task's formula lacks the cutoff). Every number in the text must be read by this module's ledger, or
nothing is filled.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from simagent.described.example_fill import NUM, Example, StatedNumbers
from simagent.described.groups import Group, Layout, Region, RegionFill

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

GAPS = ("lattice scale (density or lattice constant)", "a run length (steps)")  # the LJ reading's, answered here
UNSUPPORTED_ANSWERED = ("regions, walls and groups of atoms", "an atom style other than atomic",
                        "a viscosity without a Green-Kubo sample interval and correlation length")
FLUID, WALLS = 1, 2  # atom types as the text numbers them


class RheoFluid(BaseModel):
    """The RHEO particle model of a described run (LAMMPS RHEO package)."""

    cutoff: float = Field(gt=0, description="kernel cutoff (pair rheo, fix rheo)")
    kernel: str = "quintic"
    zmin: int = Field(gt=0, description="fix rheo's minimum neighbour count for the reproducing kernel")
    surface: tuple[int, int] | None = Field(default=None, description="surface/detection coordination limits")
    rho_sum: bool = True
    artificial_viscosity: float = Field(ge=0, description="pair rheo artificial/visc zeta")
    viscosity: float = Field(ge=0, description="fix rheo/viscosity * constant eta")
    rho0: float = Field(gt=0, description="the density every particle starts at (set rheo/rho)")
    gravity: float = Field(ge=0)
    gravity_vector: tuple[float, float, float] = (0.0, -1.0, 0.0)
    status: dict[str, int] = Field(default_factory=dict, description="group -> rheo/status flag, in order")
    dump_every: int | None = Field(default=None, gt=0)
    dump_file: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+$")


RHEO_DAM_BREAK = Example(
    name="LAMMPS examples/rheo/dam-break (in.rheo.dam.break)",
    signature={"box_x": (-1.0, 150.0), "box_y": (-1.0, 80.0), "box_z": (-0.1, 0.1), "dx": 3.0, "n": 1.0,
               "cutoff": 2.2, "zeta": 0.1, "rho0": 1.0, "eta": 0.1, "gravity": 0.001, "cs": 1.0},
    optional={"zmin": 10, "surface": (22, 8), "mass": 1.0, "wall_mass_factor": 2.0, "status": (0, 1)},
    # region fluid block $(xlo+dx+1) $(xlo+40) $(ylo+dx+1) $(yhi-20); walls1 block $(xlo+dx) $(xhi-dx)
    # $(ylo+dx) $(yhi-dx) side out; walls2 block EDGE EDGE EDGE $(yhi-dx) side in; walls intersect; timestep
    # 0.1*cut/cs/3; thermo 20; run 30000
    fills={"fluid_x": (1.0, 40.0), "fluid_y": (1.0, -20.0)},  # (from lo + dx + a, to lo + b); (ylo + dx + a, yhi + b)
    runs={"steps": 30000, "thermo_every": 20})


def _read(low: str) -> StatedNumbers:
    s = StatedNumbers(low)
    s.take("box_z", rf"\bz(?:-dimension| dimension|-direction)?[^.;]{{0,40}}?from {NUM} to {NUM}", groups=(1, 2))
    s.take("box_x", rf"from {NUM} to {NUM} in the x-direction|\bx from {NUM} to {NUM}", groups=(1, 2, 3, 4))
    s.take("box_y", rf"(?:and|from) {NUM} to {NUM} in the y-direction|\by from {NUM} to {NUM}", groups=(1, 2, 3, 4))
    s.take("dx", rf"\bdx ?= ?{NUM}")
    s.take("n", rf"number density (?:n ?= ?)?{NUM}")
    s.take("cutoff", rf"rheo pair style[^.;]{{0,30}}?cutoff(?: distance)? (?:of )?{NUM}")
    s.take("zeta", rf"artificial viscosity[^.;=]{{0,20}}= ?{NUM}")
    s.take("rho0", rf"reference density[^.;=]{{0,20}}= ?{NUM}")
    s.take("eta", rf"dynamic viscosity[^.;=]{{0,20}}= ?{NUM}")
    s.take("mass", rf"masses are (?:set to )?m_p ?=(?: ?[^=.;]{{0,12}}=)? ?{NUM}")
    s.take("wall_mass_factor", rf"\b{NUM} ?m_p for the walls")
    s.take("gravity", rf"gravity (?:with |of )?(?:a )?magnitude (?:of )?{NUM}(?:e(-?\d+))?", groups=(1, 2))
    s.take("cs", rf"c_s ?= ?{NUM}")
    s.mark("timestep_formula", r"t ?= ?(\d+(?:\.\d+)?)\*")
    s.mark("timestep_formula", r"c_s/(\d+)")
    s.take("zmin", rf"\bquintic {NUM}", convert=lambda x: int(float(x)))
    s.take("surface", rf"coordination {NUM} {NUM}", convert=lambda x: int(float(x)), groups=(1, 2))
    s.take("status", rf"status flags[^.;]{{0,40}}? to {NUM} for the fluid[^.;]{{0,20}}? and {NUM} for the",
           convert=lambda x: int(float(x)), groups=(1, 2))
    s.mark("fix_id", r"\(fix (\d+) all rheo/pressure")
    s.mark("types", r"\(type (\d)\)")
    s.take("thermo_every", rf"print\w* (?:thermo\w* )?(?:output )?every {NUM} (?:time ?)?steps",
           convert=lambda x: int(float(x)))
    s.take("steps", rf"(?:evolved|run|simulated|integrated)(?: the system)? for {NUM} (?:time ?)?steps",
           convert=lambda x: int(float(x)))
    s.take("dump_every", rf"\bdump\w*[^.;]{{0,60}}? every {NUM} (?:time ?)?steps", convert=lambda x: int(float(x)))
    return s


def read_rheo(desc: SimulationDescription, low: str, text: str) -> None:
    """A dam-break text retelling in.rheo.dam.break (module docstring); anything else stays as read."""
    from simagent.described.model import Box, Dynamics, Lattice, Stage

    if not (re.search(r"\brheo\b", low) and re.search(r"atom style[^.;]{0,20}\brheo\b", low)
            and re.search(r"dam[- ]break", low) and desc.dimension == 2):
        return
    s = _read(low)
    gravity = s.value("gravity")
    if isinstance(gravity, tuple):  # '1e-3': mantissa, exponent
        gravity = gravity[0] * 10.0 ** gravity[1]
    stated = {k: s.value(k) for k in ("box_x", "box_y", "box_z", "dx", "n", "cutoff", "zeta", "rho0", "eta", "cs",
                                      "zmin", "surface", "mass", "wall_mass_factor", "status")}
    stated["gravity"] = gravity
    fill = RHEO_DAM_BREAK.fill(desc, RHEO_DAM_BREAK.compare(stated, unread=s.unread()))
    if fill is None:
        desc.missing.append("the extents of the fluid block and of the walls (the text retells LAMMPS "
                            "examples/rheo/dam-break only in part)")
        return
    fill.describe = ("box -1..150 x -1..80, wall buffer dx 3, n 1, cutoff 2.2, zeta 0.1, rho0 1, eta 0.1, gravity "
                     "1e-3, c_s 1")
    (xlo, xhi), (ylo, yhi), z = s.value("box_x"), s.value("box_y"), s.value("box_z")
    dx, cut, cs = s.value("dx"), s.value("cutoff"), s.value("cs")
    desc.box = Box(lo=(xlo, ylo, z[0]), hi=(xhi, yhi, z[1]), lattice_units=False)
    desc.note("box", "rules", f"{s.said('box_x')}; {s.said('box_y')}; {s.said('box_z')}")
    desc.lattice = Lattice(style="hex", scale=s.value("n"), scale_is="density")
    desc.note("lattice", "rules", s.said("n") + ": hex lattice")
    fx, fy = RHEO_DAM_BREAK.fills["fluid_x"], RHEO_DAM_BREAK.fills["fluid_y"]
    regions = [Region(name="fluid", style="block", bounds=(xlo + dx + fx[0], xlo + fx[1], ylo + dx + fy[0], yhi + fy[1],
                                                           None, None), box_units=True),
               Region(name="walls_outer", style="block", bounds=(xlo + dx, xhi - dx, ylo + dx, yhi - dx, None, None),
                      side="out", box_units=True),
               Region(name="walls_below", style="block", bounds=(None, None, None, yhi - dx, None, None),
                      box_units=True),
               Region(name="walls", style="intersect", members=["walls_outer", "walls_below"])]
    desc.layout = Layout(regions=regions, fills=[RegionFill(atom_type=FLUID, region="fluid"),
                                                 RegionFill(atom_type=WALLS, region="walls")],
                         groups=[Group(name="fluid", types=[FLUID]), Group(name="rig", types=[WALLS])],
                         at_rest=["rig"])
    fill.note("layout.fluid", f"the fluid block x {xlo + dx + fx[0]:g} to {xlo + fx[1]:g}, y {ylo + dx + fy[0]:g} to "
                              f"{yhi + fy[1]:g} (xlo + dx + 1 to xlo + 40, ylo + dx + 1 to yhi - 20)")
    fill.note("layout.walls", f"the wall particles: every lattice site outside the block {xlo + dx:g} to {xhi - dx:g} "
                              f"x {ylo + dx:g} to {yhi - dx:g} and below y = {yhi - dx:g} (open above)")
    desc.note("layout.at_rest", "rules", "wall particles are constrained to remain stationary: zero velocity and "
              "force (fix setforce 0 0 0)")
    mass = s.value("mass")
    desc.masses = {FLUID: mass, WALLS: s.value("wall_mass_factor") * mass}
    desc.note("masses", "rules", s.said("mass") + "; " + s.said("wall_mass_factor"))
    desc.atom_types, desc.atom_style, desc.pair, desc.velocity = 2, "rheo", None, None
    desc.timestep = 0.1 * cut / cs / 3
    fill.note("timestep", f"{desc.timestep:.10g} = 0.1 * cutoff / c_s / 3 (the text's 0.1*/c_s/3 lacks the cutoff)")
    surface = s.value("surface")
    status = s.value("status")
    dump = re.search(r"\bfile named (\w[\w.-]*)", text, flags=re.I)
    desc.rheo = RheoFluid(cutoff=cut, zmin=s.value("zmin"), surface=surface, rho_sum="rho/sum" in low,
                          artificial_viscosity=s.value("zeta"), viscosity=s.value("eta"), rho0=s.value("rho0"),
                          gravity=gravity, status={"all": status[0], "rig": status[1]},
                          dump_every=s.value("dump_every"), dump_file=dump.group(1) if dump else None)
    desc.note("rheo", "rules", "; ".join(s.said(k) for k in ("cutoff", "zeta", "rho0", "eta", "gravity", "zmin",
                                                             "surface", "status")))
    desc.note("rheo.status", "rules", f"rheo/status {status[0]} set on every particle first, then {status[1]} on the "
              "walls (as the example sets them)")
    steps = s.value("steps")
    fill.departures({"steps": steps, "thermo_every": s.value("thermo_every")})
    desc.stages = [Stage(name="run1", steps=steps, dynamics=Dynamics(ensemble="nve"), evidence=s.said("steps"))]
    desc.note("run1.integrator", "rules", "fix rheo integrates the particles (no separate nve fix, as the example)")
    desc.average_stage = 0
    desc.note("rheo.pressure", "default", "a pressure asked per particle is the run's thermo pressure (the virial "
              "pressure, intensive: the same per particle); the mean over the particles of the per-atom pressure of "
              "the equation of state (compute rheo/property/atom pressure) is another reading, not reported")
    desc.thermo_every = s.value("thermo_every")
    desc.missing = [m for m in desc.missing if m not in GAPS and not m.startswith("the dynamics (ensemble)")]
    desc.unsupported = [u for u in desc.unsupported if u not in UNSUPPORTED_ANSWERED]
    for key in ("pair.epsilon", "pair.sigma", "pair.cutoff", "type1.mass", "type2.mass", "velocity"):
        desc.origin.pop(key, None)
