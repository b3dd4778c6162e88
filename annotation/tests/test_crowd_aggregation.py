"""Aggregation by annotator quality on a simulated crowd with planted accuracies and one spammer.

Ten annotators of accuracies 0.95, 0.90, …, 0.55 (a wrong answer is one of the other values, uniformly) and a spammer
who answers uniformly at random label 200 items, three distinct annotators per item, three values, seed 20261202. The
planted spammer must get the lowest competence under every model, and the quality models must beat the majority vote
against the planted truth; the majority is computed here independently, with `collections.Counter`.
"""

from collections import Counter

import numpy as np
import pytest

from annotation.crowd_aggregation import (
    METHOD_KEYS,
    METHODS,
    QUALITY_METHOD_KEYS,
    REASON_NO_LABELS,
    REASON_ONE_VALUE,
    aggregate,
    aggregate_all,
    agreement_with,
)

pytestmark = pytest.mark.slow  # four crowd-kit fits of 600 labels: a few seconds

VALUES = ("a", "b", "c")
ACCURACIES = (0.95, 0.90, 0.85, 0.80, 0.75, 0.70, 0.65, 0.60, 0.55, None)  # None: the spammer
SPAMMER = "w9"
SEED = 20261202


def simulated_crowd() -> tuple[list[tuple[str, str, str]], dict[str, str]]:
    rng = np.random.default_rng(SEED)
    truth = {f"i{i:03d}": str(v) for i, v in enumerate(rng.choice(VALUES, size=200))}
    rows = []
    for item, true in truth.items():
        for who in rng.choice(len(ACCURACIES), size=3, replace=False):
            accuracy = ACCURACIES[who]
            if accuracy is None:
                value = str(rng.choice(VALUES))
            elif rng.random() < accuracy:
                value = true
            else:
                value = str(rng.choice([v for v in VALUES if v != true]))
            rows.append((item, f"w{who}", value))
    return rows, truth


@pytest.fixture(scope="module")
def crowd():
    rows, truth = simulated_crowd()
    return rows, truth, aggregate_all(rows, VALUES)


def counter_majority(rows) -> dict[str, str]:
    """Each item's most frequent value; a tie goes to the value listed first in VALUES."""
    by_item: dict[str, Counter] = {}
    for item, _, value in rows:
        by_item.setdefault(item, Counter())[value] += 1
    return {item: max(VALUES, key=lambda v: (counts[v], -VALUES.index(v))) for item, counts in by_item.items()}


def accuracy(labels: dict, truth: dict) -> float:
    return sum(labels[item] == truth[item] for item in truth) / len(truth)


def test_the_simulated_crowd_is_as_planted():
    rows, truth = simulated_crowd()
    assert len(rows) == 600 and len(truth) == 200
    assert all(len({who for i, who, _ in rows if i == item}) == 3 for item in truth)
    assert len({who for _, who, _ in rows}) == 10


def test_the_planted_spammer_has_the_lowest_competence_under_every_model(crowd):
    _, _, found = crowd
    for key in METHOD_KEYS:
        competence = {row.annotator: row.competence for row in found[key].annotators}
        assert len(competence) == 10
        assert min(competence, key=competence.get) == SPAMMER, key


def test_the_spammers_competence_is_what_each_model_says_a_guesser_scores(crowd):
    _, _, found = crowd
    spammer = {key: {r.annotator: r.competence for r in found[key].annotators}[SPAMMER] for key in METHOD_KEYS}
    assert spammer["dawid_skene"] == pytest.approx(1 / 3, abs=0.05)  # a uniform guesser on three values
    assert spammer["glad"] < 0.05  # α ≈ 0: guessing
    assert spammer["mace"] < 0.1  # almost surely spamming
    best = {key: {r.annotator: r.competence for r in found[key].annotators}["w0"] for key in METHOD_KEYS}
    assert best["dawid_skene"] > 0.95 and best["mace"] > 0.95


def test_quality_models_beat_the_majority_against_the_truth(crowd):
    rows, truth, found = crowd
    majority = counter_majority(rows)
    assert accuracy(majority, truth) == pytest.approx(0.83)
    # The module's majority vote (crowd-kit's MajorityVote, ties to the value listed first) is the same.
    assert found["majority_vote"].labels() == majority
    accuracies = {key: accuracy(found[key].labels(), truth) for key in QUALITY_METHOD_KEYS}
    assert accuracies == pytest.approx({"dawid_skene": 0.835, "glad": 0.84, "mace": 0.875})
    assert all(value > accuracy(majority, truth) for value in accuracies.values())


def test_soft_labels_are_distributions_and_the_label_is_their_mode(crowd):
    _, truth, found = crowd
    for key in METHOD_KEYS:
        aggregation = found[key]
        assert aggregation.values == VALUES and len(aggregation.items) == 200
        for row in aggregation.items:
            assert sum(row.soft) == pytest.approx(1.0)
            assert all(0.0 <= p <= 1.0 for p in row.soft)
            assert row.posterior == max(row.soft) and row.label == VALUES[row.soft.index(row.posterior)]
            assert row.n_labels == 3
    # The majority's soft label is the share of votes.
    votes = {row.item: row.soft for row in found["majority_vote"].items}
    assert all(round(3 * p, 9) == int(round(3 * p)) for soft in votes.values() for p in soft)


def test_agreement_with_a_reference_is_accuracy_and_cohens_kappa(crowd):
    _, truth, found = crowd
    result = agreement_with(found["mace"].labels(), truth, VALUES)
    assert result["n_items"] == 200 and result["accuracy"] == pytest.approx(0.875)
    # Cohen's κ against an independent computation: (p_o − p_e) / (1 − p_e) from the marginals.
    ours, theirs = found["mace"].labels(), truth
    p_e = sum((sum(v == x for v in ours.values()) / 200) * (sum(v == x for v in theirs.values()) / 200) for x in VALUES)
    assert result["cohen_kappa"] == pytest.approx((0.875 - p_e) / (1 - p_e))
    assert agreement_with({"x": "a"}, {"y": "a"}, VALUES)["accuracy"] is None


def test_no_labels_or_one_value_is_undefined_not_an_error():
    assert aggregate([], VALUES, "dawid_skene").undefined_reason == REASON_NO_LABELS
    one = aggregate([(1, 1, "a"), (1, 2, "a"), (2, 1, "a")], VALUES, "glad")
    assert one.undefined_reason == REASON_ONE_VALUE and one.items == ()
    with pytest.raises(ValueError):
        aggregate([(1, 1, "a")], VALUES, "median")


def test_the_methods_are_listed_once_with_what_their_competence_is():
    assert METHOD_KEYS == ("majority_vote", "dawid_skene", "glad", "mace")
    assert all(method.competence and method.title for method in METHODS)
