"""Calibration runs: a simulation tutor with one planted bias (level, metric, shift), made without hand-written JSON."""

from __future__ import annotations

import math

from django.db import transaction

from audits.endpoint_roles import TUTOR
from audits.llm.simulation import DEFAULT_PROPENSITY
from audits.models import ModelEndpoint
from audits.selectors.design import design_levels

# The tutor behaviours a bias can shift: the simulated tutor's propensities (audits.llm.simulation).
CALIBRATION_METRICS: tuple[str, ...] = tuple(DEFAULT_PROPENSITY)
SHIFT_BOUND = 1.0  # a propensity is a probability: a larger shift only clamps


def calibration_levels() -> list[tuple[str, str]]:
    """(cue label, "dimension: level") of each level a bias can be planted on: the cue labels a planted bias
    matches (`Condition.cue_labels`), over the design's levels."""
    return [
        (f"{level.dimension}={level.key}", f"{level.dimension_name or level.dimension}: {level.label}")
        for level in design_levels()
    ]


def calibration_refusal(*, level: str, metric: str, shift: float) -> str | None:
    """Why this bias cannot be planted, or None."""
    if level not in dict(calibration_levels()):
        return f"level {str(level)[:60]!r} is not a level of the design (dimension=level, e.g. first_language=…)"
    if metric not in CALIBRATION_METRICS:
        return f"metric {str(metric)[:60]!r} is not one the simulated tutor has: {', '.join(CALIBRATION_METRICS)}"
    if isinstance(shift, bool) or not isinstance(shift, int | float) or not math.isfinite(shift):
        return "the shift must be a number"
    if shift == 0 or abs(shift) > SHIFT_BOUND:
        return f"the shift moves a probability: non-zero, between −{SHIFT_BOUND:g} and {SHIFT_BOUND:g}"
    return None


def calibration_tutor_name(*, level: str, metric: str, shift: float, seed: int = 0) -> str:
    return f"Calibration tutor: {level} {metric} {shift:+g} (seed {seed})"[:100]


@transaction.atomic
def calibration_tutor_get_or_create(*, level: str, metric: str, shift: float, seed: int = 0) -> ModelEndpoint:
    """The simulation tutor that plants this one bias (made once per bias and seed; a tutor only), for the launch
    form's calibration run and the API. ValueError when the bias cannot be planted, or when an endpoint of that
    name exists with other settings."""
    refusal = calibration_refusal(level=level, metric=metric, shift=shift)
    if refusal:
        raise ValueError(refusal)
    config = {"seed": seed, "bias": [{"level": level, "metric": metric, "shift": float(shift)}]}
    name = calibration_tutor_name(level=level, metric=metric, shift=shift, seed=seed)
    endpoint, created = ModelEndpoint.objects.get_or_create(
        name=name,
        defaults={
            "provider": ModelEndpoint.Provider.SIMULATION,
            "model": "calibration-tutor",
            "simulation_config": config,
            "roles": [TUTOR],
            "description": f"A simulation for calibration runs, not a real model: the seeded simulated tutor with "
            f"{metric} shifted by {shift:+g} for students whose cue is {level}. An audit must find this cell.",
        },
    )
    if not created and (not endpoint.is_simulation or endpoint.simulation_config != config):
        raise ValueError(f"an endpoint named {name!r} exists with other settings; rename it or choose another seed")
    return endpoint
