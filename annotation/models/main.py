"""Models of main labelling: a stage's assignment (and pilot) settings and a slot-counting row per (stage, main item).

The assignment settings say how items are handed out and which items are the stage's main work; the row per (stage, main
item) counts the item's taken slots (live reservations + submitted labels) and says where its resolution stands.

`MainItem.slots_taken` is what keeps an item at exactly N labels under concurrency: a slot is taken by a
compare-and-swap ``UPDATE … SET slots_taken = slots_taken + 1 WHERE slots_taken < N`` on a row locked
with ``select_for_update(skip_locked=True)`` (PostgreSQL) or inside SQLite's IMMEDIATE write lock. The same
statement keeps `MainItem.has_free_slot`, whose partial index lets "the first open item" be read straight
off an index however many items are already full.
"""

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from annotation.workflow.pilot_feedback import settings_problems

from .projects import Item, LabelQuestion, Stage


class StageLabelling(models.Model):
    """How a stage hands out its main items, and which items they are (absent row = the defaults below).

    The item rule (`workflow.item_rules`): every project item; the items an earlier stage settled with
    given values of one of its questions (SafeTutors: stage 2 takes what stage 1 found valid); or an
    explicit list. Whatever the rule, training items and items removed for a cross-stage conflict at an
    earlier stage are left out.

    It also holds the stage's pilot settings an annotator's training reads: who sees the pilot's gold, and
    whether the pilot is closed.
    """

    class ItemRule(models.TextChoices):
        ALL = "all", "All the project's items"
        SETTLED = "settled", "The items an earlier stage settled with given values"
        LIST = "list", "An explicit list of items"

    class PilotFeedback(models.TextChoices):
        PASSED = "passed", "Only to annotators who passed the pilot"
        AFTER_CLOSE = "after_close", "To everyone once the pilot is closed"
        NEVER = "never", "Never"

    class Strategy(models.TextChoices):
        ORDER = "order", "In order (items fill up one after another)"
        RANDOM = "random", "Random, seeded, a fixed order per annotator"
        BALANCED = "balanced", "Balanced across subject × category"

    stage = models.OneToOneField(Stage, on_delete=models.CASCADE, related_name="labelling")
    strategy = models.CharField(max_length=16, choices=Strategy.choices, default=Strategy.ORDER)
    seed = models.IntegerField(default=0, help_text="Seed of the random strategy.")
    reservation_minutes = models.PositiveIntegerField(
        default=30, help_text="An item handed out and not submitted within this time can go to someone else."
    )
    revision_minutes = models.PositiveIntegerField(
        default=60, help_text="An annotator may revise a label this long after submitting it (0: never)."
    )
    revision_items = models.PositiveSmallIntegerField(
        default=5, help_text="…and only on their last this many submitted items."
    )
    item_rule = models.CharField(max_length=16, choices=ItemRule.choices, default=ItemRule.ALL)
    # RESTRICT: a stage another stage takes its items from cannot be deleted on its own (with its project it can).
    source_stage = models.ForeignKey(
        Stage, null=True, blank=True, on_delete=models.RESTRICT, related_name="+", help_text="Settled rule: the stage."
    )
    source_question = models.ForeignKey(
        LabelQuestion,
        null=True,
        blank=True,
        on_delete=models.RESTRICT,
        related_name="+",
        help_text="Settled rule: the question of that stage whose settled answer is read.",
    )
    source_values = models.JSONField(default=list, blank=True, help_text="Settled rule: the values that qualify.")
    item_ids = models.JSONField(default=list, blank=True, help_text="List rule: the item ids, in order.")
    # Who sees the pilot's gold (`workflow.pilot_feedback`), and whether the pilot is closed.
    pilot_feedback = models.CharField(
        max_length=16,
        choices=PilotFeedback.choices,
        default=PilotFeedback.PASSED,
        help_text="Who sees the pilot's gold answers, rationales and their own pilot score.",
    )
    pilot_closed = models.BooleanField(
        default=False, help_text="The pilot is closed: no one labels it any more (its gold may then be shown)."
    )

    def __str__(self) -> str:
        return f"{self.stage} · {self.strategy}"

    def clean(self) -> None:
        """The pilot settings' rule (`workflow.pilot_feedback.settings_problems`), for the admin and the page."""
        stored = StageLabelling.objects.filter(pk=self.pk).first() if self.pk else None
        problems = settings_problems(
            policy=self.pilot_feedback,
            closed=self.pilot_closed,
            was_policy=stored.pilot_feedback if stored else self.PilotFeedback.PASSED,
            was_closed=stored.pilot_closed if stored else False,
        )
        if problems:
            raise ValidationError(problems)


class MainItem(models.Model):
    """An item in one stage's main labelling: its taken slots and its resolution status."""

    class Status(models.TextChoices):
        LABELLING = "labelling", "Waiting for labels"
        DISCUSSION = "discussion", "In discussion among its annotators"
        SENIOR_REVIEW = "senior_review", "Waiting for the senior reviewer"
        REVIEWER_QUEUE = "reviewer_queue", "No majority: in the reviewer queue"
        RESOLVED = "resolved", "Resolved"

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="main_items")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="main_entries")
    position = models.PositiveIntegerField(default=0, help_text="Order of the item for the in-order strategy.")
    slots_taken = models.PositiveSmallIntegerField(default=0, help_text="Live reservations + submitted labels.")
    has_free_slot = models.BooleanField(default=True, help_text="slots_taken < the stage's overlap.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LABELLING)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["stage", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["stage", "item"], name="annotation_main_item_unique")]
        indexes = [
            models.Index(
                fields=["stage", "position", "id"], condition=Q(has_free_slot=True), name="annotation_main_free_idx"
            ),
            models.Index(fields=["stage", "status"], name="annotation_main_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.stage_id}:{self.item_id} ({self.slots_taken}, {self.status})"
