"""Per-annotator pilot draws: with a pilot pool larger than the pilot size, each annotator labels their own seeded,
evenly spread draw, is scored on it, and sees (if they pass) only its gold — so throwaway identities cannot
assemble the pool's gold: eleven who fail learn nothing, the twelfth who passes learns its own 15 of 60."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Enrollment, GoldLabel, Item
from annotation.selectors.training import pilot_item_ids
from annotation.services.enrollment import enrollment_create
from annotation.services.training import guideline_confirm, training_set_choose
from annotation.workflow.pilot import PoolItem
from annotation.workflow.pilot_draw import recruit_pilot

from .gold_bank_setup import CATEGORIES, PER_CELL, SUBJECTS, add_stage, build_gold_bank


def test_draws_are_seeded_per_annotator_even_and_twelve_of_them_cover_the_pool_slowly():
    pool = [
        PoolItem(id=1 + n, category=c, subject=s)
        for n, (c, s) in enumerate((c, s) for c in CATEGORIES for s in SUBJECTS for _ in range(PER_CELL))
    ]
    draws = [
        recruit_pilot(pool, 15, stage_id=1, annotator_id=a, categories=CATEGORIES, subjects=SUBJECTS)
        for a in range(1, 13)
    ]
    by_id = {p.id: p for p in pool}
    for draw in draws:
        assert len(draw) == 15
        assert len({(by_id[i].category, by_id[i].subject) for i in draw}) == 15  # one per category × subject
    assert len({tuple(d) for d in draws}) == 12  # no two identities share a pilot
    assert draws[0] == recruit_pilot(pool, 15, stage_id=1, annotator_id=1, categories=CATEGORIES, subjects=SUBJECTS)
    assert draws[0] != recruit_pilot(pool, 15, stage_id=2, annotator_id=1, categories=CATEGORIES, subjects=SUBJECTS)
    seen, coverage = set(), []
    for draw in draws:
        seen |= set(draw)
        coverage.append(len(seen))
    # The items (never their gold) that k identities are shown, k = 1 … 12, from this deterministic draw.
    assert coverage == [15, 26, 37, 41, 45, 48, 50, 52, 54, 56, 59, 60]
    assert recruit_pilot(pool[:10], 15, stage_id=1, annotator_id=1) == list(range(1, 11))  # a small pool: all of it


def label(client, stage, item_id, value):
    return client.post(
        reverse("annotation-labels", args=[stage.pk]),
        {"item": item_id, "phase": "pilot", "answers": {"q1": {"value": value}}, "seconds": 5},
        content_type="application/json",
    )


@pytest.mark.django_db
def test_twelve_identities_cannot_assemble_the_pilot_pools_gold(make_user):
    bank = build_gold_bank()
    stage = add_stage(bank, name="Crowd check", questions=[bank.questions[0]], pilot_size=15)
    pool = training_set_choose(stage=stage, phase="pilot", size=60)  # the pool: every gold item
    assert len(pool.item_ids) == 60
    for n in range(10):  # the test's own gold items, outside the pool
        item = Item.objects.create(
            project=bank.project,
            external_id=f"test-{n}",
            payload={"text": f"Test item {n}"},
            category="C1",
            subject="maths",
        )
        GoldLabel.objects.create(item=item, question=bank.questions[0], value="yes")
    training_set_choose(stage=stage, phase="qualification", size=10, accept_uneven=True)
    base = f"/api/annotation/training/{stage.pk}/"
    shown: list[set[int]] = []
    gold_seen: set[int] = set()
    for n in range(12):
        user = make_user("annotator")
        guideline_confirm(enrollment=enrollment_create(stage=stage, user=user, subject="maths"))
        client = Client()
        client.force_login(user)
        # Eleven throwaway identities fail on purpose (each answer the wrong one), as a crowd probing the gate would;
        # the twelfth knows the answers.
        honest = n == 11
        mine = []
        while (nxt := client.get(base + "pilot/next/")).status_code == 200:
            item_id = nxt.json()["item"]["id"]
            mine.append(item_id)
            wrong = "no" if bank.gold[item_id] == "yes" else "yes"
            assert label(client, stage, item_id, bank.gold[item_id] if honest else wrong).status_code == 201
        assert len(mine) == 15
        enrollment = Enrollment.objects.get(stage=stage, user=user)
        assert set(mine) == set(pilot_item_ids(enrollment))  # the draw the gate scores
        cells = set(Item.objects.filter(pk__in=mine).values_list("category", "subject"))
        assert len(cells) == 15  # evenly spread, one per category × subject
        shown.append(set(mine))
        feedback = client.get(base + "feedback/")
        state = client.get(base).json()
        if honest:
            assert feedback.status_code == 200 and state["gate"]["pilot_score"] == 1.0
            gold_seen |= {row["item"]["id"] for row in feedback.json()["items"]}
        else:
            assert feedback.status_code == 403 and state["gate"]["pilot_score"] is None
            enrollment.refresh_from_db()
            assert enrollment.pilot_score == 0.0  # scored on their own draw
    assert len({frozenset(s) for s in shown}) == 12  # every identity had its own pilot
    assert len(gold_seen) == 15  # the gold the twelve assembled: one draw's, of the pool's 60
