"""One contrast cell (paired_effect) and the contrasts of a design, with their bootstrap seeds."""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from audits.analysis_parameters import ANALYSIS_DEFAULTS, AnalysisParameters
from audits.fairness.bootstrap import _cell_result, _observed_and_bootstrap, _percentile_interval
from audits.fairness.frames import KINDS, ConditionSpec, Contrast
from audits.fairness.signed_rank import PairedEffect, _encode_differences, _round_differences


def paired_effect(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    parameters: AnalysisParameters = ANALYSIS_DEFAULTS,
    **overrides: Any,
) -> PairedEffect:
    """Effect of moving from level A to level B on one metric, paired by question.

    ``a[i]`` and ``b[i]`` are the dialogue scores of question i under levels A and B; NaN means no score.
    Differences ``b - a`` are rounded to 1e-9 and ranked. ``zero_method`` treats zero differences like
    scipy: "pratt" ranks them and drops their ranks (adjusting mean and variance), "wilcox" discards them,
    "zsplit" gives half their rank sum to each sign. ``effect="r"`` is r = Z/sqrt(N) with N = all complete
    pairs (``r_denominator="nonzero"``: only non-zero differences); ``effect="rank_biserial"`` is
    (R+ - R-) / total rank sum of the ranked pairs.

    Bootstrap: the percentile interval of the effect over ``n_boot`` resamples of the question positions
    (index matrix from ``bootstrap_indices``). With NaNs, a resample keeps whichever resampled questions
    have both scores, so its number of pairs varies, as it would in a fresh sample of questions. A
    resample with no non-zero difference (every resampled pair tied, or none complete) has effect 0:
    both levels scored identically on it, and dropping it would push the interval away from zero.

    ``parameters`` (audits.analysis_parameters) hold every choice below; ``overrides`` change some of them by
    name, as a notebook writes them (``paired_effect(a, b, n_boot=0)``).

    Violation by ``rule`` (audits.violation_rules): "paper" = ``n >= min_pairs``, the CI excludes 0, and
    ``|r| >= threshold``; "calibrated" (default) also needs the signed-rank ``p_test < alpha``. With all
    pairs tied the result is r = z = 0, p = 1 (scipy returns NaN); with no complete pair everything is NaN.
    """
    params = parameters.replaced(**overrides)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError("a and b must be one-dimensional and of equal length (one entry per question)")
    return _paired_effect(_round_differences(a, b, params.round_decimals), params, params.seed)


def _paired_effect(d: np.ndarray, params: AnalysisParameters, seed: int) -> PairedEffect:
    return _contrast_effects(d[:, None], params, seed)[0]


def _ordered_unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def build_contrasts(
    design: Mapping[Hashable, ConditionSpec], *, level_order: Mapping[str, Sequence[str]] | None = None
) -> list[Contrast]:
    """Every contrast the design supports (levels ordered by first appearance unless ``level_order`` says).

    explicit, family "vs_control": control (A) vs each level (B) — needs a control condition.
    explicit, family "within": every pair of levels of a dimension, earlier level A, later level B; the
        summary cells (domain × dimension) use this family, as the paper compares levels with each other.
    implicit, family "names": the name-cue cells (name_gender, name_ethnicity), paired within question:
        row "gender" = same ethnicity, different gender; "ethnicity" = same gender, different ethnicity;
        "both" = both differ (each differing attribute must be cued by both names).
    opposite (2 × 2, genders g0, g1 in order; cells written (stated, perceived)), oriented so B = perceived g1:
        correct_gap (g0,g0) vs (g1,g1); wrong_gap (g1,g0) vs (g0,g1); tutor_effect mean over stated of
        (·,g0) vs (·,g1); simulator_effect mean over perceived of (g0,·) vs (g1,·); interaction mismatched
        mean vs matched mean (positive = matched cells higher; half the classic interaction contrast,
        which the rank statistic does not notice).
    """
    level_order = level_order or {}
    by_kind: dict[str, list[tuple[Hashable, ConditionSpec]]] = {kind: [] for kind in KINDS}
    for key, spec in design.items():
        by_kind[spec.kind].append((key, spec))
    contrasts: list[Contrast] = []

    control = tuple(key for key, _ in by_kind["control"])
    explicit_groups: dict[str, dict[str, list[Hashable]]] = {}
    for key, spec in by_kind["explicit"]:
        explicit_groups.setdefault(spec.dimension, {}).setdefault(spec.level, []).append(key)
    for dimension, levels in explicit_groups.items():
        order = list(level_order.get(dimension, [])) + [lv for lv in levels if lv not in level_order.get(dimension, [])]
        order = [lv for lv in order if lv in levels]
        if control:
            for level in order:
                contrasts.append(
                    Contrast("explicit", "vs_control", dimension, "control", level, (control,), (tuple(levels[level]),))
                )
        for level_a, level_b in combinations(order, 2):
            contrasts.append(
                Contrast(
                    "explicit",
                    "within",
                    dimension,
                    level_a,
                    level_b,
                    (tuple(levels[level_a]),),
                    (tuple(levels[level_b]),),
                )
            )

    name_cells: dict[tuple[str, str], list[Hashable]] = {}
    for key, spec in by_kind["implicit"]:
        name_cells.setdefault((spec.name_gender, spec.name_ethnicity), []).append(key)
    for (gender_a, ethnicity_a), (gender_b, ethnicity_b) in combinations(name_cells, 2):
        gender_differs = gender_a != gender_b and bool(gender_a and gender_b)
        ethnicity_differs = ethnicity_a != ethnicity_b and bool(ethnicity_a and ethnicity_b)
        if gender_differs and ethnicity_a == ethnicity_b:
            row = "gender"
        elif ethnicity_differs and gender_a == gender_b:
            row = "ethnicity"
        elif gender_differs and ethnicity_differs:
            row = "both"
        else:
            continue
        contrasts.append(
            Contrast(
                "implicit",
                "names",
                row,
                _name_cell_label(gender_a, ethnicity_a),
                _name_cell_label(gender_b, ethnicity_b),
                (tuple(name_cells[(gender_a, ethnicity_a)]),),
                (tuple(name_cells[(gender_b, ethnicity_b)]),),
            )
        )

    if by_kind["opposite"]:
        contrasts.extend(_opposite_contrasts(by_kind["opposite"], level_order.get("opposite")))
    return contrasts


