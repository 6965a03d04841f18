"""Spin-lattice dynamics (LAMMPS SPIN package), read from a task text that retells one of LAMMPS's
examples/SPIN inputs.

Each atom carries a classical spin: a unit vector and a magnitude (Bohr magnetons, atom_style spin),
set at random or along one direction. The spins interact through magnetic pair terms overlaid on each
other (and on an EAM potential when the lattice moves): exchange J(r) = 4 a (r/d)^2 (1 - b (r/d)^2)
exp(-(r/d)^2) cut at R_c (pair spin/exchange: R_c a b d), magnetoelectric coupling (spin/magelec:
R_c, strength, direction), Dzyaloshinskii-Moriya (spin/dmi: R_c, strength, direction) and the
magnetic dipole-dipole term (spin/dipole/cut, or spin/dipole/long with an Ewald or PPPM solver).
fix precession/spin adds a Zeeman field and a uniaxial or cubic anisotropy, fix langevin/spin a
spin bath (temperature and transverse damping; it takes one temperature) and fix nve/spin
integrates spins and, with `lattice moving`, the atoms (LAMMPS manual: atom_style spin, pair
spin/*, fix precession/spin, fix langevin/spin, fix nve/spin).

A text names these terms and a few of their numbers (the exchange cutoff, the spin magnitude...) and
leaves most coefficients out; they are filled from the LAMMPS example whose numbers the text states,
by simagent.described.example_fill (the one way to fill from an example): every number of the text
must be read by this module's ledger, each signature number must equal the example's, and every
filled value is listed for report.md. A stated run length, timestep or temperature wins over the
example's. A text that matches no example keeps its gaps (named missing), never guessed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from simagent.backends.expert.protocol_text import LATTICE_WORDS
from simagent.described.example_fill import NUM, Comparison, Example, Fill, StatedNumbers

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

NAME = "spin dynamics"  # reading.UNSUPPORTED's name until a spin lattice is read
MENTION = re.compile(r"\bspins?\b|/spin\b")
MAGNETIC = re.compile(r"μ_?b\b|\bmu_?b\b|bohr magneton|magnet|exchange|precession")
# what the general reading reports for a spin text and this module answers
UNSUPPORTED_ANSWERED = (NAME, "non-periodic boundaries", "a many-body potential", "point dipoles",
                        "electrostatics (coul, kspace)", "regions, walls and groups of atoms",
                        "an atom style other than atomic")
GAPS = ("pair potential", "pair cutoff", "atom masses", "LJ ", "the thermostat temperature", "the dynamics (ensemble)",
        "a run length", "lattice scale", "box size", "initial configuration")
PairStyle = Literal["spin/exchange", "spin/magelec", "spin/dmi", "spin/dipole/cut", "spin/dipole/long"]


class SpinPair(BaseModel):
    """One magnetic pair term: pair_style `style` `cutoff`, then pair_coeff * * (keyword) `coeffs`
    (the first coefficient is the term's own cutoff R_c for exchange, magelec and dmi)."""

    style: PairStyle
    cutoff: float = Field(gt=0, description="the pair style's global cutoff (distance)")
    coeffs: tuple[float, ...] = Field(default=(), description="pair_coeff values after the keyword")
    offset: bool = Field(default=False, description="pair_coeff ... offset yes: energy and force offset so that "
                         "aligned spins carry none (exchange only)")

    @property
    def keyword(self) -> str:
        """pair_coeff's keyword after the style (exchange, magelec, dmi; none for the dipole terms)."""
        return {"spin/exchange": "exchange", "spin/magelec": "magelec", "spin/dmi": "dmi"}.get(self.style, "")


class Precession(BaseModel):
    """fix precession/spin: a Zeeman field (Tesla, direction) and a uniaxial anisotropy (eV, axis) or a
    cubic one (K1, K2c in eV, then three axes)."""

    zeeman: tuple[float, float, float, float] | None = None
    anisotropy: tuple[float, float, float, float] | None = None
    cubic: tuple[float, ...] | None = Field(default=None, description="K1 K2c n1x n1y n1z n2x ... n3z")
    energy: bool = Field(default=True, description="fix_modify energy yes: its energy counted in pe")


class SpinLattice(BaseModel):
    """The magnetic system of a described spin-lattice run (module docstring)."""

    magnitude: float = Field(gt=0, description="spin magnitude (Bohr magnetons), the same on every atom")
    orientation: Literal["random", "aligned"]
    seed: int | None = Field(default=None, gt=0, description="seed of the random orientations")
    direction: tuple[float, float, float] | None = None
    pairs: list[SpinPair] = Field(min_length=1)
    eam_file: str | None = Field(default=None, description="EAM/alloy file the spin terms are overlaid on")
    eam_element: str | None = None
    kspace: tuple[str, float] | None = Field(default=None, description="(style, precision) of the dipole solver")
    precession: Precession = Field(default_factory=Precession)
    bath_temperature: float = Field(ge=0, description="fix langevin/spin temperature (K)")
    damping: float = Field(ge=0, description="fix langevin/spin transverse damping (dimensionless)")
    bath_seed: int = Field(gt=0)
    lattice_moving: bool = Field(description="fix nve/spin lattice moving (atoms move) or frozen")
    neighbor: tuple[float, int, int] = Field(default=(0.1, 10, 20), description="skin, every, delay (check yes)")
    example_folder: str = Field(description="the examples/ folder the unstated values and files come from")

    @property
    def files(self) -> list[str]:
        return [self.eam_file] if self.eam_file else []


# LAMMPS examples/SPIN/bfo/in.spin.bfo: sc 3.96 A, 34 x 34 x 5 cells, boundary p p f, mass 1, spin/random 11 2.50;
# spin/exchange 6.0 (exchange 6.0 -0.01575 0.0 1.965), spin/magelec 4.5 (magelec 4.5 0.000109 1 1 1), spin/dmi 4.5
# (dmi 4.5 0.00005 1 1 1); neighbor 0.1 bin, every 10 check yes delay 20; precession/spin zeeman 0 along z,
# anisotropy 0.00033 along z (energy yes); langevin/spin 0.0 0.1 21; nve/spin lattice frozen; timestep 0.0002,
# thermo 50, run 500
BFO = Example(
    name="LAMMPS examples/SPIN/bfo (in.spin.bfo)",
    signature={"units": "metal", "lattice": ("sc", 3.96), "box": (34.0, 34.0, 5.0), "magnitude": 2.5,
               "exchange_cutoff": 6.0, "magelec_cutoff": 4.5, "dmi_cutoff": 4.5, "exchange": -0.01575},
    optional={"mass": 1.0, "orientation": "random", "anisotropy": "uniaxial", "axis": "z", "lattice_motion": "frozen",
              "bath": (0.0, 0.1), "bath_temperature": 0.0, "damping": 0.1, "periodic": ("p", "p", "n")},
    fills={"boundary": ("p", "p", "f"), "seed": 11, "mass": 1.0,
           "pairs": [("spin/exchange", 6.0, (6.0, -0.01575, 0.0, 1.965)),
                     ("spin/magelec", 4.5, (4.5, 0.000109, 1.0, 1.0, 1.0)),
                     ("spin/dmi", 4.5, (4.5, 0.00005, 1.0, 1.0, 1.0))],
           "zeeman": (0.0, 0.0, 0.0, 1.0), "anisotropy": (0.00033, 0.0, 0.0, 1.0), "bath": (0.0, 0.1), "bath_seed": 21,
           "thermo_every": 50},
    runs={"timestep": 0.0002, "steps": 500})

# LAMMPS examples/SPIN/dipole_spin/in.spin.iron_dipole_{cut,ewald,pppm}: bcc 2.8665 A, 12^3 cells, periodic, mass
# 55.845, spin 2.2 along -x, velocity 100 K seed 4928459 rot yes gaussian; eam/alloy Fe_Mishin2006 + spin/exchange
# 3.5 (exchange 3.4 0.02726 0.2171 1.841) + spin/dipole/cut or /long 8.0 (ewald/dipole/spin or pppm/dipole/spin
# 1e-4); neighbor 0.1 bin, every 10 check yes delay 20; precession/spin cubic 0.001 0.0005 along x, y, z (energy
# yes); langevin/spin 0.0 0.0 21; nve/spin lattice moving; timestep 0.0001, thermo 50, run 100
_IRON_SIGNATURE = {"units": "metal", "lattice": ("bcc", 2.8665), "box": (12.0, 12.0, 12.0), "magnitude": 2.2,
                   "exchange_cutoff": 3.4, "dipole_cutoff": 8.0, "mass": 55.845}
_IRON_OPTIONAL = {"orientation": "aligned", "direction": (-1.0, 0.0, 0.0), "anisotropy": "cubic",
                  "lattice_motion": "moving", "bath_temperature": 0.0, "damping": 0.0, "velocity_temperature": 100.0,
                  "distribution": "gaussian", "exchange": 0.02726, "eam": "mishin", "periodic": ("p", "p", "p")}
_IRON_FILLS = {"boundary": ("p", "p", "p"), "exchange_pair_cutoff": 3.5,
               "exchange_coeffs": (3.4, 0.02726, 0.2171, 1.841), "eam_file": "Fe_Mishin2006.eam.alloy", "element": "Fe",
               "cubic": (0.001, 0.0005, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), "bath": (0.0, 0.0),
               "bath_seed": 21, "velocity_seed": 4928459, "zero_rotation": True, "thermo_every": 50}
_KSPACE = {"ewald": "ewald/dipole/spin", "pppm": "pppm/dipole/spin"}
IRON_DIPOLE = {
    solver: Example(name=f"LAMMPS examples/SPIN/dipole_spin (in.spin.iron_dipole_{solver})",
                    signature=_IRON_SIGNATURE | {"dipole_solver": solver},
                    optional=_IRON_OPTIONAL | ({"precision": 1e-4} if solver != "cut" else {}),
                    fills=_IRON_FILLS | {"kspace": _KSPACE.get(solver)},
                    runs={"timestep": 0.0001, "steps": 100})
    for solver in ("cut", "ewald", "pppm")}

# LAMMPS examples/SPIN iron, cobalt_fcc, cobalt_hcp, nickel: 5 x 5 x 5 cells, periodic, an EAM/alloy potential
# overlaid with spin/exchange, velocities 100 K (seed 4928459, rot yes, gaussian), precession/spin (energy yes),
# langevin/spin 0.0 0.0 21, nve/spin lattice moving, timestep 0.0001, thermo 50, run 1000. Per example: (folder,
# lattice, constant, mass, spin magnitude, orientation (random seed 31, or a direction), EAM file, element, its
# author as a text names it, spin/exchange cutoff, pair_coeff exchange values, offset, precession terms)
_EAM_EXCHANGE = [
    ("iron", "bcc", 2.8665, 55.845, 2.2, None, "Fe_Mishin2006.eam.alloy", "Fe", "mishin", 3.5,
     (3.4, 0.02726, 0.2171, 1.841), True, {"zeeman": (0.0, 0.0, 0.0, 1.0)}),
    ("cobalt_fcc", "fcc", 3.54, 58.93, 1.72, (0.0, 0.0, 1.0), "Co_PurjaPun_2012.eam.alloy", "Co", "purja", 4.0,
     (4.0, 0.0446928, 0.003496, 1.4885), False, {"zeeman": (1.0, 0.0, 0.0, 1.0)}),
    ("cobalt_hcp", "hcp", 2.5071, 58.93, 1.72, None, "Co_PurjaPun_2012.eam.alloy", "Co", "purja", 4.0,
     (4.0, -0.3593, 1.135028015e-05, 1.0645), True, {"anisotropy": (0.01, 0.0, 0.0, 1.0)}),
    ("nickel", "fcc", 3.524, 58.69, 0.63, None, "Ni99.eam.alloy", "Ni", "mishin", 4.0,
     (4.0, 0.50, 0.2280246862, 1.229983475), False, {"zeeman": (0.0, 0.0, 0.0, 1.0)}),
]


def _eam_exchange_example(folder: str, style: str, a: float, mass: float, magnitude: float,
                          direction: tuple[float, float, float] | None, eam: str, element: str, author: str,
                          cutoff: float, coeffs: tuple[float, ...], offset: bool, precession: dict) -> Example:
    field, axis = precession.get("zeeman"), precession.get("anisotropy")
    optional = {"orientation": "aligned" if direction else "random", "lattice_motion": "moving",
                "bath_temperature": 0.0, "damping": 0.0, "velocity_temperature": 100.0, "distribution": "gaussian",
                "exchange": coeffs[1], "eam": author, "periodic": ("p", "p", "p")}
    if direction:
        optional["direction"] = direction
    if field is not None:
        optional["zeeman"] = field[0]
    if axis is not None:
        optional |= {"anisotropy": "uniaxial", "axis": "xyz"[[abs(c) for c in axis[1:]].index(1.0)],
                     "anisotropy_k": axis[0]}
    return Example(
        name=f"LAMMPS examples/SPIN/{folder} (in.spin.{folder})",
        signature={"units": "metal", "lattice": (style, a), "box": (5.0, 5.0, 5.0), "magnitude": magnitude,
                   "exchange_cutoff": coeffs[0], "mass": mass},
        optional=optional,
        fills={"boundary": ("p", "p", "p"), "seed": None if direction else 31,
               "pairs": [("spin/exchange", cutoff, coeffs, offset)], "eam_file": eam, "element": element,
               "bath": (0.0, 0.0), "bath_seed": 21, "velocity_seed": 4928459, "zero_rotation": True,
               "thermo_every": 50, "folder": f"SPIN/{folder}", "direction": direction, **precession},
        runs={"timestep": 0.0001, "steps": 1000})


EAM_EXCHANGE = [_eam_exchange_example(*row) for row in _EAM_EXCHANGE]
EXAMPLES = [BFO, *IRON_DIPOLE.values(), *EAM_EXCHANGE]
EXAMPLE_FOLDERS = {BFO.name: "SPIN/bfo", **{e.name: "SPIN/dipole_spin" for e in IRON_DIPOLE.values()},
                   **{e.name: e.fills["folder"] for e in EAM_EXCHANGE}}
_AUTHORS = {"mishin": r"mishin", "purja": r"purja|purja ?pun"}
_LATTICES = [*LATTICE_WORDS[:3], (r"hcp|hexagonal[- ]close[- ]packed", "hcp")]

_MU_B = r"\s*(?:μ_?b|mu_?b|bohr magnetons?)\b"
_UNIT_TIME = {"ps": 1.0, "fs": 1e-3}
_AXIS = r"([+-]?)\s*([xyz])(?:[- ]?(?:axis|direction)\b|\b)"


def _precision(text: str) -> float:
    """'1e-4', '10^-4', '10⁻⁴', '0.0001' as a number."""
    sup = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
    text = text.translate(sup).replace(" ", "")
    if power := re.fullmatch(r"10\^?(-\d+)", text):
        return 10.0 ** int(power.group(1))
    return float(text)


def _read(low: str) -> StatedNumbers:
    """Every number of a spin text, by role."""
    s = StatedNumbers(low)
    s.take("lattice_constant", rf"lattice (?:constant|parameter|spacing)(?: of| =|:| is)?\s*{NUM}")
    s.take("box", rf"{NUM}\s*(?:x|\*|by)\s*{NUM}\s*(?:x|\*|by)\s*{NUM}", groups=(1, 2, 3))
    s.take("mass", rf"\bmass(?:es)?(?: of| =|:| is)?\s*{NUM}")
    s.take("magnitude", rf"{NUM}{_MU_B}")
    s.take("exchange_cutoff", rf"exchange[^.;]{{0,60}}?cut-?off(?: radius| distance)?(?: of| =|:)?\s*{NUM}")
    s.take("magelec_cutoff", rf"magneto-?electric[^.;]{{0,60}}?cut-?off(?: radius| distance)?(?: of| =|:)?\s*{NUM}")
    s.take("dmi_cutoff", rf"(?:dzyaloshinskii|\bdmi\b)[^.;]{{0,60}}?cut-?off(?: radius| distance)?(?: of| =|:)?\s*"
                         rf"{NUM}")
    s.take("dipole_cutoff", rf"dipol\w*[^.;]{{0,60}}?cut-?off(?: radius| distance)?(?: of| =|:)?\s*{NUM}")
    s.take("exchange", rf"exchange (?:interaction )?(?:parameter|constant|coupling|energy|strength|integral)"
                       rf"[^.;0-9-]{{0,30}}?{NUM}\s*(m?ev)\b", convert=str, groups=(1, 2))
    s.take("precision", r"(?:precision|accuracy|tolerance)(?: of| =|:)?\s*(1e-\d+|10\s*\^?\s*-\d+|10[⁻][⁰-⁹]+|"
                        r"0\.0*1)\b", convert=_precision)
    s.take("velocity_temperature", rf"(?:initiali[sz]ed|velocit\w*|atoms? (?:start|begin))[^.;]{{0,50}}?"
                                   rf"(?:temperature )?(?:of |at )?{NUM}\s*k\b")
    s.take("bath", rf"langevin[^.;]{{0,100}}?(?:temperature(?: range)?|\bat)\s*(?:of\s*)?{NUM}\s*k?"
                   rf"(?:\s*(?:-|to)\s*{NUM})?", groups=(1, 2))
    s.take("damping", rf"(?:transverse )?damping(?: parameter| constant| coefficient| factor)?(?: of| =|:| is)?\s*"
                      rf"{NUM}")
    s.take("timestep", rf"time ?step(?: size)?(?: of| =|:| is)?\s*{NUM}\s*(ps|fs)\b|{NUM}\s*(ps|fs)\s*time ?step",
           convert=str, groups=(1, 2, 3, 4))
    s.take("steps", rf"(?:for|run|runs|lasts?|of)\s*{NUM}\s*(?:md |time |integration )?(?:time)?steps\b",
           convert=lambda x: int(float(x)))
    s.take("zeeman", rf"(?:zeeman|external (?:magnetic )?field|applied (?:magnetic )?field|magnetic field)"
                     rf"[^.;]{{0,40}}?{NUM}\s*(?:t|tesla)\b")
    s.take("anisotropy_k", rf"anisotropy[^.;]{{0,40}}?{NUM}\s*ev\b")
    s.mark("year", r"\b(?:mishin|pun|et al\.?|potential)\s*\(?\s*((?:19|20)\d\d)\b")
    return s


def _stated(desc: SimulationDescription, low: str, s: StatedNumbers) -> dict:
    """What the text states, as the example signatures name it."""
    stated: dict = {k: s.value(k) for k in ("magnitude", "exchange_cutoff", "magelec_cutoff", "dmi_cutoff",
                                            "dipole_cutoff", "mass", "precision", "velocity_temperature", "damping",
                                            "zeeman", "anisotropy_k")}
    stated["units"] = desc.units
    style = next((name for pattern, name in _LATTICES if re.search(
        rf"\b(?:{pattern})\)?(?:\s+\(\w+\))?(?:\s+\w+){{0,2}}\s+(?:lattice|structure|crystal)\b", low)), None)
    if style is None and desc.lattice is not None:
        style = desc.lattice.style
    if style is not None and s.value("lattice_constant") is not None:
        stated["lattice"] = (style, s.value("lattice_constant"))
    box = s.value("box")
    stated["box"] = tuple(float(v) for v in box) if isinstance(box, tuple) else None
    exchange = s.value("exchange")
    if exchange is not None:
        value = float(exchange[0]) * (1e-3 if exchange[1] == "mev" else 1.0)
        stated["exchange"] = value
    bath = s.value("bath")
    if isinstance(bath, tuple):  # 'temperature range 0.0-0.1': two numbers
        stated["bath"] = bath
    elif bath is not None:
        stated["bath_temperature"] = bath
    if re.search(r"random(?:ly)?[^.;]{0,30}?orient|orient\w*[^.;]{0,30}?random|random (?:initial )?(?:spin|"
                 r"direction)", low):
        stated["orientation"] = "random"
    elif (aligned := re.search(r"(?:aligned|oriented|pointing|along)[^.;]{0,20}?(?:the )?" + _AXIS, low)) and \
            re.search(r"spin|magnetic moment", low[max(0, aligned.start() - 120):aligned.start()]):
        sign = -1.0 if aligned.group(1) == "-" else 1.0
        stated["orientation"] = "aligned"
        stated["direction"] = tuple(sign if a == aligned.group(2) else 0.0 for a in "xyz")
    if re.search(r"cubic anisotropy|anisotropy[^.;]{0,20}\bcubic\b", low):
        stated["anisotropy"] = "cubic"
    elif axis := re.search(r"anisotropy[^.;]{0,30}?along (?:the )?" + _AXIS, low):
        stated["anisotropy"], stated["axis"] = "uniaxial", axis.group(2)
    if moving := re.search(r"lattice (moving|frozen)|(?:atomic motion|atoms?|lattice)[^.;]{0,40}?\b(frozen|fixed|"
                           r"moving|move)\b", low):
        word = moving.group(1) or moving.group(2)
        stated["lattice_motion"] = "frozen" if word in ("frozen", "fixed") else "moving"
    if re.search(r"\bgaussian|maxwell", low) and stated["velocity_temperature"] is not None:
        stated["distribution"] = "gaussian"
    if re.search(r"embedded[- ]atom|\beam\b", low):  # by its author, where the text names one
        stated["eam"] = next((key for key, pattern in _AUTHORS.items() if re.search(pattern, low)), None)
    if stated["dipole_cutoff"] is not None or re.search(r"dipol", low):
        stated["dipole_solver"] = "pppm" if re.search(r"\bpppm|particle[- ]particle", low) else (
            "ewald" if re.search(r"ewald", low) else ("cut" if re.search(r"dipole/cut|cut-?off only|short[- ]range "
                                                                          r"dipol", low) else None))
    stated["periodic"] = _periodic(low)
    return stated


def _periodic(low: str) -> tuple[str, str, str] | None:
    """Which axes are periodic ('p') and which not ('n': the kind of non-periodic boundary is not said)."""
    if re.search(r"(?:pbc|periodic\w*)[^.;]{0,40}(?:all|every|each|three) (?:directions|dimensions|axes)|fully "
                 r"periodic|triply periodic", low):
        return ("p", "p", "p")
    some = re.search(r"(?:pbc|periodic\w*)[^.;]{0,30}?\b(?:in|along)\s+(?:the\s+)?([xyz])(?:[- ]?(?:direction|axis))?"
                     r"(?:,? and (?:the\s+)?([xyz]))?", low)
    if some:
        axes = {some.group(1), some.group(2)} - {None}
        return tuple("p" if a in axes else "n" for a in "xyz")  # type: ignore[return-value]
    return None


def _describe(stated: dict) -> str:
    """The stated numbers that identify the example, briefly (report.md cites them with every fill)."""
    keys = ("lattice", "box", "magnitude", "exchange", "exchange_cutoff", "magelec_cutoff", "dmi_cutoff",
            "dipole_cutoff", "dipole_solver")
    said = {k: stated.get(k) for k in keys if stated.get(k) is not None}
    return ", ".join(f"{k} {' '.join(f'{v:g}' if isinstance(v, float) else str(v) for v in value)}"
                     if isinstance(value, tuple) else f"{k} {value:g}" if isinstance(value, float) else f"{k} {value}"
                     for k, value in said.items())


def _example(stated: dict, unread: list[str]) -> tuple[Example, Comparison]:
    """The example the text retells: the one it identifies, else the one most of its numbers agree with
    (whose differences are then named)."""
    compared = [(e, e.compare(stated, unread=unread)) for e in EXAMPLES]
    for example, comparison in compared:
        if comparison.identified:
            return example, comparison
    return max(compared, key=lambda ec: (len(ec[1].agree), -len(ec[1].differ)))


def read_spin(desc: SimulationDescription, low: str) -> None:
    """A spin-lattice text retelling a LAMMPS examples/SPIN input (module docstring): the spin lattice,
    its run and its fills; otherwise the refusal stays, with the example's differences named."""
    if NAME not in desc.unsupported or not MENTION.search(low) or not MAGNETIC.search(low):
        return
    s = _read(low)
    stated = _stated(desc, low, s)
    example, comparison = _example(stated, s.unread())
    fill = example.fill(desc, comparison, describe=_describe(stated))
    if fill is None:
        desc.missing.append(f"the coefficients of the magnetic interactions, which the text does not state and "
                            f"takes from no LAMMPS example whose numbers it states (the nearest: {example.name})")
        return
    _build(desc, low, s, stated, example, fill)


def _build(desc: SimulationDescription, low: str, s: StatedNumbers, stated: dict, example: Example,
           fill: Fill) -> None:
    from simagent.described.model import Box, Dynamics, Lattice, Stage, Velocity

    f = example.fills
    dt_value, dt_unit = s.value("timestep") or (None, None)
    timestep = float(dt_value) * _UNIT_TIME[dt_unit] if dt_value is not None else None
    fill.departures({"timestep": timestep, "steps": s.value("steps")})
    box = stated["box"]
    desc.box = Box(lo=(0.0, 0.0, 0.0), hi=box, lattice_units=True)
    desc.note("box", "rules", s.said("box") + " (lattice units)")
    desc.lattice = Lattice(style=stated["lattice"][0], scale=stated["lattice"][1])
    desc.note("lattice", "rules", s.said("lattice_constant"))
    periodic = stated["periodic"]
    boundary = f["boundary"]
    if periodic is not None:
        desc.boundary = tuple(p if p == "p" else b for p, b in zip(periodic, boundary, strict=True))  # type: ignore
        desc.note("boundary", "rules", " ".join(desc.boundary))
        if "n" in periodic:
            fill.note("boundary.nonperiodic", f"{' '.join(boundary)}: the non-periodic axis is fixed (f), the "
                      "example's boundary; the text says only non-periodic")
    else:
        desc.boundary = boundary
        fill.note("boundary", " ".join(boundary))
    desc.atom_style, desc.atom_types, desc.pair, desc.potential, desc.dimension = "spin", 1, None, None, 3
    desc.origin.pop("dimension", None)  # ('hexagonal close-packed' is no 2D hex lattice)
    if s.value("mass") is not None:
        desc.masses = {1: s.value("mass")}
        desc.note("masses", "rules", s.said("mass"))
    else:
        desc.masses = {1: f["mass"]}
        fill.note("masses", f"{f['mass']:g}: atom mass (the lattice is frozen: the mass moves nothing)")
    pairs, notes = _pairs(example, stated)
    for key, text in notes.items():
        fill.note(key, text)
    for key in ("exchange_cutoff", "magelec_cutoff", "dmi_cutoff", "dipole_cutoff", "exchange"):
        if s.value(key) is not None:
            desc.note(f"spin.stated_{key}", "rules", s.said(key))
    precession = _precession(example)
    fill.note("spin.precession", _say_precession(precession))
    bath = f["bath"]
    temperature = stated.get("bath_temperature")
    if stated.get("bath") is not None:
        temperature = bath[0]
        desc.note("spin.bath", "rules", f"{s.said('bath')}: the example's fix langevin/spin {bath[0]:g} {bath[1]:g} "
                  f"{f['bath_seed']}, whose two numbers are the bath temperature ({bath[0]:g} K) and the transverse "
                  f"damping ({bath[1]:g}, dimensionless); fix langevin/spin holds one temperature, not a range, "
                  "and its temperature is in K in metal units")
    elif temperature is not None:
        desc.note("spin.bath_temperature", "rules", s.said("bath"))
    else:
        temperature = bath[0]
        fill.note("spin.bath_temperature", f"{temperature:g} K: the spin bath temperature")
    damping = stated.get("damping")
    if damping is None:
        damping = bath[1]
        if stated.get("bath") is None:
            fill.note("spin.damping", f"{damping:g}: fix langevin/spin's transverse damping")
    else:
        desc.note("spin.damping", "rules", s.said("damping"))
    fill.note("spin.bath_seed", f"{f['bath_seed']}: the seed of fix langevin/spin")
    moving = stated.get("lattice_motion", example.optional.get("lattice_motion")) == "moving"
    if "lattice_motion" in stated:
        desc.note("spin.lattice", "rules", f"fix nve/spin lattice {'moving' if moving else 'frozen'}")
    else:
        fill.note("spin.lattice", f"lattice {'moving' if moving else 'frozen'}")
    orientation = stated.get("orientation") or example.optional["orientation"]
    seed = f.get("seed") if orientation == "random" else None
    if seed is not None:
        fill.note("spin.seed", f"{seed}: the seed of the random spin orientations")
    direction = stated.get("direction") or (example.optional.get("direction") if orientation == "aligned" else None)
    if orientation == "aligned" and direction is None:
        desc.missing.append("the direction the spins are aligned along")
        return
    desc.note("spin.magnitude", "rules", s.said("magnitude"))
    eam = None
    if f.get("eam_file") and "eam" in stated:
        eam = f["eam_file"]
        fill.note("spin.eam", f"{eam} (element {f['element']}): the example's EAM file (the text names an EAM "
                  "potential" + (f", by {stated['eam'].title()}" if stated.get("eam") else "") + "), read from "
                  "LAMMPS's examples folder")
    elif f.get("eam_file"):
        desc.missing.append("the potential of the atoms the spin terms are overlaid on (the example's is EAM; the "
                            "text names none)")
        return
    kspace = None
    if f.get("kspace"):
        kspace = (f["kspace"], stated.get("precision") or example.optional["precision"])
        desc.note("spin.kspace", "rules" if stated.get("precision") else "default",
                  f"kspace_style {kspace[0]} {kspace[1]:g}" + ("" if stated.get("precision") else ": " + fill.why))
    desc.spin = SpinLattice(
        magnitude=stated["magnitude"], orientation=orientation, seed=seed, direction=direction, pairs=pairs,
        eam_file=eam, eam_element=f.get("element") if eam else None, kspace=kspace, precession=precession,
        bath_temperature=temperature, damping=damping, bath_seed=f["bath_seed"], lattice_moving=moving,
        example_folder=EXAMPLE_FOLDERS[example.name])
    fill.note("spin.neighbor", "skin 0.1 bin, neigh_modify every 10 check yes delay 20 (and atom_modify map array, "
              "which the serial spin integrator needs)")
    desc.velocity = None
    vt = stated.get("velocity_temperature")
    if vt is not None:
        desc.velocity = Velocity(temperature=vt, seed=f.get("velocity_seed") or 4928459,
                                 distribution=stated.get("distribution") or "uniform",
                                 zero_rotation=bool(f.get("zero_rotation")))
        desc.note("velocity.temperature", "rules", s.said("velocity_temperature"))
        fill.note("velocity.seed", f"{desc.velocity.seed}, rot yes: the seed and zeroed rotation of the example's "
                  "velocity command")
    else:
        for key in ("velocity.seed", "velocity.temperature", "velocity.distribution", "velocity.zero_momentum"):
            desc.origin.pop(key, None)
        desc.note("velocity", "default", "none: the text creates no velocities (the atoms start at rest)")
    desc.timestep = timestep or example.runs["timestep"]
    if timestep is None:
        fill.note("timestep", f"{desc.timestep:g} ps")
    else:
        desc.note("timestep", "rules", f"{dt_value} {dt_unit}")
    steps = s.value("steps") or example.runs["steps"]
    if s.value("steps") is None:
        fill.note("run1.steps", f"{steps} steps")
    desc.stages = [Stage(name="run1", steps=steps, dynamics=Dynamics(ensemble="nve"),
                         evidence=s.said("steps") if s.value("steps") else "the example's run")]
    desc.note("run1.integrator", "rules", f"fix nve/spin lattice {'moving' if moving else 'frozen'} integrates "
              "the spins" + (" and the atoms" if moving else " (the atoms stay on their sites)"))
    desc.average_stage = 0
    desc.note("average_stage", "default", "run1: the metrics average the thermo output of the one run")
    desc.thermo_every = f["thermo_every"]
    fill.note("thermo_every", f"{desc.thermo_every} steps between the thermo rows the metrics average")
    desc.missing = [m for m in desc.missing if not m.startswith(GAPS)]
    desc.unsupported = [u for u in desc.unsupported if u not in UNSUPPORTED_ANSWERED and not (
        desc.spin.eam_file and u.startswith("a many-body potential"))]  # (no shipped file: the example's is used)
    for key in ("pair.epsilon", "pair.sigma", "pair.cutoff", "type1.mass", "run1.t_damp", "run1.seed", "run1.t_stop",
                "potential"):
        desc.origin.pop(key, None)


def _pairs(example: Example, stated: dict) -> tuple[list[SpinPair], dict[str, str]]:
    """The example's magnetic pair terms (its coefficients), each cutoff as the text states it."""
    f = example.fills
    notes = {}
    if "pairs" in f:
        pairs = [SpinPair(style=row[0], cutoff=row[1], coeffs=row[2], offset=len(row) > 3 and row[3])
                 for row in f["pairs"]]
    else:
        dipole = "spin/dipole/cut" if f.get("kspace") is None else "spin/dipole/long"
        pairs = [SpinPair(style="spin/exchange", cutoff=f["exchange_pair_cutoff"], coeffs=f["exchange_coeffs"]),
                 SpinPair(style=dipole, cutoff=example.signature["dipole_cutoff"])]
    for p in pairs:
        rest = " ".join(f"{c:g}" for c in p.coeffs[1:])
        if p.keyword:
            notes[f"spin.{p.keyword}"] = (f"pair_style {p.style} {p.cutoff:g}, pair_coeff * * {p.keyword} "
                                          f"{p.coeffs[0]:g} {rest}{' offset yes' if p.offset else ''}: the "
                                          "coefficients the text leaves out")
    return pairs, notes


def _precession(example: Example) -> Precession:
    f = example.fills
    return Precession(zeeman=f.get("zeeman"), anisotropy=f.get("anisotropy"), cubic=f.get("cubic"))


def _say_precession(p: Precession) -> str:
    parts = []
    if p.zeeman is not None:
        parts.append(f"zeeman {' '.join(f'{v:g}' for v in p.zeeman)}" + (" (a zero field)" if p.zeeman[0] == 0 else
                                                                           " (Tesla, direction)"))
    if p.anisotropy is not None:
        parts.append(f"anisotropy {' '.join(f'{v:g}' for v in p.anisotropy)}")
    if p.cubic is not None:
        parts.append(f"cubic {' '.join(f'{v:g}' for v in p.cubic)}")
    return "fix precession/spin " + " ".join(parts) + ", its energy counted (fix_modify energy yes)"
