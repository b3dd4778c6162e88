"""The judge's validity in three layers per metric, pure: the human ceiling, the judge against humans, its direction.

(a) **The human ceiling** — how well the humans agree, which bounds what a judge can be asked for: the humans' α
    (ordinal, before discussion) with its bootstrap interval over items and the probability that it falls under
    0.667 and 0.800 (`annotation.agreement_intervals.alpha_interval`), and each annotator against the others: Cohen's
    κ (linear) between the annotator and the others' majority value (items where the others have a single most
    common value on the scale), and α of the panel without that annotator (leave-one-out).
(b) **The judge against the humans** — Cohen's κ (linear) with its interval (the report's own, on which the verdict
    rests), Gwet's AC1 and AC2 (linear weights, like κ) with their intervals (`ac1_interval`), the κ-paradox
    warning (`annotation.gwet.prevalence_warning`: unweighted κ against AC1, like with like, with the class shares),
    and the alternative annotator test (`annotation.alt_test`: ω, ρ, pass / fail at the chosen ε, the requirements
    it needs and which are unmet). The judge and the consensus are the two raters of AC1 / AC2, on the turns both
    rated on the scale (κ's units); the alt-test compares the judge with each annotator's own labels, "not
    applicable" a category like any other.
(c) **The judge's direction** — `annotation.judge_validation.direction`: mean (judge − consensus) with its interval,
    overall and per tutor and per condition where the items carry them, and Kendall's τ between the tutors' (and
    the conditions') mean judge and mean consensus scores, with its interval.

Across several judges, the alt-test's ρ ranks them (``judges_by_rho``). Every interval is seeded from the content.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from annotation.agreement import cohen_kappa
from annotation.agreement_intervals import ac1_interval, alpha_interval, content_seed
from annotation.alt_test import EPSILON_CROWD, EPSILON_EXPERT, alt_test
from annotation.gwet import DEFAULT_PREVALENCE_MARGIN, class_shares, prevalence_warning
from annotation.judge_validation import direction
from annotation.judge_validation.report import MetricLabels, human_alpha, weighted_kappa

EPSILON_MEANINGS = {
    EPSILON_EXPERT: "expert annotators (the authors' default)",
    EPSILON_CROWD: "crowd workers",
}
EPSILON_MIN, EPSILON_MAX = 0.0, 0.5
STRATA = ("tutor", "condition")


class EpsilonError(ValueError):
    """An ε the alt-test cannot take."""


def epsilon_from(value: str | float | None) -> float:
    """The alt-test's ε from a query parameter (empty: the experts' 0.2), or `EpsilonError` saying the range."""
    if value in (None, ""):
        return EPSILON_EXPERT
    try:
        found = float(value)
    except (TypeError, ValueError) as exc:
        raise EpsilonError(f"ε is a number from {EPSILON_MIN} to {EPSILON_MAX}, not {value!r}.") from exc
    if not EPSILON_MIN < found <= EPSILON_MAX:
        raise EpsilonError(
            f"ε is a number above {EPSILON_MIN} and at most {EPSILON_MAX} "
            f"({EPSILON_EXPERT} for experts, {EPSILON_CROWD} for crowd workers)."
        )
    return found


def epsilon_text(epsilon: float) -> str:
    """ε with its meaning, e.g. "ε = 0.20 (expert annotators (the authors' default))"."""
    meaning = EPSILON_MEANINGS.get(epsilon, "chosen by the researcher")
    return f"ε = {epsilon:.2f} ({meaning})"


def _on_scale(value: str | None, scale) -> str | None:
    return value if value in scale else None


def _majority(values: list[str]) -> str | None:
    """The single most common value, or None when two values tie for it (or there is none)."""
    counts = Counter(values).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def human_ceiling(labels: MetricLabels) -> dict:
    """Layer (a): the humans' α with its interval, and each annotator against the others (see the docstring)."""
    scale = list(labels.scale)
    items = sorted(labels.human_pre)
    annotators = sorted({a for by_annotator in labels.human_pre.values() for a in by_annotator})
    matrix = [[_on_scale(labels.human_pre[i].get(a), scale) for i in items] for a in annotators]
    if matrix and items:
        alpha = alpha_interval(
            matrix, "ordinal", value_domain=scale, seed=content_seed("jv human alpha", labels.metric, matrix)
        )
    else:
        alpha = {"estimate": None, "low": None, "high": None, "undefined_reason": "no human labels", "units": {}}
    per_annotator = []
    for annotator in annotators:
        pairs = []
        for item in items:
            own = _on_scale(labels.human_pre[item].get(annotator), scale)
            others = [
                v for a, v in labels.human_pre[item].items() if a != annotator and _on_scale(v, scale) is not None
            ]
            majority = _majority(others)
            if own is not None and majority is not None:
                pairs.append((item, own, majority))
        kappa = weighted_kappa(pairs, scale)
        without = {i: {a: v for a, v in by.items() if a != annotator} for i, by in labels.human_pre.items()}
        alpha_without = human_alpha(without, scale)
        per_annotator.append(
            {
                "annotator": annotator,
                "kappa_vs_others": kappa.as_dict(),
                "n_items": len(pairs),
                "alpha_without": alpha_without.as_dict(),
            }
        )
    return {"human_alpha": alpha, "per_annotator": per_annotator}


