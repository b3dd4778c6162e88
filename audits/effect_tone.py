"""One colour rule for every results table, heatmap and plot: grey where the CI spans 0, else a hue by sign."""

from __future__ import annotations

import math

# A tone is a CSS class (tables) and a hue (heatmaps, plots).
POSITIVE = "tone-positive"  # the number is above 0 and so is its whole CI: red
NEGATIVE = "tone-negative"  # below 0, and so is its whole CI: blue
SPANS_ZERO = "tone-spans-zero"  # its CI includes 0 (or the number is 0): grey
SIZE = "tone-size"  # a size without a direction (a mean of |r|): purple
UNDEFINED = "tone-undefined"  # no number

# |value| at which a heatmap's colour is darkest; the paper's effects are mostly below 0.3.
COLOUR_CEILING = 0.5
_DARKEST = {POSITIVE: (179, 24, 24), NEGATIVE: (29, 78, 216), SIZE: (109, 40, 217)}
SPANS_ZERO_FILL = "#e3e6eb"
UNDEFINED_FILL = "#f4f5f7"
# Solid ink (table text, plot dots and whiskers) of each tone.
INK = {POSITIVE: "#b42318", NEGATIVE: "#1d4ed8", SPANS_ZERO: "#5b6475", SIZE: "#6d28d9", UNDEFINED: "#5b6475"}

LEGEND = (
    "Colour: red where the number (r, a difference, a change) is positive and its CI lies wholly above 0, blue "
    f"where it is negative and its CI lies wholly below 0, deeper with its size up to ≥ {COLOUR_CEILING:g}; grey "
    "where the CI spans 0 or there is none. Cells that average |r| have no direction: purple, deeper with the mean."
)


def _finite(value: float | None) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def effect_tone(
    value: float | None, ci_low: float | None = None, ci_high: float | None = None, *, directed: bool = True
) -> str:
    """The tone of a number: grey when its CI spans 0, else by its sign; ``directed=False`` for a size (mean |r|).
    A signed number without a CI is not shown to differ from 0: grey too."""
    if not _finite(value):
        return UNDEFINED
    if not directed:
        return SIZE
    if not (_finite(ci_low) and _finite(ci_high)) or ci_low <= 0 <= ci_high:
        return SPANS_ZERO
    if value > 0:
        return POSITIVE
    if value < 0:
        return NEGATIVE
    return SPANS_ZERO


def tone_share(value: float | None) -> float:
    """How deep the colour is: 0 (white) to 1 (the hue's darkest) as |value| goes from 0 to COLOUR_CEILING."""
    return min(1.0, abs(value) / COLOUR_CEILING) if _finite(value) else 0.0


def tone_fill(tone: str, value: float | None) -> str:
    """A heatmap cell's fill: white to the tone's hue by |value|; grey for a CI spanning 0."""
    if tone not in _DARKEST:
        return SPANS_ZERO_FILL if tone == SPANS_ZERO else UNDEFINED_FILL
    share = tone_share(value)
    red, green, blue = (round(255 + (end - 255) * share) for end in _DARKEST[tone])
    return f"#{red:02x}{green:02x}{blue:02x}"


def tone_text_fill(tone: str, value: float | None) -> str:
    """The text colour on a cell of that fill: white on the darker shades."""
    return "#ffffff" if tone in _DARKEST and tone_share(value) > 0.6 else "#1d2330"
