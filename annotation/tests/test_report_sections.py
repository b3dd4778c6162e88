"""The Appendix-D report's sections (annotation.report_sections), without a database: one stage's data in,
every section in reading order with its numbers rounded for display, the markers the pages find cells by,
and the Markdown written from the same sections."""

from __future__ import annotations

from annotation.report_sections import BulletList, Paragraph, Table, fmt, money, report_sections, sections_markdown


def _stat(value, n):
    # As the selector gives it: every coefficient with its own three counts (here 2 ratings per pairable item).
    units = {"items_rated": n, "items_pairable": n, "pairable_values": 2 * n}
    return {
        "value": value,
        "n_units": n,
        "undefined_reason": None if value is not None else "one category",
        "units": units,
    }


def _cell(kappa, alpha, items):
    return {"fleiss_kappa": _stat(kappa, items), "krippendorff_alpha": _stat(alpha, items), "items": items}


def _with_interval(result, low, high, rated, pairable, values):
    units = {"items_rated": rated, "items_pairable": pairable, "pairable_values": values}
    return {**result, "low": low, "high": high, "confidence": 0.95, "units": units}


REPORT = {
    "project": {"id": 1, "name": "P", "kind": "generic", "preset": ""},
    "generated_at": "2026-01-01T00:00:00+00:00",
    "items": 6,
    "conventions": ["Statistics in the JSON report are exact floats."],
    "stages": [
        {
            "id": 1,
            "order": 1,
            "name": "Stage 1",
            "workforce": {
                "pool": "",
                "recruits_per_subject": 3,
                "recruited": 2,
                "passed": 2,
                "pay_rate_per_hour": "10.00",
                "currency": "USD",
                "overlap": 2,
                "resolution": "Majority",
            },
            "agreement": [
                {
                    "question": "q1",
                    "has_post_discussion": True,
                    "groups": [
                        {
                            "kind": "all",
                            "group": "All items",
                            "pre": {
                                **_cell(0.24999999999999986, 0.3125, 6),
                                "fleiss_kappa": _with_interval(_stat(0.24999999999999986, 6), 0.1, 0.4, 7, 6, 14),
                            },
                            "post": _cell(None, None, 6),
                        },
                        {
                            "kind": "subject",
                            "group": "maths",
                            "pre": _cell(1 / 3, 4 / 9, 3),
                            "post": _cell(1.0, 1.0, 3),
                        },
                    ],
                }
            ],
            "annotators": [{"annotator": "A01", "compared": 6, "agreement": 5 / 6}],
            "adjudication": {
                "policy": "Majority",
                "items_complete": 4321,
                "waiting": {"discussion": 1, "senior_review": 0, "reviewer_queue": 2},
                "by_method": {"unanimous": 4, "majority": 0, "discussion": 0, "senior": 2},
                "headline": "2/6 = 33.3% no majority",
            },
            "distribution": [
                {
                    "question": "q1",
                    "values": [
                        {"label": "Yes", "count": 4, "share": 4 / 7},
                        {"label": "No", "count": 0, "share": None},
                    ],
                }
            ],
            "volume": {
                "labels": 12345,
                "by_phase": {"pilot": 1, "qualification": 2, "main": 12},
                "post_discussion": 0,
                "revised_labels": 1,
                "revisions": 3,
                "items_labelled": 12,
                "annotators": 2,
            },
            "time_and_cost": {
                "hours": 0.2056666666666667,
                "median_minutes_per_item": {"Single turn": 1.0283333333333333},
                "pay_rate_per_hour": "10.00",
                "currency": "USD",
                "spend": "2.06",
                "final_labels": 6,
                "cost_per_final_label": "0.3433333333333333333333333333",
            },
        }
    ],
    "aggregation": {
        "uses": "The final labels are the adjudicated ones.",
        "methods": [
            {"key": "majority_vote", "title": "Majority vote", "competence": "share agreeing with the majority"},
            {"key": "mace", "title": "MACE", "competence": "probability of not spamming"},
        ],
        "stages": [
            {
                "name": "Stage 1",
                "questions": [
                    {
                        "question": "q1",
                        "items": 6,
                        "methods": [
                            {
                                "method": "majority_vote",
                                "annotators": [{"annotator": "A01", "competence": 5 / 6, "labels": 6}],
                                "versus_final": {"n_items": 6, "accuracy": 5 / 6, "cohen_kappa": 2 / 3},
                                "versus_gold": {"n_items": 0, "accuracy": None, "cohen_kappa": None},
                            },
                            {
                                "method": "mace",
                                "annotators": [
                                    {"annotator": "A02", "competence": 0.25, "labels": 6},
                                    {"annotator": "A01", "competence": 0.9876, "labels": 6},
                                ],
                                "versus_final": {"n_items": 6, "accuracy": 1.0, "cohen_kappa": 1.0},
                                "versus_gold": {"n_items": 2, "accuracy": 0.5, "cohen_kappa": None},
                            },
                        ],
                    }
                ],
            }
        ],
    },
    "gate": [
        {
            "stage": "Stage 1",
            "pilot_size": 30,
            "pilot_threshold": 0.8,
            "qualification": "≥ 8 of 10 correct",
            "unsure_rule": "Strict",
            "rules": {"pilot": "Pilot rule.", "qualification": "Qualification rule."},
            "main_items": "All the project's items.",
            "recruited": 2,
            "passed": 2,
            "failed": 0,
            "replaced": 0,
            "pass_rate_text": "2 of 2 (100.0%)",
        }
    ],
    "crowd": [{"stage": "Stage 1", "recruits": []}],
    "conflicts": {
        "summary": "1 conflict: 1 removed, 0 retained",
        "rows": [
            {
                "item": "i-0",
                "earlier_stage": "A",
                "later_stage": "B",
                "earlier_value": "yes",
                "later_value": "a|b",
                "disposition": "Removed",
                "note": "two\nlines",
            }
        ],
    },
    "totals": {
        "hours": 0.2056666666666667,
        "spend": "2.06",
        "final_labels": 6,
        "cost_per_final_label": "0.3433333333333333333333333333",
    },
}


