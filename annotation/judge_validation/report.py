"""The judge-validation report, pure: per metric, human–human and judge–human agreement and a verdict.

Per metric it gives how well humans agree with each other (Krippendorff's α, ordinal, before and after discussion), how
well a judge agrees with the human consensus (Cohen's κ linear-weighted with a bootstrap CI, α with the judge as one
more rater, exact and within-one agreement), the confusion matrix, the turns where the judge and the consensus differ
most, and a verdict against the researcher's thresholds.

Conventions, stated once and used by every number here:

- Values are strings: the scale's values in order (``"0"``, ``"1"``, ``"2"``) and `NA` for "not applicable".
- "Not applicable" has no place on an ordinal scale, so α (ordinal) and weighted κ leave it out (a missing
  rating). Exact agreement, within-one agreement and the confusion matrix keep it as a category: judge and
  consensus agree when both say "not applicable", and "not applicable" against any value is a miss.
- "After discussion" takes each annotator's post-discussion answer where they gave one, else their first.
- The verdict rests on chance-corrected agreement, never on raw agreement (a judge that answers the most
  common label everywhere has high exact agreement and κ = 0). Its conditions: the judge's Cohen's κ (linear
  weights: the scale is ordinal) with the consensus reaches the judge threshold — by the verdict rule in force,
  `interval` (the default: the LOWER BOUND of κ's bootstrap interval reaches it) or `point` (the point estimate
  reaches it; kept by name for comparison) —, judge and consensus disagree on whether the metric applies on at
  most (1 − threshold) of the turns, and the humans' own α before discussion is known and ≥ the human threshold
  (EduFair-Bench reports α before discussion). It fails when κ, the "not applicable" disagreements or a known
  human α fall short; it is "undecided" when κ (or, under `interval`, its interval) is undefined, no consensus
  exists yet, or the humans' α is unknown (imported sets hold one label per response: their human reliability
  is unknown, so they never pass); a metric an imported file has no labels for is "not labelled" and left out
  of the verdicts. Every verdict names its rule and states its n, its interval and each condition in words.
- Units: κ counts the turns both judge and consensus rated on the scale; α counts the items with two or more
  ratings and the pairable values in them (ratings in such items); the two sit side by side with their own units.
- κ's CI: percentile bootstrap over turns (numpy; B = 2,000, seeded from the metric's name), 95 %.

The statistics come from `annotation.agreement` (the `krippendorff` package and scikit-learn).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from annotation.agreement import AgreementResult, cohen_kappa, krippendorff_alpha
from annotation.agreement_units import rating_units

NA = "n/a"
PASS, FAIL, UNDECIDED, NOT_LABELLED = "pass", "fail", "undecided", "not labelled"
DEFAULT_TOP_DIFFERENCES = 10
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_BLOCK_CELLS = 500_000  # resampled indices held at once (about 4 MB)
CI_LEVEL = 0.95
RULE_INTERVAL, RULE_POINT = "interval", "point"
VERDICT_RULES = {
    RULE_INTERVAL: (
        "pass when the lower bound of the judge's κ interval (95 % percentile bootstrap over turns) reaches the "
        "judge threshold"
    ),
    RULE_POINT: "pass when the point estimate of the judge's κ reaches the judge threshold (kept for comparison)",
}
DEFAULT_VERDICT_RULE = RULE_INTERVAL
HUMAN_RELIABILITY_UNKNOWN = (
    "human reliability unknown: one imported label per response, so no human–human α to check the labels by"
)


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
    judge_agreement_min: float = 0.80  # the least Cohen's κ (linear) between judge and consensus


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


def alpha_units(labels: dict[int, dict[int, str]]) -> dict:
    """What α (ordinal, "not applicable" missing) counts: items rated on the scale, items with two or more
    such ratings (α's units), and the pairable values (the ratings in those items)."""
    return rating_units(sum(_ordinal(v) is not None for v in by_annotator.values()) for by_annotator in labels.values())


def kappa_units(judge: dict[int, str], consensus: dict[int, str]) -> dict:
    """What the judge's κ counts, judge and consensus as two raters of each turn, "not applicable" left out:
    turns rated on the scale, turns both rated (κ's units), and their ratings."""
    on_scale = (None, NA)
    return rating_units(
        (judge.get(item) not in on_scale) + (consensus.get(item) not in on_scale) for item in {*judge, *consensus}
    )


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


def bootstrap_seed(metric: str) -> int:
    return zlib.crc32(f"judge-validation kappa {metric}".encode())


def kappa_bootstrap(
    judge: Sequence[int], consensus: Sequence[int], k: int, *, seed: int, resamples: int = BOOTSTRAP_RESAMPLES
) -> np.ndarray:
    """Linear-weighted κ on ``resamples`` paired resamples of the turns (values are scale positions 0..k-1):
    each resample's k × k table comes from one bincount, in blocks of resamples so memory stays near
    ``BOOTSTRAP_BLOCK_CELLS`` indices. NaN where a resample's expected disagreement is zero (κ undefined)."""
    codes = np.asarray(judge, dtype=np.int64) * k + np.asarray(consensus, dtype=np.int64)
    n = codes.size
    rng = np.random.default_rng(seed)
    block = max(1, BOOTSTRAP_BLOCK_CELLS // max(n, 1))
    tables = np.empty((resamples, k, k))
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        cells = codes[rng.integers(0, n, size=(size, n))] + (np.arange(size, dtype=np.int64) * k * k)[:, None]
        tables[start : start + size] = np.bincount(cells.ravel(), minlength=size * k * k).reshape(size, k, k)
    weights = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    observed = (tables * weights).sum(axis=(1, 2))
    expected = np.einsum("bi,bj,ij->b", tables.sum(axis=2), tables.sum(axis=1), weights) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1.0 - observed / expected, np.nan)


def kappa_with_ci(pairs: Sequence[tuple[int, str, str]], scale: Sequence[str], *, seed: int) -> dict:
    """Cohen's κ (linear; scikit-learn) with its percentile bootstrap CI over turns, as one dict."""
    point = weighted_kappa(pairs, scale)
    found = {**point.as_dict(), "ci_low": None, "ci_high": None, "ci_level": CI_LEVEL, "resamples": 0, "seed": seed}
    if not point.is_defined:
        return found
    rank = {value: i for i, value in enumerate(scale)}
    on_scale = [(rank[j], rank[c]) for _, j, c in pairs if j != NA and c != NA]
    values = kappa_bootstrap([j for j, _ in on_scale], [c for _, c in on_scale], len(scale), seed=seed)
    defined = values[~np.isnan(values)]
    if defined.size:
        tail = (1 - CI_LEVEL) / 2 * 100
        low, high = np.percentile(defined, [tail, 100 - tail])
        found.update(ci_low=float(low), ci_high=float(high), resamples=int(defined.size))
    return found


def applicability_mismatch(pairs: Sequence[tuple[int, str, str]]) -> float | None:
    """Share of compared turns where exactly one of judge and consensus says "not applicable" (κ leaves
    those turns out, so the verdict checks them apart)."""
    if not pairs:
        return None
    return sum((j == NA) != (c == NA) for _, j, c in pairs) / len(pairs)


def kappa_text(kappa: dict) -> str:
    if kappa.get("value") is None:
        return f"κ undefined ({kappa.get('undefined_reason')})"
    text = f"κ {kappa['value']:.3f}"
    if kappa.get("ci_low") is not None:
        text += f" (95 % CI {kappa['ci_low']:.3f} to {kappa['ci_high']:.3f}, n = {kappa['n_units']} turns rated)"
    return text


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


class VerdictRuleError(ValueError):
    """A verdict rule name that is not in `VERDICT_RULES`."""


def verdict_rule_from(value: str | None) -> str:
    """The verdict rule named by ``value`` (empty: the default), or `VerdictRuleError` naming the choices."""
    if value in (None, ""):
        return DEFAULT_VERDICT_RULE
    if value not in VERDICT_RULES:
        choices = ", ".join(VERDICT_RULES)
        raise VerdictRuleError(f"The verdict rule is one of {choices} (default {DEFAULT_VERDICT_RULE}).")
    return value


def verdict_rule_info(rule: str) -> dict:
    """The rule as every door names it: its name and its description."""
    return {"name": rule, "description": VERDICT_RULES[rule]}


def _kappa_condition(kappa: dict, threshold: float, rule: str) -> tuple[bool | None, str]:
    """Whether κ meets the threshold under ``rule`` (None: cannot tell), and the condition in words."""
    text = kappa_text(kappa)
    if kappa.get("value") is None:
        return None, text
    if rule == RULE_POINT:
        met = kappa["value"] >= threshold
        return met, f"κ's point estimate {kappa['value']:.3f} {'≥' if met else '<'} {threshold:.2f} ({text})"
    if kappa.get("ci_low") is None:
        return None, f"{text}: no bootstrap interval, so its lower bound cannot be compared with {threshold:.2f}"
    met = kappa["ci_low"] >= threshold
    return met, (
        f"the lower bound {kappa['ci_low']:.3f} of κ's 95 % interval {'≥' if met else '<'} {threshold:.2f} ({text})"
    )


def verdict(
    *,
    human: AgreementResult | None,
    kappa: dict,
    n_compared: int,
    n_consensus: int,
    mismatch: float | None,
    thresholds: Thresholds,
    missing_reason: str = "",
    rule: str = DEFAULT_VERDICT_RULE,
) -> dict:
    """The verdict of one judge on one metric under ``rule`` (the rules are in the module's docstring).
    ``human`` is None for imported labels (one per response: no human α). ``kappa`` is `kappa_with_ci`'s
    dict. The verdict names its rule and states its n (turns compared), κ's interval, every condition with
    whether it was met (True, False, None: cannot tell) in words, and the reasons it did not pass."""
    base = {
        "rule": rule,
        "rule_text": VERDICT_RULES[rule],
        "n": n_compared,
        "interval": {"low": kappa.get("ci_low"), "high": kappa.get("ci_high"), "level": kappa.get("ci_level")},
        "kappa": kappa_text(kappa),
    }
    if n_consensus == 0 and missing_reason:
        return {**base, "outcome": NOT_LABELLED, "reasons": [missing_reason], "conditions": []}
    if n_consensus == 0:
        reason = "no turn has a human consensus for this metric yet"
        return {**base, "outcome": UNDECIDED, "reasons": [reason], "conditions": []}
    if n_compared == 0:
        reason = "no turn has both a judge score and a human consensus"
        return {**base, "outcome": UNDECIDED, "reasons": [reason], "conditions": []}
    conditions = []
    met, text = _kappa_condition(kappa, thresholds.judge_agreement_min, rule)
    conditions.append({"condition": "judge κ", "met": met, "text": text})
    if mismatch is None:
        conditions.append({"condition": "applicability", "met": True, "text": "no turn compared on applicability"})
    else:
        limit = 1 - thresholds.judge_agreement_min
        ok = mismatch <= limit + 1e-12
        conditions.append(
            {
                "condition": "applicability",
                "met": ok,
                "text": f"judge and humans differ on whether the metric applies on {mismatch:.0%} of the turns"
                f" ({'at most' if ok else 'more than'} {limit:.0%})",
            }
        )
    if human is None:
        conditions.append({"condition": "human α", "met": None, "text": HUMAN_RELIABILITY_UNKNOWN})
    elif not human.is_defined:
        conditions.append(
            {"condition": "human α", "met": None, "text": f"human α is undefined ({human.undefined_reason})"}
        )
    else:
        ok = human.value >= thresholds.human_alpha_min
        conditions.append(
            {
                "condition": "human α",
                "met": ok,
                "text": f"human α {human.value:.3f} {'≥' if ok else '<'} {thresholds.human_alpha_min:.2f}"
                f" ({human.n_units} items with two or more ratings)",
            }
        )
    failures = [c["text"] for c in conditions if c["met"] is False]
    open_questions = [c["text"] for c in conditions if c["met"] is None]
    outcome = FAIL if failures else UNDECIDED if open_questions else PASS
    return {**base, "outcome": outcome, "reasons": failures + open_questions, "conditions": conditions}


def judge_section(
    labels: MetricLabels,
    judge: dict[int, str],
    thresholds: Thresholds,
    human_pre: AgreementResult,
    missing_reason: str = "",
    rule: str = DEFAULT_VERDICT_RULE,
) -> dict:
    """One judge against the consensus of one metric; its verdict under ``rule``, and the outcome under
    every rule of `VERDICT_RULES` for comparison (``verdict_by_rule``)."""
    pairs = paired(judge, labels.consensus)
    kappa = kappa_with_ci(pairs, labels.scale, seed=bootstrap_seed(labels.metric))
    mismatch = applicability_mismatch(pairs)
    kappa = {**kappa, "units": kappa_units(judge, labels.consensus)}
    verdicts = {
        name: verdict(
            human=human_pre if labels.human_pre else None,
            kappa=kappa,
            n_compared=len(pairs),
            n_consensus=len(labels.consensus),
            mismatch=mismatch,
            thresholds=thresholds,
            missing_reason=missing_reason,
            rule=name,
        )
        for name in VERDICT_RULES
    }
    return {
        "n_compared": len(pairs),
        "n_scored": sum(1 for v in judge.values() if v is not None),
        "exact_agreement": exact_agreement(pairs),
        "within_one": within_one(pairs, labels.scale),
        "kappa_linear": kappa,
        "applicability_mismatch": mismatch,
        "alpha_with_judge": alpha_with_judge(labels.human_pre, judge, labels.scale).as_dict()
        if labels.human_pre
        else AgreementResult("krippendorff_alpha_ordinal", None, 0, "no human labels").as_dict(),
        "confusion": confusion_matrix(pairs, labels.scale),
        "largest_differences": largest_differences(pairs, labels.scale),
        "verdict": verdicts[rule],
        "verdict_by_rule": {name: found["outcome"] for name, found in verdicts.items()},
    }


def metric_report(
    labels: MetricLabels,
    judges: dict[str, dict[int, str]],
    thresholds: Thresholds,
    missing_reason: str = "",
    rule: str = DEFAULT_VERDICT_RULE,
) -> dict:
    """One metric: the human agreement (with its units) and, for each judge (by key), its agreement with the
    consensus and its verdict under ``rule``. ``missing_reason`` says why a metric has no human label (e.g.
    the imported file lacks its dimension)."""
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
        "human_alpha_pre": {**pre.as_dict(), "units": alpha_units(labels.human_pre)},
        "human_alpha_post": {**post.as_dict(), "units": alpha_units(labels.human_post or labels.human_pre)},
        "judges": {
            key: judge_section(labels, judge, thresholds, pre, missing_reason, rule) for key, judge in judges.items()
        },
    }


