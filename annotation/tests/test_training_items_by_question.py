"""Training items by question: stages asking different questions share a gold bank, so a three-stage operation
runs its three pilots (and tests) from the demo's 60 gold items; a stage asking the same question as another
cannot draw that stage's pilot or test items, and the refusal says how many gold items are closed and why."""

import pytest

from annotation.models import TrainingItem
from annotation.services.training import SetupError, training_set_choose

from .gold_bank_setup import add_stage, build_gold_bank

pytestmark = pytest.mark.django_db


def training_items(stage, phase):
    return set(TrainingItem.objects.filter(stage=stage, phase=phase).values_list("item_id", flat=True))


def test_three_stages_with_different_questions_run_their_pilots_from_60_gold_items():
    bank = build_gold_bank()
    stages = [add_stage(bank, name=f"Stage {n + 1}", questions=[question]) for n, question in enumerate(bank.questions)]
    for stage in stages:
        pilot = training_set_choose(stage=stage, phase="pilot", seed=stage.order)
        assert pilot.even and len(pilot.item_ids) == 30  # 2 per category × subject
        assert set(pilot.cell_counts.values()) == {2}
        test = training_set_choose(stage=stage, phase="qualification", seed=stage.order)
        assert len(test.item_ids) == 10
        assert not training_items(stage, "pilot") & training_items(stage, "qualification")
    # They do share items: stage 2's pilot takes some of stage 1's training items (other question, other gold).
    first = training_items(stages[0], "pilot") | training_items(stages[0], "qualification")
    assert training_items(stages[1], "pilot") & first


def test_a_stage_asking_the_same_question_is_refused_with_the_reason():
    bank = build_gold_bank()
    first = add_stage(bank, name="Validity", questions=[bank.questions[0]])
    add_stage(bank, name="Risk", questions=[bank.questions[1]])
    training_set_choose(stage=first, phase="pilot", seed=1)
    training_set_choose(stage=first, phase="qualification", seed=1)
    again = add_stage(bank, name="Validity again", questions=[bank.questions[0]])
    with pytest.raises(SetupError) as refused:
        training_set_choose(stage=again, phase="pilot", seed=3)
    message = str(refused.value)
    assert message.startswith("An even spread is impossible: only 20 eligible items for a pilot of 30")
    assert (
        "20 of 60 gold items are eligible: 40 are pilot or test items or worked examples of stage 1 (Validity), "
        "which asks the same question" in message
    )
    assert "Risk" not in message  # the stage asking another question closes nothing
