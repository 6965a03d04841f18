"""Regions, groups of atoms and what acts on them, in a typed simulation description.

A task that builds walls out of atom layers, drives a fluid with a body force and puts obstacles in
its way states a layout on top of the bulk system: regions of space (blocks, spheres, cylinders),
the groups of atoms inside them (and the rest), which groups are held at rest, the forces fixed on
or added to a group (LAMMPS fix setforce, addforce, aveforce), repulsive indenters (fix indent),
walls at the box faces (fix wall/lj93, wall/reflect), walls on a region's surface (fix wall/region),
rigid displacements of a group before the first stage (displace_atoms) and the group a thermostat
acts on. Region coordinates are in lattice units (LAMMPS's region default) unless `box_units`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

Axis = Literal["x", "y", "z"]
AXES = ("x", "y", "z")
Vector = tuple[float | None, float | None, float | None]  # None: that component is left alone (NULL)


class Region(BaseModel):
    """A region of space: a block (None bounds are open, INF), a sphere, a cylinder along `axis`, or
    the intersection of other regions (`members`, defined before it)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    style: Literal["block", "sphere", "cylinder", "intersect"]
    bounds: tuple[float | None, float | None, float | None, float | None, float | None, float | None] | None = None
    center: tuple[float, float, float] | None = None
    radius: float | None = Field(default=None, gt=0)
    axis: Axis | None = None
    side: Literal["in", "out"] = "in"
    members: list[str] = Field(default_factory=list)
    box_units: bool = Field(default=False, description="coordinates in distance units (region ... units box), "
                            "not lattice spacings")

    @model_validator(mode="after")
    def _shape(self) -> Region:
        if self.style == "block" and self.bounds is None:
            raise ValueError("a block region needs its bounds")
        if self.style in ("sphere", "cylinder") and (self.center is None or self.radius is None):
            raise ValueError(f"a {self.style} region needs a centre and a radius")
        if self.style == "cylinder" and self.axis is None:
            raise ValueError("a cylinder region needs its axis")
        if self.style == "intersect" and len(self.members) < 2:
            raise ValueError("an intersection needs two regions or more")
        return self


class Group(BaseModel):
    """Atoms inside `region` when the group is made, and/or of the atom `types`; or (`rest`) every
    atom in none of the groups `subtract` names (none named: in no other group)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    region: str | None = None
    types: list[int] = Field(default_factory=list)
    rest: bool = False
    subtract: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _defined(self) -> Group:
        if (self.region is not None or bool(self.types)) == self.rest:
            raise ValueError(f"group {self.name!r} is either a region's (or types') atoms or the rest")
        return self


class RegionFill(BaseModel):
    """Lattice atoms of one type made inside a region (LAMMPS create_atoms T region R); several
    fills, in order, build a solid out of parts (slabs, asperities) instead of filling the box."""

    atom_type: int = Field(ge=1)
    region: str
    lattice_style: str | None = Field(default=None, description="a lattice of this fill's own (LAMMPS lattice "
                                      "command before its create_atoms); None: the description's lattice")
    lattice_scale: float | None = Field(default=None, gt=0)


class GroupVelocity(BaseModel):
    """A velocity set on a group after the creation (None: that component left alone); `add`: added
    to the atoms' velocities (a drive on top of the thermal motion) instead of replacing them."""

    group: str
    velocity: Vector
    add: bool = False


class VelocityRamp(BaseModel):
    """A linear profile of one velocity component across a coordinate (LAMMPS velocity ramp), added
    to the group's velocities: `component` goes from v_lo at `along` = lo to v_hi at hi."""

    group: str
    component: Axis
    v_lo: float
    v_hi: float
    along: Axis
    lo: float
    hi: float


class FrictionForce(BaseModel):
    """The force on a sliding body (`body`, a group) from every other atom: tangential along
    `sliding`, normal along `normal`; the friction coefficient is |<F_t>| / |<F_n>|."""

    body: str
    sliding: Axis
    normal: Axis


class GroupForce(BaseModel):
    """A force fixed on a group's atoms: `setforce` sets components (None: left alone), `addforce`
    adds to every atom, `aveforce` gives every atom the group's average force plus the value (the
    group moves as one body)."""

    group: str
    style: Literal["setforce", "addforce", "aveforce"]
    force: Vector


