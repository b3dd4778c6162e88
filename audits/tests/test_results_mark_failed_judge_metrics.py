"""Metrics whose judge failed validation are marked "†" in every results table, heatmap and export — and
only those: a metric whose judge passed is not marked, and nothing is marked while the judge has no
recorded validation ("not validated" is said once, in the methods).

The validation is the real one: the results audit's own judge, a validation project of its turns, three
annotators who label every metric as the judge did except corrective_tone, where they all give another
value — so the judge's agreement on corrective_tone is 0 and it fails. A metric whose human labels never
vary (α undefined) comes out "undecided", which is not a pass either, so it is marked too.
"""

import json
import re

import pytest
from django.urls import reverse

from annotation.judge_validation.services import validation_project_create, validation_record
from annotation.selectors.judge_validation import judge_validation_status, validation_stage
from annotation.services.labelling import label_next, main_label_submit
from annotation.tests.judge_validation_setup import passed_annotators
from annotation.workflow.answers import Answer
from audits import exports, heatmap_figures
from audits.fairness import TURN_METRICS
from audits.judge import METRICS
from audits.judge_failed_marks import JUDGE_FAILED_MARK
from audits.models import Audit, TurnScore
from audits.selectors.results import judge_failed_metrics
from audits.services.analysis import audit_analysis
from audits.tests.test_results_pages import results_audit

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("analysis_inline")]

FAILED = "corrective_tone"  # the metric of the planted bias, so it is also in the violations table
MARK = JUDGE_FAILED_MARK
# An answer the judge did not give, for every value it can give.
OTHER_VALUE = {"n/a": "1", "0": "2", "1": "2", "2": "0"}


def _judge_value(value: int) -> str:
    return "n/a" if value == -1 else str(value)


def validate_judge(audit: Audit, researcher, make_user) -> tuple[list[str], list[str]]:
    """Record a validation of the audit's judge in which FAILED fails; the metrics that passed and those
    that did not (FAILED among them), in the tables' metric order."""
    project = validation_project_create(audit=audit, size=10, seed=1, training_pool=4, by=researcher)
    stage = validation_stage(project)
    for user in passed_annotators(stage, make_user):
        while (assignment := label_next(annotator=user, stage=stage)) is not None:
            scores = dict(
                TurnScore.objects.filter(
                    turn_id=assignment.item.source_turn_id, rubric_id=audit.judge_template_id
                ).values_list("metric", "value")
            )
            answers = {}
            for metric in METRICS:
                judge = _judge_value(scores[metric])
                answers[metric] = Answer(value=OTHER_VALUE[judge] if metric == FAILED else judge)
            main_label_submit(annotator=user, stage=stage, item=assignment.item, answers=answers)
    [validation] = project.judge_validations.all()
    validation_record(validation=validation, by=researcher)
    status = judge_validation_status(audit)
    assert status.validated and status.verdicts[FAILED] == "fail"
    passed = [metric for metric in TURN_METRICS if status.verdicts[metric] == "pass"]
    failed = [metric for metric in TURN_METRICS if status.verdicts[metric] != "pass"]
    assert passed, status.verdicts
    assert judge_failed_metrics(audit) == set(failed) == set(status.failed_metrics)
    return passed, failed


@pytest.fixture
def audit():
    return results_audit("marked metrics audit")


def _cell_tags(markup: str, metric: str) -> list[str]:
    """The opening tags of the heatmap cells of one metric (contrast heatmaps: one cell per contrast row)."""
    return re.findall(rf'<(?:a|g) [^>]*class="cell[^"]*"[^>]*data-metric="{metric}"[^>]*>', markup)


def _contrast_row(html: str, metric: str) -> str:
    """The first results-table row (<tr>…</tr>) whose metric cell is ``metric`` (with or without the mark)."""
    for row in re.findall(r"<tr class=\"[^\"]*\">.*?</tr>", html, flags=re.S):
        if re.search(rf"<td>{metric}( <span class=\"judge-failed-mark\"|</td>)", row):
            return row
    raise AssertionError(f"no table row for {metric}")


def _is_marked(tag_or_row: str) -> bool:
    """Whether the element (a heatmap cell's tag, a table row) has the class the mark puts on it."""
    classes = re.match(r'<\w+ [^>]*?class="([^"]*)"', tag_or_row)
    return bool(classes) and "judge-failed" in classes.group(1).split()


