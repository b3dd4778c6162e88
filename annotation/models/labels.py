"""Models of labelling: assignments, labels, discussion threads, adjudications and cross-stage conflicts.

An assignment says who labels which item in which stage; labels are of the pilot, qualification and main phases, before
and after discussion."""

from django.conf import settings
from django.db import models

from edufair_web.text_limits import NOTE_MAX

from .projects import AnnotationProject, Item, LabelQuestion, Stage


class Phase(models.TextChoices):
    PILOT = "pilot", "Pilot"
    QUALIFICATION = "qualification", "Qualification test"
    MAIN = "main", "Main labelling"


class Assignment(models.Model):
    """One annotator's turn at one item in one stage (an item is never given twice to the same person)."""

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.MAIN, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    reserved_until = models.DateTimeField(null=True, blank=True, help_text="Main work: the reservation's expiry.")
    submitted_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["stage", "id"]
        constraints = [
            models.UniqueConstraint(fields=["stage", "item", "annotator"], name="annotation_assignment_unique")
        ]
        indexes = [
            models.Index(fields=["stage", "annotator", "phase"], name="annotation_assign_who_idx"),
            # Open reservations are few (one per annotator at work): expiry checks read only them.
            models.Index(
                fields=["stage", "reserved_until"],
                condition=models.Q(submitted_at__isnull=True),
                name="annotation_assign_open_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} · {self.item_id} · {self.phase}"


class Label(models.Model):
    """One answer to one question. Pre- and post-discussion answers are kept apart (round)."""

    class Round(models.TextChoices):
        PRE = "pre", "Before discussion"
        POST = "post", "After discussion"

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="labels")
    question = models.ForeignKey(LabelQuestion, on_delete=models.CASCADE, related_name="labels")
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.MAIN, db_index=True)
    round = models.CharField(max_length=4, choices=Round.choices, default=Round.PRE)
    value = models.CharField(max_length=100, blank=True, help_text="Empty when the annotator chose Unsure.")
    unsure = models.BooleanField(default=False)
    justification = models.TextField(blank=True, max_length=NOTE_MAX)
    seconds = models.FloatField(
        default=0, help_text="Active time on the item (the tab hidden does not count), shared by its questions."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["assignment", "question", "round"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "question", "round"], name="annotation_label_unique"),
            models.CheckConstraint(
                condition=models.Q(unsure=False) | models.Q(value=""), name="annotation_label_unsure_has_no_value"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.assignment_id}:{self.question_id}:{self.round}={'unsure' if self.unsure else self.value}"


class Thread(models.Model):
    """A discussion about one item in one stage: norming (pilot) or adjudication (main)."""

    class Kind(models.TextChoices):
        NORMING = "norming", "Norming discussion"
        ADJUDICATION = "adjudication", "Adjudication discussion"

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="threads")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="threads")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    reason = models.CharField(max_length=200, blank=True, help_text="Why it was opened.")
    is_open = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["stage", "-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["stage", "item", "kind"], name="annotation_thread_unique")]

    def __str__(self) -> str:
        return f"{self.kind} · {self.stage_id}:{self.item_id}"


class Comment(models.Model):
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    body = models.TextField(max_length=NOTE_MAX)
    pinned = models.BooleanField(
        default=False, help_text="A moderator's clarification, carried into the next guideline version."
    )
    included_in_guideline = models.ForeignKey(
        "annotation.Guideline", null=True, blank=True, on_delete=models.SET_NULL, related_name="clarifications"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["thread", "created_at", "id"]


class Adjudication(models.Model):
    """How an item's answer to a question was settled in a stage."""

    class Method(models.TextChoices):
        UNANIMOUS = "unanimous", "Unanimous"
        MAJORITY = "majority", "Majority"
        DISCUSSION = "discussion", "Settled in discussion"
        SENIOR = "senior", "Senior reviewer"

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="adjudications")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="adjudications")
    question = models.ForeignKey(LabelQuestion, on_delete=models.CASCADE, related_name="adjudications")
    method = models.CharField(max_length=16, choices=Method.choices)
    final_value = models.CharField(max_length=100, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.TextField(blank=True, max_length=NOTE_MAX)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["stage", "item", "question"]
        constraints = [
            models.UniqueConstraint(fields=["stage", "item", "question"], name="annotation_adjudication_unique")
        ]


class CrossStageConflict(models.Model):
    """An item judged positive at one stage and negative at a later one, and what was done about it."""

    class Disposition(models.TextChoices):
        PENDING = "pending", "Not decided yet"
        REMOVED = "removed", "Removed"
        RETAINED = "retained", "Retained with a cross-category flag"

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="conflicts")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="conflicts")
    earlier_stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="+")
    later_stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="+")
    detail = models.JSONField(default=dict, blank=True)
    disposition = models.CharField(max_length=16, choices=Disposition.choices, default=Disposition.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.TextField(blank=True, max_length=NOTE_MAX)
    detected_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project", "item"]
        constraints = [
            models.UniqueConstraint(fields=["item", "earlier_stage", "later_stage"], name="annotation_conflict_unique")
        ]