def best_judge_per_metric(metrics: list[dict]) -> dict[str, str | None]:
    """For each metric, the judge key with the highest κ with the consensus (ties: the first in order)."""
    best: dict[str, str | None] = {}
    for row in metrics:
        scored = [
            (key, s["kappa_linear"]["value"])
            for key, s in row["judges"].items()
            if s["kappa_linear"]["value"] is not None
        ]
        best[row["metric"]] = max(scored, key=lambda pair: pair[1])[0] if scored else None
    return best


def recorded_outcome(row: dict, judge_agreement_min: float, rule: str = DEFAULT_VERDICT_RULE) -> tuple[str, str]:
    """A recorded metric's outcome under ``rule``, and the rule it was recorded under. A recording made
    before the rules had names was made by the point rule; under `interval` its pass holds only when its
    recorded κ interval's lower bound reaches ``judge_agreement_min`` (every other condition had been met),
    and becomes undecided when no interval was recorded; its fail or undecided stands under both rules."""
    by_rule = row.get("verdict_by_rule") or {}
    if rule in by_rule:
        return by_rule[rule], row.get("verdict_rule", rule)
    recorded_rule = row.get("verdict_rule", RULE_POINT)
    outcome = row.get("verdict", "")
    if recorded_rule == rule or outcome != PASS or rule != RULE_INTERVAL:
        return outcome, recorded_rule
    low = (row.get("kappa_ci") or [None])[0]
    if low is None:
        return UNDECIDED, recorded_rule
    return (PASS if low >= judge_agreement_min else FAIL), recorded_rule
