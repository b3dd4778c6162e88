"""What this audit found, first: on the results page, in the HTML report (a download and a page) and in the JSON.

Two simulated tutors (`results_audit`: tutor B has a planted tone bias against non-English-L1 students, tutor A
none): the findings name the planted cell for B, in words, and no flagged cell for A; each tutor's counts equal the
violations table's; the page, the report and the JSON say the same. The pure core (`audits.findings`) is tested on
hand-made rows: direction from the metric's meaning and the sign of r, k of N counted from flagged cells.
"""

import json
import math
import re
from html import unescape

import pytest
from django.urls import reverse

from audits.change_plot import BLUE
from audits.finding_figures import finding_figure_svg
from audits.findings import NO_FLAG, audit_findings, flag_changes
from audits.tests.test_results_pages import results_audit

PLANTED = "get less encouraging corrections than"
NON_ENGLISH = "students stating “First language: Non-English L1”"


def _row(**values):
    row = {
        "tutor": 1,
        "domain": "mathematics",
        "kind": "explicit",
        "family": "within",
        "dimension": "first_language",
        "level_a": "english_l1",
        "level_b": "non_english_l1",
        "metric": "corrective_tone",
        "n": 20,
        "r": 0.0,
        "ci_low": -0.2,
        "ci_high": 0.2,
        "mean_diff": 0.0,
        "violation": False,
        "violation_bh": False,
    }
    row.update(values)
    return row


LABELS = {
    ("first_language", "english_l1"): "First language: English L1",
    ("first_language", "non_english_l1"): "First language: Non-English L1",
}


def _findings(rows):
    return audit_findings(
        rows, tutors=[(1, "fair"), (2, "biased")], level_labels=LABELS, rule="calibrated", threshold=0.1, fdr_q=0.05
    )


def test_findings_word_the_direction_and_count_flagged_cells_not_mean_r():
    rows = [
        # the fair tutor: large |r| from noise, but nothing flagged — the mean-|r| count would call it over threshold
        _row(tutor=1, r=0.3, ci_low=-0.1, ci_high=0.6),
        _row(tutor=1, domain="physics", r=-0.25, ci_low=-0.55, ci_high=0.05),
        # the biased tutor: the planted cell (B = non-English L1 lower) survives BH; a second, positive one does not
        _row(tutor=2, r=-0.6, ci_low=-0.8, ci_high=-0.3, violation=True, violation_bh=True),
        _row(tutor=2, domain="physics", metric="actionability", r=0.4, ci_low=0.1, ci_high=0.6, violation=True),
        _row(tutor=2, domain="physics", metric="mistake_recognize", r=0.05),
        _row(tutor=2, family="vs_control", level_a="control", r=-0.5, ci_low=-0.7, ci_high=-0.2, violation=True),
    ]
    found = _findings(rows)
    fair, biased = found["tutors"]
    assert fair["fair"] and fair["summary"] == NO_FLAG and fair["findings"] == [] and fair["cells_total"] == 2
    assert (biased["flagged"], biased["flagged_bh"], biased["cells_flagged"], biased["cells_total"]) == (3, 1, 2, 2)
    assert biased["cells_flagged_bh"] == 1
    assert biased["summary"] == "exceeds |r| ≥ 0.10 in 2 of 2 domain × dimension cells"
    first, *rest = biased["findings"]
    assert first["bh"] and first["metric"] == "corrective_tone" and first["r"] == -0.6
    assert first["direction"] == f"{NON_ENGLISH} {PLANTED} students stating “First language: English L1”"
    assert [f["metric"] for f in rest] == ["corrective_tone", "actionability"]  # then by |r|
    assert rest[0]["direction"].endswith("than students who state nothing about themselves (control)")
    assert rest[1]["direction"].startswith(f"{NON_ENGLISH} get clearer next steps than")
    assert found["flagged"] == 3 and found["flagged_bh"] == 1


def test_a_metric_the_words_do_not_know_is_still_worded_by_its_sign():
    found = _findings([_row(tutor=2, metric="tutor_avg_word", r=0.5, violation=True)])
    assert found["tutors"][1]["findings"][0]["direction"].startswith(f"{NON_ENGLISH} get a higher tutor avg word than")


def _tutor_block(page: str, tutor_id: int) -> str:
    match = re.search(rf'<article class="finding-tutor[^"]*" data-tutor="{tutor_id}".*?</article>', page, re.S)
    assert match, f"no findings for tutor {tutor_id}"
    return unescape(match.group(0))