def judge_against_humans(labels: MetricLabels, judge: Mapping[int, str], kappa: dict, *, epsilon: float) -> dict:
    """Layer (b) for one judge: κ (given: the report's, with its interval), AC1 and AC2 with their intervals, the
    κ-paradox warning, and the alt-test at ``epsilon``."""
    scale = list(labels.scale)
    pairs = [
        (item, judge[item], labels.consensus[item])
        for item in sorted(labels.consensus)
        if _on_scale(judge.get(item), scale) is not None and _on_scale(labels.consensus[item], scale) is not None
    ]
    ratings = [[j, c] for _, j, c in pairs]
    if ratings:
        seed = content_seed("jv judge ac", labels.metric, ratings)
        ac1 = ac1_interval(ratings, scale, seed=seed)
        ac2 = ac1_interval(ratings, scale, weights="linear", seed=seed)
    else:
        ac1 = ac2 = {"estimate": None, "low": None, "high": None, "undefined_reason": "no turn compared", "units": {}}
    unweighted = cohen_kappa([j for _, j, _ in pairs], [c for _, _, c in pairs], None, labels=scale)
    shares = class_shares([v for row in ratings for v in row], scale)
    warning = prevalence_warning(unweighted.value, ac1.get("estimate"), shares, DEFAULT_PREVALENCE_MARGIN)
    humans = {str(a): {} for by in labels.human_pre.values() for a in by}
    for item, by_annotator in labels.human_pre.items():
        for annotator, value in by_annotator.items():
            humans[str(annotator)][item] = value
    test = alt_test(humans, {i: v for i, v in judge.items() if v is not None}, epsilon=epsilon).as_dict()
    test["epsilon_text"] = epsilon_text(epsilon)
    return {
        "kappa_linear": kappa,
        "kappa_unweighted": unweighted.as_dict(),
        "ac1": ac1,
        "ac2_linear": ac2,
        "class_shares": shares,
        "prevalence_margin": DEFAULT_PREVALENCE_MARGIN,
        "prevalence_warning": warning,
        "alt_test": test,
    }


def _numbers(values: Mapping[int, str], scale) -> dict[int, float]:
    return {item: float(v) for item, v in values.items() if _on_scale(v, scale) is not None}


def judge_direction(labels: MetricLabels, judge: Mapping[int, str], strata: Mapping[int, Mapping[str, str]]) -> dict:
    """Layer (c) for one judge: mean (judge − consensus) overall and per stratum, and Kendall's τ of the tutors'
    (and conditions') mean scores; ``strata`` maps an item to its {"tutor": …, "condition": …} (either may lack)."""
    scale = list(labels.scale)
    judged, human = _numbers(judge, scale), _numbers(labels.consensus, scale)
    found = {"mean_difference": direction.mean_difference(judged, human), "by_stratum": {}, "rank_agreement": {}}
    for kind in STRATA:
        groups = {item: str(s[kind]) for item, s in strata.items() if s.get(kind) not in (None, "")}
        if not groups:
            continue
        found["by_stratum"][kind] = direction.by_stratum(judged, human, groups)
        found["rank_agreement"][kind] = direction.rank_agreement(judged, human, groups, grouping=kind)
    return found


def metric_layers(
    labels: MetricLabels,
    judges: Mapping[str, Mapping[int, str]],
    kappas: Mapping[str, dict],
    *,
    strata: Mapping[int, Mapping[str, str]] | None = None,
    epsilon: float = EPSILON_EXPERT,
) -> dict:
    """The three layers of one metric: the human ceiling, and per judge (by key) the judge against the humans
    and its direction; ``kappas`` holds each judge's κ dict from the report; judges ranked by the alt-test's ρ."""
    per_judge = {
        key: {
            "judge_vs_humans": judge_against_humans(labels, judge, kappas[key], epsilon=epsilon),
            "direction": judge_direction(labels, judge, strata or {}),
        }
        for key, judge in judges.items()
    }
    return {
        "human_ceiling": human_ceiling(labels),
        "judges": per_judge,
        "judges_by_rho": judges_by_rho(per_judge),
        "epsilon": epsilon,
        "epsilon_text": epsilon_text(epsilon),
    }


def judges_by_rho(per_judge: Mapping[str, dict]) -> list[dict]:
    """The judges in order of the alt-test's ρ (highest first; a judge the test could not run on comes last)."""
    rows = [{"judge": key, "rho": layers["judge_vs_humans"]["alt_test"]["rho"]} for key, layers in per_judge.items()]
    return sorted(rows, key=lambda row: (row["rho"] is None, -(row["rho"] or 0.0)))
