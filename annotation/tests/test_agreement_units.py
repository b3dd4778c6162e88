"""Every agreement cell states its own counts (items rated, items with ≥ 2 ratings, pairable values), κ apart from α."""

from copy import deepcopy

from annotation.agreement_units import rating_units, units_text
from annotation.models import LabelQuestion
from annotation.report_sections import report_sections
from annotation.selectors.agreement_report import agreement_cell
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