def _table(section) -> Table:
    return next(block for block in section.blocks if isinstance(block, Table))


def _texts(table: Table) -> list[list[str]]:
    return [[cell.text for cell in row.cells] for row in table.rows]


def test_sections_in_reading_order():
    titles = [(s.level, s.title) for s in report_sections(REPORT)]
    assert titles == [
        (2, "Workforce and pay"),
        (3, "Crowd recruits of Stage 1"),
        (2, "Training and gate"),
        (2, "Adjudication"),
        (2, "Agreement"),
        (3, "Each annotator against the final labels"),
        (2, "Aggregation by annotator quality"),
        (3, "Each annotator's estimated competence"),
        (2, "Cross-stage conflicts"),
        (2, "Label distribution after adjudication"),
        (2, "Volume"),
        (2, "Hours and spend"),
        (2, "Conventions"),
    ]


def test_numbers_are_rounded_for_display_and_undefined_is_said():
    sections = {s.title: s for s in report_sections(REPORT)}
    agreement = _table(sections["Agreement"])
    assert agreement.marker == "agreement"
    assert _texts(agreement) == [
        [
            "Stage 1",
            "q1",
            "All items",
            "6",
            "0.250 [0.100, 0.400] (7 items rated, 6 with ≥ 2 ratings, 14 pairable values)",
            "0.312 (6 items rated, 6 with ≥ 2 ratings, 12 pairable values)",
            "—",
            "—",
            "undefined (6 items rated, 6 with ≥ 2 ratings, 12 pairable values)",
            "undefined (6 items rated, 6 with ≥ 2 ratings, 12 pairable values)",
        ],
        [
            "Stage 1",
            "q1",
            "subject: maths",
            "3",
            "0.333 (3 items rated, 3 with ≥ 2 ratings, 6 pairable values)",
            "0.444 (3 items rated, 3 with ≥ 2 ratings, 6 pairable values)",
            "—",
            "—",
            "1.000 (3 items rated, 3 with ≥ 2 ratings, 6 pairable values)",
            "1.000 (3 items rated, 3 with ≥ 2 ratings, 6 pairable values)",
        ],
    ]
    assert [cell.marker for cell in agreement.rows[0].cells][4] == "kappa-pre"
    assert _texts(_table(sections["Each annotator against the final labels"])) == [["Stage 1", "A01", "6", "0.833"]]
    assert _texts(_table(sections["Label distribution after adjudication"])) == [
        ["Stage 1", "q1", "Yes", "4", "0.571"],
        ["Stage 1", "q1", "No", "0", "undefined"],
    ]
    hours = _texts(_table(sections["Hours and spend"]))
    assert hours[0] == ["Stage 1", "0.21", "Single turn: 1.03", "10.00 USD", "2.06", "6", "0.3433"]
    assert hours[1] == ["Total", "0.21", "", "", "2.06", "6", "0.3433"]
    assert _table(sections["Hours and spend"]).rows[1].total


