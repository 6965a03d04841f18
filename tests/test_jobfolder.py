"""simagent.jobfolder.JobFolder: inputs written, failed attempts kept with their corrections, the
final corrections.json rebuilt from the attempts (the one implementation behind the graph's repair
loop and `simagent run`)."""

import json

from simagent.handlers import CorrectionLog, CorrectionRecord
from simagent.jobfolder import JobFolder
from simagent.models import Job


def record(n: int) -> CorrectionRecord:
    return CorrectionRecord(job="md", handler=f"Fix{n}", category="c", errors=[f"error {n}"], actions=[],
                            changes=[f"change {n}"], attempt=n)


def test_attempts_are_kept_in_order_with_their_corrections(tmp_path):
    job = Job(id="md", protocol="user/lammps", inputs={"in.lammps": "run 10\n"})
    folder = JobFolder(tmp_path / "md")
    log = CorrectionLog()
    for n in (1, 2):
        folder.write_inputs(job, {})
        assert (tmp_path / "md" / "in.lammps").read_text() == "run 10\n"
        assert json.loads((tmp_path / "md" / "job.json").read_text())["id"] == "md"
        log.add(record(n))
        assert folder.archive_failed(log) == tmp_path / f"md.failed{n}"
        assert not (tmp_path / "md").exists()
    # each attempt's corrections.json holds the repairs made up to and including its own
    assert [r.handler for r in CorrectionLog.read(tmp_path / "md.failed1")] == ["Fix1"]
    assert [r.handler for r in CorrectionLog.read(tmp_path / "md.failed2")] == ["Fix1", "Fix2"]
    folder.write_inputs(job)
    summaries = CorrectionLog([CorrectionRecord(job="md", handler=f"Fix{n}", category="", errors=["e"], actions=[],
                                                changes=["c"], attempt=0) for n in (1, 2)])
    folder.write_corrections(summaries)  # the full records come back from the attempts' folders
    assert [r.changes for r in CorrectionLog.read(tmp_path / "md")] == [["change 1"], ["change 2"]]


def test_a_missing_folder_is_not_archived_and_set_aside_numbers_up(tmp_path):
    folder = JobFolder(tmp_path / "analysis")
    assert folder.archive_failed(CorrectionLog()) is None
    for n in (1, 2):
        (tmp_path / "analysis").mkdir()
        assert folder.set_aside("superseded") == tmp_path / f"analysis.superseded{n}"
