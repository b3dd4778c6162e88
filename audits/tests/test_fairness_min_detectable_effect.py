"""min_detectable_effect against a hand computation from standard normal quantiles."""

import math

import numpy as np
import pytest

from audits.fairness import min_detectable_effect


def test_min_detectable_effect_by_hand():
    # z_{0.975} = 1.959964 and z_{0.80} = 0.841621 (standard normal table);
    # r_min = (1.959964 + 0.841621) / sqrt(N)
    assert min_detectable_effect(100) == pytest.approx(2.801585 / 10, abs=1e-6)
    assert min_detectable_effect(15) == pytest.approx(2.801585 / math.sqrt(15), abs=1e-6)
    # alpha = 0.01, power = 0.9: z_{0.995} = 2.575829, z_{0.90} = 1.281552
    assert min_detectable_effect(400, alpha=0.01, power=0.9) == pytest.approx(3.857381 / 20, abs=1e-6)


def test_min_detectable_effect_vectorised_and_undefined_below_one_pair():
    values = min_detectable_effect(np.array([0, 4, 100]))
    assert math.isnan(values[0])
    assert values[1] == pytest.approx(2.801585 / 2, abs=1e-6)
