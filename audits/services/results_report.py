"""The HTML report of an audit's analysis, as its page and download serve it: rendered once, then cached.

Rendering the report (`audits.exports.results_html`: every figure, table and finding) takes seconds and hundreds of
KB at paper scale. It is kept compressed in the per-process cache the results page keeps its parts in
(`results_pages`, so always rendered by the running code's templates), under a key of everything it is a function
of besides the code: the stored analysis (its audit, when it was computed, the scores' fingerprint, the parameters),
the audit's running totals (what stands behind each cell and how the run ended), the audit's own words and models,
the judge's validation, the judge-corrected table's inputs (the human labels), and the links the page carries. A
request that finds it reads those few rows and no analysis; its "generated" time is when it was rendered.
"""

from __future__ import annotations

import hashlib
import zlib

from django.core.cache import caches

from audits import exports
from audits.models import Audit
from audits.selectors.audit_totals import audit_totals_version
from audits.selectors.judge_validation import audit_judge_validation
from audits.selectors.results import audit_tutor_names
from audits.selectors.runs import audit_requests_sent
from audits.services.analysis import ReadyAnalysis, parameters_hash
from audits.services.judge_corrected import judge_corrected_version
from audits.services.stored_analysis import AuditAnalysis

rendered_reports = caches["results_pages"]


def _analysis_identity(analysis: AuditAnalysis | ReadyAnalysis) -> tuple:
    """The stored analysis a report renders: the same for a `ReadyAnalysis` and the `AuditAnalysis` it loads."""
    if isinstance(analysis, ReadyAnalysis):
        computed_at, from_cache = analysis.row.computed_at, True
    else:
        computed_at, from_cache = analysis.computed_at, analysis.from_cache
    return (
        analysis.audit.pk,
        computed_at.isoformat() if computed_at else "",
        analysis.fingerprint,
        parameters_hash(analysis.parameters),
        from_cache,
    )


def _audit_words(audit: Audit) -> tuple:
    """What the report says of the audit itself: its name and status, its models and what each is sent."""
    return (
        audit.name,
        audit.status,
        audit.uses_simulation,
        str(audit.student_endpoint),
        str(audit.judge_endpoint),
        str(audit.judge_template),
        audit.judge_template.version,
        sorted(audit_tutor_names(audit).items()),
        audit_requests_sent(audit=audit),
    )


def results_report_key(
    analysis: AuditAnalysis | ReadyAnalysis, *, results_url: str = "", download_url: str = ""
) -> str:
    """The cache key of the report of `analysis` with these links: everything it is a function of but the code."""
    audit = analysis.audit
    facts = (
        _analysis_identity(analysis),
        audit_totals_version(audit),
        _audit_words(audit),
        audit_judge_validation(audit),
        judge_corrected_version(audit, analysis=analysis),
        results_url,
        download_url,
    )
    return "results-report:" + hashlib.sha256(repr(facts).encode()).hexdigest()


def results_report_html(
    *, analysis: AuditAnalysis | ReadyAnalysis, results_url: str = "", download_url: str = ""
) -> str:
    """`exports.results_html` of the analysis with these links, rendered on the first request for them (a
    `ReadyAnalysis` is loaded only then) and read from the cache until anything it shows changes."""
    key = results_report_key(analysis, results_url=results_url, download_url=download_url)
    kept = rendered_reports.get(key)
    if kept is not None:
        return zlib.decompress(kept).decode()
    loaded = analysis.load() if isinstance(analysis, ReadyAnalysis) else analysis
    html = exports.results_html(loaded, results_url=results_url, download_url=download_url)
    rendered_reports.set(key, zlib.compress(html.encode(), 1))
    return html
