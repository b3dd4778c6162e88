"""The results exports stream: CSV, JSON and Parquet are written a chunk of dialogues at a time and come out as the
in-memory exports (`audits.exports.table_csv`, `results_json`) wrote them, byte for byte — the reference is that
in-memory path, which reads the audit's whole score frame (`audits.selectors.runs.audit_scores_frame`) at once. A large
audit's raw scores stream in a bounded amount of Python memory (tracemalloc), which the in-memory export exceeds."""

import io
import json
import math

import pandas
import pyarrow.parquet as pq
import pytest
from django.http import StreamingHttpResponse
from django.urls import reverse

from audits import export_streams
from audits.exports import TABLES, read_csv, results_json, table_csv
from audits.models import Dialogue
from audits.selectors import raw_scores
from audits.selectors.runs import FRAME_COLUMNS
from audits.services.analysis import AnalysisParameters, analysis_request, audit_analysis
from audits.tests.engine_factories import scored_audit
from audits.tests.memory_peak import peak_mib

PARAMETERS = AnalysisParameters(n_boot=200, seed=3)


def _joined(pieces) -> bytes:
    return b"".join(pieces)


def test_a_raw_score_row_has_the_frames_columns():
    assert (*raw_scores.DIALOGUE_FIELDS, "metric", "value") == FRAME_COLUMNS


@pytest.mark.parametrize(
    "row",
    [
        {"a": 1, "b": -2.5, "c": "text", "d": None, "e": True, "f": False},
        {'quote"key': 'é ünïcode "quoted" \\ back\nline\t', "n": 10**20, "x": 1e-300, "y": 0.1 + 0.2},
        {"nested": [1, "two", None], "more": {"k": math.nan}, "nan": math.nan},
        {},
    ],
)
def test_a_json_row_is_written_as_json_dumps_writes_it_in_the_document(row):
    """Reference: json.dumps of a document holding the row at depth 3 (as the results hold a raw score), NaN as
    null (what `exports._json_safe` makes of it)."""

    def safe(value):
        if isinstance(value, float) and math.isnan(value):
            return None
        if isinstance(value, dict):
            return {k: safe(v) for k, v in value.items()}
        if isinstance(value, list):
            return [safe(v) for v in value]
        return value

    document = json.dumps({"tables": {"raw_scores": [safe(row), safe(row)]}}, indent=1, allow_nan=False)
    written = export_streams.json_row(safe(row), "   ")  # three spaces: the rows' depth
    assert document == '{\n "tables": {\n  "raw_scores": [\n   ' + written + ",\n   " + written + "\n  ]\n }\n}"


@pytest.fixture
def seeded():
    """A finished audit written by bulk inserts (`scored_audit`), one of its dialogues failed (every raw scores
    export leaves it out), and its analysis."""
    audit = scored_audit("stream audit", questions=16, dimensions=("first_language", "gender"))
    Dialogue.objects.filter(pk=audit.dialogues.order_by("pk").values("pk")[3:4]).update(status=Dialogue.Status.FAILED)
    return audit_analysis(audit=audit, parameters=PARAMETERS)


@pytest.mark.django_db
@pytest.mark.parametrize("pieces", ["default", "small"])
def test_streamed_exports_equal_the_in_memory_exports(seeded, monkeypatch, pieces):
    """Every CSV table and the JSON, byte for byte; with tiny chunks too, so rows cross every boundary."""
    if pieces == "small":
        monkeypatch.setattr(raw_scores, "CHUNK_DIALOGUES", 7)
        monkeypatch.setattr(export_streams, "ROWS_PER_PIECE", 5)
    chunks = []
    read_chunks = raw_scores._dialogue_chunks
    monkeypatch.setattr(raw_scores, "_dialogue_chunks", lambda *a: (chunks.append(c) or c for c in read_chunks(*a)))
    analysis = seeded
    for table in TABLES:
        expected = table_csv(analysis, table)
        streamed = list(export_streams.table_csv_stream(analysis, table))
        assert b"".join(streamed).decode() == expected, table
    done = Dialogue.objects.filter(audit=analysis.audit, status=Dialogue.Status.DONE).count()
    assert len(chunks) == 2 * math.ceil(done / raw_scores.CHUNK_DIALOGUES)  # two passes over the dialogues
    # a piece per ROWS_PER_PIECE rows (the first after the header), then the rest
    assert len(streamed) == 1 + len(read_csv(expected)) // export_streams.ROWS_PER_PIECE
    raw = read_csv(table_csv(analysis, "raw_scores"))
    assert (
        len(raw) > 500
        and len({row["dialogue"] for row in raw})
        == Dialogue.objects.filter(audit=analysis.audit, status=Dialogue.Status.DONE).count()
    )
    assert _joined(export_streams.results_json_stream(analysis)).decode() == results_json(analysis)


