"""Atomic mixtures in a described simulation: several atom types, atoms placed at random, per-pair
coefficients and atoms deposited during a run (the parts of simagent.described.model for mixtures).

- `RandomPlacement`: N atoms of one type (or N molecules of a template) put at random positions in
  a region or the whole box, with a seed and, if stated, the least distance to the atoms already
  there (LAMMPS `create_atoms T random N seed region overlap d maxtry n [mol template seed]`).
- `AtomType`: what the text states of one atom type (its role word, mass, LJ epsilon/sigma).
- `Deposition`: atoms of one type inserted every M steps into a region, moving along an axis
  (LAMMPS fix deposit).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

DEFAULT_PLACEMENT_SEED = 48271  # create_atoms random seed when the text states none
DEFAULT_MAX_TRIES = 1000  # create_atoms maxtry: attempts per atom before LAMMPS gives up on it


class RandomPlacement(BaseModel):
    """`count` atoms of `atom_type` (or molecules of `molecule`) at random positions, made after the
    lattice atoms (in the order listed). `region`: the name of a Layout region they are placed in
    (None: the whole box). `overlap`: no new atom closer than this to any existing one (distance
    units, as LAMMPS's overlap keyword); `max_tries` attempts per atom when an overlap is set."""

    atom_type: int = Field(ge=0, description="0 only with a molecule whose template holds the types")
    count: int = Field(gt=0)
    seed: int = Field(gt=0)
    region: str | None = None
    overlap: float | None = Field(default=None, gt=0)
    max_tries: int | None = Field(default=None, gt=0)
    molecule: str | None = Field(default=None, description="a molecule template id (create_atoms mol): "
                                 "then `atom_type` is the type offset of the template")
    mol_seed: int | None = Field(default=None, gt=0, description="the seed of the molecules' random orientations "
                                 "(None: seed + 1)")


class AtomType(BaseModel):
    """One atom type as the text states it: `name` the words it is called by ('large', 'solvent',
    'substrate'), its mass and its own LJ epsilon/sigma (None: not stated)."""

    index: int = Field(ge=1)
    name: str = ""
    mass: float | None = Field(default=None, gt=0)
    epsilon: float | None = Field(default=None, ge=0)
    sigma: float | None = Field(default=None, gt=0)


class Deposition(BaseModel):
    """fix deposit: `count` atoms of `atom_type` in all, one inserted every `every` steps at a random
    point of `region`, at least `near` from every atom, with velocity `velocity` along `axis`
    (negative: towards lo)."""

    atom_type: int = Field(ge=1)
    count: int = Field(gt=0)
    every: int = Field(gt=0)
    region: str
    seed: int = Field(gt=0)
    near: float = Field(gt=0)
    axis: str = Field(default="z", pattern=r"^[xyz]$")
    velocity: float
    group: str = Field(default="deposited", pattern=r"^[a-z][a-z0-9_]*$")
