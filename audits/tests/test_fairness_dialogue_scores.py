"""A dialogue score is the mean of the judge's values over its tutor turns, ignoring -1."""

import math

import numpy as np

from audits.fairness import dialogue_scores


def test_mean_over_applicable_turns():
    dialogue = np.array([7, 7, 7, 3, 3, 9])
    value = np.array([2, -1, 1, -1, -1, 0])
    ids, scores = dialogue_scores(dialogue, value)
    assert ids.tolist() == [3, 7, 9]
    assert math.isnan(scores[0])  # dialogue 3: no applicable turn, no score
    assert scores[1] == 1.5
    assert scores[2] == 0.0
