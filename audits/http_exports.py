"""HTTP responses of the results exports, shared by the results pages and the API.

A response is the file of one export (CSV or Parquet table, methods sidecar, JSON, HTML report; the judge-corrected
table as CSV or JSON) or, while its analysis is not ready, the progress state. CSV, Parquet and JSON stream
(`audits.export_streams`): the raw scores grow with the audit, and the serving process holds a chunk of them at a
time. The HTML report is rendered once per analysis and what it shows (`audits.services.results_report`)."""

from __future__ import annotations

from django.http import Http404, HttpResponse, JsonResponse, StreamingHttpResponse

from audits import export_streams, exports
from audits.services.analysis import AnalysisState
from audits.services.judge_corrected import judge_corrected_results
from audits.services.results_report import results_report_html
from audits.services.stored_analysis import AuditAnalysis


def analysis_state_response(state: AnalysisState) -> JsonResponse:
    """An export's answer while its analysis is not ready: 202 with the progress and a Retry-After header;
    500 with the error when the computation failed (the results page and the API's POST retry it)."""
    response = JsonResponse(state.as_dict(), status=500 if state.failed else 202)
    if not state.failed:
        response["Retry-After"] = str(state.retry_after)
    return response


class ExportStream(StreamingHttpResponse):
    """A streamed export file. Serving iterates it; `content` joins it, once, for a caller that wants the whole
    body (a test reading the download)."""

    @property
    def content(self) -> bytes:
        body = b"".join(self.streaming_content)
        self.streaming_content = [body]
        return body


def export_response(analysis: AuditAnalysis, fmt: str, table: str = "contrasts") -> HttpResponse | ExportStream:
    """The HTTP response of one export (shared by the page's links and the API)."""
    audit = analysis.audit
    if fmt in ("csv", "parquet"):
        if table not in exports.TABLES:
            raise Http404(f"unknown table {table!r}")
        if fmt == "csv":
            body, content_type = export_streams.table_csv_stream(analysis, table), "text/csv; charset=utf-8"
        else:
            body, content_type = (
                export_streams.table_parquet_stream(analysis, table),
                export_streams.PARQUET_CONTENT_TYPE,
            )
        name, extension = table, fmt
    elif fmt == "json":
        body, content_type = export_streams.results_json_stream(analysis), "application/json"
        name, extension = "results", "json"
    elif fmt == "methods":
        body, content_type, name, extension = exports.methods_json(analysis), "application/json", "methods", "json"
    elif fmt == "html":
        body, content_type, name, extension = (
            results_report_html(analysis=analysis),
            "text/html; charset=utf-8",
            "report",
            "html",
        )
    else:
        raise Http404("format must be csv, parquet, json, methods or html")
    response = (HttpResponse if isinstance(body, str) else ExportStream)(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{exports.export_filename(audit, name, extension)}"'
    if audit.uses_simulation:
        response["X-EduFair-Simulation"] = "true"
    return response


def judge_corrected_export_response(analysis: AuditAnalysis, fmt: str) -> HttpResponse:
    """The judge-corrected table as a CSV or JSON file (the page's links and the API)."""
    results = judge_corrected_results(analysis.audit, analysis=analysis)
    if fmt == "csv":
        body, content_type = exports.judge_corrected_csv(analysis, results), "text/csv; charset=utf-8"
    elif fmt == "json":
        body, content_type = exports.judge_corrected_json(analysis, results), "application/json"
    else:
        raise Http404("format must be csv or json")
    audit = analysis.audit
    response = HttpResponse(body, content_type=content_type)
    name = exports.export_filename(audit, "judge-corrected", fmt)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    if audit.uses_simulation:
        response["X-EduFair-Simulation"] = "true"
    return response