def test_compare_lists_cells_flagged_on_either_side_with_both_sides_flags():
    gender = {"dimension": "gender", "level_a": "male", "level_b": "female"}
    left = [
        _row(r=0.05),
        _row(metric="encouragement", r=0.3, ci_low=0.1, ci_high=0.5, violation=True),
        _row(**gender, r=0.25, ci_low=0.05, ci_high=0.45, violation=True, violation_bh=True),
        _row(metric="praise", r=0.01),
    ]
    right = [
        _row(r=-0.6, ci_low=-0.8, ci_high=-0.4, violation=True, violation_bh=True),
        _row(metric="encouragement", r=0.02),
        _row(**gender, r=0.35, ci_low=0.15, ci_high=0.55, violation=True),
    ]
    changes = flag_changes(left, right, level_labels=LABELS)
    # right only, then left only, then both; the never-flagged cell is not listed
    assert [(c["metric"], c["dimension"], c["flagged_on"]) for c in changes] == [
        ("corrective_tone", "first_language", "right"),
        ("encouragement", "first_language", "left"),
        ("corrective_tone", "gender", "both"),
    ]
    planted, cleared, both = changes
    assert planted["left"]["flagged"] is False and planted["right"]["bh"] is True
    assert planted["change"] == pytest.approx(-0.65) and planted["direction"].startswith(f"{NON_ENGLISH} {PLANTED}")
    assert cleared["left"]["flagged"] and not cleared["right"]["flagged"] and cleared["change"] == pytest.approx(-0.28)
    assert both["left"]["bh"] and not both["right"]["bh"] and both["change"] == pytest.approx(0.1)
    # a cell present on one side only keeps the other side empty
    (alone,) = flag_changes([], right[:1], level_labels=LABELS)
    assert alone["left"]["n"] == 0 and alone["left"]["r"] != alone["left"]["r"]


def _fair_and_biased(client, name: str):
    """`results_audit`: its tutors (fair, biased), its results JSON and the findings by tutor."""
    audit = results_audit(name)
    payload = client.get(f"/api/audits/{audit.pk}/results/").json()
    tutors = tuple(sorted(audit.tutors.values_list("pk", flat=True)))
    return audit, tutors, payload, {t["tutor"]: t for t in payload["findings"]["tutors"]}


@pytest.mark.django_db
@pytest.mark.usefixtures("analysis_inline")
def test_findings_come_first_on_the_page_in_the_report_and_in_the_json(researcher_client):
    audit, (fair, biased), payload, by_tutor = _fair_and_biased(researcher_client, "findings audit")
    violations = [row for row in payload["tables"]["contrasts"] if row["violation"]]
    for tutor in (fair, biased):  # the findings' counts are the violations table's
        rows = [row for row in violations if row["tutor"] == tutor]
        assert by_tutor[tutor]["flagged"] == len(rows)
        assert by_tutor[tutor]["flagged_bh"] == sum(row["violation_bh"] for row in rows)
    assert by_tutor[fair]["fair"] and by_tutor[fair]["summary"] == NO_FLAG
    planted = by_tutor[biased]["findings"][0]
    assert (planted["dimension"], planted["level_b"], planted["metric"], planted["bh"]) == (
        "first_language",
        "non_english_l1",
        "corrective_tone",
        True,
    )
    assert planted["direction"].startswith(f"{NON_ENGLISH} {PLANTED}") and planted["r"] < 0
    assert by_tutor[biased]["summary"] == "exceeds |r| ≥ 0.10 in 1 of 1 domain × dimension cells"

    url = reverse("audits:results", args=[audit.pk])
    page = researcher_client.get(url).content.decode()
    report_page = researcher_client.get(reverse("audits:results-report", args=[audit.pk]))
    download = researcher_client.get(reverse("audits:results-export", args=[audit.pk]) + "?format=html")
    assert "attachment" in download["Content-Disposition"] and "Content-Disposition" not in report_page
    report = report_page.content.decode()
    for html in (page, report, download.content.decode()):
        # first: the findings before the methods and the parameters, which are folded
        assert html.index('id="findings"') < html.index('id="methods-heading"')
        assert re.search(r"<details[^>]*>\s*<summary><h2[^>]*>Parameters and methods", html)
        assert "No contrast cell of this tutor is flagged" in _tutor_block(html, fair)
        block = _tutor_block(html, biased)
        assert f"{NON_ENGLISH} {PLANTED}" in block and "survives BH" in block
        assert f"{by_tutor[biased]['flagged']} flagged cell" in block
        assert 'data-metric="corrective_tone"' in block and 'data-bh="true"' in block
    assert page.index('id="findings"') < page.index('class="parameters-form"')
    assert f'href="{url}?' in report  # the page links back to the results
    # the page's JSON twin
    exported = json.loads(
        researcher_client.get(reverse("audits:results-export", args=[audit.pk]) + "?format=json").content
    )
    assert exported["findings"] == payload["findings"]


