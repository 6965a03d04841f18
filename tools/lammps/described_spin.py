"""A spin lattice of a described run (simagent.described.spin) as LAMMPS commands (SPIN package), and
its magnetic metrics.

Before the box: atom_modify map array (the serial spin integrator's sametag lookup needs it). After
the atoms and masses: each atom's spin (set spin/atom, or spin/atom/random), the pair terms overlaid
(hybrid/overlay; the EAM first when the lattice moves), the neighbor settings and the dipole solver.
In the run: fix precession/spin (energy counted), fix langevin/spin (the last magnetic fix) and fix
nve/spin, which integrates the stage. The averaged stage prints compute spin's six values.

compute spin (LAMMPS manual and src/SPIN/compute_spin.cpp): values 1-3 are the mean over the atoms
of the spin unit vectors (dimensionless: each spin's magnitude is not in them), 4 the norm of that
mean (0: no net moment, 1: all spins parallel), 5 the magnetic energy summed over the atoms (eV:
the pair/spin terms and fix precession/spin), 6 the spin temperature (K). With every spin of one
magnitude mu (the description's), the total magnetic moment is |sum_i mu s_i| = N mu value 4, in
Bohr magnetons; per atom mu value 4.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simagent.described.model import SimulationDescription
from simagent.errors import CalculationFailed, ReadError
from simagent.models import Result
from simagent.stats import block_average
from tools.lammps.examples import example_folder

COMPUTE = "spin_mag"
# thermo columns (equal-style variables of compute spin's vector)
VARIABLES = {"spin_mx": 1, "spin_my": 2, "spin_mz": 3, "spin_norm": 4, "spin_emag": 5, "spin_tmag": 6}
COLUMNS = tuple(f"v_{name}" for name in VARIABLES)
PROPERTIES = ("magnetization", "magnetic_energy", "spin_temperature")
PER_ATOM = "per_atom"
NORMALIZED = "normalized"


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def preamble(desc: SimulationDescription) -> list[str]:
    return ["atom_modify     map array"] if desc.spin is not None else []


def interaction_lines(desc: SimulationDescription) -> list[str]:
    """Spins on every atom, the overlaid pair terms, the neighbor lists and the dipole solver."""
    sp = desc.spin
    assert sp is not None
    if sp.orientation == "random":
        lines = [f"set             group all spin/atom/random {sp.seed} {_fmt(sp.magnitude)}"]
    else:
        assert sp.direction is not None
        lines = [f"set             group all spin/atom {_fmt(sp.magnitude)} {' '.join(_fmt(c) for c in sp.direction)}"]
    styles = [f"{p.style} {_fmt(p.cutoff)}" for p in sp.pairs]
    if sp.eam_file:
        styles.insert(0, "eam/alloy")
    lines.append("pair_style      hybrid/overlay " + " ".join(styles))
    if sp.eam_file:
        lines.append(f"pair_coeff      * * eam/alloy {Path(sp.eam_file).name} {sp.eam_element}")
    for p in sp.pairs:
        coeffs = " ".join(_fmt(c) for c in p.coeffs) if p.keyword else _fmt(p.cutoff)
        lines.append(f"pair_coeff      * * {p.style} {p.keyword + ' ' if p.keyword else ''}{coeffs}"
                     + (" offset yes" if p.offset else ""))
    skin, every, delay = sp.neighbor
    lines += [f"neighbor        {_fmt(skin)} bin", f"neigh_modify    every {every} check yes delay {delay}"]
    if sp.kspace is not None:
        lines.append(f"kspace_style    {sp.kspace[0]} {_fmt(sp.kspace[1])}")
    return lines


def stage_fixes(desc: SimulationDescription) -> list[str]:
    """precession/spin (its energy in pe), langevin/spin just before nve/spin (LAMMPS requires that order)."""
    sp = desc.spin
    assert sp is not None
    p = sp.precession
    words = []
    if p.zeeman is not None:
        words.append("zeeman " + " ".join(_fmt(v) for v in p.zeeman))
    if p.anisotropy is not None:
        words.append("anisotropy " + " ".join(_fmt(v) for v in p.anisotropy))
    if p.cubic is not None:
        words.append("cubic " + " ".join(_fmt(v) for v in p.cubic))
    lines = []
    if words:
        lines.append("fix             spin_prec all precession/spin " + " ".join(words))
        if p.energy:
            lines.append("fix_modify      spin_prec energy yes")
    lines += [f"fix             spin_bath all langevin/spin {_fmt(sp.bath_temperature)} {_fmt(sp.damping)} "
              f"{sp.bath_seed}",
              f"fix             spin_nve all nve/spin lattice {'moving' if sp.lattice_moving else 'frozen'}"]
    return lines


def measure_lines() -> list[str]:
    return [f"compute         {COMPUTE} all spin"] + [
        f"variable        {name} equal c_{COMPUTE}[{i}]" for name, i in VARIABLES.items()]


def files(desc: SimulationDescription) -> dict[str, str]:
    """The example's files the input reads (the EAM potential), by name."""
    sp = desc.spin
    if sp is None or not sp.files:
        return {}
    folder = example_folder(sp.example_folder)
    out = {}
    for name in sp.files:
        path = folder / name if folder is not None else None
        if path is None or not path.is_file():
            raise ReadError(f"{name} is not in LAMMPS's examples/{sp.example_folder} (install Debian's "
                            "lammps-examples: `make setup`)")
        out[Path(name).name] = path.read_text()
    return out


