"""Gold isolation (pure): what a text every annotator reads would give away about the training items.

Such a text is a guideline version or a pinned norming clarification; the training items are the pilot and qualification
items.

Gold of a training item reaches an annotator only as feedback on their own submitted pilot labels
(`selectors.training.pilot_feedback`, the norming thread of an item they labelled). A guideline is read
before the pilot by every later recruit, so it must not name a training item (its id), quote one (its
text) or carry its gold rationale; `text_leaks` finds each of these, for the service to refuse.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# Shorter strings match ordinary words or numbers too often to be told apart from a leak.
MIN_ID_LENGTH = 3
MIN_QUOTE_LENGTH = 20


@dataclass(frozen=True)
class TrainingSecrets:
    """What identifies training items: their external ids, texts, and gold rationales."""

    item_ids: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    rationales: tuple[str, ...] = field(default_factory=tuple)


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())


def text_leaks(text: str, secrets: TrainingSecrets) -> list[str]:
    """Each training item id named, and each item text or gold rationale quoted, in ``text``."""
    found = []
    for item_id in sorted(set(secrets.item_ids)):
        if len(item_id) >= MIN_ID_LENGTH and re.search(rf"(?<![\w-]){re.escape(item_id)}(?![\w-])", text, re.I):
            found.append(f"names the training item {item_id}")
    flat = _normalised(text)
    for kind, quotes in (("the text of a training item", secrets.texts), ("a gold rationale", secrets.rationales)):
        if any(len(q := _normalised(quote)) >= MIN_QUOTE_LENGTH and q in flat for quote in quotes):
            found.append(f"quotes {kind}")
    return found


def secrets_from(rows: Iterable[tuple[str, str, str]]) -> TrainingSecrets:
    """From (external id, item text, gold rationale) rows, one per training item and question."""
    ids, texts, rationales = set(), set(), set()
    for item_id, text, rationale in rows:
        ids.add(item_id or "")
        texts.add(text or "")
        rationales.add(rationale or "")
    return TrainingSecrets(item_ids=tuple(ids), texts=tuple(texts), rationales=tuple(rationales))
