"""Stage item flow: in a three-stage project stage 2 takes the items stage 1 found
valid, items removed for a cross-stage conflict leave stage 3 (also once it is open), training items never
become main items, items settled upstream later join, and the report's conflict rate is taken over the
items settled at both compared stages: 30 conflicts in 126 items (23.8 %), not in the 155 items the
uncompared stage 3 resolved (19.4 %). The settled answers are written directly (labelling has its tests)."""

import pytest

from annotation import reports
from annotation.models import Adjudication, GoldLabel, Item, MainItem, StageLabelling, TrainingItem
from annotation.services import main_sql
from annotation.services.adjudication import conflict_dispose, conflicts_detect
from annotation.services.assignment import main_items_sync
from annotation.services.labelling import stage_item_rule_set, stage_main_open
from annotation.services.projects import project_create, question_create, stage_create

pytestmark = pytest.mark.django_db

ITEMS = 168  # 155 settled at stage 1, 12 more, 1 stage-3 pilot item
VALID, INVALID = 126, 29
CONFLICTS, REMOVED = 30, 12


def _choices(*values):
    return [{"value": v, "label": v} for v in values]


def _settle(stage, question, values: dict[int, str]) -> None:
    Adjudication.objects.bulk_create(
        Adjudication(stage=stage, item_id=item_id, question=question, method="unanimous", final_value=value)
        for item_id, value in values.items()
    )
    MainItem.objects.filter(stage=stage, item_id__in=values).update(status=MainItem.Status.RESOLVED)


@pytest.fixture
def flow():
    project = project_create(name="Flow")
    valid = question_create(
        project=project, key="valid", prompt="?", choices=_choices("valid", "invalid"), positive_values=["valid"]
    )
    aligned = question_create(
        project=project,
        key="aligned",
        prompt="?",
        choices=_choices("aligned", "misaligned"),
        positive_values=["aligned"],
    )
    crowd = question_create(project=project, key="crowd", prompt="?", choices=_choices("yes", "no"))  # not compared
    stages = [
        stage_create(project=project, name=f"S{n}", questions=[q], order=n)
        for n, q in enumerate([valid, aligned, crowd], start=1)
    ]
    made = Item.objects.bulk_create(
        Item(project=project, external_id=f"i{n:03d}", payload={"text": f"Item {n}"}) for n in range(ITEMS)
    )
    items = [item.pk for item in made]
    pilot = items[-1]
    GoldLabel.objects.create(item_id=pilot, question=crowd, value="yes")
    TrainingItem.objects.create(stage=stages[2], item_id=pilot, phase="pilot")
    return project, stages, (valid, aligned, crowd), items


def test_stage_2_takes_stage_1s_valid_items_and_the_conflict_rate_uses_items_settled_at_both(flow, researcher):
    project, (s1, s2, s3), (valid, aligned, crowd), items = flow
    settled_1 = items[: VALID + INVALID]
    _settle(s1, valid, {i: ("valid" if n < VALID else "invalid") for n, i in enumerate(settled_1)})
    stage_item_rule_set(stage=s2, rule="settled", source_stage=s1, source_values=["valid"])
    assert StageLabelling.objects.get(stage=s2).source_question == valid  # the stage's polarity question
    assert stage_main_open(stage=s2) == VALID
    in_stage_2 = list(MainItem.objects.filter(stage=s2).order_by("position").values_list("item_id", flat=True))
    assert in_stage_2 == settled_1[:VALID]  # stage 1's invalid items and unsettled items stay out

    _settle(s2, aligned, {i: ("misaligned" if n < CONFLICTS else "aligned") for n, i in enumerate(in_stage_2)})
    stage_main_open(stage=s3)  # stage 3 (all items) opens before the conflicts are decided
    assert MainItem.objects.filter(stage=s3).count() == ITEMS - 1  # not its pilot item
    found = sorted(conflicts_detect(project=project), key=lambda c: c.item_id)
    assert len(found) == CONFLICTS
    for n, conflict in enumerate(found):
        conflict_dispose(conflict=conflict, disposition="removed" if n < REMOVED else "retained", by=researcher)
    removed = {c.item_id for c in found[:REMOVED]}
    in_stage_3 = set(MainItem.objects.filter(stage=s3).values_list("item_id", flat=True))
    assert len(in_stage_3) == ITEMS - 1 - REMOVED == 155
    assert not in_stage_3 & (removed | {items[-1]})

    _settle(s3, crowd, dict.fromkeys(in_stage_3, "yes"))
    report = reports.project_report(project)
    assert report["stages"][2]["adjudication"]["items_resolved"] == 155  # what the old denominator took
    assert report["conflicts"]["items_compared"] == VALID and report["conflicts"]["rate"] == 30 / 126  # exact
    assert report["conflicts"]["summary"] == (
        "30 conflicts in 126 items settled at both compared stages (23.8%): 12 removed, 18 retained"
    )
    assert "23.8%" in reports.report_markdown(report)
    # the report says which items each stage labelled
    assert report["gate"][0]["main_items"] == "All the project's items."
    assert report["gate"][1]["main_items"].startswith(f"The items stage 1 ({s1.name}) settled as ")
    assert f"Main items: {report['gate'][1]['main_items']}" in reports.report_markdown(report)
    assert report["gate"][1]["main_items"] in reports.report_html(report)

    # A removal changed back: the item returns to stage 3.
    conflict_dispose(conflict=found[0], disposition="retained", by=researcher)
    assert MainItem.objects.filter(stage=s3, item_id=found[0].item_id).exists()


def test_items_stage_1_settles_later_join_stage_2_when_its_annotators_run_out(flow):
    _, (s1, s2, _), (valid, _, _), items = flow
    _settle(s1, valid, dict.fromkeys(items[:3], "valid"))
    stage_item_rule_set(stage=s2, rule="settled", source_stage=s1, source_values=["valid"])
    assert stage_main_open(stage=s2) == 3
    settings = StageLabelling.objects.get(stage=s2)
    assert not main_sql.rule_item_missing(stage=s2, settings=settings)
    _settle(s1, valid, {items[3]: "valid", items[4]: "invalid"})
    assert main_sql.rule_item_missing(stage=s2, settings=settings)  # what next_assignment asks when empty
    assert main_items_sync(s2).added == 1
    assert not main_sql.rule_item_missing(stage=s2, settings=settings)
