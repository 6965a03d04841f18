"""benchmarks/suite_speed.py: the comparison of two pytest --durations reports (the format below is
pytest 9.2's, as `-q --durations=0 --durations-min=0 -ra` prints it)."""

from __future__ import annotations

import pytest

from benchmarks import suite_speed

BEFORE = """\
....F.s                                                                  [100%]
============================== slowest durations ===============================
2.50s call     tests/test_a.py::test_one
0.40s setup    tests/test_a.py::test_one
0.10s teardown tests/test_a.py::test_one
1.00s call     tests/test_a.py::test_two[x]
0.00s setup    tests/test_a.py::test_two[x]
3.00s call     tests/test_b.py::test_flaky
0.70s call     tests/test_b.py::test_removed
0.20s call     tests/test_b.py::test_fails_after
0.00s setup    tests/test_b.py::test_skipped
=========================== short test summary info ============================
SKIPPED [1] tests/test_b.py:9: no engine
5 passed, 1 skipped in 9.12s
"""

AFTER = """\
============================== slowest durations ===============================
2.00s call     tests/test_a.py::test_one
0.40s setup    tests/test_a.py::test_one
1.20s call     tests/test_a.py::test_two[x]
9.00s call     tests/test_b.py::test_flaky
0.30s call     tests/test_b.py::test_fails_after
0.50s call     tests/test_c.py::test_new
0.00s setup    tests/test_b.py::test_skipped
=========================== short test summary info ============================
FAILED tests/test_b.py::test_fails_after - assert 1 == 2
1 failed, 4 passed, 1 skipped in 14.70s (0:00:14)
"""

TIME = """\
\tCommand being timed: "nice -n 10 python -m pytest"
\tUser time (seconds): 600.50
\tSystem time (seconds): 40.25
\tPercent of CPU this job got: 45%
\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02:03.50
\tMaximum resident set size (kbytes): 2097152
"""


@pytest.fixture
def reports(tmp_path):
    (tmp_path / "before.log").write_text(BEFORE)
    (tmp_path / "after.log").write_text(AFTER)
    return suite_speed.read_report(tmp_path / "before.log"), suite_speed.read_report(tmp_path / "after.log")


def test_common_tests_are_those_both_ran_and_passed(reports):
    before, after = reports
    result = suite_speed.compare(before, after, exclude=["test_flaky"])
    assert result["common"] == ["tests/test_a.py::test_one", "tests/test_a.py::test_two[x]"]
    # test_one 2.5 + 0.4 + 0.1 and test_two 1.0 before; 2.0 + 0.4 and 1.2 after
    assert result["sum_before"] == pytest.approx(4.0) and result["sum_after"] == pytest.approx(3.6)
    assert result["dropped"] == ["tests/test_b.py::test_fails_after", "tests/test_b.py::test_flaky"]
    assert result["only_before"] == ["tests/test_b.py::test_removed"] and result["only_before_s"] == pytest.approx(0.7)
    assert result["only_after"] == ["tests/test_c.py::test_new"]
    assert before.summary == "5 passed, 1 skipped" and after.pytest_s == pytest.approx(14.70)


def test_time_report_and_table(reports, tmp_path):
    (tmp_path / "t.txt").write_text(TIME)
    times = suite_speed.read_time(tmp_path / "t.txt")
    assert times["wall_s"] == pytest.approx(3723.5) and times["user_s"] + times["sys_s"] == pytest.approx(640.75)
    assert times["max_rss_mb"] == pytest.approx(2048)
    before, after = reports
    table = suite_speed.markdown(before, after, suite_speed.compare(before, after, []), (times, times),
                                 ("b", "a"))
    assert "| tests both ran and passed (3), sum of durations | 7.0 s | 12.6 s | 1.800 |" in table
    assert "| whole run, CPU user+sys | 641 s | 641 s | 1.000 |" in table


def test_a_log_without_durations_is_refused(tmp_path):
    (tmp_path / "plain.log").write_text("5 passed in 1.0s\n")
    with pytest.raises(SystemExit, match="no per-test durations"):
        suite_speed.read_report(tmp_path / "plain.log")


def test_tests_of_a_changed_test_file_can_be_left_out(reports, tmp_path):
    before, after = reports
    for side, text in (("b", "def test_one(): assert 1\n"), ("a", "def test_one(): assert 2\n")):
        (tmp_path / side / "tests").mkdir(parents=True)
        (tmp_path / side / "tests" / "test_a.py").write_text(text)
        (tmp_path / side / "tests" / "test_b.py").write_text("same\n")
    changed = suite_speed.changed_files(tmp_path / "b", tmp_path / "a", before.ran() | after.ran())
    assert changed == {"tests/test_a.py"}  # test_c.py is on neither side here: nothing to compare
    result = suite_speed.compare(before, after, [], changed)
    assert result["common"] == ["tests/test_b.py::test_flaky"]
