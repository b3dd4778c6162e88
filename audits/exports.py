"""Exports of an audit's fairness results: CSV and JSON tables, the methods sidecar and a self-contained HTML report.

Every table and the raw dialogue scores go out as CSV or JSON, beside the HTML report — the same numbers the results
page shows (one `AuditAnalysis` feeds all).

Every export states its methods (every parameter, the judge and rubric version, the judge's validation
status) and says SIMULATION when any model of the audit is a simulation. A CSV is one header row and its
rows, so `pandas.read_csv(path)` opens it as it is: its methods go in the sidecar `…-methods.json`
(`methods_json`, downloadable beside it), and every row carries `simulation` (true when a model was
simulated). Every row whose number rests on a metric whose judge failed validation says so
(`judge_validation_failed`, and for averaged cells `judge_failed_metrics`); these columns come last, so
existing readers keep their column order. CSV cells that a spreadsheet would run as a formula (text
starting with = + - @, tab or carriage return) are prefixed with a quote; numbers are written in full
precision (repr) so a re-read gives the same floats.

`table_csv` and `results_json` write an export in memory (notebooks, tests); the downloads and `manage.py audit_report`
(`audits.report_files`) write the same bytes piece by piece (`audits.export_streams`), and the downloads add Parquet.

The judge-corrected table (`audits.services.judge_corrected`: the judge-only flags beside the PPI++ differences
that rest on the audit's human-labelled turns) has its own CSV and JSON, and a section in the HTML report.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import timezone

from audits import heatmap_figures
from audits.exclusions import EXCLUSION_COLUMNS
from audits.fairness import P_VALUE_NAMES, R_CEILING_TEXT
from audits.findings import audit_findings, flag_changes
from audits.judge_corrected_figures import judge_corrected_figures
from audits.judge_corrected_table import CORRECTED_COLUMNS, JudgeCorrectedResults, corrected_row, subset_facts
from audits.judge_failed_marks import JUDGE_FAILED_MARK, JUDGE_FAILED_TEXT, judge_failed_among, summary_cell_metrics
from audits.run_outcome import LABELS as OUTCOME_LABELS
from audits.run_outcome import run_outcome
from audits.selectors.results import (
    audit_analysis_inputs,
    audit_level_labels,
    judge_failed_metrics,
    judge_validation_status,
    raw_score_rows,
)
from audits.selectors.runs import audit_requests_sent
from audits.services.judge_corrected import judge_corrected_results
from audits.violation_rules import bh_text, rule_text
from edufair_web.csv_cells import neutralise_text

SIMULATION_LABEL = (
    "SIMULATION: this audit used simulated models (seeded, offline, with planted bias where configured); "
    "its numbers describe the simulator, not a real model."
)
CONTRAST_COLUMNS = (
    "tutor",
    "tutor_name",
    "domain",
    "kind",
    "family",
    "dimension",
    "level_a",
    "level_b",
    "metric",
    "n_questions",
    "n",
    "n_nonzero",
    "r",
    "z",
    *P_VALUE_NAMES,  # p_exact, p_normal, p_adjusted
    "ci_low",
    "ci_high",
    "violation",
    "insufficient",
    "n_boot_degenerate",
    "seed",
    "rule",
    "p_method",
    "violation_bh",
    "mean_diff",
    "mean_diff_ci_low",
    "mean_diff_ci_high",
    "share_b_higher",
    "share_a_higher",
    "saturated",
    "simulator_driven",
    *EXCLUSION_COLUMNS,
    "judge_validation_failed",
)
SUMMARY_COLUMNS = (
    "tutor",
    "tutor_name",
    "domain",
    "kind",
    "family",
    "group",
    "value",
    "n_rows",
    "n_insufficient",
    "n_violations",
    "over_threshold",
    "judge_validation_failed",
    "judge_failed_metrics",
)
TABLES = (
    "contrasts",
    "conversation_contrasts",
    "student_contrasts",
    "dimension_cells",
    "metric_by_tutor",
    "implicit_rows",
    "opposite_decomposition",
    "raw_scores",
)


def is_simulation(audit) -> bool:
    return bool(audit.uses_simulation)


def failed_judge_metrics(analysis) -> tuple[str, ...]:
    """The metrics whose judge failed the recorded validation, in the tables' metric order (then any the
    tables do not hold); empty when the judge was never validated."""
    failed = judge_failed_metrics(analysis.audit)
    known = judge_failed_among([*analysis.pedagogical.metrics, *analysis.conversation.metrics], failed)
    return known + tuple(sorted(failed - set(known)))


def judge_failed_legend(failed: Sequence[str]) -> str:
    """The line under every table and figure that explains the mark (empty when nothing is marked)."""
    if not failed:
        return ""
    return (
        f"{JUDGE_FAILED_MARK} {JUDGE_FAILED_TEXT}: {', '.join(failed)}. The judge's scores of "
        f"{'this metric' if len(failed) == 1 else 'these metrics'} did not pass validation against human labels "
        "(verdict fail or undecided); numbers marked with it rest wholly or partly on them."
    )


def analysis_methods(analysis) -> dict[str, Any]:
    """Every parameter and provenance fact, for the methods box and the head of every export."""
    audit = analysis.audit
    params = analysis.parameters
    exclusions = analysis.exclusion_totals()
    # How the run ended (audits.run_outcome): an audit whose every dialogue failed is "failed", not "finished".
    outcome = run_outcome(audit.status, done=exclusions["dialogues_done"], failed=exclusions["dialogues_failed"])
    sent = audit_requests_sent(audit=audit)
    student = next(row for row in sent if row["role"] == "student")
    return {
        "audit_id": audit.pk,
        "audit": audit.name,
        "audit_status": audit.status,
        "audit_outcome": OUTCOME_LABELS.get(outcome, outcome),
        "simulation": is_simulation(audit),
        "effect": params.effect,
        "effect_description": "r = Z / sqrt(N), Wilcoxon signed-rank normal approximation with tie correction"
        if params.effect == "r"
        else "matched-pairs rank-biserial correlation",
        "zero_method": params.zero_method,
        "r_denominator": "N = all pairs" if params.r_denominator == "all" else "N = non-zero differences",
        "n_boot": params.n_boot,
        "bootstrap": "paired percentile bootstrap over questions; one index matrix per (tutor, domain, contrast)",
        "confidence": params.confidence,
        "seed": params.seed,
        "threshold": params.threshold,
        "min_pairs": params.min_pairs,
        "rule": params.rule,
        "alpha": params.alpha,
        "fdr_q": params.fdr_q,
        "violation_rule": rule_text(
            params.rule, min_pairs=params.min_pairs, threshold=params.threshold, alpha=params.alpha
        ),
        "multiplicity_flag": "violation_bh: " + bh_text(fdr_q=params.fdr_q, threshold=params.threshold),
        "p_values": dict(P_VALUE_NAMES),
        "p_rule": "Wilcoxon signed-rank test: the rule and p_adjusted use p_exact where it exists "
        "(p_method=exact), else p_normal (p_method=normal)",
        "sign": "positive r: level B scored higher than level A",
        "effect_units": "mean_diff: mean paired difference B − A in the metric's own units, with a percentile "
        "bootstrap CI from the same resamples; share_b_higher / share_a_higher: shares of pairs favouring each side",
        "r_ceiling": R_CEILING_TEXT,
        "simulator_check": "the simulated student's own turns (student_turns, student_avg_word) are tested with the "
        "same contrasts; where any differs (the rule's p < alpha), cells of metrics built on student words "
        "(tutor_student_word_ratio) are marked simulator_driven=true and are not counted as violations",
        "exclusions": exclusions,
        # The paper's student runs at temperature 0; a model that takes no temperature answers at its default.
        "student_endpoint": str(audit.student_endpoint),
        "student_temperature": student["temperature"],
        "student_temperature_note": student["note"],
        "requests_sent": [{name: row[name] for name in ("role", "model", "parameters")} for row in sent],
        "judge_endpoint": str(audit.judge_endpoint),
        "rubric": str(audit.judge_template),
        "rubric_version": audit.judge_template.version,
        "judge_validation": judge_validation_status(audit),
        "judge_failed_metrics": list(failed_judge_metrics(analysis)),
        "scores_fingerprint": analysis.fingerprint,
        "dialogue_scores": analysis.n_scores,
        "computed_at": analysis.computed_at.isoformat() if analysis.computed_at else "",
    }


def _contrast_rows(analysis, table_rows, failed: Collection[str]) -> list[dict[str, Any]]:
    rows = []
    for row in table_rows:
        values = {**row.as_dict(), **row.p_values()}
        values.update(analysis.exclusions_for(row).as_dict())
        values["tutor_name"] = analysis.tutor_name(row.tutor)
        values["judge_validation_failed"] = str(row.metric) in failed
        rows.append({column: values[column] for column in CONTRAST_COLUMNS})
    return rows


def _summary_rows(analysis, cells, failed: Collection[str]) -> list[dict[str, Any]]:
    metrics = analysis.pedagogical.metrics
    rows = []
    for cell in cells:
        cell_failed = list(judge_failed_among(summary_cell_metrics(cell, metrics), failed))
        rows.append(
            {
                "tutor": cell.tutor,
                "tutor_name": analysis.tutor_name(cell.tutor),
                "domain": cell.domain,
                "kind": cell.kind,
                "family": cell.family,
                "group": cell.group,
                "value": cell.value,
                "n_rows": cell.n_rows,
                "n_insufficient": cell.n_insufficient,
                "n_violations": cell.n_violations,
                "over_threshold": cell.over_threshold,
                "judge_validation_failed": bool(cell_failed),
                "judge_failed_metrics": cell_failed,
            }
        )
    return rows


def export_tables(
    analysis, *, include_raw: bool = True, failed: Collection[str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Every table of the results, as lists of flat rows (the raw scores only with ``include_raw``).
    ``failed``: the metrics whose judge failed validation (default: asked of the audit's validation)."""
    failed = failed_judge_metrics(analysis) if failed is None else failed
    tables = {
        "contrasts": _contrast_rows(analysis, analysis.pedagogical.rows, failed),
        "conversation_contrasts": _contrast_rows(analysis, analysis.conversation.rows, failed),
        "student_contrasts": _contrast_rows(analysis, analysis.student.rows, failed),
        "dimension_cells": _summary_rows(analysis, analysis.dimension_cells(), failed),
        "metric_by_tutor": _summary_rows(analysis, analysis.metric_by_tutor(), failed),
        "implicit_rows": _summary_rows(analysis, analysis.implicit_rows(), failed),
        "opposite_decomposition": _summary_rows(analysis, analysis.opposite_decomposition(), failed),
    }
    if include_raw:
        tables["raw_scores"] = [
            {**row, "judge_validation_failed": str(row["metric"]) in failed}
            for row in raw_score_rows(audit_analysis_inputs(analysis.audit).frame)
        ]
    return tables


