"""tools.lammps.parse: the one LAMMPS output reader of the gates, the handlers and the analyses.

The logs here are real LAMMPS 22 Jul 2025 output (tests/files/lammps/*) or cut from it; the
expectations are read off the log text by eye (step numbers, columns, row counts)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from simagent.errors import CalculationFailed, ReadError
from tools.lammps.parse import parse_thermo, read_output

FILES = Path(__file__).parent / "files" / "lammps"
MEMORY = "Per MPI rank memory allocation (min/avg/max) = 3.144 | 3.144 | 3.144 Mbytes\n"
HEADER = "   Step          Temp          E_pair         TotEng         Press     \n"


def test_nan_in_thermo_reaches_the_gates_and_is_refused_by_the_analysis(tmp_path):
    """nan-thermo: a 500-step NVE run whose E_pair, TotEng and Press print nan from step 400 on."""
    shutil.copytree(FILES / "nan-thermo" / "outputs", tmp_path, dirs_exist_ok=True)
    out = read_output(tmp_path)
    (table,) = out.thermo
    assert table["Step"][-1] == 500 and np.isnan(table["E_pair"][-1]) and np.isfinite(table["Temp"]).all()
    assert out.nonfinite() == [f"non-finite {c} in thermo table 1 from step 400" for c in ("E_pair", "TotEng", "Press")]
    with pytest.raises(CalculationFailed, match="non-finite E_pair .* from step 400: the dynamics diverged"):
        out.last_run()
    with pytest.raises(CalculationFailed):
        _ = out.runs


def test_inf_and_minus_nan_are_kept_as_numbers():
    text = MEMORY + HEADER + "0 1.5 -6.3 -4.1 -4.9\n10 inf -nan -inf NaN\nLoop time of 0.1 on 1 procs\n"
    (table,) = parse_thermo(text)
    assert table["Step"].tolist() == [0, 10] and np.isposinf(table["Temp"][1]) and np.isneginf(table["TotEng"][1])
    assert np.isnan(table["E_pair"][1]) and np.isnan(table["Press"][1])


def test_crash_at_step_zero_gives_the_error_and_no_table(tmp_path):
    """An ERROR right after the memory line (lammps-logfile raised KeyError here)."""
    (tmp_path / "log.lammps").write_text("LAMMPS (22 Jul 2025 - Update 4)\n" + MEMORY
                                         + "ERROR: Lost atoms: original 500 current 499 (src/thermo.cpp:494)\n"
                                         + "Last command: run 100\n")
    out = read_output(tmp_path)
    assert out.thermo == [] and out.error.startswith("ERROR: Lost atoms") and out.last_line == "run 100"
    assert not out.finished and out.nonfinite() == []
    with pytest.raises(ReadError, match="no thermo output"):
        out.last_run()


def test_a_warning_before_the_header_and_inside_the_table_is_skipped():
    text = (MEMORY + "WARNING: Inconsistent image flags (src/domain.cpp:1051)\n" + HEADER + "0 1.5 -6.3 -4.1 -4.9\n"
            + "WARNING: Bond/angle/dihedral extent > half of periodic box length (src/domain.cpp:938)\n"
            + "25 0.7 -5.2 -4.0 0.9\nLoop time of 0.1 on 1 procs\n")
    (table,) = parse_thermo(text)
    assert table["Step"].tolist() == [0, 25] and table["Press"].tolist() == [-4.9, 0.9]


def test_a_header_that_does_not_start_with_step_is_read():
    text = MEMORY + "   Temp   PotEng   Step\n 1.5 -6.3 0\n 1.4 -6.2 10\nLoop time of 0.1 on 1 procs\n"
    (table,) = parse_thermo(text)
    assert list(table) == ["Temp", "PotEng", "Step"] and table["Step"].tolist() == [0, 10]


def test_an_unterminated_table_of_a_killed_run_is_kept():
    (table,) = parse_thermo(MEMORY + HEADER + "0 1.5 -6.3 -4.1 -4.9\n25 0.7 -5.2 -4.0 0.9\n50 0.7")
    assert table["Step"].tolist() == [0, 25]  # the half-written last row is not a row


def test_screen_output_alone_and_an_empty_folder(tmp_path):
    with pytest.raises(ReadError, match="no LAMMPS output"):
        read_output(tmp_path)
    assert not read_output(tmp_path, missing_ok=True).exists
    (tmp_path / "stdout.txt").write_text(MEMORY + HEADER + "0 1.5 -6.3 -4.1 -4.9\nLoop time of 2.5 on 1 procs\n"
                                         + "Total wall time: 0:00:03\n")
    out = read_output(tmp_path)
    assert out.exists and out.finished and out.engine_time_s == 2.5 and out.last_run()["Temp"].tolist() == [1.5]


def test_a_crashed_run_keeps_its_table_and_its_error_is_listed_once(tmp_path):
    """bond-atoms-missing: a Kremer-Grest run that stops at step 202 with 'Bad FENE bond', printed to the
    screen and to the log; its last table has the one row of step 200."""
    shutil.copytree(FILES / "bond-atoms-missing" / "outputs", tmp_path, dirs_exist_ok=True)
    out = read_output(tmp_path)
    assert out.errors == ["ERROR on proc 0: Bad FENE bond (src/src/MOLECULE/bond_fene.cpp:91)"]
    assert out.thermo[-1]["Step"].tolist() == [200] and not out.finished
    assert out.has(r"FENE bond too long") and out.has(r"Inconsistent image flags")
