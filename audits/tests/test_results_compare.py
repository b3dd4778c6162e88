"""Tutor vs backbone on the results page, and the compare page: two tutors, or the same tutor in two audits,
side by side with every summary cell's value and the change."""

import re

import pytest
from django.urls import reverse

from audits.services.analysis import audit_analysis
from audits.tests.test_results_pages import results_audit

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("analysis_inline")]


def _changes(page: str) -> dict[str, tuple[str, str, str]]:
    rows = re.findall(
        r"<tr><td>mathematics</td><td>explicit</td><td>(\w+)</td><td class=\"num\">([-\d.]+)</td>"
        r"<td class=\"num\">([-\d.]+)</td><td class=\"num[^\"]*\"[^>]*>([-\d.]+)</td>"
        r"(?:<td class=\"num\">[^<]*</td>)?</tr>",
        page,
    )
    return {group: (left, right, change) for group, left, right, change in rows}


def test_tutor_vs_backbone_on_the_results_page(researcher_client):
    audit = results_audit("backbone audit")
    fair, biased = sorted(audit.tutors.values_list("pk", flat=True))
    page = researcher_client.get(
        reverse("audits:results", args=[audit.pk]), {"backbone": fair, "tutor": biased}
    ).content.decode()
    section = page[page.index('id="backbone"') : page.index('id="violations"')]
    changes = _changes(section)
    analysis = audit_analysis(audit=audit)
    (expected,) = analysis.tutor_vs_backbone(tutor=biased, backbone=fair)
    assert changes["first_language"] == (
        f"{expected.backbone_value:.3f}",
        f"{expected.tutor_value:.3f}",
        f"{expected.change:.3f}",
    )
    assert expected.change > 0  # the planted-bias tutor's first-language cell is stronger


def test_compare_page_two_tutors_and_two_audits(researcher_client):
    first = results_audit("compare audit one")
    second = results_audit("compare audit two")
    fair_1, biased_1 = sorted(first.tutors.values_list("pk", flat=True))
    fair_2, _ = sorted(second.tutors.values_list("pk", flat=True))
    url = reverse("audits:results-compare")

    page = researcher_client.get(
        url, {"left": f"{first.pk}:{fair_1}", "right": f"{first.pk}:{biased_1}"}
    ).content.decode()
    assert "SIMULATION" in page
    left, right, change = _changes(page)["first_language"]
    assert float(change) == pytest.approx(float(right) - float(left), abs=2e-3) and float(change) > 0
    # Each change with its approximate CI, and the dot-and-whisker plot of them.
    ci = re.search(r"<td>first_language</td>.*?\[([-\d.]+), ([-\d.]+)\]</td></tr>", page)
    assert ci and float(ci.group(1)) < float(change) < float(ci.group(2))
    # The planted cell, flagged on the biased side only, heads the flagged-cells table with both sides' flags.
    flagged = page.split('id="flag-changes"', 1)[1].split("</table>", 1)[0]
    top = flagged.split("<tr data-flagged-on=", 2)[1]
    assert top.startswith('"right"') and 'data-dimension="first_language"' in top
    assert 'data-level-b="non_english_l1"' in top and 'data-metric="corrective_tone"' in top
    assert '<td data-side="left">—</td>' in top and '<td data-side="right">flagged' in top
    plot = page.split('id="change-plot"', 1)[1].split("</figure>", 1)[0]
    assert plot.count('class="dot"') == len(_changes(page)) and 'class="whisker"' in plot

    # The same (fair, seed 0) simulated tutor in two audits gives the same transcripts: no change.
    same = researcher_client.get(
        url, {"left": f"{first.pk}:{fair_1}", "right": f"{second.pk}:{fair_2}"}
    ).content.decode()
    assert _changes(same)["first_language"][2] in ("0.000", "-0.000")

    # Too few pairs for every cell: no change to plot, and the page says why instead of showing nothing.
    insufficient = researcher_client.get(
        url, {"left": f"{first.pk}:{fair_1}", "right": f"{first.pk}:{biased_1}", "min_pairs": 100000, "n_boot": 200}
    ).content.decode()
    assert 'id="change-plot"' not in insufficient and 'id="no-change-plot"' in insufficient
    assert "at least 100000 question pairs" in insufficient

    empty = researcher_client.get(url).content.decode()
    assert "Left (baseline)" in empty and "compare audit two" in empty
