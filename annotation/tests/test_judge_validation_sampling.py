"""Acceptance 2: the validation sample's counts per tutor × domain × condition are proportional (±1)
and reproducible with the seed — pure, on an uneven made-up pool, and on a real simulation audit."""

import math
import random
from collections import Counter

import pytest

from annotation.judge_validation.sampling import Candidate, proportional_allocation, stratified_sample

# An uneven pool: 3 tutors × 2 domains × 3 conditions with sizes from 1 to 60.
SIZES = {
    (tutor, domain, kind): 1 + (7 * t + 13 * d + 5 * k) % 60
    for t, tutor in enumerate((11, 12, 13))
    for d, domain in enumerate(("mathematics", "physics"))
    for k, kind in enumerate(("control", "explicit", "implicit"))
}


def pool():
    candidates, next_id = [], 1000
    for stratum, count in SIZES.items():
        for _ in range(count):
            candidates.append(Candidate(id=next_id, stratum=stratum))
            next_id += 1
    return candidates


@pytest.mark.parametrize("size", [1, 17, 180, 333])
def test_every_stratum_is_within_one_of_its_proportional_share(size):
    sample = stratified_sample(pool(), size, seed=4)
    total = sum(SIZES.values())
    assert len(sample.ids) == size == sum(row.chosen for row in sample.allocation)
    counts = Counter(c.stratum for c in pool() if c.id in set(sample.ids))
    for stratum, available in SIZES.items():
        exact = size * available / total
        assert math.floor(exact) <= counts[stratum] <= math.ceil(exact), stratum
        assert abs(counts[stratum] - exact) < 1


def test_same_seed_same_sample_whatever_the_input_order_and_another_seed_differs():
    shuffled = pool()
    random.Random(9).shuffle(shuffled)
    first = stratified_sample(pool(), 120, seed=7)
    assert stratified_sample(shuffled, 120, seed=7).ids == first.ids
    assert stratified_sample(pool(), 120, seed=8).ids != first.ids


def test_asking_for_more_than_there_is_takes_everything_and_says_so():
    sample = stratified_sample(pool()[:50], 180, seed=0)
    assert len(sample.ids) == 50 and sample.short


def test_allocation_adds_up_with_ties_broken_by_the_seed_not_by_name():
    # Four equal strata, 2 turns to give: each seed picks some pair, and across seeds every stratum gets one.
    available = {("a",): 5, ("b",): 5, ("c",): 5, ("d",): 5}
    winners = set()
    for seed in range(20):
        counts = proportional_allocation(available, 2, seed)
        assert sum(counts.values()) == 2 and set(counts.values()) <= {0, 1}
        winners |= {s for s, n in counts.items() if n}
    assert winners == set(available)


def test_a_candidate_listed_twice_is_refused():
    with pytest.raises(ValueError):
        stratified_sample([Candidate(1, ("a",)), Candidate(1, ("b",))], 1)


@pytest.mark.django_db
def test_the_project_built_from_an_audit_follows_the_allocation():
    from annotation.judge_validation.audit_source import audit_turn_candidates
    from annotation.judge_validation.services import validation_project_create
    from annotation.selectors.judge_validation import sampled_items

    from .judge_validation_setup import run_simulation_audit

    audit = run_simulation_audit("sampling audit")
    candidates = audit_turn_candidates(audit)
    available = Counter(c.stratum for c, _ in candidates)
    project = validation_project_create(audit=audit, size=40, seed=2)
    again = validation_project_create(audit=audit, size=40, seed=2)
    items = list(sampled_items(project))
    assert len(items) == 40
    assert [i.source_turn_id for i in items] == [i.source_turn_id for i in sampled_items(again)]
    stratum_of = {c.id: c.stratum for c, _ in candidates}
    counts = Counter(stratum_of[i.source_turn_id] for i in items)
    total = sum(available.values())
    assert len(available) >= 16  # 2 tutors × 2 domains × 5 conditions, as far as turns exist
    for stratum, n in available.items():
        assert abs(counts[stratum] - 40 * n / total) < 1, stratum
    recorded = {
        (r["tutor_id"], r["domain"], r["condition_id"]): r["chosen"] for r in project.options["sample"]["allocation"]
    }
    assert recorded == {s: counts[s] for s in available}
    # The training turns are never part of the sample.
    training = set(project.items.filter(metadata__role="training").values_list("source_turn_id", flat=True))
    assert training and not training & {i.source_turn_id for i in items}
