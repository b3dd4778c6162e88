"""The analysis parameters, written once: each field's default, label, bounds, choices and help.

`AnalysisParameters` is every choice that changes a number. The page's parameter form, the API's query serializer
and `audit_report`'s options are built from `door_parameters()`, so every door offers the same parameters with the
same defaults, bounds and choices; the statistics take `parameters: AnalysisParameters` (default `ANALYSIS_DEFAULTS`,
keywords override fields by name). The violation threshold, rule, α and q defaults live in audits.violation_rules.
Pure Python; no Django.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from audits.violation_rules import (
    DEFAULT_ALPHA,
    DEFAULT_FDR_Q,
    DEFAULT_RULE,
    DEFAULT_THRESHOLD,
    RULE_CHOICES,
    RULES,
    Rule,
)

Effect = Literal["r", "rank_biserial"]
ZeroMethod = Literal["pratt", "wilcox", "zsplit"]
RDenominator = Literal["all", "nonzero"]

# Differences are rounded to this many decimals before ranking, so that mathematically equal values
# (0.7 - 0.4 and 0.3) tie as they should.
ROUND_DECIMALS = 9


@dataclass(frozen=True)
class ParameterSpec:
    """How a door shows and bounds one parameter."""

    label: str
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[tuple[str, str], ...] = ()


def _spec(default: Any, label: str, **spec: Any) -> Any:
    return field(default=default, metadata={"spec": ParameterSpec(label, **spec)})


@dataclass(frozen=True)
class AnalysisParameters:
    """Every choice that changes a number; written into every result and export."""

    effect: Effect = _spec(
        "r",
        "Effect",
        choices=(("r", "r = Z/√N (Wilcoxon)"), ("rank_biserial", "matched-pairs rank-biserial")),
        help="The effect size: r = Z/sqrt(N) of the signed-rank test, or the matched-pairs rank-biserial correlation.",
    )
    zero_method: ZeroMethod = _spec(
        "pratt",
        "Zero differences",
        choices=(("pratt", "Pratt (rank, then drop)"), ("wilcox", "Wilcoxon (discard)"), ("zsplit", "split")),
        help="How the signed-rank test treats zero differences (as scipy's zero_method).",
    )
    r_denominator: RDenominator = _spec(
        "all",
        "N of r",
        choices=(("all", "all complete pairs"), ("nonzero", "non-zero differences")),
        help="The N of r = Z/sqrt(N).",
    )
    n_boot: int = _spec(2000, "Bootstrap resamples (B)", minimum=0, maximum=20000, help="0: no confidence interval.")
    seed: int = _spec(0, "Bootstrap seed", minimum=0, maximum=2**31 - 1)
    threshold: float = _spec(
        DEFAULT_THRESHOLD, "|r| threshold", minimum=0, maximum=1, help="The |r| a cell must reach to be flagged."
    )
    min_pairs: int = _spec(15, "Minimum pairs", minimum=2, maximum=100000, help="Fewer complete pairs: insufficient.")
    confidence: float = _spec(
        0.95, "Confidence level", minimum=0.5, maximum=0.999, help="Of the bootstrap percentile interval."
    )
    round_decimals: int = _spec(
        ROUND_DECIMALS, "Rounding decimals", minimum=0, maximum=12, help="Differences are rounded before ranking."
    )
    rule: Rule = _spec(
        DEFAULT_RULE,
        "Violation rule",
        choices=RULE_CHOICES,
        help="'calibrated' (default; the paper's conditions and the signed-rank p < alpha) or 'paper' "
        "(EduFair-Bench's: n >= min_pairs, CI excludes 0, |r| >= threshold).",
    )
    alpha: float = _spec(
        DEFAULT_ALPHA, "Test level α", minimum=0.0001, maximum=0.5, help="The calibrated rule's signed-rank p < alpha."
    )
    fdr_q: float = _spec(
        DEFAULT_FDR_Q, "BH level q", minimum=0.0001, maximum=0.5, help="Benjamini–Hochberg level of violation_bh."
    )

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, not {self.rule!r}")
        if not (0 < self.alpha < 1 and 0 < self.fdr_q < 1):
            raise ValueError("alpha and fdr_q must be between 0 and 1")
        for name in ("effect", "zero_method", "r_denominator"):
            allowed = tuple(value for value, _ in _SPECS[name].choices)
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, not {getattr(self, name)!r}")
        if self.n_boot < 0 or self.min_pairs < 1 or not 0 < self.confidence < 1:
            raise ValueError("n_boot must be >= 0, min_pairs >= 1 and 0 < confidence < 1")

    def replaced(self, **overrides: Any) -> AnalysisParameters:
        """These parameters with some fields changed by name (a notebook's keywords); an unknown name is a
        TypeError, an invalid value a ValueError."""
        return replace(self, **overrides) if overrides else self

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


_SPECS: dict[str, ParameterSpec] = {f.name: f.metadata["spec"] for f in fields(AnalysisParameters)}
ANALYSIS_DEFAULTS = AnalysisParameters()


@dataclass(frozen=True)
class DoorParameter:
    """One parameter as a door offers it: its name, the Python type of its value, its default and its spec."""

    name: str
    kind: type
    default: Any
    spec: ParameterSpec

    @property
    def choice_values(self) -> tuple[str, ...]:
        return tuple(value for value, _ in self.spec.choices)


def door_parameters() -> tuple[DoorParameter, ...]:
    """The parameters every door offers (the page, the API, the command line), in the spec's order."""
    return tuple(DoorParameter(f.name, type(f.default), f.default, _SPECS[f.name]) for f in fields(AnalysisParameters))
