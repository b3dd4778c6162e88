"""Reads for aggregation by annotator quality: a stage's labels per question through `annotation.crowd_aggregation`.

Per question of the stage: every method of `annotation.crowd_aggregation.METHODS` (majority vote, Dawid–Skene, GLAD,
MACE) with each annotator's competence by pseudonym, the agreement of its aggregate with the adjudicated finals and with
gold (items that have a gold label), and — when asked — every item's aggregated label, posterior and soft label.

Conventions: the labels are the main phase's first answers (before any discussion, in their final version after a
revision), as the running agreement reads them — the models assume answers given independently; Unsure answers are
left out (a missing rating); the finals are the stage's settled values (unanimous, majority, discussion or reviewer).
Computed on request: a few queries per stage; each fit is kept in the default cache by what it is a function of (the
method, the values and the labels, hashed whole), so the report, the endpoint and the exports — in any web process,
the cache being shared — fit each question once until a label changes. A first fit takes seconds per question (GLAD is
the slowest: tens of seconds for 10,000 labels).
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache

from annotation.agreement import UNSURE
from annotation.crowd_aggregation import (
    METHOD_KEYS,
    METHODS,
    QUALITY_METHOD_KEYS,
    Aggregation,
    Row,
    aggregate,
    agreement_with,
)
from annotation.models import Adjudication, AnnotationProject, GoldLabel, Item, Stage
from annotation.selectors.agreement_report import annotator_pseudonyms
from annotation.selectors.stage_dashboard import stage_pre_labels

QUALITY_TITLES = ", ".join(method.title for method in METHODS if method.key in QUALITY_METHOD_KEYS)
USES = (
    "The final labels (distribution, cost per final label, each annotator against the final labels) are the "
    "adjudicated ones: unanimous, majority or the reviewer's decision under the stage's policy. Beside them, "
    f"aggregation by annotator quality ({QUALITY_TITLES}, fitted with crowd-kit to the first answers, Unsure "
    "left out) estimates each annotator's reliability and weighs their labels by it; it changes no final label."
)
"""Which aggregate the report's final labels are, and what the quality aggregates beside them are."""


CACHE_SECONDS = 24 * 3600
CACHE_VERSION = "crowd-kit-1.4"  # a new crowd-kit (or a change of method options) is a new key


def cached_aggregates(rows: list[Row], values: list[str]) -> dict[str, Aggregation]:
    """Every method's aggregate of ``rows`` (`annotation.crowd_aggregation.aggregate`), from the cache when fitted
    before."""
    facts = repr((CACHE_VERSION, sorted(rows), list(values)))
    digest = hashlib.sha256(facts.encode()).hexdigest()
    found = {}
    for key in METHOD_KEYS:
        cache_key = f"crowd-aggregation:{key}:{digest}"
        aggregation = cache.get(cache_key)
        if aggregation is None:
            aggregation = aggregate(rows, values, key)
            cache.set(cache_key, aggregation, CACHE_SECONDS)
        found[key] = aggregation
    return found


def aggregation_methods() -> list[dict]:
    """The methods as the report, API and exports name them: key, title and what the competence number is."""
    return [{"key": m.key, "title": m.title, "competence": m.competence} for m in METHODS]


def stage_aggregation(stage: Stage, *, items: bool = False, pseudonyms: dict[int, str] | None = None) -> dict:
    """The stage's aggregates per question, JSON-ready (floats at full precision); ``items`` adds every item's label,
    posterior and soft label."""
    pseudonyms = annotator_pseudonyms(stage.project) if pseudonyms is None else pseudonyms
    labels, _ = stage_pre_labels(stage)
    finals: dict[int, dict[int, str]] = {}
    for item_id, question_id, value in (
        Adjudication.objects.filter(stage=stage)
        .exclude(final_value="")
        .values_list("item_id", "question_id", "final_value")
    ):
        finals.setdefault(question_id, {})[item_id] = value
    item_ids = {item_id for by_item in labels.values() for item_id in by_item}
    gold: dict[int, dict[int, str]] = {}
    for item_id, question_id, value in GoldLabel.objects.filter(item_id__in=item_ids).values_list(
        "item_id", "question_id", "value"
    ):
        gold.setdefault(question_id, {})[item_id] = value
    external = dict(Item.objects.filter(id__in=item_ids).values_list("id", "external_id")) if items else {}
    questions = []
    for question in stage.questions.all():
        by_item = labels.get(question.pk, {})
        rows = [
            (item_id, annotator_id, value)
            for item_id, answers in by_item.items()
            for annotator_id, value in answers.items()
            if value != UNSURE
        ]
        unsure = sum(value == UNSURE for answers in by_item.values() for value in answers.values())
        found = cached_aggregates(rows, question.values)
        question_finals, question_gold = finals.get(question.pk, {}), gold.get(question.pk, {})
        methods = []
        for method in METHODS:
            aggregation = found[method.key]
            chosen = aggregation.labels()
            entry = {
                "method": method.key,
                "title": method.title,
                "competence_measure": method.competence,
                "undefined_reason": aggregation.undefined_reason,
                "annotators": [
                    {
                        "annotator": pseudonyms.get(row.annotator, f"user-{row.annotator}"),
                        "competence": row.competence,
                        "labels": row.n_labels,
                    }
                    for row in sorted(
                        aggregation.annotators, key=lambda r: pseudonyms.get(r.annotator, f"user-{r.annotator}")
                    )
                ],
                "versus_final": agreement_with(chosen, question_finals, aggregation.values),
                "versus_gold": agreement_with(chosen, question_gold, aggregation.values),
            }
            if items:
                entry["items"] = [
                    {
                        "item_id": row.item,
                        "external_id": external.get(row.item, ""),
                        "label": row.label,
                        "posterior": row.posterior,
                        "soft_label": dict(zip(aggregation.values, row.soft, strict=True)),
                        "n_labels": row.n_labels,
                        "final_value": question_finals.get(row.item),
                        "gold_value": question_gold.get(row.item),
                    }
                    for row in aggregation.items
                ]
            methods.append(entry)
        questions.append(
            {
                "question": question.key,
                "prompt": question.prompt,
                "values": list(found[METHODS[0].key].values),
                "labels": len(rows),
                "unsure_left_out": unsure,
                "items": len(by_item),
                "methods": methods,
            }
        )
    return {
        "stage": stage.pk,
        "project": stage.project_id,
        "name": stage.name,
        "order": stage.order,
        "questions": questions,
    }


def project_aggregation(project: AnnotationProject, *, items: bool = False) -> list[dict]:
    """`stage_aggregation` of every stage of the project, in stage order."""
    pseudonyms = annotator_pseudonyms(project)
    return [
        stage_aggregation(stage, items=items, pseudonyms=pseudonyms)
        for stage in project.stages.order_by("order").prefetch_related("questions")
    ]