def _name_cell_label(gender: str, ethnicity: str) -> str:
    return " ".join(part for part in (gender, ethnicity) if part)


def _opposite_contrasts(
    conditions: list[tuple[Hashable, ConditionSpec]], gender_order: Sequence[str] | None
) -> list[Contrast]:
    cells: dict[tuple[str, str], list[Hashable]] = {}
    for key, spec in conditions:
        cells.setdefault((spec.stated_gender, spec.perceived_gender), []).append(key)
    genders = _ordered_unique([g for cell in cells for g in cell])
    if gender_order:
        genders = [g for g in gender_order if g in genders] + [g for g in genders if g not in gender_order]
    if len(genders) != 2 or len(cells) != 4:
        raise ValueError(f"the opposite design needs the four cells of two genders, got {sorted(cells)}")
    g0, g1 = genders

    def cell(stated: str, perceived: str) -> tuple[Hashable, ...]:
        return tuple(cells[(stated, perceived)])

    def label(*pairs: tuple[str, str]) -> str:
        return " + ".join(f"stated {s} / perceived {p}" for s, p in pairs)

    specs = [
        ("correct_gap", ((g0, g0),), ((g1, g1),)),
        ("wrong_gap", ((g1, g0),), ((g0, g1),)),
        ("tutor_effect", ((g0, g0), (g1, g0)), ((g0, g1), (g1, g1))),
        ("simulator_effect", ((g0, g0), (g0, g1)), ((g1, g0), (g1, g1))),
        ("interaction", ((g0, g1), (g1, g0)), ((g0, g0), (g1, g1))),
    ]
    return [
        Contrast(
            "opposite",
            "opposite",
            component,
            label(*side_a),
            label(*side_b),
            tuple(cell(*c) for c in side_a),
            tuple(cell(*c) for c in side_b),
        )
        for component, side_a, side_b in specs
    ]


def contrast_seed(seed: int, tutor: Hashable, domain: Hashable, contrast: Contrast) -> int:
    """The bootstrap seed of one (tutor, domain, contrast): stable, independent of what else is analysed."""
    text = repr((int(seed), str(tutor), str(domain), contrast.key))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 1


def _contrast_effects(d: np.ndarray, params: AnalysisParameters, cell_seed: int) -> list[PairedEffect]:
    """All metrics (columns of d) of one contrast, sharing one resample-index matrix."""
    n_questions, n_metrics = d.shape
    encoded = [_encode_differences(d[:, m], params.round_decimals) for m in range(n_metrics)]
    cells = _observed_and_bootstrap(encoded, n_questions, params, cell_seed)
    if params.n_boot:
        mean_low, mean_high = _percentile_interval(
            np.vstack([cell.mean_diffs[1:] for cell in cells]), params.confidence
        )
    else:
        mean_low = mean_high = np.full(n_metrics, np.nan)
    return [
        _cell_result(d[:, m], cell, cell.effect_ci, (mean_low[m], mean_high[m]), params) for m, cell in enumerate(cells)
    ]
