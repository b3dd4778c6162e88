"""The training gate as a pure decision on pilot agreement with gold and qualification answers.

An annotator passes when pilot agreement with gold ≥ its threshold AND at least K of the N qualification items are
answered correctly (SafeTutors Appendix D: ≥ 80 % on the pilot and ≥ 8/10 on the test).

The qualification counts correct answers over the whole test: an Unsure answer is not correct, whatever
the stage's Unsure rule ("8 of 10" means eight right answers out of ten items). The stage's rule applies
to the pilot's agreement with gold (`annotation.agreement.gold_agreement`): ``strict`` (an Unsure answer
is a miss) or ``exclude`` (left out); with ``exclude`` the pilot must also reach a minimum coverage
(answered / pilot items), so that answering Unsure to everything hard is not a way through the gate.
`gate_rules` states these rules in words for the stage page, the annotator's page and the report. The
decision records both scores, the rule and the thresholds, so it can be stored and published as is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from annotation.agreement import UNSURE, gold_agreement

STRICT = "strict"
EXCLUDE = "exclude"
# Thresholds are compared with a little slack so that 24/30 meets 0.80 however either was rounded.
TOLERANCE = 1e-9


@dataclass(frozen=True)
class GoldComparison:
    """One answer compared with gold: the annotator's value (None when unsure) and the gold value."""

    value: str | None
    gold: str
    unsure: bool = False

    @property
    def as_label(self) -> str | None:
        return UNSURE if self.unsure else self.value


@dataclass(frozen=True)
class GateParams:
    """``qualification_threshold`` is K / N (8 of 10 is 0.8); ``min_coverage`` is the pilot's coverage
    floor under the ``exclude`` rule (the stage's ``unsure_min_coverage``)."""

    pilot_threshold: float = 0.80
    qualification_threshold: float = 0.80
    unsure_rule: str = STRICT
    min_coverage: float = 0.0

    def __post_init__(self) -> None:
        if self.unsure_rule not in (STRICT, EXCLUDE):
            raise ValueError(f"unsure_rule must be {STRICT!r} or {EXCLUDE!r}, got {self.unsure_rule!r}")


@dataclass(frozen=True)
class GoldScore:
    """Agreement with gold on one set (pilot or qualification)."""

    agreement: float | None  # None when nothing could be counted (e.g. every answer Unsure, rule exclude)
    correct: int
    counted: int
    total: int
    unsure: int
    coverage: float  # counted / total

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class GateDecision:
    passed: bool
    pilot: GoldScore
    qualification: GoldScore
    rule: str
    params: GateParams
    reasons: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "passed": self.passed,
            "pilot": self.pilot.as_dict(),
            "qualification": self.qualification.as_dict(),
            "rule": self.rule,
            "params": asdict(self.params),
            "reasons": list(self.reasons),
        }


def gold_score(comparisons: Sequence[GoldComparison], rule: str) -> GoldScore:
    """Agreement with gold under ``rule``; every comparison must carry an answer or Unsure."""
    labels = [c.as_label for c in comparisons]
    if any(label is None for label in labels):
        raise ValueError("every gold item needs an answer (a value or Unsure) before it is scored")
    result = gold_agreement(labels, [c.gold for c in comparisons], unsure=rule)
    unsure = sum(c.unsure for c in comparisons)
    counted = result.n_units
    correct = round(result.value * counted) if result.value is not None else 0
    return GoldScore(
        agreement=result.value,
        correct=correct,
        counted=counted,
        total=len(comparisons),
        unsure=unsure,
        coverage=counted / len(comparisons) if comparisons else 0.0,
    )


def correct_needed(threshold: float, total: int) -> int:
    """K for a test of ``total`` items: the least number of correct answers whose share meets ``threshold``."""
    return max(0, math.ceil(threshold * total - TOLERANCE))


def _pilot_reasons(score: GoldScore, params: GateParams) -> list[str]:
    if score.total == 0:
        return ["pilot: no gold items to score"]
    reasons = []
    if score.agreement is None:
        reasons.append("pilot: nothing to score (every answer was Unsure and Unsure is excluded)")
    elif score.agreement < params.pilot_threshold - TOLERANCE:
        reasons.append(
            f"pilot: agreement {score.agreement:.1%} ({score.correct} of {score.counted}) is below the "
            f"threshold {params.pilot_threshold:.0%}"
        )
    if params.unsure_rule == EXCLUDE and score.coverage < params.min_coverage - TOLERANCE:
        reasons.append(
            f"pilot: coverage {score.coverage:.1%} ({score.counted} of {score.total} items answered, "
            f"{score.unsure} Unsure) is below the minimum coverage {params.min_coverage:.0%} "
            "required when Unsure is excluded"
        )
    return reasons


def pilot_passes(score: GoldScore, params: GateParams) -> bool:
    """Whether the pilot alone meets the gate's pilot rule (agreement, and coverage under "exclude")."""
    return not _pilot_reasons(score, params)


def _qualification_reasons(score: GoldScore, params: GateParams) -> list[str]:
    if score.total == 0:
        return ["qualification: no gold items to score"]
    needed = correct_needed(params.qualification_threshold, score.total)
    if score.correct >= needed:
        return []
    unsure = f", {score.unsure} Unsure" if score.unsure else ""
    return [
        f"qualification: {score.correct} of {score.total} correct{unsure}; at least {needed} of {score.total} "
        "needed (Unsure counts as not correct)"
    ]


def gate_decide(
    pilot: Sequence[GoldComparison], qualification: Sequence[GoldComparison], params: GateParams
) -> GateDecision:
    """Pass or fail, with both scores, the Unsure rule and every reason for a failure.

    The pilot is scored under the stage's Unsure rule; the qualification always over the whole test (its
    score is correct / N, an Unsure answer counting as not correct)."""
    pilot_score = gold_score(pilot, params.unsure_rule)
    qualification_score = gold_score(qualification, STRICT)
    reasons = _pilot_reasons(pilot_score, params) + _qualification_reasons(qualification_score, params)
    return GateDecision(
        passed=not reasons,
        pilot=pilot_score,
        qualification=qualification_score,
        rule=params.unsure_rule,
        params=params,
        reasons=reasons,
    )


def gate_rules(params: GateParams, *, pilot_size: int, qualification_size: int) -> dict[str, str]:
    """The gate's rules in words, as the stage page, the annotator's training page and the report state them."""
    pilot = f"Pilot ({pilot_size} gold items): agreement with gold of at least {params.pilot_threshold:.0%}"
    if params.unsure_rule == EXCLUDE:
        pilot += (
            f"; Unsure answers are left out of the agreement, its coverage (answered / pilot items) is reported, "
            f"and at least {params.min_coverage:.0%} of the pilot items must get a real answer"
        )
    else:
        pilot += "; an Unsure answer counts as a miss"
    needed = correct_needed(params.qualification_threshold, qualification_size)
    qualification = (
        f"Qualification test: at least {needed} of {qualification_size} correct, Unsure counts as not correct"
    )
    return {"pilot": pilot + ".", "qualification": qualification + ".", "both": "Both are needed to pass."}
