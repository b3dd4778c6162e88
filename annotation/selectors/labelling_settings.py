"""Reads of a stage's main-labelling settings and of whether its main labelling has started.

The settings are its assignment settings: strategy, seed, reservation and revision windows, item rule."""

from __future__ import annotations

from annotation.models import Assignment, MainItem, Phase, Stage, StageLabelling


def labelling_settings(stage: Stage) -> StageLabelling:
    """The stage's assignment settings (the defaults when the researcher never changed them)."""
    try:
        return stage.labelling
    except StageLabelling.DoesNotExist:
        return StageLabelling(stage=stage)


def main_labelling_started(stage: Stage) -> bool:
    """Whether any main item was handed out; from then on the stage's overlap is fixed (the slot counts
    and every resolution so far were made against it)."""
    return MainItem.objects.filter(stage=stage, slots_taken__gt=0).exists() or (
        Assignment.objects.filter(stage=stage, phase=Phase.MAIN).exists()
    )
