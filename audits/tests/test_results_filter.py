"""audits.results_filter: each criterion narrows the rows; none keeps all."""

from audits.results_filter import RowFilter, choices

ROWS = [
    {"tutor": 1, "domain": "mathematics", "dimension": "gender", "metric": "actionability", "violation": True},
    {"tutor": 1, "domain": "science", "dimension": "ses", "metric": "actionability", "violation": False},
    {"tutor": 2, "domain": "mathematics", "dimension": "gender", "metric": "corrective_tone", "violation": False},
]


def test_no_criterion_keeps_every_row():
    assert RowFilter().apply(ROWS) == ROWS and not RowFilter().active


def test_each_criterion_narrows():
    assert RowFilter(tutor=2).apply(ROWS) == [ROWS[2]]
    assert RowFilter(domain="mathematics", dimension="gender").apply(ROWS) == [ROWS[0], ROWS[2]]
    assert RowFilter(metric="actionability", violations_only=True).apply(ROWS) == [ROWS[0]]
    assert RowFilter(violations_only=True).active


def test_menu_choices_are_the_distinct_values():
    assert choices(ROWS, "dimension") == ["gender", "ses"]