def test_adjudication_gate_volume_and_crowd():
    sections = {s.title: s for s in report_sections(REPORT)}
    adjudication = _table(sections["Adjudication"]).rows[0]
    assert (adjudication.marker, adjudication.marker_value) == ("adjudication-stage", "1")
    assert [c.text for c in adjudication.cells] == [
        "Stage 1",
        "Majority",
        "4,321",
        "4",
        "0",
        "0",
        "2",
        "3",
        "2/6 = 33.3% no majority",
    ]
    assert adjudication.cells[-1].marker == "rate"
    assert _texts(_table(sections["Training and gate"]))[0][2] == "80%"
    rules = next(b for b in sections["Training and gate"].blocks if isinstance(b, BulletList))
    assert rules.marker == "gate-rules"
    assert [s.text for s in rules.items[0]] == [
        "Stage 1",
        ": Pilot rule. Qualification rule. Main items: ",
        "All the project's items.",
    ]
    assert rules.items[0][0].strong and rules.items[0][2].marker == "main-items"
    assert _texts(_table(sections["Volume"]))[0][1:7] == ["12,345", "1", "2", "12", "0", "1 (3 earlier versions kept)"]
    crowd = _table(sections["Crowd recruits of Stage 1"])
    assert crowd.rows == () and crowd.empty == "No recruit yet." and crowd.marker == "crowd-recruits"
    summary = sections["Cross-stage conflicts"].blocks[0]
    assert isinstance(summary, Paragraph) and summary.marker == "conflicts"


def test_aggregation_states_the_final_labels_and_shows_the_quality_aggregates_beside():
    sections = {s.title: s for s in report_sections(REPORT)}
    uses, table = sections["Aggregation by annotator quality"].blocks
    assert isinstance(uses, Paragraph) and uses.marker == "aggregation-uses"
    assert uses.text == "The final labels are the adjudicated ones."
    assert table.marker == "aggregation"
    assert [row.marker_value for row in table.rows] == ["majority_vote", "mace"]
    assert _texts(table) == [
        ["Stage 1", "q1", "Majority vote", "6", "0.833 (n = 6)", "0.667 (n = 6)", "—", "—"],
        ["Stage 1", "q1", "MACE", "6", "1.000 (n = 6)", "1.000 (n = 6)", "0.500 (n = 2)", "undefined (n = 2)"],
    ]
    competence = sections["Each annotator's estimated competence"]
    what = next(b for b in competence.blocks if isinstance(b, BulletList))
    assert [[s.text for s in item] for item in what.items][1] == ["MACE", ": probability of not spamming."]
    table = _table(competence)
    assert table.columns == ("Stage", "Question", "Annotator", "Majority vote", "MACE")
    assert _texts(table) == [["Stage 1", "q1", "A01", "0.833", "0.988"], ["Stage 1", "q1", "A02", "—", "0.250"]]


def test_markdown_of_the_sections():
    markdown = "\n".join(sections_markdown(report_sections(REPORT)))
    assert "## Agreement\n\n| Stage | Question | Group | Items | Fleiss κ (pre) [95 % interval] |" in markdown
    assert "### Each annotator against the final labels" in markdown
    assert "| i-0 | A | yes | B | a\\|b | Removed | two lines |" in markdown  # pipes escaped, one line
    assert "- Stage 1: Pilot rule. Qualification rule. Main items: All the project's items." in markdown
    assert "No recruit yet." in markdown
    assert "- Statistics in the JSON report are exact floats." in markdown
    assert repr(0.24999999999999986) not in markdown


def test_display_rounding():
    assert fmt(None) == "undefined" and fmt(1 / 3) == "0.333" and fmt(2.0, 2) == "2.00"
    assert money(None) == "—" and money("0.34335") == "0.3434" and money("2.5", 2) == "2.50"
