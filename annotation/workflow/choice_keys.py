"""Which keyboard key selects which choice of a label question, pure: the digit typed is the value shown.

A choice whose value is a single digit is selected by that digit (0, 1 and 2 on a 0–2 rubric; 1–5 on a
1–5 scale). Every other choice gets, in list order, the lowest digit from 1 to 9 that no choice holds yet
(1…9 on a category list); choices beyond nine have no key. Every place that stores or shows keys — the
question services and API, the label form, adjudication — derives them here, so a key given by hand
(say "1" for the value "0") can never disagree with what the button says.
"""

from __future__ import annotations

from collections.abc import Sequence

POSITION_KEYS = tuple(str(n) for n in range(1, 10))


def choice_keys(values: Sequence[str]) -> list[str]:
    """One key per value ("" for none), in the order of ``values``."""
    values = [str(v) for v in values]
    keys = [v if len(v) == 1 and v.isdigit() else "" for v in values]
    free = iter(k for k in POSITION_KEYS if k not in set(keys))
    return [key or next(free, "") for key in keys]


def choices_with_keys(choices: Sequence[dict]) -> list[dict]:
    """Copies of ``choices`` ({"value", "label", ...}) with each "key" set by `choice_keys`."""
    keys = choice_keys([choice.get("value", "") for choice in choices])
    return [{**choice, "key": key} for choice, key in zip(choices, keys, strict=True)]