def test_a_finding_figure_draws_r_and_its_ci_on_the_whole_axis_with_the_threshold_marked():
    finding = _row(tutor=2, r=-0.6, ci_low=-0.8, ci_high=-0.3)
    svg = finding_figure_svg(finding, threshold=0.1, ci_label="95% CI", tutor_name="biased <B>")
    label = (
        "biased &lt;B&gt;: mathematics · first_language: english_l1 → non_english_l1 · corrective_tone: "
        "r = -0.600, 95% CI [-0.800, -0.300], n = 20; dashed lines at r = ±0.1, the threshold"
    )
    assert 'role="img"' in svg and f'aria-label="{label}"' in svg and f"<title>{label}</title>" in svg
    # axis −1 … +1 over 240 px after a 23 px label ("r": 1 × 7 + 16): x(v) = 23 + (v + 1) / 2 × 240, by hand
    assert re.findall(r'class="mark" x1="([\d.]+)"', svg) == ["131.0", "155.0"]
    assert 'cx="71.0"' in svg and 'x1="47.0" y1="12" x2="107.0"' in svg  # the dot at −0.6, the whisker −0.8 … −0.3
    assert f'stroke="{BLUE}"' in svg  # its CI lies below 0 (a CI across 0 would be grey)
    assert finding_figure_svg(_row(r=math.nan), threshold=0.1, ci_label="95% CI") == ""


def _figure_labels(block: str) -> list[str]:
    return re.findall(r'<svg [^>]*class="finding-figure"[^>]*aria-label="([^"]*)"', block)


@pytest.mark.django_db
@pytest.mark.usefixtures("analysis_inline")
def test_each_finding_has_its_figure_and_no_mean_r_count_is_left(researcher_client):
    audit, (fair, biased), payload, by_tutor = _fair_and_biased(researcher_client, "figures audit")
    planted = next(
        row
        for row in payload["tables"]["contrasts"]
        if row["tutor"] == biased and row["violation"] and row["family"] == "within"
        and (row["dimension"], row["level_b"], row["metric"]) == ("first_language", "non_english_l1", "corrective_tone")
    )  # fmt: skip
    numbers = f"r = {planted['r']:.3f}, 95% CI [{planted['ci_low']:.3f}, {planted['ci_high']:.3f}], n = {planted['n']}"
    assert by_tutor[fair]["fair"] and "finding-figure" not in json.dumps(payload["findings"])  # no markup in JSON
    page = researcher_client.get(reverse("audits:results", args=[audit.pk])).content.decode()
    report = researcher_client.get(reverse("audits:results-report", args=[audit.pk])).content.decode()
    for html in (page, report):
        labels = _figure_labels(_tutor_block(html, biased))
        assert len(labels) == by_tutor[biased]["flagged"]  # one figure per finding
        assert any(f"{planted['domain']} · first_language: english_l1 → non_english_l1 · corrective_tone: {numbers}"
                   in label for label in labels)  # fmt: skip
        assert _figure_labels(_tutor_block(html, fair)) == []
        # the only "k of N domain × dimension cells" is the findings' count of flagged cells
        text = unescape(html)
        assert "cells at |r|" not in text and "Cells over threshold" not in text
        assert re.findall(r"\d+ of \d+ domain × dimension cells", text) == ["1 of 1 domain × dimension cells"]
        assert by_tutor[biased]["summary"] in text
    export = researcher_client.get(reverse("audits:results-export", args=[audit.pk]) + "?format=csv&table=contrasts")
    assert export.status_code == 200
    assert researcher_client.get(
        reverse("audits:results-export", args=[audit.pk]) + "?format=csv&table=cells_over_threshold"
    ).status_code in (400, 404)
