"""The demo seeds a SafeTutors-preset project with items, gold, worked examples, training sets and
annotators at different steps; running it twice changes nothing."""

import io

import pytest

from annotation.demo import DEMO_PROJECT_NAME, demo_seed
from annotation.models import AnnotationProject, Enrollment, GoldLabel, Item, WorkedExample
from annotation.selectors.projects import pass_rate_table
from annotation.selectors.training import training_progress
from annotation.workflow.training import next_step
from edufair_web.accounts.demo import demo_users_seed

pytestmark = pytest.mark.django_db


def test_demo_seed_builds_annotators_at_different_steps_and_is_idempotent():
    demo_users_seed()
    demo_seed(io.StringIO())
    project = AnnotationProject.objects.get(name=DEMO_PROJECT_NAME)
    assert project.preset == "safetutors" and project.stages.count() == 3
    assert GoldLabel.objects.filter(item__project=project).exists()
    assert WorkedExample.objects.filter(stage__project=project).count() == 3 * 33
    stage1 = project.stages.get(order=1)
    steps = {e.user.username: next_step(training_progress(e)).value for e in Enrollment.objects.filter(stage=stage1)}
    assert steps == {"annotator": "guideline", "annotator2": "passed", "annotator3": "pilot", "annotator4": "failed"}
    row = pass_rate_table(project)[0]
    assert row["pass_rate_text"] == "1 of 2 (50.0%)"

    items = Item.objects.count()
    out = io.StringIO()
    demo_seed(out)
    assert Item.objects.count() == items
    assert AnnotationProject.objects.filter(name=DEMO_PROJECT_NAME).count() == 1
    assert "already exists" in out.getvalue()
