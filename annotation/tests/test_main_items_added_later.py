"""Items imported after main labelling started are handed out like the first ones: they join the open stage
at once (with every strategy), are labelled to the overlap by distinct annotators, and an annotator who
had found nothing left gets them. Runs on the database of the run (SQLite by default, PostgreSQL in CI)."""

import json
from collections import Counter

import pytest

from annotation.models import Assignment, MainItem, Phase
from annotation.services.importers import items_import
from annotation.services.labelling import label_next, main_label_submit, stage_labelling_configure

from .main_setup import answers, build_main_stage, pass_gate

pytestmark = pytest.mark.django_db


def _jsonl(*ids: str) -> str:
    return "\n".join(json.dumps({"id": i, "text": f"Late item {i}", "subject": "maths", "category": "A"}) for i in ids)


def _label_one(s, user) -> int | None:
    assignment = label_next(annotator=user, stage=s.stage)
    if assignment is None:
        return None
    main_label_submit(annotator=user, stage=s.stage, item=assignment.item, answers=answers(s, "yes"), seconds=3)
    return assignment.item_id


@pytest.mark.parametrize("strategy", ["order", "random", "balanced"])
def test_items_imported_after_labelling_started_are_labelled_to_the_overlap(make_user, strategy):
    s = build_main_stage(items=2, overlap=2)
    stage_labelling_configure(stage=s.stage, strategy=strategy, seed=3)
    users = [make_user("annotator") for _ in range(3)]
    for user in users:
        pass_gate(s.stage, user)
    # Main labelling starts; the first annotator labels both items, then finds nothing left.
    assert _label_one(s, users[0]) is not None and _label_one(s, users[0]) is not None
    assert label_next(annotator=users[0], stage=s.stage) is None

    report = items_import(project=s.project, content=_jsonl("late-1", "late-2", "late-3"), fmt="jsonl")
    assert report.created == 3 and report.main_items_added == {s.stage.pk: 3}
    late = set(s.project.items.filter(external_id__startswith="late-").values_list("id", flat=True))
    assert set(MainItem.objects.filter(stage=s.stage, item_id__in=late).values_list("item_id", flat=True)) == late

    for user in users:  # everyone labels until nothing is left
        while _label_one(s, user) is not None:
            pass
    per_item = Counter(
        Assignment.objects.filter(stage=s.stage, phase=Phase.MAIN, submitted_at__isnull=False).values_list(
            "item_id", flat=True
        )
    )
    assert per_item == {item_id: 2 for item_id in [*(item.pk for item in s.items), *late]}
    assert not MainItem.objects.filter(stage=s.stage, has_free_slot=True).exists()


def test_an_annotator_who_found_nothing_left_gets_items_that_joined_without_an_import(make_user):
    """Items created outside the importer (a script, the API) are found when the stage looks used up."""
    s = build_main_stage(items=1, overlap=2)
    user = make_user("annotator")
    pass_gate(s.stage, user)
    assert _label_one(s, user) is not None and label_next(annotator=user, stage=s.stage) is None
    extra = s.project.items.create(external_id="made-later", payload={"text": "Made later"}, subject="maths")
    assert label_next(annotator=user, stage=s.stage).item_id == extra.pk
