"""A typed GROMACS .mdp writer: the options simagent's protocols use, validated, rendered
deterministically (same options -> byte-identical text, so resume and review see stable inputs).

Option names and values follow the GROMACS 2022 manual ("Molecular dynamics parameters (.mdp
options)"); `tests/test_gromacs.py` runs grompp on rendered files, which rejects unknown names.
Only options that are set (not None) are written; GROMACS defaults apply to the rest.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Integrator = Literal["md", "sd", "steep", "cg", "l-bfgs"]
Thermostat = Literal["no", "v-rescale", "nose-hoover", "berendsen"]
Barostat = Literal["no", "C-rescale", "Parrinello-Rahman", "Berendsen"]
MINIMIZERS = ("steep", "cg", "l-bfgs")

# Section headers and the options under each, in the order they are written.
_LAYOUT: list[tuple[str, list[str]]] = [
    ("preprocessing", ["define"]),
    ("run control", ["integrator", "dt", "nsteps", "emtol", "emstep", "comm_mode", "nstcomm"]),
    ("output control", ["nstxout", "nstvout", "nstfout", "nstlog", "nstcalcenergy", "nstenergy",
                        "nstxout_compressed", "compressed_x_grps"]),
    ("neighbour searching", ["cutoff_scheme", "nstlist", "pbc", "verlet_buffer_tolerance", "rlist"]),
    ("electrostatics", ["coulombtype", "rcoulomb", "fourierspacing", "pme_order", "ewald_rtol"]),
    ("van der Waals", ["vdwtype", "vdw_modifier", "rvdw_switch", "rvdw", "DispCorr"]),
    ("temperature coupling", ["tcoupl", "tc_grps", "tau_t", "ref_t", "nsttcouple"]),
    ("pressure coupling", ["pcoupl", "pcoupltype", "tau_p", "ref_p", "compressibility", "refcoord_scaling"]),
    ("velocity generation", ["gen_vel", "gen_temp", "gen_seed", "continuation"]),
    ("bonds and constraints", ["constraints", "constraint_algorithm", "lincs_order", "lincs_iter"]),
]
# Options whose GROMACS spelling is not the field name with '_' -> '-'.
_SPELLING = {"DispCorr": "DispCorr"}


class MdpOptions(BaseModel):
    """One .mdp file. Lengths in nm, times in ps, temperatures in K, pressures in bar,
    compressibility in 1/bar, energies/forces in kJ/mol(/nm) (GROMACS units)."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(default="", description="written as a comment line")
    define: list[str] = Field(default_factory=list, description="preprocessor flags, e.g. ['-DFLEXIBLE']")
    # run control
    integrator: Integrator = "md"
    dt: float | None = Field(default=None, gt=0, le=0.02)
    nsteps: int = Field(ge=-1)
    emtol: float | None = Field(default=None, gt=0, description="EM: stop when max force < emtol")
    emstep: float | None = Field(default=None, gt=0, description="EM: initial step size (nm)")
    comm_mode: Literal["Linear", "None"] | None = "Linear"
    nstcomm: int | None = Field(default=100, gt=0)
    # output
    nstxout: int = Field(default=0, ge=0)
    nstvout: int = Field(default=0, ge=0)
    nstfout: int = Field(default=0, ge=0)
    nstlog: int = Field(default=1000, ge=0)
    nstcalcenergy: int | None = Field(default=None, gt=0)
    nstenergy: int = Field(default=100, ge=0)
    nstxout_compressed: int = Field(default=0, ge=0)
    compressed_x_grps: str | None = None
    # neighbour searching
    cutoff_scheme: Literal["Verlet"] = "Verlet"
    nstlist: int = Field(default=10, gt=0)
    pbc: Literal["xyz"] = "xyz"
    verlet_buffer_tolerance: float | None = Field(default=None, gt=0)
    rlist: float | None = Field(default=None, gt=0, description="None: max(rvdw, rcoulomb); mdrun adds "
                                "the buffer that verlet-buffer-tolerance needs")
    # interactions
    coulombtype: Literal["PME", "Cut-off", "Reaction-Field"] = "PME"
    rcoulomb: float = Field(default=1.0, gt=0)
    fourierspacing: float | None = Field(default=None, gt=0)
    pme_order: int | None = Field(default=None, ge=4, le=12)
    ewald_rtol: float | None = Field(default=None, gt=0)
    vdwtype: Literal["Cut-off", "PME"] = "Cut-off"
    vdw_modifier: Literal["Potential-shift", "None", "Force-switch", "Potential-switch"] = "Potential-shift"
    rvdw_switch: float | None = Field(default=None, ge=0)
    rvdw: float = Field(default=1.0, gt=0)
    DispCorr: Literal["no", "EnerPres", "Ener", "AllEnerPres", "AllEner"] = "no"
    # temperature coupling (one group: the whole system)
    tcoupl: Thermostat = "no"
    tc_grps: str | None = None
    tau_t: float | None = Field(default=None, gt=0)
    ref_t: float | None = Field(default=None, gt=0)
    nsttcouple: int | None = None
    # pressure coupling
    pcoupl: Barostat = "no"
    pcoupltype: Literal["isotropic"] | None = None
    tau_p: float | None = Field(default=None, gt=0)
    ref_p: float | None = None
    compressibility: float | None = Field(default=None, gt=0)
    refcoord_scaling: Literal["no", "all", "com"] | None = None
    # velocities
    gen_vel: bool | None = None
    gen_temp: float | None = Field(default=None, gt=0)
    gen_seed: int | None = None
    continuation: bool | None = None
    # constraints
    constraints: Literal["none", "h-bonds", "all-bonds", "h-angles", "all-angles"] = "none"
    constraint_algorithm: Literal["lincs", "shake"] | None = None
    lincs_order: int | None = Field(default=None, gt=0)
    lincs_iter: int | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _consistent(self) -> MdpOptions:
        minimizing = self.integrator in MINIMIZERS
        if minimizing:
            if self.tcoupl != "no" or self.pcoupl != "no" or self.gen_vel:
                raise ValueError("energy minimisation takes no thermostat, barostat or velocities")
        else:
            if self.dt is None:
                raise ValueError("an MD integrator needs dt")
            if self.emtol is not None or self.emstep is not None:
                raise ValueError("emtol/emstep apply to energy minimisation only")
        if self.tcoupl != "no":
            if self.tau_t is None or self.ref_t is None:
                raise ValueError(f"thermostat {self.tcoupl} needs tau_t and ref_t")
            self.tc_grps = self.tc_grps or "System"
        elif self.tau_t is not None or self.ref_t is not None:
            raise ValueError("tau_t/ref_t given without a thermostat (tcoupl = no)")
        if self.integrator == "sd" and self.tcoupl != "no":
            raise ValueError("the sd integrator is its own thermostat: use tcoupl = no with tau_t/ref_t unset")
        if self.pcoupl != "no":
            if self.integrator != "md" and self.integrator != "sd":
                raise ValueError("pressure coupling needs an MD integrator")
            if self.tcoupl == "no" and self.integrator != "sd":
                raise ValueError("pressure coupling without temperature coupling is not supported here")
            if self.tau_p is None or self.ref_p is None or self.compressibility is None:
                raise ValueError(f"barostat {self.pcoupl} needs tau_p, ref_p and compressibility")
            self.pcoupltype = self.pcoupltype or "isotropic"
        if self.gen_vel and (self.gen_temp is None or self.continuation):
            raise ValueError("gen_vel needs gen_temp and continuation = no")
        if self.coulombtype == "PME" and self.vdwtype == "Cut-off" and self.rvdw > self.rcoulomb:
            raise ValueError("with PME, rvdw may not exceed rcoulomb")
        if self.coulombtype != "PME" and abs(self.rvdw - self.rcoulomb) > 1e-12:
            raise ValueError("with cut-off electrostatics GROMACS (Verlet scheme) needs rcoulomb = rvdw")
        if self.rlist is None:
            self.rlist = max(self.rvdw, self.rcoulomb)  # GROMACS' default 1 nm would only cause a NOTE
        for flag in self.define:
            if not re.fullmatch(r"-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.]+)?", flag):
                raise ValueError(f"invalid define flag {flag!r} (expected -DNAME or -DNAME=value)")
        if self.compressed_x_grps is not None and not re.fullmatch(r"[A-Za-z0-9_]+", self.compressed_x_grps):
            raise ValueError("compressed_x_grps must be a single index-group name")
        return self

    @property
    def ensemble(self) -> str:
        if self.integrator in MINIMIZERS:
            return "EM"
        if self.pcoupl != "no":
            return "NPT"
        return "NVT" if self.tcoupl != "no" or self.integrator == "sd" else "NVE"

    def render(self) -> str:
        """The .mdp text: sections in a fixed order, one `name = value` per set option."""
        lines = [f"; {line}" for line in (self.title or "generated by simagent").splitlines()]
        for section, names in _LAYOUT:
            body = []
            for name in names:
                value = getattr(self, name)
                if value is None or (name == "define" and not value):
                    continue
                body.append(f"{_SPELLING.get(name, name.replace('_', '-')):<24}= {_format(value)}")
            if body:
                lines += ["", f"; {section}", *body]
        return "\n".join(lines) + "\n"


def _format(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, list):
        return " ".join(_format(v) for v in value)
    return str(value)


def parse_mdp(text: str) -> dict[str, str]:
    """`name = value` pairs of an .mdp text, names normalised to '-' (comments dropped)."""
    options: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split(";", 1)[0].strip()
        if not line or "=" not in line:
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        options[key.replace("_", "-").lower()] = value
    return options
