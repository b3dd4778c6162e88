"""Every agreement cell states its own counts (items rated, items with ≥ 2 ratings, pairable values), κ apart from α;
α its probabilities of falling under its minimums; κ beside AC1 with the class shares and the κ-paradox warning; AC2
with linear weights beside AC1 for an ordinal question (irrCAC's value), none for a nominal one."""

from copy import deepcopy

import pytest
from django.template.loader import render_to_string
from django.utils.html import escape

from annotation.agreement_units import p_below_text, rating_units, units_text
from annotation.gwet import DEFAULT_PREVALENCE_MARGIN, prevalence_warning
from annotation.models import LabelQuestion
from annotation.report_sections import report_sections, sections_markdown
from annotation.selectors.agreement_report import agreement_cell
from annotation.tests.published_ratings import CAC_RAW4RATERS
from annotation.tests.test_report_sections import REPORT

SCALE = [{"value": v, "label": v} for v in ("0", "1", "2")]


def test_the_three_counts_of_the_issue():
    # 11 items rated, 7 of them once: κ's chance term sees 11 items, its agreement term and α the other 4.
    units = rating_units([1] * 7 + [2, 2, 3, 2])
    assert units == {"items_rated": 11, "items_pairable": 4, "pairable_values": 9}
    assert units_text(units) == "11 items rated, 4 with ≥ 2 ratings, 9 pairable values"


def test_kappa_and_alpha_cells_carry_their_own_counts():
    # Ordinal α leaves "na" (off the scale) out; Fleiss' κ counts it as a category.
    question = LabelQuestion(key="q", level=LabelQuestion.Level.ORDINAL, choices=SCALE)
    by_item = {1: {1: "0", 2: "0"}, 2: {1: "1", 2: "na"}, 3: {1: "2", 2: "2", 3: "1"}, 4: {1: "na"}, 5: {2: "1"}}
    cell = agreement_cell(question, by_item, sorted(by_item))
    kappa, alpha = cell["fleiss_kappa"], cell["krippendorff_alpha"]
    assert kappa["units"] == {"items_rated": 5, "items_pairable": 3, "pairable_values": 7}
    assert alpha["units"] == {"items_rated": 4, "items_pairable": 2, "pairable_values": 5}
    assert kappa["units_text"] == "5 items rated, 3 with ≥ 2 ratings, 7 pairable values"
    assert alpha["units_text"] == "4 items rated, 2 with ≥ 2 ratings, 5 pairable values"

    # The Appendix-D report's agreement table states each coefficient's counts beside it.
    report = deepcopy(REPORT)
    report["stages"][0]["agreement"][0]["groups"] = [{"kind": "all", "group": "All items", "pre": cell, "post": cell}]
    agreement = next(s for s in report_sections(report) if s.title == "Agreement")
    table = next(b for b in agreement.blocks if b.kind == "table")
    texts = [c.text for c in table.rows[0].cells]
    assert any(t.endswith(f"({kappa['units_text']})") for t in texts)
    assert any(t.endswith(f"({alpha['units_text']})") for t in texts)


# 84 % of one class: the raters agree on 17 items of 20, yet κ is near 0 while AC1 is high (the κ paradox).
SKEWED = {i: {1: "no", 2: "no"} for i in range(17)} | {17: {1: "no", 2: "yes"}, 18: {1: "yes", 2: "no"}}
SKEWED[19] = {1: "no", 2: "yes"}
YES_NO = LabelQuestion(key="q", level="nominal", choices=[{"value": v, "label": v} for v in ("yes", "no")])


def test_a_cell_carries_the_prevalence_warning_of_the_judge_report_with_its_class_shares():
    cell = agreement_cell(YES_NO, SKEWED, sorted(SKEWED), n_boot=200)
    assert cell["class_shares"] == {"yes": 3 / 40, "no": 37 / 40}
    assert cell["class_shares_text"] == "no 92%, yes 8%"
    kappa, ac1 = cell["fleiss_kappa"]["value"], cell["gwet_ac1"]["value"]
    assert ac1 - kappa > DEFAULT_PREVALENCE_MARGIN == cell["prevalence_margin"]
    # The one rule, the one margin: the same words as the judge-validation report would give.
    assert cell["prevalence_warning"] == prevalence_warning(kappa, ac1, cell["class_shares"])
    assert "κ paradox" in cell["prevalence_warning"] and "no 92%, yes 8%" in cell["prevalence_warning"]
    balanced = {i: {1: v, 2: v} for i, v in enumerate(["yes", "no"] * 5)}
    assert agreement_cell(YES_NO, balanced, sorted(balanced))["prevalence_warning"] == ""

    # α's interval carries the probabilities it is under Krippendorff's minimums, in words beside it.
    alpha = cell["krippendorff_alpha"]
    assert alpha["p_below_text"] == p_below_text(alpha["p_below"])
    assert alpha["p_below_text"].startswith("P(α < 0.667) = ") and " · P(α < 0.800) = " in alpha["p_below_text"]

    # The Appendix-D report: α with P(α < minimum) in its cell, and the warning under the table, in HTML and Markdown.
    report = deepcopy(REPORT)
    report["stages"][0]["agreement"][0]["groups"] = [{"kind": "all", "group": "All items", "pre": cell, "post": cell}]
    sections = report_sections(report)
    agreement = next(s for s in sections if s.title == "Agreement")
    table, warnings = agreement.blocks
    assert alpha["p_below_text"] in table.rows[0].cells[5].text
    assert warnings.marker == "prevalence-warnings"
    assert [[span.text for span in item] for item in warnings.items] == [
        ["Stage 1, q1, All items (pre-discussion)", f": {cell['prevalence_warning']}"],
        ["Stage 1, q1, All items (post-discussion)", f": {cell['prevalence_warning']}"],
    ]
    markdown = "\n".join(sections_markdown(sections))
    assert f"- Stage 1, q1, All items (pre-discussion): {cell['prevalence_warning']}" in markdown
    assert alpha["p_below_text"] in markdown
    html = render_to_string("annotation/reports/report_body.html", {"sections": sections})
    assert "<ul data-prevalence-warnings>" in html and escape(alpha["p_below_text"]) in html

    # Without a warning the section says the rule was applied and met by no cell.
    quiet_cell = agreement_cell(YES_NO, balanced, sorted(balanced))
    report["stages"][0]["agreement"][0]["groups"] = [
        {"kind": "all", "group": "All items", "pre": quiet_cell, "post": quiet_cell}
    ]
    quiet = next(s for s in report_sections(report) if s.title == "Agreement").blocks[1]
    assert quiet.text == "No cell's Fleiss κ and Gwet's AC1 differ by more than 0.20: no κ-paradox warning."


