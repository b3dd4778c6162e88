"""The `num` filter: undefined values read "—" on every page, never "nan"."""

import math

from audits.templatetags.numbers import num


def test_undefined_values_read_as_a_dash():
    assert [num(v) for v in (None, "", math.nan, "nan", "x")] == ["—"] * 5


def test_numbers_rounded_to_the_places_asked():
    assert num(0.123456) == "0.123" and num(-0.5, 2) == "-0.50" and num(2) == "2.000"


def test_a_question_selection_in_words():
    from audits.design_launch import selection_text

    assert selection_text({"domains": ["mathematics", "science"], "seed": 0, "count": 5}) == (
        "at most 5 questions per domain in mathematics, science, drawn with seed 0"
    )
    assert selection_text({"domains": [], "fraction": 0.25, "seed": 3, "per_domain": {"science": 0.5}}) == (
        "25% of the questions per domain in every domain, drawn with seed 3 (science: 50%)"
    )
    assert selection_text({}) == "the questions chosen by hand"


def test_long_heatmap_column_labels_wrap_and_keep_their_full_text():
    from audits.svg_heatmap import HEADER_LINES, _wrap_label, heatmap_svg

    label = "Simulated tutor B (planted bias)"
    svg = heatmap_svg(rows=["m"], columns=[label, "short"], cells={}, caption="c")
    assert f"<title>{label}</title>" in svg  # the whole label as the tooltip
    spans = svg.split(f"<title>{label}</title>", 1)[1].split("</text>", 1)[0]
    assert spans.count("<tspan") == 2 and "(planted bias)" in spans  # two lines, nothing cut
    lines = _wrap_label("word " * 40, 10)
    assert len(lines) == HEADER_LINES and lines[-1].endswith("…") and all(len(line) <= 10 for line in lines)
