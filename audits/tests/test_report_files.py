"""`manage.py audit_report` writes each file from the stream its download is: every CSV table (the raw scores
included), the JSON results and the methods sidecar are the downloads' bytes, and the raw scores file is written in a
Python memory (tracemalloc) that does not grow with the audit, where the in-memory CSV of the same table does."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from audits import export_streams
from audits.exports import TABLES, export_filename, read_csv, table_csv
from audits.models import Dialogue
from audits.report_files import report_file_write, report_files
from audits.selectors import raw_scores
from audits.services.analysis import AnalysisParameters, audit_analysis
from audits.tests.engine_factories import scored_audit
from audits.tests.memory_peak import peak_mib

pytestmark = pytest.mark.django_db

PARAMETERS = AnalysisParameters(n_boot=200, seed=3)


def test_the_commands_files_are_the_downloads_bytes(researcher_client, tmp_path, monkeypatch):
    """Reference: the page's download of each file (GET /audits/results/<id>/export/), under the same parameters;
    with small chunks and pieces, so the raw scores cross many of them."""
    monkeypatch.setattr(raw_scores, "CHUNK_DIALOGUES", 7)
    monkeypatch.setattr(export_streams, "ROWS_PER_PIECE", 50)
    audit = scored_audit("report files audit", questions=12, dimensions=("first_language", "gender"))
    Dialogue.objects.filter(pk=audit.dialogues.order_by("pk").values("pk")[2:3]).update(status=Dialogue.Status.FAILED)
    audit_analysis(audit=audit, parameters=PARAMETERS)  # stored: the command and the downloads read the same row
    options = ["--n-boot", str(PARAMETERS.n_boot), "--seed", str(PARAMETERS.seed)]
    call_command("audit_report", str(audit.pk), "--out", str(tmp_path), *options, stdout=io.StringIO())

    url = reverse("audits:results-export", args=[audit.pk])
    query = {"n_boot": PARAMETERS.n_boot, "seed": PARAMETERS.seed}
    downloads = {export_filename(audit, table, "csv"): {"format": "csv", "table": table} for table in TABLES}
    downloads[export_filename(audit, "results", "json")] = {"format": "json"}
    downloads[export_filename(audit, "methods", "json")] = {"format": "methods"}
    for name, download in downloads.items():
        response = researcher_client.get(url, {**query, **download})
        assert response.status_code == 200, name
        assert (tmp_path / name).read_bytes() == response.content, name
    raw = read_csv((tmp_path / export_filename(audit, "raw_scores", "csv")).read_text())
    done = Dialogue.objects.filter(audit=audit, status=Dialogue.Status.DONE).count()
    assert len(raw) > 300 and len({row["dialogue"] for row in raw}) == done == audit.dialogues.count() - 1
    # the folder holds the exports and nothing half-written
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*downloads, export_filename(audit, "report", "html")])


def test_a_file_cut_off_midway_leaves_no_file_under_its_name(tmp_path):
    def pieces():
        yield b"header\n"
        raise RuntimeError("the database went away")

    with pytest.raises(RuntimeError):
        report_file_write(tmp_path / "audit-1-raw_scores.csv", pieces())
    assert list(tmp_path.iterdir()) == []


def test_the_raw_scores_file_is_written_in_memory_that_does_not_grow_with_the_audit(tmp_path, monkeypatch):
    """Two audits, one five times the other's dialogues: writing the raw scores file as the command does peaks at
    (nearly) the same Python memory for both, while the in-memory CSV of the table (what the command wrote before)
    grows with the audit. The chunks are made small here so that small audits show it."""
    monkeypatch.setattr(raw_scores, "CHUNK_DIALOGUES", 25)
    monkeypatch.setattr(export_streams, "ROWS_PER_PIECE", 100)
    streamed, in_memory, rows = {}, {}, {}
    for questions in (20, 100):
        audit = scored_audit(f"memory audit {questions}", questions=questions, dimensions=("first_language",))
        analysis = audit_analysis(audit=audit, parameters=AnalysisParameters(n_boot=50))
        name = export_filename(audit, "raw_scores", "csv")
        pieces = dict(report_files(analysis))[name]
        path = tmp_path / name
        streamed[questions] = peak_mib(lambda path=path, pieces=pieces: report_file_write(path, pieces()))
        rows[questions] = len(read_csv(path.read_text()))
        assert path.read_text() == table_csv(analysis, "raw_scores")
        in_memory[questions] = peak_mib(lambda analysis=analysis: table_csv(analysis, "raw_scores"))
    assert rows[100] > 4.5 * rows[20] > 4_000
    assert in_memory[100] > 3 * in_memory[20], in_memory  # the measure sees an export that grows
    assert streamed[100] < 1.25 * streamed[20] + 0.25, streamed
    assert streamed[100] < in_memory[100] / 4, (streamed, in_memory)
