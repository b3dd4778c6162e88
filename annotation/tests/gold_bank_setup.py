"""A gold bank as the demo's: 4 gold items per category × subject (5 × 3 = 60), gold for three questions, and stages.

Each stage asks the questions it is given; the items carry gold for all three, so stages asking different
questions can train on the same items."""

from __future__ import annotations

from types import SimpleNamespace

from annotation.models import GoldLabel, Item
from annotation.services.projects import project_create, question_create, stage_create
from annotation.services.training import guideline_publish

CATEGORIES = ["C1", "C2", "C3", "C4", "C5"]
SUBJECTS = ["maths", "physics", "chemistry"]
PER_CELL = 4
YES_NO = [{"value": "yes", "label": "Yes", "key": "1"}, {"value": "no", "label": "No", "key": "2"}]


def build_gold_bank(*, name: str = "Gold bank") -> SimpleNamespace:
    project = project_create(name=name, categories=CATEGORIES, subjects=SUBJECTS)
    questions = [
        question_create(project=project, key=f"q{n}", prompt=f"Question {n}?", choices=YES_NO) for n in (1, 2, 3)
    ]
    items = []
    for category in CATEGORIES:
        for subject in SUBJECTS:
            for _ in range(PER_CELL):
                n = len(items)
                items.append(
                    Item(
                        project=project,
                        external_id=f"gold-{n:03d}",
                        payload={"text": f"Gold item {n}"},
                        category=category,
                        subject=subject,
                    )
                )
    items = Item.objects.bulk_create(items)
    gold = {item.pk: "yes" if n % 2 == 0 else "no" for n, item in enumerate(items)}
    GoldLabel.objects.bulk_create(
        GoldLabel(item=item, question=question, value=gold[item.pk], rationale=f"GOLD-{item.external_id}")
        for item in items
        for question in questions
    )
    return SimpleNamespace(project=project, questions=questions, items=items, gold=gold)


def add_stage(bank: SimpleNamespace, *, name: str, questions, pilot_size: int = 30, qualification_size: int = 10):
    stage = stage_create(
        project=bank.project,
        name=name,
        questions=list(questions),
        pilot_size=pilot_size,
        qualification_size=qualification_size,
        qualification_min_correct=min(8, qualification_size),
    )
    guideline_publish(stage=stage, text=f"# {name}\n\nAnswer the question.")
    return stage
