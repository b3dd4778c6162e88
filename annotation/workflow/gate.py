"""The training gate, pure: an annotator passes when pilot agreement with gold ≥ its threshold AND the
qualification test ≥ its threshold (SafeTutors Appendix D: ≥ 80 % on the pilot and ≥ 8/10 on the test).

Agreement with gold comes from `annotation.agreement.gold_agreement`, with the stage's rule for "Unsure":
``strict`` (an Unsure answer is a miss) or ``exclude`` (left out; coverage reported, and a stage can ask
for a minimum coverage so that answering Unsure to everything hard is not a way through the gate).
The decision records both scores, the rule and the thresholds, so it can be stored and published as is.
"""

from __future__ import annotations

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


def _check(name: str, score: GoldScore, threshold: float, params: GateParams) -> list[str]:
    if score.total == 0:
        return [f"{name}: no gold items to score"]
    if score.agreement is None:
        return [f"{name}: nothing to score (every answer was Unsure and Unsure is excluded)"]
    reasons = []
    if score.agreement < threshold - TOLERANCE:
        reasons.append(f"{name}: agreement {score.agreement:.1%} is below the threshold {threshold:.0%}")
    if params.unsure_rule == EXCLUDE and score.coverage < params.min_coverage - TOLERANCE:
        reasons.append(f"{name}: coverage {score.coverage:.1%} is below the minimum {params.min_coverage:.0%}")
    return reasons


def gate_decide(
    pilot: Sequence[GoldComparison], qualification: Sequence[GoldComparison], params: GateParams
) -> GateDecision:
    """Pass or fail, with both scores, the Unsure rule and every reason for a failure."""
    pilot_score = gold_score(pilot, params.unsure_rule)
    qualification_score = gold_score(qualification, params.unsure_rule)
    reasons = _check("pilot", pilot_score, params.pilot_threshold, params)
    reasons += _check("qualification", qualification_score, params.qualification_threshold, params)
    return GateDecision(
        passed=not reasons,
        pilot=pilot_score,
        qualification=qualification_score,
        rule=params.unsure_rule,
        params=params,
        reasons=reasons,
    )