@pytest.mark.django_db
def test_the_json_of_an_audit_with_no_raw_score_is_the_same_document(seeded):
    Dialogue.objects.filter(audit=seeded.audit).update(status=Dialogue.Status.FAILED)
    streamed = _joined(export_streams.results_json_stream(seeded)).decode()
    assert streamed == results_json(seeded) and json.loads(streamed)["tables"]["raw_scores"] == []
    assert _joined(export_streams.table_csv_stream(seeded, "raw_scores")).decode() == "simulation\n"


@pytest.mark.django_db
def test_parquet_holds_the_csvs_rows_and_values(seeded, monkeypatch):
    """Reference: pandas.read_csv of the CSV export: every table's columns and rows, and the raw scores' values (in
    several row groups)."""
    monkeypatch.setattr(export_streams, "ROWS_PER_GROUP", 100)
    for table in TABLES:
        parquet = pq.ParquetFile(io.BytesIO(_joined(export_streams.table_parquet_stream(seeded, table))))
        frame = parquet.read().to_pandas()
        expected = pandas.read_csv(io.StringIO(table_csv(seeded, table)))
        assert list(frame.columns) == list(expected.columns), table
        assert len(frame) == len(expected), table
        if table == "raw_scores":  # its empty texts are empty, not missing (a CSV cannot tell them apart)
            assert parquet.num_row_groups == math.ceil(len(expected) / 100) > 1
            expected = pandas.read_csv(io.StringIO(table_csv(seeded, table)), keep_default_na=False)
            pandas.testing.assert_frame_equal(frame, expected, check_dtype=False)


@pytest.mark.django_db
def test_the_doors_stream_csv_json_and_parquet(seeded, researcher_client):
    audit = seeded.audit
    query = {"n_boot": PARAMETERS.n_boot, "seed": PARAMETERS.seed}
    stored = analysis_request(audit=audit, parameters=PARAMETERS)  # what the doors read: the stored analysis
    assert stored.from_cache
    for url in (reverse("audits:results-export", args=[audit.pk]), f"/api/audits/{audit.pk}/export/"):
        csv_response = researcher_client.get(url, {**query, "format": "csv", "table": "raw_scores"})
        assert isinstance(csv_response, StreamingHttpResponse) and csv_response.status_code == 200
        assert csv_response.content.decode() == table_csv(seeded, "raw_scores")
        json_response = researcher_client.get(url, {**query, "format": "json"})
        assert isinstance(json_response, StreamingHttpResponse) and json_response["Content-Type"] == "application/json"
        assert json_response.content.decode() == results_json(stored)
        parquet_response = researcher_client.get(url, {**query, "format": "parquet", "table": "raw_scores"})
        assert isinstance(parquet_response, StreamingHttpResponse)
        assert parquet_response["Content-Type"] == export_streams.PARQUET_CONTENT_TYPE
        assert f'audit-{audit.pk}-raw_scores-SIMULATION.parquet"' in parquet_response["Content-Disposition"]
        frame = pq.read_table(io.BytesIO(parquet_response.content)).to_pandas()
        assert len(frame) == len(read_csv(table_csv(seeded, "raw_scores")))


@pytest.mark.django_db
def test_a_large_audits_raw_scores_stream_in_bounded_memory(researcher_client, monkeypatch):
    """Over 6,000 raw score rows read 25 dialogues at a time: reading each streamed response (CSV, JSON, Parquet)
    peaks under 3 MiB of Python memory (tracemalloc); the in-memory CSV of the same table (the export before
    streaming) takes over three times that. The streamed peak is bounded by the chunk, not by the audit: the chunks
    are made small here so that a small audit shows it."""
    monkeypatch.setattr(raw_scores, "CHUNK_DIALOGUES", 25)
    monkeypatch.setattr(export_streams, "ROWS_PER_PIECE", 100)
    monkeypatch.setattr(export_streams, "ROWS_PER_GROUP", 500)
    audit = scored_audit("large stream audit", questions=100, dimensions=("first_language",), tutor_turns=1)
    analysis = audit_analysis(audit=audit, parameters=AnalysisParameters(n_boot=50))
    assert len(read_csv(table_csv(analysis, "raw_scores"))) > 6_000
    url = f"/api/audits/{audit.pk}/export/"
    bound = 3.0
    for fmt in ("csv", "json", "parquet"):
        response = researcher_client.get(url, {"n_boot": 50, "format": fmt, "table": "raw_scores"})
        assert isinstance(response, StreamingHttpResponse) and response.status_code == 200
        sizes = []
        peak = peak_mib(lambda pieces=response.streaming_content, sizes=sizes: sizes.extend(len(p) for p in pieces))
        assert peak < bound and len(sizes) > 3 and sum(sizes) > 50_000, (fmt, peak, len(sizes))
    assert peak_mib(lambda: table_csv(analysis, "raw_scores")) > 3 * bound