def result(name: str, label: str | None, block: dict[str, np.ndarray], desc: SimulationDescription, job: str,
           where: str) -> Result:
    """The mean over the averaged stage's thermo rows of the total magnetic moment (N mu |<s>|, Bohr
    magnetons; per atom mu |<s>|; 'normalized': |<s>| itself), the magnetic energy (eV, total or per
    atom) or the spin temperature (K), from compute spin (module docstring)."""
    sp = desc.spin
    assert sp is not None
    needed = {"magnetization": "v_spin_norm", "magnetic_energy": "v_spin_emag", "spin_temperature": "v_spin_tmag"}[name]
    if needed not in block or "Atoms" not in block:
        raise ReadError(f"thermo column {needed} or Atoms missing")
    raw, atoms = block[needed], block["Atoms"]
    if not (np.all(np.isfinite(raw)) and np.all(np.isfinite(atoms))):
        raise CalculationFailed(f"non-finite {needed} in {where}")
    compute = f"compute spin value {list(VARIABLES).index(needed[2:]) + 1} (thermo {needed})"
    if name == "magnetization":
        if label == NORMALIZED:
            series, unit, what = raw, "", f"the norm of the mean spin unit vector, {compute}, dimensionless"
        elif label == PER_ATOM:
            series, unit = raw * sp.magnitude, "muB"
            what = (f"the magnetic moment per atom, {_fmt(sp.magnitude)} muB x {compute} (the norm of the mean spin "
                    "unit vector)")
        else:
            series, unit = raw * sp.magnitude * atoms, "muB"
            what = (f"the total magnetic moment |sum_i mu s_i| = N x {_fmt(sp.magnitude)} muB x {compute} (the norm "
                    "of the mean spin unit vector; every spin has the stated magnitude)")
    elif name == "magnetic_energy":
        series, unit = (raw / atoms, "eV/atom") if label == PER_ATOM else (raw, "eV")
        what = (f"the magnetic energy (pair spin terms and fix precession/spin), {compute}, in eV"
                + (" divided by the atom count" if label == PER_ATOM else ", summed over the atoms"))
    else:
        series, unit, what = raw, "K", f"the spin temperature, {compute}"
    mean, err = block_average(series)
    if name == "magnetization" and label != NORMALIZED:
        what += f"; the engine's normalised value averages {float(np.mean(raw)):.6g}"
    return Result(quantity=name, property=name, value=mean, unit=unit, uncertainty=err, label=label, job=job,
                  log="log.lammps", method=f"average of {what} over {where}, {series.size} thermo rows; standard "
                                           "error by block averaging")
