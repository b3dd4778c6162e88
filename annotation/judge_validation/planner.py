"""The label planner of a judge validation: human labels a contrast needs for a target half-width.

Per metric and judge, how many human-labelled turns a fairness contrast needs for its judge-corrected interval to
reach the researcher's target half-width. The judge's error SD comes from the validation's own (judge, human
consensus) pairs; the count comes from the closed form of the judge-corrected estimator with λ = 1
(`audits.judge_corrected.labels_needed`, reached through `audit_source`), which PPI++'s tuned λ can only improve on,
so the counts are conservative. Both sides of a contrast get the same count, drawn independently. A judge-corrected
cell is one tutor in one domain, and each of its sides is one condition there — one sampling stratum (tutor ×
domain × condition) in the explicit and opposite designs — so the count per side is the count per stratum; a side
that pools several conditions (an implicit name group) may split it among them. The design effect of unequal
inclusion probabilities is Kish's, from the probabilities this sample recorded (the largest over the sample's sides,
tutor × condition). The judge mean's own variance is left out (many turns per side).

It also plans the validation itself (`validation_design_plan`): items per annotator (for 3, 4 and 5 annotators)
for the alt-test to pass with probability 0.8 for a judge of a given accuracy, and items for κ's interval to reach
a given half-width, from `annotation.alt_test_plan`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from annotation.alt_test_plan import alt_test_plan, kappa_half_width_plan
from annotation.judge_validation.audit_source import error_sd, kish_design_effect, labels_needed
from annotation.models import AnnotationProject, JudgeValidation, RubricVersion
from annotation.selectors.judge_validation import judge_consensus_pairs, sample_design

DEFAULT_HALF_WIDTH = 0.25
# A judge-corrected cell's side is one (tutor, domain, condition) stratum (see the module docstring).
STRATA_PER_SIDE = 1
HALF_WIDTH_MIN = 0.01  # on a 0–2 scale a difference lies in [−2, 2]; narrower than this is no plan
HALF_WIDTH_MAX = 2.0

ASSUMPTIONS = (
    "λ = 1 (PPI++'s tuned λ does at least as well, so these counts are conservative); the two sides' human samples "
    "independent, with the same count on each; the judge's error SD the same on both sides, as measured on this "
    "validation's turns; a contrast cell is one tutor in one domain and each side one condition, i.e. one stratum "
    "(tutor × domain × condition), so the count per side is the count per stratum (a side pooling several "
    "conditions, as implicit name groups do, may split it among them); the design effect is "
    "Kish's from the recorded inclusion probabilities (the largest over the sample's tutor × condition sides); the "
    "judge mean's own variance left out (many turns per side)."
)


class PlannerInputError(ValueError):
    """A target half-width the planner cannot use (the message says why)."""


def target_half_width_from(text: str | None) -> float:
    """The researcher's target half-width from a form or query value (blank: the default)."""
    if text is None or not str(text).strip():
        return DEFAULT_HALF_WIDTH
    try:
        value = float(text)
    except ValueError:
        raise PlannerInputError(f"The target half-width must be a number, not {text!r}.") from None
    if not math.isfinite(value) or not HALF_WIDTH_MIN <= value <= HALF_WIDTH_MAX:
        raise PlannerInputError(f"The target half-width must lie between {HALF_WIDTH_MIN} and {HALF_WIDTH_MAX}.")
    return value


@dataclass(frozen=True)
class PlanRow:
    """One metric and judge: the pairs the error SD rests on and, when there are at least 2, the plan."""

    metric: str
    judge_key: str
    judge_name: str
    n_pairs: int
    error_sd: float | None
    per_side: int | None
    per_stratum: int | None
    predicted_half_width: float | None
    note: str = ""


@dataclass(frozen=True)
class LabelPlanner:
    target_half_width: float
    alpha: float
    strata_per_side: int
    domains: tuple[str, ...]
    design_effect: float
    rows: list[PlanRow]
    assumptions: str = ASSUMPTIONS

    @property
    def level_percent(self) -> str:
        return f"{100 * (1 - self.alpha):g}"

    def as_dict(self) -> dict:
        return {
            "target_half_width": self.target_half_width,
            "alpha": self.alpha,
            "level_percent": self.level_percent,
            "strata_per_side": self.strata_per_side,
            "domains": list(self.domains),
            "design_effect": self.design_effect,
            "assumptions": self.assumptions,
            "rows": [row.__dict__.copy() for row in self.rows],
        }


def design_effect_of(side_probabilities: dict[tuple, list[float]]) -> float:
    """The largest Kish design effect over the sample's sides (1 with none)."""
    effects = [kish_design_effect(found) for found in side_probabilities.values() if found]
    return max(effects, default=1.0)


