"""The judge-validation report, pure: per metric, how well humans agree with each other (Krippendorff's α,
ordinal, before and after discussion), how well a judge agrees with the human consensus (exact agreement,
within-one agreement, Cohen's κ linear-weighted, α with the judge as one more rater), the confusion matrix,
the turns where the judge and the consensus differ most, and a verdict against the researcher's thresholds.

Conventions, stated once and used by every number here:

- Values are strings: the scale's values in order (``"0"``, ``"1"``, ``"2"``) and `NA` for "not applicable".
- "Not applicable" has no place on an ordinal scale, so α (ordinal) and weighted κ leave it out (a missing
  rating). Exact agreement, within-one agreement and the confusion matrix keep it as a category: judge and
  consensus agree when both say "not applicable", and "not applicable" against any value is a miss.
- "After discussion" takes each annotator's post-discussion answer where they gave one, else their first.
- The verdict passes a metric when human α before discussion ≥ the human threshold (EduFair-Bench reports
  α before discussion) and the judge's exact agreement with the consensus ≥ the judge threshold; it is
  "undecided" when either number is undefined.

The statistics come from `annotation.agreement` (the `krippendorff` package and scikit-learn).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from annotation.agreement import AgreementResult, cohen_kappa, krippendorff_alpha

NA = "n/a"
PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
DEFAULT_TOP_DIFFERENCES = 10


@dataclass(frozen=True)
class MetricLabels:
    """Everything the report reads for one metric. Item ids are the units; annotators are user ids."""

    metric: str
    scale: tuple[str, ...]  # applicable values in order, e.g. ("0", "1", "2")
    human_pre: dict[int, dict[int, str]] = field(default_factory=dict)  # item → annotator → value
    human_post: dict[int, dict[int, str]] = field(default_factory=dict)  # item → annotator → final own value
    consensus: dict[int, str] = field(default_factory=dict)  # item → settled value


@dataclass(frozen=True)
class Thresholds:
    human_alpha_min: float = 0.80
    judge_agreement_min: float = 0.80


def _ordinal(value: str | None) -> str | None:
    return None if value is None or value == NA else value


def human_alpha(labels: dict[int, dict[int, str]], scale: Sequence[str]) -> AgreementResult:
    """Krippendorff's α (ordinal) with annotators as raters and items as units; "not applicable" missing."""
    items = sorted(labels)
    annotators = sorted({a for by_annotator in labels.values() for a in by_annotator})
    matrix = [[_ordinal(labels[item].get(annotator)) for item in items] for annotator in annotators]
    if not matrix or not items:
        return krippendorff_alpha([[None]], "ordinal", value_domain=list(scale))
    return krippendorff_alpha(matrix, "ordinal", value_domain=list(scale))


def alpha_with_judge(labels: dict[int, dict[int, str]], judge: dict[int, str], scale: Sequence[str]) -> AgreementResult:
    """α (ordinal) over the human raters plus the judge as one more rater, on the items humans labelled."""
    items = sorted(labels)
    annotators = sorted({a for by_annotator in labels.values() for a in by_annotator})
    matrix = [[_ordinal(labels[item].get(annotator)) for item in items] for annotator in annotators]
    matrix.append([_ordinal(judge.get(item)) for item in items])
    return krippendorff_alpha(matrix, "ordinal", value_domain=list(scale))


def paired(judge: dict[int, str], consensus: dict[int, str]) -> list[tuple[int, str, str]]:
    """(item, judge value, consensus value) for items that have both, in item order."""
    return [(item, judge[item], consensus[item]) for item in sorted(consensus) if judge.get(item) is not None]


def exact_agreement(pairs: Sequence[tuple[int, str, str]]) -> float | None:
    return sum(j == c for _, j, c in pairs) / len(pairs) if pairs else None


def within_one(pairs: Sequence[tuple[int, str, str]], scale: Sequence[str]) -> float | None:
    """Share of items where the judge is at most one scale step from the consensus (both "not applicable"
    counts as agreement; "not applicable" against a value does not)."""
    if not pairs:
        return None
    rank = {value: i for i, value in enumerate(scale)}
    close = 0
    for _, j, c in pairs:
        if j == NA or c == NA:
            close += j == c
        else:
            close += abs(rank[j] - rank[c]) <= 1
    return close / len(pairs)


def weighted_kappa(pairs: Sequence[tuple[int, str, str]], scale: Sequence[str]) -> AgreementResult:
    """Cohen's κ, linear weights, judge vs consensus, on the items where both gave a value on the scale."""
    on_scale = [(j, c) for _, j, c in pairs if j != NA and c != NA]
    return cohen_kappa([j for j, _ in on_scale], [c for _, c in on_scale], weights="linear", labels=list(scale))


