"""Choosing a stage's pilot and qualification test from its gold items: an even pilot is stored, an uneven
one is refused unless a researcher accepts it, worked examples and the other set are never reused."""

import pytest

from annotation.models import GoldLabel, Item, TrainingItem
from annotation.services.projects import project_create, question_create, stage_create
from annotation.services.training import SetupError, training_set_choose, worked_example_add

pytestmark = pytest.mark.django_db


@pytest.fixture
def stage():
    project = project_create(name="Pilot", categories=["A", "B", "C"], subjects=["maths", "physics"])
    question = question_create(
        project=project, key="ok", prompt="OK?", choices=[{"value": "y", "key": "1"}, {"value": "n", "key": "2"}]
    )
    stage = stage_create(project=project, name="S", questions=[question], pilot_size=12, qualification_size=6)
    capacities = {
        ("A", "maths"): 6,
        ("A", "physics"): 3,
        ("B", "maths"): 5,
        ("B", "physics"): 4,
        ("C", "maths"): 3,
        ("C", "physics"): 9,
    }  # noqa: E501
    n = 0
    for (category, subject), count in capacities.items():
        for _ in range(count):
            item = Item.objects.create(
                project=project, external_id=f"i{n}", payload={"text": "t"}, category=category, subject=subject
            )
            GoldLabel.objects.create(item=item, question=question, value="y")
            n += 1
    return stage


def test_even_pilot_then_a_separate_qualification_test(stage):
    example_item = Item.objects.get(external_id="i0")
    worked_example_add(
        stage=stage, item=example_item, question=stage.questions.get(), kind="borderline", value="y", rationale="r"
    )
    sample = training_set_choose(stage=stage, phase="pilot", seed=1)
    assert sample.even and len(sample.item_ids) == 12
    assert set(sample.cell_counts.values()) == {2}
    assert example_item.id not in sample.item_ids
    training_set_choose(stage=stage, phase="qualification", seed=1)
    pilot = set(TrainingItem.objects.filter(stage=stage, phase="pilot").values_list("item_id", flat=True))
    test = set(TrainingItem.objects.filter(stage=stage, phase="qualification").values_list("item_id", flat=True))
    assert len(test) == 6 and not pilot & test and example_item.id not in test


def test_uneven_pilot_refused_unless_accepted(stage):
    with pytest.raises(SetupError, match="even spread is impossible"):
        training_set_choose(stage=stage, phase="pilot", size=24)  # 4 per cell; A × physics and C × maths have 3
    assert not TrainingItem.objects.filter(stage=stage).exists()
    sample = training_set_choose(stage=stage, phase="pilot", size=24, accept_uneven=True)
    assert not sample.even
    assert TrainingItem.objects.filter(stage=stage, phase="pilot").count() == 24


def test_api_reports_the_spread(researcher_client, stage):
    response = researcher_client.post(
        f"/api/annotation/stages/{stage.pk}/choose-training-set/",
        {"phase": "pilot", "size": 24},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "A × physics has 3" in response.json()["detail"]
    response = researcher_client.post(
        f"/api/annotation/stages/{stage.pk}/choose-training-set/", {"phase": "pilot"}, content_type="application/json"
    )
    assert response.status_code == 201
    assert response.json()["even"] is True