def label_planner(
    project: AnnotationProject,
    *,
    rubric: RubricVersion,
    validations: list[JudgeValidation],
    target_half_width: float = DEFAULT_HALF_WIDTH,
    alpha: float = 0.05,
) -> LabelPlanner:
    """The plan for every metric and judge of the report (see the module docstring)."""
    design = sample_design(project)
    strata = STRATA_PER_SIDE
    design_effect = design_effect_of(design.side_probabilities)
    rows = []
    for validation in validations:
        for metric, pairs in judge_consensus_pairs(project, rubric, validation).items():
            base = {"metric": metric, "judge_key": str(validation.pk), "judge_name": validation.judge_name}
            if len(pairs) < 2:
                rows.append(
                    PlanRow(
                        **base,
                        n_pairs=len(pairs),
                        error_sd=None,
                        per_side=None,
                        per_stratum=None,
                        predicted_half_width=None,
                        note="fewer than 2 turns with both a judge score and a human consensus on the scale",
                    )
                )
                continue
            sd = error_sd([judge for judge, _ in pairs], [human for _, human in pairs])
            plan = labels_needed(
                sd,
                sd,
                target_half_width,
                alpha=alpha,
                strata_a=strata,
                strata_b=strata,
                design_effect=design_effect,
            )
            rows.append(
                PlanRow(
                    **base,
                    n_pairs=len(pairs),
                    error_sd=sd,
                    per_side=plan.per_side,
                    per_stratum=max(plan.per_stratum_a, plan.per_stratum_b),
                    predicted_half_width=plan.predicted_half_width,
                )
            )
    return LabelPlanner(
        target_half_width=target_half_width,
        alpha=alpha,
        strata_per_side=strata,
        domains=design.domains,
        design_effect=design_effect,
        rows=rows,
    )


# --- Planning the validation itself: the alt-test and κ's interval ---------------------------------

ALT_TEST_ANNOTATORS = (3, 4, 5)
DESIGN_DEFAULTS = {
    "judge_accuracy": 0.90,
    "annotator_accuracy": 0.90,
    "kappa": 0.80,
    "prevalence": 0.84,
    "kappa_half_width": 0.10,
}
DESIGN_RANGES = {
    "judge_accuracy": (0.34, 1.0),
    "annotator_accuracy": (0.34, 1.0),
    "kappa": (0.0, 0.99),
    "prevalence": (0.01, 0.99),
    "kappa_half_width": (0.01, 0.5),
}


def design_inputs_from(query) -> dict[str, float]:
    """The validation planner's inputs from a query (each blank: its default), or `PlannerInputError`."""
    found = {}
    for name, default in DESIGN_DEFAULTS.items():
        text = query.get(name)
        if text is None or not str(text).strip():
            found[name] = default
            continue
        low, high = DESIGN_RANGES[name]
        try:
            value = float(text)
        except ValueError:
            raise PlannerInputError(f"{name} must be a number, not {text!r}.") from None
        if not math.isfinite(value) or not low <= value <= high:
            raise PlannerInputError(f"{name} must lie between {low} and {high}.")
        found[name] = value
    return found


def validation_design_plan(*, epsilon: float, inputs: dict[str, float] | None = None, target: float = 0.8) -> dict:
    """How large a validation must be: items per annotator for the alt-test to pass with probability ``target``
    at ``epsilon`` for a judge of the given accuracy (3, 4 or 5 annotators; simulated by
    `annotation.alt_test_plan.alt_test_plan`), and items for Cohen's κ's 95 % interval to reach the given
    half-width at the given κ and prevalence (`kappa_half_width_plan`, asymptotic, two classes)."""
    inputs = {**DESIGN_DEFAULTS, **(inputs or {})}
    alt = [
        alt_test_plan(
            judge_accuracy=inputs["judge_accuracy"],
            annotator_accuracy=inputs["annotator_accuracy"],
            n_annotators=n,
            epsilon=epsilon,
            target=target,
            seed=n,
        )
        for n in ALT_TEST_ANNOTATORS
    ]
    try:
        kappa_items, kappa_note = (
            kappa_half_width_plan(
                kappa=inputs["kappa"], prevalence=inputs["prevalence"], half_width=inputs["kappa_half_width"]
            ),
            "",
        )
    except ValueError as exc:
        kappa_items, kappa_note = None, str(exc)
    return {
        "inputs": inputs,
        "epsilon": epsilon,
        "target": target,
        "alt_test": [
            {
                "n_annotators": row["n_annotators"],
                "items_per_annotator": row["items_per_annotator"],
                "pass_rate": {str(n): rate for n, rate in row["pass_rate"].items()},
                "assumptions": row["assumptions"],
            }
            for row in alt
        ],
        "kappa_items": kappa_items,
        "kappa_note": kappa_note,
        "kappa_assumptions": (
            f"Cohen's κ = {inputs['kappa']:.2f} between judge and consensus, two classes with the commoner at "
            f"{inputs['prevalence']:.0%} for both, 95 % interval of half-width {inputs['kappa_half_width']:.2f}; "
            "the large-sample variance (Fleiss, Cohen & Everitt 1969), so the bootstrap interval at that n is close"
        ),
    }
