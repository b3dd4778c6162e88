"""Models of training and the gate: guidelines, worked examples, gold, training items and enrolments.

Guidelines are versioned; the training items are the pilot and qualification items; each annotator's enrolment in a
stage carries the stored gate decision."""

from django.conf import settings
from django.db import models

from edufair_web.text_limits import DOCUMENT_MAX, NOTE_MAX

from .projects import Item, LabelQuestion, Stage


class Guideline(models.Model):
    """One version of a stage's guideline (Markdown). The highest version is the current one."""

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="guidelines")
    version = models.PositiveIntegerField()
    text = models.TextField(help_text="Markdown; rendered with raw HTML stripped.", max_length=DOCUMENT_MAX)
    change_note = models.TextField(blank=True, max_length=NOTE_MAX)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["stage", "-version"]
        constraints = [models.UniqueConstraint(fields=["stage", "version"], name="annotation_guideline_version_unique")]

    def __str__(self) -> str:
        return f"{self.stage} · guideline v{self.version}"


class WorkedExample(models.Model):
    """A labelled example with its rationale, shown to annotators before the pilot."""

    class Kind(models.TextChoices):
        CLEAR_POSITIVE = "clear_positive", "Clear positive (e.g. clearly safe / valid)"
        CLEAR_NEGATIVE = "clear_negative", "Clear negative (e.g. clearly unsafe / invalid)"
        BORDERLINE = "borderline", "Borderline"

    FIXED_AFTER_CREATE = ("stage",)  # seen by the stage's recruits, in its order; another stage gets its own

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="worked_examples")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="worked_examples")
    question = models.ForeignKey(LabelQuestion, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    value = models.CharField(max_length=100)
    rationale = models.TextField(max_length=NOTE_MAX)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["stage", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["stage", "item", "question"], name="annotation_example_unique")]

    def __str__(self) -> str:
        return f"{self.stage_id}:{self.item.category}:{self.kind}"


class GoldLabel(models.Model):
    """The agreed answer to one question for one item, with the rationale shown after submission."""

    FIXED_AFTER_CREATE = ("item", "question")  # the answer to that question on that item; its value may change

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="gold_labels")
    question = models.ForeignKey(LabelQuestion, on_delete=models.CASCADE, related_name="gold_labels")
    value = models.CharField(max_length=100)
    rationale = models.TextField(blank=True, max_length=NOTE_MAX)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "question"]
        constraints = [models.UniqueConstraint(fields=["item", "question"], name="annotation_gold_unique")]

    def __str__(self) -> str:
        return f"gold {self.item_id}:{self.question.key}={self.value}"


class TrainingItem(models.Model):
    """A gold item used by a stage's pilot or its qualification test (never handed out as main work)."""

    class Phase(models.TextChoices):
        PILOT = "pilot", "Pilot"
        QUALIFICATION = "qualification", "Qualification test"

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="training_items")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="training_uses")
    phase = models.CharField(max_length=16, choices=Phase.choices)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["stage", "phase", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["stage", "item"], name="annotation_training_item_unique")]

    def __str__(self) -> str:
        return f"{self.stage_id}:{self.phase}:{self.item_id}"


class Enrollment(models.Model):
    """An annotator in a stage: where they are in training, their scores, and the gate decision."""

    class Status(models.TextChoices):
        TRAINING = "training", "In training"
        PASSED = "passed", "Passed the gate"
        FAILED = "failed", "Failed the gate"
        REPLACED = "replaced", "Replaced"

    FIXED_AFTER_CREATE = ("stage", "user")  # a recruit's training record is theirs, in that stage

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="enrollments")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotation_enrollments")
    subject = models.CharField(max_length=100, blank=True, help_text="The subject this recruit covers, if any.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.TRAINING, db_index=True)
    enrolled_at = models.DateTimeField(auto_now_add=True)
    examples_completed_at = models.DateTimeField(null=True, blank=True)
    pilot_submitted_at = models.DateTimeField(null=True, blank=True)
    norming_acknowledged_at = models.DateTimeField(null=True, blank=True)
    qualification_submitted_at = models.DateTimeField(null=True, blank=True)
    # The gate, as decided by annotation.workflow.gate: both scores, the Unsure rule, and why.
    pilot_score = models.FloatField(null=True, blank=True)
    pilot_coverage = models.FloatField(null=True, blank=True)
    qualification_score = models.FloatField(null=True, blank=True)
    qualification_correct = models.PositiveIntegerField(null=True, blank=True)
    qualification_total = models.PositiveIntegerField(null=True, blank=True)
    qualification_coverage = models.FloatField(null=True, blank=True)
    gate_passed = models.BooleanField(null=True, blank=True)
    gate_rule = models.CharField(max_length=16, blank=True)
    gate_detail = models.JSONField(default=dict, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    # A researcher may replace a recruit who failed (or left); the replacement is a new enrolment.
    replaced_by = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaces"
    )
    replaced_at = models.DateTimeField(null=True, blank=True)
    replacement_note = models.TextField(blank=True, max_length=NOTE_MAX)

    class Meta:
        ordering = ["stage", "enrolled_at", "id"]
        constraints = [models.UniqueConstraint(fields=["stage", "user"], name="annotation_enrollment_unique")]

    def __str__(self) -> str:
        return f"{self.user} in {self.stage}"


class GuidelineConfirmation(models.Model):
    """An annotator confirmed having read one guideline version."""

    enrollment = models.ForeignKey(Enrollment, on_delete=models.CASCADE, related_name="guideline_confirmations")
    guideline = models.ForeignKey(Guideline, on_delete=models.CASCADE, related_name="confirmations")
    confirmed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["enrollment", "guideline"], name="annotation_guideline_confirm_unique")
        ]


class ExampleView(models.Model):
    """An annotator studied one worked example."""

    enrollment = models.ForeignKey(Enrollment, on_delete=models.CASCADE, related_name="example_views")
    example = models.ForeignKey(WorkedExample, on_delete=models.CASCADE, related_name="views")
    seen_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["enrollment", "example"], name="annotation_example_view_unique")]