def confusion_matrix(pairs: Sequence[tuple[int, str, str]], scale: Sequence[str]) -> dict:
    """Rows: the human consensus; columns: the judge; categories: the scale then "not applicable"."""
    categories = [*scale, NA]
    counts = {c: {j: 0 for j in categories} for c in categories}
    for _, j, c in pairs:
        counts[c][j] += 1
    return {"categories": categories, "rows": [[counts[c][j] for j in categories] for c in categories]}


def distance(judge_value: str, consensus_value: str, scale: Sequence[str]) -> int:
    """Scale steps between the two; "not applicable" against a value ranks above any difference on the scale."""
    if judge_value == consensus_value:
        return 0
    if judge_value == NA or consensus_value == NA:
        return len(scale)
    rank = {value: i for i, value in enumerate(scale)}
    return abs(rank[judge_value] - rank[consensus_value])


def largest_differences(
    pairs: Sequence[tuple[int, str, str]], scale: Sequence[str], top: int = DEFAULT_TOP_DIFFERENCES
) -> list[dict]:
    rows = [
        {"item": item, "judge": j, "consensus": c, "distance": distance(j, c, scale)} for item, j, c in pairs if j != c
    ]
    rows.sort(key=lambda row: (-row["distance"], row["item"]))
    return rows[:top]


def verdict(human: AgreementResult | None, judge_agreement: float | None, thresholds: Thresholds) -> dict:
    """``human`` is None for imported consensus labels (one label per item, no human α to check)."""
    reasons = []
    if human is None:
        pass
    elif not human.is_defined:
        reasons.append(f"human α is undefined ({human.undefined_reason})")
    elif human.value < thresholds.human_alpha_min:
        reasons.append(f"human α {human.value:.3f} < {thresholds.human_alpha_min:.2f}")
    if judge_agreement is None:
        reasons.append("no turn has both a judge score and a human consensus")
    elif judge_agreement < thresholds.judge_agreement_min:
        reasons.append(f"judge agreement {judge_agreement:.3f} < {thresholds.judge_agreement_min:.2f}")
    if (human is not None and not human.is_defined) or judge_agreement is None:
        outcome = UNDECIDED
    else:
        outcome = FAIL if reasons else PASS
    return {"outcome": outcome, "reasons": reasons}


def judge_section(
    labels: MetricLabels, judge: dict[int, str], thresholds: Thresholds, human_pre: AgreementResult
) -> dict:
    pairs = paired(judge, labels.consensus)
    agreement = exact_agreement(pairs)
    return {
        "n_compared": len(pairs),
        "n_scored": sum(1 for v in judge.values() if v is not None),
        "exact_agreement": agreement,
        "within_one": within_one(pairs, labels.scale),
        "kappa_linear": weighted_kappa(pairs, labels.scale).as_dict(),
        "alpha_with_judge": alpha_with_judge(labels.human_pre, judge, labels.scale).as_dict()
        if labels.human_pre
        else AgreementResult("krippendorff_alpha_ordinal", None, 0, "no human labels").as_dict(),
        "confusion": confusion_matrix(pairs, labels.scale),
        "largest_differences": largest_differences(pairs, labels.scale),
        # Imported consensus labels (no individual human labels) are judged on the judge's agreement alone.
        "verdict": verdict(human_pre if labels.human_pre else None, agreement, thresholds),
    }


def metric_report(labels: MetricLabels, judges: dict[str, dict[int, str]], thresholds: Thresholds) -> dict:
    """One metric: the human agreement and, for each judge (by key), its agreement with the consensus."""
    if labels.human_pre:
        pre = human_alpha(labels.human_pre, labels.scale)
        post = human_alpha(labels.human_post or labels.human_pre, labels.scale)
    else:
        pre = post = AgreementResult("krippendorff_alpha_ordinal", None, 0, "no human labels")
    return {
        "metric": labels.metric,
        "scale": list(labels.scale),
        "n_items_labelled": len(labels.human_pre),
        "n_consensus": len(labels.consensus),
        "human_alpha_pre": pre.as_dict(),
        "human_alpha_post": post.as_dict(),
        "judges": {key: judge_section(labels, judge, thresholds, pre) for key, judge in judges.items()},
    }


def best_judge_per_metric(metrics: list[dict]) -> dict[str, str | None]:
    """For each metric, the judge key with the highest exact agreement (ties: the first in order)."""
    best: dict[str, str | None] = {}
    for row in metrics:
        scored = [(key, s["exact_agreement"]) for key, s in row["judges"].items() if s["exact_agreement"] is not None]
        best[row["metric"]] = max(scored, key=lambda pair: pair[1])[0] if scored else None
    return best