def test_results_pages_mark_the_failed_metric_and_not_a_passing_one(researcher_client, make_user, researcher, audit):
    passed, failed = validate_judge(audit, researcher, make_user)
    legend = f"{MARK} judge failed validation: {', '.join(failed)}."
    fair, biased = sorted(audit.tutors.values_list("pk", flat=True))
    page = researcher_client.get(reverse("audits:results", args=[audit.pk])).content.decode()

    # The methods box does not call a judge that failed a metric simply validated: amber, naming the metrics.
    judge_line = page[page.index("<dt>Judge</dt>") :]
    judge_line = judge_line[: judge_line.index("</dd>")]
    assert 'class="warn"' in judge_line and 'class="ok"' not in judge_line
    assert "did not pass on" in judge_line and all(metric in judge_line for metric in failed)

    # Level-vs-level heatmaps: the column heading and every cell of the failed metric; none of a passing one.
    contrasts = page[page.index('id="contrasts"') : page.index('id="metrics"')]
    assert f">{FAILED} {MARK}</text>" in contrasts
    failed_cells = _cell_tags(contrasts, FAILED)
    assert failed_cells and all(_is_marked(tag) and f'data-judge-failed="{FAILED}"' in tag for tag in failed_cells)
    for metric in passed:
        assert f">{metric}</text>" in contrasts and f">{metric} {MARK}</text>" not in contrasts
        cells = _cell_tags(contrasts, metric)
        assert cells and not any(_is_marked(tag) for tag in cells)
    # Metric × tutor: the failed metric's row heading is marked, a passing one's is not.
    metrics = page[page.index('id="metrics"') : page.index('id="implicit"')]
    assert f">{FAILED} {MARK}</text>" in metrics
    assert all(f">{metric}</text>" in metrics for metric in passed)
    # Domain × dimension cells average every turn-level metric, the failed one included: the hover says so.
    dimensions = page[page.index('id="dimensions"') : page.index('id="contrasts"')]
    assert re.search(rf"<title>[^<]*{MARK} judge failed validation: {', '.join(failed)}</title>", dimensions)
    assert f"rests on {', '.join(failed)}, whose judge failed validation" in dimensions
    # The planted violation (corrective_tone of tutor B) in the violations table carries the mark.
    violations = page[page.index('id="violations"') : page.index('id="conversation"')]
    assert _is_marked(_contrast_row(violations, FAILED)) and "judge-failed-mark" in violations
    # Conversation-level metrics come from the transcripts, not the judge: never marked.
    conversation = page[page.index('id="conversation"') :]
    assert "<td>tutor_turns</td>" in conversation and "tutor_turns <span" not in conversation
    # Tutor vs backbone: its cells average every turn-level metric, so they rest on the failed ones too.
    backbone = page[page.index('id="backbone"') : page.index('id="violations"')]
    assert '<td>first_language <span class="judge-failed-mark"' in backbone and legend in backbone
    # The legend explains the mark, and the page has no inline script (CSP).
    assert legend in page
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page)

    # The compare page marks the same cells, with the legend.
    compare = researcher_client.get(
        reverse("audits:results-compare"), {"left": f"{audit.pk}:{fair}", "right": f"{audit.pk}:{biased}"}
    ).content.decode()
    assert '<td>first_language <span class="judge-failed-mark"' in compare and legend in compare

    # A summary cell's rows: the failed metric's rows are marked, a passing metric's are not.
    query = {"tutor": biased, "domain": "mathematics", "kind": "explicit", "family": "within"}
    cell = researcher_client.get(
        reverse("audits:results-cell", args=[audit.pk]), {**query, "group": "first_language"}
    ).content.decode()
    assert _is_marked(_contrast_row(cell, FAILED))
    assert not _is_marked(_contrast_row(cell, passed[0]))
    assert legend in cell

    # The pairs page of a failed-metric contrast marks the metric in its heading; a passing one does not.
    pairs = {**query, "dimension": "first_language", "level_a": "english_l1", "level_b": "non_english_l1"}
    url = reverse("audits:results-pairs", args=[audit.pk])
    heading = re.search(r"<h1>.*?</h1>", researcher_client.get(url, {**pairs, "metric": FAILED}).content.decode())
    assert heading and "judge-failed-mark" in heading.group(0)
    heading = re.search(r"<h1>.*?</h1>", researcher_client.get(url, {**pairs, "metric": passed[0]}).content.decode())
    assert heading and "judge-failed-mark" not in heading.group(0)


