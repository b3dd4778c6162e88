"""SciQ importer (Welbl et al. 2017): physics and chemistry items chosen by the keyword-seeded classifier.

Input: a JSON list (or JSON lines) of objects with `question`, `distractor1..3`, `correct_answer` and
`support` (support may be empty or absent). Every record is validated first; then the domain classifier
runs over all items, an item is kept for physics or chemistry when its predicted probability is at least
the threshold (default 0.65), and at most `per_domain_max` (default 500) per domain are sampled with a fixed
seed. SciQ has no ids, so an item's id is a hash of its question and answer. Funnel:
items in → distinct → predicted physics/chemistry → probability ≥ threshold → sampled (kept).
Pure: no Django. The classifier needs every item at once, so validated items are held in memory.
"""

from dataclasses import dataclass, field

import numpy as np

from .domain_classifier import KEPT_DOMAINS, ClassifierParams, classify_domains
from .reading import FileFacts, Opener, iter_json_list, iter_jsonl
from .records import (
    FunnelStep,
    ImportFileError,
    ImportScan,
    ProgressCallback,
    QuestionData,
    content_hash,
    no_progress,
    optional_text,
    require_answer,
    require_object,
    require_text,
)

SOURCE = "sciq"
DISTRACTORS = ("distractor1", "distractor2", "distractor3")


@dataclass(frozen=True)
class SciQParams:
    classifier: ClassifierParams = field(default_factory=ClassifierParams)
    per_domain_max: int = 500
    seed: int = 0

    def as_dict(self) -> dict:
        return {"per_domain_max": self.per_domain_max, "seed": self.seed, "classifier": self.classifier.as_dict()}


def parse_item(location: str, raw) -> QuestionData:
    record = require_object(raw, location=location)
    question = require_text(record, "question", location=location)
    answer = require_answer(record, "correct_answer", location=location)
    distractors = [require_text(record, name, location=location, allow_empty=True) for name in DISTRACTORS]
    support = optional_text(record, "support", location=location)
    return QuestionData(
        domain="",
        source=SOURCE,
        source_id=content_hash(question, answer)[:24],
        text=question,
        answer=answer,
        # Sorted, so the position of the correct option tells the tutor nothing.
        choices=sorted([answer, *distractors], key=str.lower),
        support=support,
        metadata={"distractors": distractors},
    )


def classifier_text(item: QuestionData) -> str:
    return f"{item.text} {item.answer} {item.support}"


def sciq_scan(
    opener: Opener,
    facts: FileFacts,
    params: SciQParams | None = None,
    progress: ProgressCallback = no_progress,
    *,
    record_limit: int,
) -> ImportScan:
    params = params or SciQParams()
    if facts.first_char == "[":
        records = iter_json_list(opener, progress, record_limit=record_limit)
    elif facts.first_char == "{":
        records = iter_jsonl(opener, progress, record_limit=record_limit)
    else:
        raise ImportFileError(f"expected a JSON list or JSON lines of objects, found '{facts.first_char}' first")

    items: list[QuestionData] = []
    seen: set[str] = set()
    items_in = 0
    for location, raw in records:
        items_in += 1
        item = parse_item(location, raw)
        if item.source_id in seen:
            continue
        seen.add(item.source_id)
        items.append(item)
    if not items_in:
        raise ImportFileError("the file contains no items")

    progress("classifying", 0, len(items))
    try:
        classification = classify_domains([classifier_text(item) for item in items], params.classifier)
    except ValueError as error:
        raise ImportFileError(str(error)) from None
    progress("classifying", len(items), len(items))

    predicted = classification.predicted
    confidence = classification.confidence
    threshold = params.classifier.threshold
    candidates: dict[str, list[int]] = {domain: [] for domain in KEPT_DOMAINS}
    predicted_counts = {domain: 0 for domain in KEPT_DOMAINS}
    for index, domain in enumerate(predicted):
        if domain in candidates:
            predicted_counts[domain] += 1
            if confidence[index] >= threshold:
                candidates[domain].append(index)

    rng = np.random.default_rng(params.seed)
    kept_indices: list[int] = []
    sampled_counts = {}
    for domain in KEPT_DOMAINS:
        chosen = candidates[domain]
        if len(chosen) > params.per_domain_max:
            picks = rng.choice(len(chosen), size=params.per_domain_max, replace=False)
            chosen = [chosen[i] for i in sorted(picks)]
        sampled_counts[domain] = len(chosen)
        kept_indices.extend(chosen)
    kept_indices.sort()

    kept: list[QuestionData] = []
    for index in kept_indices:
        item = items[index]
        item.domain = predicted[index]
        item.classifier_confidence = round(float(confidence[index]), 6)
        kept.append(item)

    funnel = [
        FunnelStep("items in", items_in, {"seed-labelled by keywords": classification.seed_counts()}),
        FunnelStep("distinct items", len(items), {"duplicates dropped": items_in - len(items)}),
        FunnelStep("predicted physics or chemistry", sum(predicted_counts.values()), predicted_counts),
        FunnelStep(
            f"probability ≥ {threshold:g}",
            sum(len(c) for c in candidates.values()),
            {domain: len(c) for domain, c in candidates.items()},
        ),
        FunnelStep(f"sampled (≤ {params.per_domain_max} per domain, seed {params.seed})", len(kept), sampled_counts),
    ]
    return ImportScan(funnel=funnel, kept_count=len(kept), questions=lambda: iter(kept), parameters=params.as_dict())
