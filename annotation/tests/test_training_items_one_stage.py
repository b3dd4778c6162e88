"""Gold is never reused across stages asking the same question: a stage's pilot and test never draw the
training items of a stage sharing one of its questions, nor items already handed out as main work in a stage
asking the same question; an item drawn into a pilot or test leaves the main items of every stage asking its
question (stages with other questions may label it, and train on it: its gold there is not theirs)."""

import pytest

from annotation.models import GoldLabel, MainItem, Stage, TrainingItem
from annotation.services.labelling import label_next, stage_main_open
from annotation.services.training import training_set_choose

from .main_setup import build_main_stage, pass_gate

pytestmark = pytest.mark.django_db


def test_stages_sharing_a_question_never_share_training_items_and_pilot_items_leave_main_work(make_user):
    first = build_main_stage(items=12, order=1)
    second = build_main_stage(project=first.project, order=2)
    shared = Stage.objects.create(project=first.project, order=3, name="Asks stage 1's question")
    shared.questions.set(first.questions)
    for item in first.items:
        for question in [*first.questions, *second.questions]:
            GoldLabel.objects.create(item=item, question=question, value="yes")
    user = make_user("annotator")
    pass_gate(first.stage, user)
    handed_out = label_next(annotator=user, stage=first.stage).item_id  # stage 1 opens, one item handed out
    stage_main_open(stage=shared)

    training_set_choose(stage=first.stage, phase="qualification", size=4, accept_uneven=True)
    training_set_choose(stage=second.stage, phase="pilot", size=4, accept_uneven=True)
    training_set_choose(stage=shared, phase="pilot", size=3, accept_uneven=True)
    per_stage = {
        stage.pk: set(TrainingItem.objects.filter(stage=stage).values_list("item_id", flat=True))
        for stage in (first.stage, second.stage, shared)
    }
    assert not per_stage[first.stage.pk] & per_stage[shared.pk]  # no item trains two stages asking q1
    assert len(per_stage[second.stage.pk]) == 4  # stage 2 asks other questions: it may draw any gold item
    asking_q1 = per_stage[first.stage.pk] | per_stage[shared.pk]
    assert handed_out not in asking_q1  # main work of a stage asking the question is not drawn for it
    for stage in (first.stage, shared):  # training items of both (they share a question) are not main work
        main = set(MainItem.objects.filter(stage=stage).values_list("item_id", flat=True))
        assert main == {item.pk for item in first.items} - asking_q1
