"""Cross-stage conflicts: an item valid at stage 1 and misaligned at stage 2 is found (once, however often
detection runs); a researcher removes it or retains it with a flag; the report counts both in the paper's
form ("… conflicts: 1 removed, 1 retained") and leaves removed items out of the final distribution."""

import pytest
from django.urls import reverse

from annotation import reports
from annotation.models import CrossStageConflict
from annotation.selectors import exports
from annotation.services.adjudication import conflict_dispose, conflicts_detect
from annotation.services.labelling import label_next, main_label_submit

from .main_setup import answers, build_main_stage, pass_gate

pytestmark = pytest.mark.django_db

# Final values per item: stage 1 (valid = yes) then stage 2 (aligned = yes).
STAGE1 = ["yes", "yes", "no", "yes"]
STAGE2 = ["no", "yes", "no", "no"]  # items 0 and 3 are conflicts; item 2 was never positive


def label_stage(s, users, values):
    for user in users:
        pass_gate(s.stage, user)
        for value in values:
            item = label_next(annotator=user, stage=s.stage).item
            main_label_submit(annotator=user, stage=s.stage, item=item, answers=answers(s, value), seconds=5)


@pytest.fixture
def two_stages(make_user):
    first = build_main_stage(items=4, overlap=2, policy="discussion_senior", order=1)
    second = build_main_stage(project=first.project, items=4, overlap=2, policy="discussion_senior", order=2)
    users = [make_user("annotator") for _ in range(2)]
    label_stage(first, users, STAGE1)
    label_stage(second, users, STAGE2)
    return first, second


def test_detection_finds_positive_then_negative_items_once(two_stages):
    first, second = two_stages
    found = conflicts_detect(project=first.project)
    assert sorted(c.item.external_id for c in found) == ["item-0", "item-3"]
    conflict = next(c for c in found if c.item.external_id == "item-0")
    assert (conflict.earlier_stage, conflict.later_stage) == (first.stage, second.stage)
    assert conflict.detail["earlier_value"] == "yes" and conflict.detail["later_value"] == "no"
    assert conflict.disposition == CrossStageConflict.Disposition.PENDING
    conflicts_detect(project=first.project)
    assert CrossStageConflict.objects.count() == 2


def test_both_dispositions_are_recorded_and_reported(two_stages, researcher):
    first, _ = two_stages
    found = {c.item.external_id: c for c in conflicts_detect(project=first.project)}
    conflict_dispose(conflict=found["item-0"], disposition="removed", by=researcher, note="Invalid premise.")
    conflict_dispose(conflict=found["item-3"], disposition="retained", by=researcher)
    found["item-0"].refresh_from_db()
    assert found["item-0"].decided_by == researcher and found["item-0"].decided_at is not None

    report = reports.project_report(first.project)
    assert report["conflicts"]["removed"] == 1 and report["conflicts"]["retained_with_flag"] == 1
    assert report["conflicts"]["summary"].startswith("2 conflicts")
    assert report["conflicts"]["summary"].endswith(": 1 removed, 1 retained")
    # The removed item's final labels leave the distribution and the cost per final label.
    stage2 = report["stages"][1]
    assert stage2["distribution"][0]["total"] == 3 and stage2["distribution"][0]["removed"] == 1
    assert stage2["time_and_cost"]["final_labels"] == 3
    # Exports carry the disposition on every label of the item.
    records = [r for r in exports.label_records(first.project) if r["external_id"] in ("item-0", "item-3")]
    assert {r["external_id"]: r["conflict"] for r in records} == {"item-0": "removed", "item-3": "retained"}


def test_researchers_detect_and_decide_on_the_page(two_stages, researcher_client):
    first, _ = two_stages
    url = reverse("annotation:conflicts", args=[first.project.pk])
    assert researcher_client.post(url, {"action": "detect"}).status_code == 302
    conflict = CrossStageConflict.objects.order_by("item_id").first()
    researcher_client.post(url, {"conflict": conflict.pk, "disposition": "retained", "note": "keep"})
    conflict.refresh_from_db()
    assert conflict.disposition == "retained" and conflict.note == "keep"
    page = researcher_client.get(url).content.decode()
    assert "1 retained" in page and "1 undecided" in page
