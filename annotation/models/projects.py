"""Projects, their label questions and items, and the ordered stages a project runs its labelling in."""

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation.workflow.answers import NOT_APPLICABLE
from annotation.workflow.resolution_rules import POLICY_CHOICES, Policy
from edufair_web.text_limits import NOTE_MAX


class AnnotationProject(models.Model):
    class Kind(models.TextChoices):
        GENERIC = "generic", "Generic labelling project"
        JUDGE_VALIDATION = "judge_validation", "Judge validation (from an audit)"

    # What the project was built as; a preset is applied by apply-preset (edufair_web.fixed_after_create).
    FIXED_AFTER_CREATE = ("kind", "source_audit_id", "preset")

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, max_length=NOTE_MAX)
    kind = models.CharField(max_length=32, choices=Kind.choices, default=Kind.GENERIC)
    # A plain id rather than a foreign key, so this app's migrations do not depend on the audits app's.
    source_audit_id = models.PositiveIntegerField(null=True, blank=True, db_index=True)
    categories = models.JSONField(
        default=list, blank=True, help_text="Declared item categories (the pilot is spread evenly across them)."
    )
    subjects = models.JSONField(
        default=list, blank=True, help_text="Declared subjects (the pilot is spread evenly across them)."
    )
    options = models.JSONField(default=dict, blank=True, help_text="Project options, e.g. hide_persona_cue.")
    preset = models.CharField(max_length=64, blank=True, help_text="The preset the stages were built from, if any.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name


class LabelQuestion(models.Model):
    """One question asked about an item; its choices carry the keyboard key that selects them."""

    class Level(models.TextChoices):
        NOMINAL = "nominal", "Nominal"
        ORDINAL = "ordinal", "Ordinal"

    FIXED_AFTER_CREATE = ("project",)  # its stages, gold and labels are the project's

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="questions")
    key = models.SlugField(max_length=64)
    prompt = models.TextField(max_length=NOTE_MAX)
    help_text = models.TextField(blank=True, max_length=NOTE_MAX)
    level = models.CharField(max_length=16, choices=Level.choices, default=Level.NOMINAL)
    choices = models.JSONField(help_text='Ordered list of {"value": "...", "label": "...", "key": "1"}.')
    allow_unsure = models.BooleanField(default=False)
    allow_not_applicable = models.BooleanField(default=False)
    justification_required_for = models.JSONField(
        default=list, blank=True, help_text="Values whose label needs a free-text justification."
    )
    positive_values = models.JSONField(
        default=list,
        blank=True,
        help_text="Values that count as the positive outcome (valid, aligned) when stages are compared.",
    )
    # Which turn of a dialogue the question judges, highlighted for it (annotation.workflow.turn_focus).
    about_turn = models.CharField(
        max_length=8,
        blank=True,
        choices=[
            ("", "The item's highlighted turn"),
            ("student", "The student's question"),
            ("tutor", "The tutor's turn"),
        ],
        help_text="The turn highlighted for this question: the student's question, the tutor's turn, or (empty) the "
        "turn the item highlights.",
    )
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["project", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "key"], name="annotation_question_key_unique")]

    def __str__(self) -> str:
        return f"{self.project_id}:{self.key}"

    @property
    def values(self) -> list[str]:
        values = [str(choice["value"]) for choice in self.choices]
        if self.allow_not_applicable:
            values.append(NOT_APPLICABLE)
        return values

    def choice_label(self, value: str) -> str:
        if value == NOT_APPLICABLE:
            return "Not applicable"
        for choice in self.choices:
            if str(choice["value"]) == str(value):
                return choice.get("label") or str(value)
        return str(value)


class Item(models.Model):
    """Something to label: a question, a single tutor turn, or a dialogue with one turn highlighted."""

    class Modality(models.TextChoices):
        SINGLE_TURN = "single", "Single turn"
        MULTI_TURN = "multi", "Multi-turn"

    FIXED_AFTER_CREATE = ("project",)  # its gold, training uses and labels are the project's

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200, help_text="Id in the source; re-importing the same id updates.")
    payload = models.JSONField(
        help_text='What the annotator sees: {"text": ...} or {"turns": [{"role", "text"}], "highlight": index}.'
    )
    subject = models.CharField(max_length=100, blank=True, db_index=True)
    category = models.CharField(max_length=200, blank=True, db_index=True)
    modality = models.CharField(max_length=8, choices=Modality.choices, default=Modality.SINGLE_TURN)
    # Plain id of an audits Turn for judge-validation items (no cross-app migration dependency).
    source_turn_id = models.PositiveIntegerField(null=True, blank=True, db_index=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="annotation_item_external_id_unique")
        ]

    def __str__(self) -> str:
        return f"{self.project_id}:{self.external_id}"


class Stage(models.Model):
    """One stage of a project: its own pool, questions, overlap, resolution, pay, and gate parameters."""

    Resolution = Policy  # the one vocabulary of resolution policies: `annotation.workflow.resolution_rules`

    class UnsureRule(models.TextChoices):
        STRICT = "strict", "Strict: Unsure counts as a miss"
        EXCLUDE = "exclude", "Excluded: Unsure is left out, coverage reported"

    FIXED_AFTER_CREATE = ("project",)  # its questions, items and recruits are the project's

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="stages")
    order = models.PositiveIntegerField()
    name = models.CharField(max_length=200)
    task = models.TextField(
        max_length=NOTE_MAX, blank=True, help_text="The task in one or two sentences, as annotators see it."
    )
    pool = models.TextField(
        max_length=NOTE_MAX, blank=True, help_text="Who is recruited (e.g. undergraduates, ≥ 2 years in subject)."
    )
    recruits_per_subject = models.PositiveIntegerField(default=0, help_text="Planned annotators per subject.")
    questions = models.ManyToManyField(LabelQuestion, related_name="stages", blank=True)
    overlap = models.PositiveSmallIntegerField(default=2, validators=[MinValueValidator(2), MaxValueValidator(3)])
    resolution_policy = models.CharField(max_length=32, choices=POLICY_CHOICES, default=Policy.DISCUSSION_SENIOR.value)
    pay_rate_per_hour = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("0"))
    currency = models.CharField(max_length=3, default="USD")
    pilot_size = models.PositiveIntegerField(default=30)
    pilot_threshold = models.FloatField(
        default=0.80, validators=[MinValueValidator(0), MaxValueValidator(1)], help_text="Minimum agreement with gold."
    )
    qualification_size = models.PositiveIntegerField(default=10)
    qualification_min_correct = models.PositiveIntegerField(default=8)
    unsure_enabled = models.BooleanField(default=False)
    unsure_rule = models.CharField(max_length=16, choices=UnsureRule.choices, default=UnsureRule.STRICT)
    unsure_min_coverage = models.FloatField(
        default=0.8,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="With Unsure excluded: the least share of gold items that must get a real answer.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "order"]
        constraints = [models.UniqueConstraint(fields=["project", "order"], name="annotation_stage_order_unique")]

    def __str__(self) -> str:
        return f"{self.project} · stage {self.order}: {self.name}"

    @property
    def qualification_threshold(self) -> float:
        """The qualification gate as a share: 8 of 10 is 0.8."""
        return self.qualification_min_correct / self.qualification_size if self.qualification_size else 1.0