def test_heatmaps_mark_the_failed_metric_and_not_a_passing_one(make_user, researcher, audit):
    passed, failed = validate_judge(audit, researcher, make_user)
    analysis = audit_analysis(audit=audit)
    assert exports.failed_judge_metrics(analysis) == tuple(failed)
    link = lambda page, **values: ""  # noqa: E731

    svg = "".join(figure.svg for figure in heatmap_figures.contrast_figures(analysis, link, failed_metrics=failed))
    failed_cells = _cell_tags(svg, FAILED)
    assert failed_cells and all(_is_marked(tag) for tag in failed_cells)
    assert re.search(rf"<text [^>]*>[^<]* {MARK}</text>", svg)  # the cell's number carries the mark
    for metric in passed:
        assert not any(_is_marked(tag) for tag in _cell_tags(svg, metric))

    metric_svg = heatmap_figures.metric_figures(analysis, link, failed_metrics=failed)[0].svg
    assert f">{FAILED} {MARK}</text>" in metric_svg
    assert all(f">{metric}</text>" in metric_svg for metric in passed)
    # Domain × dimension cells average every turn-level metric, the failed one included.
    dimension = heatmap_figures.dimension_figures(analysis, link, failed_metrics=failed)[0]
    assert 'class="cell' in dimension.svg and f'data-judge-failed="{" ".join(failed)}"' in dimension.svg
    assert f"rests on {', '.join(failed)}" in dimension.note

    # The same figures without failed metrics carry no mark at all.
    for figure in heatmap_figures.contrast_figures(analysis, link) + heatmap_figures.dimension_figures(analysis, link):
        assert MARK not in figure.svg and "judge-failed" not in figure.svg


def test_every_export_marks_the_failed_metric_and_not_a_passing_one(researcher_client, make_user, researcher, audit):
    passed, failed = validate_judge(audit, researcher, make_user)
    legend = f"{MARK} judge failed validation: {', '.join(failed)}."
    url = reverse("audits:results-export", args=[audit.pk])

    def csv_rows(table: str) -> tuple[str, list[dict[str, str]]]:
        text = researcher_client.get(url, {"format": "csv", "table": table}).content.decode()
        return text, exports.read_csv(text)

    text, contrasts = csv_rows("contrasts")
    header = text.splitlines()[0]
    # The new columns come last: existing consumers keep their column order.
    assert header.split(",") == [*exports.CONTRAST_COLUMNS[:-1], "judge_validation_failed", "simulation"]
    methods = researcher_client.get(url, {"format": "methods"}).json()
    assert legend in " ".join(methods["summary"])  # the CSVs' sidecar says it too
    assert {row["judge_validation_failed"] for row in contrasts if row["metric"] == FAILED} == {"true"}
    for metric in passed:
        assert {row["judge_validation_failed"] for row in contrasts if row["metric"] == metric} == {"false"}

    _, by_metric = csv_rows("metric_by_tutor")
    assert {row["judge_validation_failed"] for row in by_metric if row["group"] == FAILED} == {"true"}
    assert {row["judge_validation_failed"] for row in by_metric if row["group"] in passed} == {"false"}
    _, dimension = csv_rows("dimension_cells")
    assert dimension and all(row["judge_failed_metrics"] == ";".join(failed) for row in dimension)
    _, raw = csv_rows("raw_scores")
    assert {row["judge_validation_failed"] for row in raw if row["metric"] == FAILED} == {"true"}
    assert {row["judge_validation_failed"] for row in raw if row["metric"] in passed} == {"false"}

    payload = json.loads(researcher_client.get(url, {"format": "json"}).content)
    assert payload["methods"]["judge_failed_metrics"] == failed
    rows = payload["tables"]["contrasts"]
    assert all(row["judge_validation_failed"] is (row["metric"] in failed) for row in rows)
    assert any(row["metric"] in passed for row in rows)
    api = researcher_client.get(f"/api/audits/{audit.pk}/results/").json()
    assert api["methods"]["judge_failed_metrics"] == failed

    report = researcher_client.get(url, {"format": "html"}).content.decode()
    assert f">{FAILED} {MARK}</text>" in report  # the heatmaps
    violations = report[report.index("<h2>Violations</h2>") : report.index("<h2>Conversation-level")]
    assert _is_marked(_contrast_row(violations, FAILED))
    assert f'<td>{FAILED} <span class="judge-failed-mark"' in violations
    assert legend in report
    for metric in passed:
        assert f">{metric}</text>" in report and f">{metric} {MARK}</text>" not in report
    assert "<script" not in report


def test_nothing_is_marked_while_the_judge_is_not_validated(researcher_client, audit):
    assert judge_failed_metrics(audit) == set()
    page = researcher_client.get(reverse("audits:results", args=[audit.pk])).content.decode()
    assert "not validated" in page
    assert MARK not in page and "judge-failed" not in page

    url = reverse("audits:results-export", args=[audit.pk])
    for table in ("contrasts", "metric_by_tutor", "dimension_cells", "raw_scores"):
        rows = exports.read_csv(researcher_client.get(url, {"format": "csv", "table": table}).content.decode())
        assert rows and {row["judge_validation_failed"] for row in rows} == {"false"}
    payload = json.loads(researcher_client.get(url, {"format": "json"}).content)
    assert payload["methods"]["judge_failed_metrics"] == []
    report = researcher_client.get(url, {"format": "html"}).content.decode()
    assert (
        MARK not in report
        and 'class="judge-failed-mark"' not in report
        and 'class="legend judge-failed-legend"' not in report
    )
