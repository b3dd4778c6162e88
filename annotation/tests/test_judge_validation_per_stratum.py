"""A fixed number of turns per stratum: every tutor × domain × condition stratum gives min(k, available) turns,
drawn reproducibly, and each stratum's inclusion probability is chosen / available (pure)."""

import random

import pytest

from annotation.judge_validation.sampling import Candidate, fixed_allocation, stratified_sample

SIZES = {("t1", "mathematics", 1): 12, ("t1", "physics", 1): 3, ("t2", "mathematics", 2): 7, ("t2", "physics", 2): 1}


def pool():
    candidates, next_id = [], 1
    for stratum, count in SIZES.items():
        for _ in range(count):
            candidates.append(Candidate(id=next_id, stratum=stratum))
            next_id += 1
    return candidates


def test_each_stratum_gives_k_turns_or_all_it_has_with_its_inclusion_probability():
    sample = stratified_sample(pool(), per_stratum=4, seed=5)
    by_stratum = {row.stratum: row for row in sample.allocation}
    assert {s: row.chosen for s, row in by_stratum.items()} == {s: min(4, n) for s, n in SIZES.items()}
    for stratum, row in by_stratum.items():
        assert row.available == SIZES[stratum]
        assert row.inclusion_probability == pytest.approx(min(4, SIZES[stratum]) / SIZES[stratum])
        assert row.exact_share == 4
    assert len(sample.ids) == 4 + 3 + 4 + 1
    assert sample.mode == "per_stratum" and sample.per_stratum == 4
    assert sample.size_requested == 16 and sample.short  # two strata had fewer than 4


def test_the_draw_is_reproducible_and_ignores_the_size_and_the_input_order():
    shuffled = pool()
    random.Random(3).shuffle(shuffled)
    first = stratified_sample(pool(), per_stratum=2, seed=1)
    assert stratified_sample(shuffled, 999, seed=1, per_stratum=2).ids == first.ids
    assert stratified_sample(pool(), per_stratum=2, seed=2).ids != first.ids


def test_proportional_mode_records_its_inclusion_probabilities_too():
    sample = stratified_sample(pool(), 10, seed=0)
    assert sample.mode == "proportional" and sample.per_stratum is None and not sample.short
    for row in sample.allocation:
        assert row.inclusion_probability == pytest.approx(row.chosen / row.available)


def test_a_count_below_one_is_refused():
    with pytest.raises(ValueError):
        fixed_allocation({("a",): 3}, 0)


def test_the_draw_is_keyed_by_content_so_other_database_ids_draw_the_same_turns():
    """The same audit on another database (PostgreSQL keeps its sequences, SQLite restarts them) has other ids
    for its tutors, conditions and turns; keyed by content, the sample picks the same turns."""

    def audit_rows(id_offset: int, stratum_offset: int) -> list[Candidate]:
        rows = []
        for block, ((tutor, domain, condition), count) in enumerate(SIZES.items()):
            for index in range(count):
                rows.append(
                    Candidate(
                        id=id_offset + 100 * block + 13 * (count - index),  # other ids, in another order
                        stratum=(tutor, domain, condition + stratum_offset),
                        draw_key=f"{tutor}|{domain}|condition-{condition}",
                        order=(f"question-{index:03d}", 0),
                    )
                )
        return rows

    here, there = audit_rows(0, 0), audit_rows(5000, 900)
    content = {c.id: (c.draw_key, c.order) for c in here + there}
    drawn_here = sorted(content[i] for i in stratified_sample(here, per_stratum=2, seed=3).ids)
    drawn_there = sorted(content[i] for i in stratified_sample(there, per_stratum=2, seed=3).ids)
    assert drawn_here == drawn_there and len(drawn_here) == 2 + 2 + 2 + 1
