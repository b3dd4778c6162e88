"""The first-run checklist: a new project's pages name every missing step, linked to where it is done, and do not
call a stage with nothing ready "live"; a stage with every step done shows none."""

import pytest
from django.urls import reverse

from annotation.models import GoldLabel, Stage, TrainingItem, WorkedExample
from annotation.presets import SAFETUTORS
from annotation.selectors.first_run import stage_first_run_checklist
from annotation.services.enrollment import enrollment_create
from annotation.services.projects import project_create

from .main_setup import build_main_stage

pytestmark = pytest.mark.django_db

ALL_STEPS = ["gold", "pilot", "test", "examples", "guideline", "items", "enrolled"]


def test_a_new_project_shows_the_missing_steps(researcher_client):
    project = project_create(name="Fresh", preset=SAFETUTORS)
    stage = project.stages.get(order=1)
    checklist = stage_first_run_checklist(stage)
    # The preset publishes a guideline; everything else is still to do.
    assert [step.key for step in checklist.missing] == ["gold", "pilot", "test", "examples", "items", "enrolled"]

    page = researcher_client.get(reverse("annotation:project", args=[project.pk])).content.decode()
    assert "Before annotators can start" in page and "data-dashboard-link>live<" not in page
    assert page.count("data-setting-up") == 3
    assert f'href="{reverse("annotation:project", args=[project.pk])}#import-items">Import gold items' in page

    stage_page = researcher_client.get(reverse("annotation:stage", args=[stage.pk])).content.decode()
    assert "Before annotators can start: 6 steps left" in stage_page
    assert f'href="{reverse("annotation:stage-people", args=[stage.pk])}">Enrol annotators' in stage_page
    assert 'id="training-sets"' in stage_page and "Live dashboard" not in stage_page


def test_a_complete_stage_shows_no_checklist(researcher_client, make_user):
    s = build_main_stage(items=4)
    Stage.objects.filter(pk=s.stage.pk).update(pilot_size=1, qualification_size=1)
    stage = Stage.objects.get(pk=s.stage.pk)
    question = s.questions[0]
    pilot, test, example = s.items[:3]
    for item in (pilot, test, example):
        GoldLabel.objects.create(item=item, question=question, value="yes")
    TrainingItem.objects.create(stage=stage, item=pilot, phase=TrainingItem.Phase.PILOT)
    TrainingItem.objects.create(stage=stage, item=test, phase=TrainingItem.Phase.QUALIFICATION)
    WorkedExample.objects.create(stage=stage, item=example, question=question, kind="clear_positive", value="yes")
    assert [step.key for step in stage_first_run_checklist(stage).missing] == ["enrolled"]
    enrollment_create(stage=stage, user=make_user("annotator"), subject="maths")

    checklist = stage_first_run_checklist(stage)
    assert checklist.ready and [step.key for step in checklist.steps] == ALL_STEPS
    page = researcher_client.get(reverse("annotation:project", args=[s.project.pk])).content.decode()
    assert "Before annotators can start" not in page and "data-dashboard-link>live</a>" in page
    stage_page = researcher_client.get(reverse("annotation:stage", args=[stage.pk])).content.decode()
    assert "data-first-run-checklist" not in stage_page and "Live dashboard" in stage_page
