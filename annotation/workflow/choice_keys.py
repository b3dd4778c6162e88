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


def keys_hint(questions: Sequence[dict]) -> str:
    """The keys a label form's questions (as `selectors.label_form` gives them) really take, in words: the digits of
    their choices, u for Unsure only where a question offers it, n for Not applicable, Enter."""
    keys = list(dict.fromkeys(c.get("key", "") for q in questions for c in q.get("choices", ()) if c.get("key")))
    digits = [k for k in keys if k.isdigit()]
    parts = []
    if digits:
        ints = sorted(int(k) for k in digits)
        run = ints == list(range(ints[0], ints[-1] + 1)) and len(ints) > 2
        shown = f"{ints[0]}–{ints[-1]}" if run else ", ".join(str(k) for k in ints)
        parts.append(f"number keys ({shown}) choose")
    if any(q.get("allow_unsure") for q in questions):
        parts.append("u is Unsure")
    if "n" in keys:
        parts.append("n is Not applicable")
    parts.append("Enter submits")
    return ", ".join(parts)
