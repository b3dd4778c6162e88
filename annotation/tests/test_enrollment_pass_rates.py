"""The pass-rate table per stage (recruited, passed, failed, replaced, pass rate), on the project page,
in the CSV/JSON export and the API — with SafeTutors' published figures (Appendix D): stage 1 loses one
physics undergraduate who is replaced (6 of 7), stage 2 passes 3 of 3, stage 3 passes 24 of 33 (72.7%)."""

import csv
import io

import pytest
from django.urls import reverse

from annotation.models import Enrollment
from annotation.presets import SAFETUTORS
from annotation.services.enrollment import enrollment_create, enrollment_mark_replacement
from annotation.services.projects import project_create

pytestmark = pytest.mark.django_db


def decided(stage, user, passed: bool) -> Enrollment:
    enrollment = enrollment_create(stage=stage, user=user)
    enrollment.gate_passed = passed
    enrollment.status = "passed" if passed else "failed"
    enrollment.save()
    return enrollment


@pytest.fixture
def safetutors(make_user):
    project = project_create(name="SafeTutors replication", preset=SAFETUTORS)
    stage1, stage2, stage3 = project.stages.order_by("order")
    for _ in range(5):
        decided(stage1, make_user("annotator"), True)
    failed = decided(stage1, make_user("annotator"), False)
    replacement = make_user("annotator")
    enrollment_mark_replacement(enrollment=failed, replacement_user=replacement, note="physics undergraduate")
    Enrollment.objects.filter(stage=stage1, user=replacement).update(gate_passed=True, status="passed")
    for _ in range(3):
        decided(stage2, make_user("annotator"), True)
    for n in range(33):
        decided(stage3, make_user("annotator"), n < 24)
    enrollment_create(stage=stage3, user=make_user("annotator"))  # one more, still in training
    return project


def test_table_matches_the_paper(safetutors):
    from annotation.selectors.projects import pass_rate_table

    rows = {row["stage_order"]: row for row in pass_rate_table(safetutors)}
    assert (rows[1]["recruited"], rows[1]["passed"], rows[1]["failed"], rows[1]["replaced"]) == (7, 6, 1, 1)
    assert rows[1]["pass_rate_text"] == "6 of 7 (85.7%)"
    assert rows[2]["pass_rate_text"] == "3 of 3 (100.0%)"
    assert (rows[3]["recruited"], rows[3]["passed"], rows[3]["failed"], rows[3]["in_training"]) == (34, 24, 9, 1)
    assert rows[3]["pass_rate_text"] == "24 of 33 (72.7%)"
    assert rows[3]["pass_rate"] == pytest.approx(24 / 33, abs=1e-4)


def test_project_page_and_exports_show_it(researcher_client, safetutors):
    page = researcher_client.get(reverse("annotation:project", args=[safetutors.pk])).content.decode()
    assert "24 of 33 (72.7%)" in page and "6 of 7 (85.7%)" in page

    exported = researcher_client.get(reverse("annotation:project-pass-rates", args=[safetutors.pk, "csv"]))
    assert exported["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert rows[2]["pass_rate_text"] == "24 of 33 (72.7%)"
    assert (rows[0]["recruited"], rows[0]["replaced"]) == ("7", "1")

    as_json = researcher_client.get(reverse("annotation:project-pass-rates", args=[safetutors.pk, "json"])).json()
    assert as_json["stages"][2]["passed"] == 24
    api = researcher_client.get(f"/api/annotation/projects/{safetutors.pk}/pass-rates/").json()
    assert api[2]["pass_rate_text"] == "24 of 33 (72.7%)"


def test_annotators_cannot_read_the_table(annotator_client, safetutors):
    assert (
        annotator_client.get(reverse("annotation:project-pass-rates", args=[safetutors.pk, "csv"])).status_code == 403
    )
    assert annotator_client.get(f"/api/annotation/projects/{safetutors.pk}/pass-rates/").status_code == 403
