"""One colour rule (audits.effect_tone) in every table and heatmap: a CI spanning 0 is grey, r's sign sets the hue."""

import math
import re

from django.contrib.auth.models import AnonymousUser
from django.template.loader import render_to_string
from django.test import RequestFactory

from audits.effect_tone import NEGATIVE, POSITIVE, SIZE, SPANS_ZERO, UNDEFINED, effect_tone, tone_fill
from audits.fairness import BackboneChange
from audits.svg_heatmap import HeatCell, heatmap_svg

# (r, CI low, CI high) -> the tone every table and heatmap must show.
CASES = {
    "up": ((0.30, 0.10, 0.45), POSITIVE),
    "down": ((-0.30, -0.45, -0.10), NEGATIVE),
    "spans": ((0.30, -0.05, 0.50), SPANS_ZERO),
    "spans-down": ((-0.30, -0.50, 0.05), SPANS_ZERO),
}


def test_the_rule():
    for (r, low, high), tone in CASES.values():
        assert effect_tone(r, low, high) == tone
    assert effect_tone(0.3) == SPANS_ZERO  # a signed number without a CI is not shown to differ from 0
    assert effect_tone(math.nan, 0.1, 0.2) == UNDEFINED
    assert effect_tone(0.3, directed=False) == SIZE
    # Intensity by |r|, hue by sign: equal sizes of opposite signs differ in colour, not in depth.
    assert tone_fill(POSITIVE, 0.3) != tone_fill(NEGATIVE, -0.3)
    assert tone_fill(POSITIVE, 0.1) != tone_fill(POSITIVE, 0.4)
    assert tone_fill(SPANS_ZERO, 0.3) == tone_fill(SPANS_ZERO, 0.05)


def test_heatmap_cells_take_the_rule():
    cells = {
        (key, "m"): HeatCell(value=r, text=key, title=key, tone=effect_tone(r, low, high), data={"key": key})
        for key, ((r, low, high), _) in CASES.items()
    }
    svg = heatmap_svg(rows=list(CASES), columns=["m"], cells=cells, caption="c")
    found = {
        key: (tone, fill)
        for tone, key, fill in re.findall(
            r'<g class="cell ([a-z-]+)"[^>]*data-key="([a-z-]+)"><title>[^<]*</title><rect[^>]*fill="(#[0-9a-f]+)"', svg
        )
    }
    assert set(found) == set(CASES)
    for key, (_, tone) in CASES.items():
        assert found[key][0] == tone
    assert found["spans"][1] == found["spans-down"][1]  # grey, whatever the sign
    assert len({found[key][1] for key in ("up", "down", "spans")}) == 3


def _contrast_row(key, r, low, high):
    return {
        "tutor_name": "T",
        "domain": "d",
        "kind": "explicit",
        "dimension": key,
        "level_a": "a",
        "level_b": "b",
        "metric": "m",
        "r": r,
        "ci_low": low,
        "ci_high": high,
        "mean_diff": math.nan,
        "share_b_higher": math.nan,
        "n": 20,
        "p_exact": 0.01,
        "p_normal": 0.02,
        "p_adjusted": 0.03,
    }


def test_contrast_table_cells_take_the_rule():
    rows = [_contrast_row(key, *numbers) for key, (numbers, _) in CASES.items()]
    html = render_to_string("audits/results/_contrast_rows.html", {"rows": rows})
    shown = re.findall(r'<td>explicit · ([a-z-]+): a → b</td>.*?<td class="num ([a-z-]+)" data-r=', html, re.S)
    assert dict(shown) == {key: tone for key, (_, tone) in CASES.items()}


def test_compare_change_takes_the_rule():
    changes = [
        BackboneChange("d", "explicit", "within", key, 0.1, 0.1 + r, r, low, high)
        for key, ((r, low, high), _) in CASES.items()
    ]
    request = RequestFactory().get("/")
    request.user, request.session = AnonymousUser(), {}
    html = render_to_string(
        "audits/results/compare.html", {"changes": changes, "left_name": "L", "right_name": "R"}, request=request
    )
    shown = re.findall(
        r"<td>([a-z-]+)</td><td class=\"num\">[^<]*</td><td class=\"num\">[^<]*</td>"
        r"<td class=\"num ([a-z-]+)\" data-change>",
        html,
    )
    assert dict(shown) == {key: tone for key, (_, tone) in CASES.items()}