def test_the_dashboard_shows_the_class_shares_the_warning_and_p_below():
    cell = agreement_cell(YES_NO, SKEWED, sorted(SKEWED), n_boot=200)
    row = {"question": "q", **cell}
    dash = {"agreement": [row], "prevalence_margin": DEFAULT_PREVALENCE_MARGIN, "running": False, "in_queue": 0}
    dash |= {"items": {}, "annotators": [], "disagreement_rate": None, "adjudication_rate": None}
    html = render_to_string("annotation/dashboard/_body.html", {"dash": dash, "stage": None, "poll_seconds": 5})
    assert "data-class-shares>class shares: no 92%, yes 8%<" in html
    assert f'data-prevalence-warning="q"><strong>q:</strong> {escape(cell["prevalence_warning"])}<' in html
    assert f"data-alpha-p-below>{escape(cell['krippendorff_alpha']['p_below_text'])}<" in html
    assert "differ by more than 0.20" in html


# cac.raw4raters on an ordinal 1–5 question: irrCAC's CAC(raw_4raters, weights="linear").gwet() is 0.858739136433,
# its AC1 0.775444068127 (annotation/tests/test_gwet_ac1.py).
ONE_TO_FIVE = LabelQuestion(
    key="q", level=LabelQuestion.Level.ORDINAL, choices=[{"value": str(v), "label": str(v)} for v in range(1, 6)]
)
RAW4RATERS = {
    unit: {rater: str(int(v)) for rater, v in enumerate(row) if v == v}  # NaN: not rated
    for unit, row in enumerate(CAC_RAW4RATERS)
}


def test_an_ordinal_cell_carries_ac2_with_linear_weights_equal_to_irrcac_and_a_nominal_one_none():
    cell = agreement_cell(ONE_TO_FIVE, RAW4RATERS, sorted(RAW4RATERS), n_boot=200)
    ac2 = cell["gwet_ac2_linear"]
    assert ac2["value"] == pytest.approx(0.858739136433, abs=1e-9)
    assert cell["gwet_ac1"]["value"] == pytest.approx(0.775444068127, abs=1e-9)
    assert ac2["low"] <= ac2["value"] <= ac2["high"] and ac2["n_boot"] == 200
    assert ac2["units"] == {"items_rated": 12, "items_pairable": 11, "pairable_values": 40}  # 3 + 8 × 4 + 3 + 2
    # A value off the scale ("na") cannot be weighted by distance: AC2 leaves it out, as ordinal α does.
    with_na = deepcopy(RAW4RATERS)
    with_na[0][2] = "na"
    with_na[12] = {0: "na", 1: "na"}
    off_scale = agreement_cell(ONE_TO_FIVE, with_na, sorted(with_na))
    assert off_scale["gwet_ac2_linear"]["value"] == pytest.approx(0.858739136433, abs=1e-9)
    assert off_scale["gwet_ac2_linear"]["units"] == ac2["units"]
    assert "gwet_ac2_linear" not in agreement_cell(YES_NO, SKEWED, sorted(SKEWED))

    # The Appendix-D table: AC2 beside AC1 for the ordinal question, "—" for the nominal one (HTML and Markdown).
    report = deepcopy(REPORT)
    nominal = agreement_cell(YES_NO, SKEWED, sorted(SKEWED), n_boot=200)
    report["stages"][0]["agreement"] = [
        {**report["stages"][0]["agreement"][0], "question": key, "has_post_discussion": False, "groups": groups}
        for key, groups in (
            ("ordinal", [{"kind": "all", "group": "All items", "pre": cell, "post": cell}]),
            ("nominal", [{"kind": "all", "group": "All items", "pre": nominal, "post": nominal}]),
        )
    ]
    agreement = next(s for s in report_sections(report) if s.title == "Agreement")
    table = next(b for b in agreement.blocks if b.kind == "table")
    column = table.columns.index("Gwet's AC2, linear weights (pre, ordinal questions) [95 % interval]")
    assert table.columns[column - 1] == "Gwet's AC1 (pre) [95 % interval]"
    ordinal_row, nominal_row = (r.cells for r in table.rows)
    assert ordinal_row[column].text == (
        f"0.859 [{ac2['low']:.3f}, {ac2['high']:.3f}] (12 items rated, 11 with ≥ 2 ratings, 40 pairable values)"
    )
    assert nominal_row[column].text == "—"
    markdown = "\n".join(sections_markdown(report_sections(report)))
    assert "Gwet's AC2, linear weights" in markdown and ordinal_row[column].text in markdown