def analysis_findings(analysis, tables: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """What this audit found (`audits.findings`), from the contrast rows the violations table lists: the one
    function the results page, the HTML report and the JSON read."""
    params = analysis.parameters
    return audit_findings(
        tables["contrasts"],
        tutors=[(tutor, analysis.tutor_name(tutor)) for tutor in analysis.tutors],
        level_labels=audit_level_labels(analysis.audit),
        rule=params.rule,
        threshold=params.threshold,
        fdr_q=params.fdr_q,
        confidence=params.confidence,
    )


def contrast_findings(analysis) -> dict[str, Any]:
    """What this audit found, from the contrast rows alone (the dashboard): no other table is built and the
    judge's validation is not asked, so no finding carries the failed-judge mark."""
    return analysis_findings(analysis, {"contrasts": _contrast_rows(analysis, analysis.pedagogical.rows, ())})


def compare_flag_changes(left, left_tutor, right, right_tutor, failed: Collection[str]) -> list[dict[str, Any]]:
    """The compare page's flagged cells (`audits.findings.flag_changes`): one tutor of one analysis on each side, each
    side's flags under its own analysis's rule."""
    left_rows = _contrast_rows(left, [row for row in left.pedagogical.rows if row.tutor == left_tutor], failed)
    right_rows = _contrast_rows(right, [row for row in right.pedagogical.rows if row.tutor == right_tutor], failed)
    labels = {**audit_level_labels(left.audit), **audit_level_labels(right.audit)}
    return flag_changes(left_rows, right_rows, level_labels=labels)


# --- CSV ---------------------------------------------------------------------------------------------


def csv_cell(value: Any) -> Any:
    """A value as it goes into a CSV cell: numbers in full precision, NaN empty, formula text neutralised."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list | tuple):
        return csv_cell(";".join(str(item) for item in value))
    return neutralise_text(str(value))


def rows_to_csv(rows: Sequence[Mapping[str, Any]], *, columns: Sequence[str] | None = None) -> str:
    """CSV text: one header row, then the rows (no comment lines: tools read it with their defaults)."""
    out = io.StringIO()
    columns = list(columns or (rows[0].keys() if rows else []))
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(column) for column in columns])
    for row in rows:
        writer.writerow([csv_cell(row.get(column)) for column in columns])
    return out.getvalue()


def methods_lines(analysis) -> list[str]:
    """The methods in a few sentences, as the sidecar's `summary` states them."""
    methods = analysis_methods(analysis)
    lines = []
    if methods["simulation"]:
        lines.append(SIMULATION_LABEL)
    lines.append(f"EduFair Web fairness results: audit {methods['audit_id']} ({methods['audit']})")
    lines.append(
        "parameters: "
        + ", ".join(
            f"{name}={methods[name]}"
            for name in ("effect", "zero_method", "n_boot", "seed", "threshold", "min_pairs", "rule", "alpha", "fdr_q")
        )
    )
    lines.append(f"violation rule: {methods['violation_rule']}")
    lines.append(f"multiplicity-controlled flag: {methods['multiplicity_flag']}")
    totals = methods["exclusions"]
    lines.append(
        "exclusions: "
        + ", ".join(f"{name}={value}" for name, value in totals.items())
        + "; per row: the dialogues_* / turns_* / pairs_used columns"
    )
    lines.append(f"student: {methods['student_endpoint']}, {methods['student_temperature_note']}")
    lines.append(f"judge: {methods['judge_endpoint']}, rubric {methods['rubric']} ({methods['judge_validation']})")
    if methods["judge_failed_metrics"]:
        lines.append(
            f"{judge_failed_legend(methods['judge_failed_metrics'])} Rows resting on them have "
            "judge_validation_failed=true."
        )
    return lines


def read_csv(text: str) -> list[dict[str, str]]:
    """Read a CSV export back as dicts of strings (for tests and notebooks without pandas)."""
    return list(csv.DictReader(io.StringIO(text)))


def table_columns(table: str, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """A table's CSV columns: its fixed ones (or its rows' keys), then `simulation`."""
    fixed = {
        "contrasts": CONTRAST_COLUMNS,
        "conversation_contrasts": CONTRAST_COLUMNS,
        "student_contrasts": CONTRAST_COLUMNS,
        "dimension_cells": SUMMARY_COLUMNS,
        "metric_by_tutor": SUMMARY_COLUMNS,
        "implicit_rows": SUMMARY_COLUMNS,
        "opposite_decomposition": SUMMARY_COLUMNS,
    }.get(table)
    return [*(fixed or (rows[0].keys() if rows else [])), "simulation"]


def table_csv(analysis, table: str, tables: Mapping[str, list] | None = None) -> str:
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; one of {', '.join(TABLES)}")
    tables = tables or export_tables(analysis, include_raw=table == "raw_scores")
    rows = tables[table]
    simulation = is_simulation(analysis.audit)
    return rows_to_csv([{**row, "simulation": simulation} for row in rows], columns=table_columns(table, rows))


# --- JSON --------------------------------------------------------------------------------------------


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def results_payload(analysis, *, include_raw: bool = False) -> dict[str, Any]:
    """The whole result as plain JSON-able data (NaN as null): the API's body and the JSON export."""
    methods = analysis_methods(analysis)
    tables = export_tables(analysis, include_raw=include_raw, failed=methods["judge_failed_metrics"])
    return _json_safe(
        {
            "audit": {"id": analysis.audit.pk, "name": analysis.audit.name, "status": analysis.audit.status},
            "simulation": methods["simulation"],
            "label": SIMULATION_LABEL if methods["simulation"] else "",
            "findings": analysis_findings(analysis, tables),
            "parameters": analysis.parameters.as_dict(),
            "methods": methods,
            "tutors": {str(t): analysis.tutor_name(t) for t in analysis.tutors},
            "from_cache": analysis.from_cache,
            "tables": tables,
        }
    )


def results_json(analysis) -> str:
    return json.dumps(results_payload(analysis, include_raw=True), indent=1, allow_nan=False)


def methods_payload(analysis) -> dict[str, Any]:
    """The CSV exports' sidecar: the methods, their summary in words, and each table's columns."""
    methods = analysis_methods(analysis)
    return _json_safe(
        {
            "audit": {"id": analysis.audit.pk, "name": analysis.audit.name, "status": analysis.audit.status},
            "simulation": methods["simulation"],
            "label": SIMULATION_LABEL if methods["simulation"] else "",
            "summary": methods_lines(analysis),
            "parameters": analysis.parameters.as_dict(),
            "methods": methods,
            "csv_files": {table: export_filename(analysis.audit, table, "csv") for table in TABLES},
            "contrast_columns": [*CONTRAST_COLUMNS, "simulation"],
            "summary_columns": [*SUMMARY_COLUMNS, "simulation"],
        }
    )


def methods_json(analysis) -> str:
    return json.dumps(methods_payload(analysis), indent=1, allow_nan=False)


# --- HTML report -------------------------------------------------------------------------------------


def _inline_css() -> str:
    css = []
    for name in ("css/app.css", "css/audits.css", "css/audits-results.css", "css/audits-findings.css"):
        path = Path(settings.BASE_DIR) / "static" / name
        if path.exists():
            css.append(path.read_text())
    return "\n".join(css)


def report_figures(
    analysis, link=None, failed: Collection[str] = frozenset()
) -> dict[str, list[heatmap_figures.Figure]]:
    link = link or (lambda page, **values: "")
    return {
        "dimensions": heatmap_figures.dimension_figures(analysis, link, failed_metrics=failed),
        "metrics": heatmap_figures.metric_figures(analysis, link, failed_metrics=failed),
        "implicit": heatmap_figures.implicit_figures(analysis, link, failed_metrics=failed),
        "opposite": heatmap_figures.opposite_figures(analysis, link, failed_metrics=failed),
        "contrasts": heatmap_figures.contrast_figures(analysis, link, failed_metrics=failed),
    }


def results_html(analysis, *, results_url: str = "", download_url: str = "") -> str:
    """A self-contained HTML report: inline CSS and SVG, no script, no external resource; what the audit found
    first. Served as a page in the app, ``results_url`` links back to the results page and ``download_url`` to the
    same report as a file."""
    methods = analysis_methods(analysis)
    failed = methods["judge_failed_metrics"]
    tables = export_tables(analysis, include_raw=False, failed=failed)
    corrected = judge_corrected_results(analysis.audit, analysis=analysis)
    return render_to_string(
        "audits/results/report.html",
        {
            "analysis": analysis,
            "audit": analysis.audit,
            "methods": methods,
            "simulation_label": SIMULATION_LABEL,
            "judge_failed_metrics": failed,
            "judge_failed_legend": judge_failed_legend(failed),
            "figures": report_figures(analysis, failed=failed),
            "conversation_rows": tables["conversation_contrasts"],
            "student_rows": tables["student_contrasts"],
            "violations": [row for row in tables["contrasts"] if row["violation"]],
            "exclusion_rows": exclusion_rows(tables),
            "findings": analysis_findings(analysis, tables),
            "results_url": results_url,
            "download_url": download_url,
            "judge_corrected": corrected,
            "judge_corrected_rows": [{"cell": cell, "href": ""} for cell in corrected.cells],
            "judge_corrected_figures": judge_corrected_figures(corrected.cells),
            "css": _inline_css(),
            "generated_at": timezone.now(),
        },
    )


# --- judge-corrected table ----------------------------------------------------------------------------------


def judge_corrected_rows(results: JudgeCorrectedResults) -> list[dict[str, Any]]:
    """The judge-corrected cells as flat rows (`CORRECTED_COLUMNS`), in the table's order."""
    return [corrected_row(cell) for cell in results.cells]


def judge_corrected_csv(analysis, results: JudgeCorrectedResults) -> str:
    """The judge-corrected table as CSV: one header row, then one row per cell, `simulation` last."""
    simulation = is_simulation(analysis.audit)
    rows = [{**row, "simulation": simulation} for row in judge_corrected_rows(results)]
    return rows_to_csv(rows, columns=[*CORRECTED_COLUMNS, "simulation"])


def judge_corrected_payload(analysis, results: JudgeCorrectedResults) -> dict[str, Any]:
    """The judge-corrected table as plain JSON-able data (the API's body and the JSON export)."""
    simulation = is_simulation(analysis.audit)
    audit = analysis.audit
    return _json_safe(
        {
            "audit": {"id": audit.pk, "name": audit.name, "status": audit.status},
            "simulation": simulation,
            "label": SIMULATION_LABEL if simulation else "",
            "parameters": analysis.parameters.as_dict(),
            "alpha": results.alpha,
            "methods": results.methods,
            "validation": subset_facts(results.subset),
            "skipped": results.skipped,
            "disagreeing": len(results.disagreeing),
            "cue_sensitive_metrics": results.cue_sensitive_metrics,
            "columns": [*CORRECTED_COLUMNS, "simulation"],
            "cells": [{**row, "simulation": simulation} for row in judge_corrected_rows(results)],
        }
    )


def judge_corrected_json(analysis, results: JudgeCorrectedResults) -> str:
    return json.dumps(judge_corrected_payload(analysis, results), indent=1, allow_nan=False)


def exclusion_rows(tables: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The report's exclusions section: every judge-scored and conversation-level row that lost something (a
    failed or unfinished dialogue, or a tutor turn whose score was unparsable or whose judge call failed), with its
    counts. A turn the rubric calls not applicable is no loss: nearly every row has some, so listing them would
    repeat the whole table (each row still counts them)."""
    lost = ("dialogues_failed", "dialogues_unfinished", "turns_unparsable", "turns_failed")
    return [
        row
        for table in ("contrasts", "conversation_contrasts")
        for row in tables[table]
        if any(row[column] for column in lost)
    ]


def export_filename(audit, what: str, extension: str) -> str:
    label = "-SIMULATION" if is_simulation(audit) else ""
    return f"audit-{audit.pk}-{what}{label}.{extension}"