class Indenter(BaseModel):
    """A repulsive obstacle (LAMMPS fix indent): F(r) = -K (r - R)^2 for atoms of `group` within R of
    the centre (a sphere; in 2D a disc), or of the axis of a cylinder."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    group: str
    k: float = Field(gt=0)
    shape: Literal["sphere", "cylinder"] = "sphere"
    center: tuple[float, float, float]
    radius: float = Field(gt=0)


class Wall(BaseModel):
    """Flat walls at box faces: LJ 9-3 (epsilon, sigma, cutoff) or reflecting."""

    style: Literal["lj93", "reflect"]
    faces: list[Literal["xlo", "xhi", "ylo", "yhi", "zlo", "zhi"]] = Field(min_length=1)
    epsilon: float | None = None
    sigma: float | None = None
    cutoff: float | None = None

    @model_validator(mode="after")
    def _coefficients(self) -> Wall:
        if self.style == "lj93" and None in (self.epsilon, self.sigma, self.cutoff):
            raise ValueError("an LJ 9-3 wall needs epsilon, sigma and a cutoff")
        return self


class RegionWall(BaseModel):
    """A wall on the surface of a region (LAMMPS fix wall/region): atoms inside the region interact
    with its surface by `style` (harmonic: E = epsilon (r - r_c)^2; lj93, lj126, lj1043: the LJ forms)
    within `cutoff` of it. `energy`: the wall's energy is part of the potential energy the run reports
    (fix_modify energy yes)."""

    region: str
    style: Literal["harmonic", "lj93", "lj126", "lj1043"]
    epsilon: float | None = Field(default=None, ge=0, description="None: not stated (the description then lists it "
                                  "missing)")
    sigma: float | None = Field(default=None, ge=0)
    cutoff: float | None = Field(default=None, gt=0)
    energy: bool = False
    group: str = "all"


class Displacement(BaseModel):
    """A rigid shift of a group before the first stage (LAMMPS displace_atoms GROUP move dx dy dz),
    in distance units when `box_units`, else lattice spacings."""

    group: str = "all"
    move: tuple[float, float, float]
    box_units: bool = True


class Layout(BaseModel):
    regions: list[Region] = Field(default_factory=list)
    groups: list[Group] = Field(default_factory=list)
    create_in: str | None = Field(default=None, description="the region the lattice atoms fill (else the box)")
    velocity_add: tuple[float, float, float] | None = Field(default=None, description="a uniform velocity added "
                                                             "to every atom after the velocity creation")
    cleared: list[str] = Field(default_factory=list, description="regions whose atoms are deleted at the start")
    at_rest: list[str] = Field(default_factory=list, description="groups whose velocities are set to zero")
    forces: list[GroupForce] = Field(default_factory=list)
    indenters: list[Indenter] = Field(default_factory=list)
    walls: list[Wall] = Field(default_factory=list)
    region_walls: list[RegionWall] = Field(default_factory=list)
    displacements: list[Displacement] = Field(default_factory=list, description="applied in order after the "
                                              "velocity creation, before the first stage")
    thermostat_group: str | None = Field(default=None, description="the group a thermostat acts on (else all)")
    integrated: str | None = Field(default=None, description="the group the run's integrator moves (else all; "
                                   "the other atoms stay where they are made)")
    flow_axis: Axis | None = Field(default=None, description="the direction of a body force driving a flow")
    fills: list[RegionFill] = Field(default_factory=list, description="lattice atoms made per region and type "
                                    "(else the box, or create_in, is filled with the lattice type)")
    retype: list[tuple[str, int]] = Field(default_factory=list, description="(group, type): the group's atoms "
                                          "get that type once the groups are made")
    velocity_group: str | None = Field(default=None, description="the group velocities are created on (else all)")
    temperature_axes: str | None = Field(default=None, description="the velocity components the group's "
                                         "temperature counts ('y'); else all (compute temp/partial)")
    velocities: list[GroupVelocity] = Field(default_factory=list)
    ramps: list[VelocityRamp] = Field(default_factory=list)
    excluded_pairs: list[tuple[int, int]] = Field(default_factory=list, description="type pairs that do not "
                                                  "interact (neigh_modify exclude type)")
    friction: FrictionForce | None = None

    def group(self, name: str) -> Group | None:
        return next((g for g in self.groups if g.name == name), None)


def region_called(layout: Layout | None, word: str) -> str | None:
    """The region a metric's word names: its own name, or the shape word of the one region of that shape
    ('cylinder', 'cylindrical', 'sphere'); None if there is none or several."""
    regions = layout.regions if layout is not None else []
    if any(r.name == word for r in regions):
        return word
    shaped = [r.name for r in regions if r.style[:5] == word[:5] or (r.style == "sphere" and word[:5] == "spher")]
    return shaped[0] if len(shaped) == 1 else None
