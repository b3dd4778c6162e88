"""Models of judge validation: rubric versions, validations of a judge endpoint and refinement workshops.

A rubric version holds the judge's prompt and the human guideline, versioned together; a validation tests one judge
endpoint under one rubric version against a project's human labels (with the judge's scores on the sampled turns), and a
refinement workshop leads from one rubric version to the next.

Audits objects are referred to by plain ids (as `AnnotationProject.source_audit_id` does), so this app's
migrations never depend on the audits app's.
"""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from edufair_web.text_limits import DOCUMENT_MAX, NOTE_MAX

from .projects import AnnotationProject, Item, Stage

DEFAULT_HUMAN_ALPHA_MIN = 0.80
DEFAULT_JUDGE_AGREEMENT_MIN = 0.80


class RubricVersion(models.Model):
    """One version of the rubric: an audits `PromptTemplate` of kind judge_rubric (by id) and the guideline
    humans label with. A workshop makes the next version; `changed_metrics` say what it changed."""

    judge_template_id = models.PositiveIntegerField(unique=True, help_text="audits.PromptTemplate (judge_rubric).")
    name = models.CharField(max_length=60, help_text="The template family, e.g. judge.")
    version = models.PositiveIntegerField(help_text="The template's version: 'rubric v2' is version 2.")
    guideline = models.TextField(max_length=DOCUMENT_MAX, help_text="The human guideline (Markdown) for this version.")
    change_note = models.TextField(blank=True, max_length=NOTE_MAX)
    changed_metrics = models.JSONField(
        default=list, blank=True, help_text="Metrics whose definition changed from the previous version."
    )
    previous = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="next_versions")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "version"]

    def __str__(self) -> str:
        return f"rubric {self.name} v{self.version}"

    @property
    def label(self) -> str:
        return f"rubric v{self.version}"


class JudgeValidation(models.Model):
    """One judge endpoint under one rubric version, compared with a validation project's human labels.

    The report is computed live from the labels; `result` is the snapshot a researcher records, and a
    recorded validation is what marks an audit's judge as validated for its rubric version.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Judge not run yet"
        SCORED = "scored", "Judge scores in; report live"
        RECORDED = "recorded", "Verdicts recorded"

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="judge_validations")
    audit_id = models.PositiveIntegerField(null=True, blank=True, db_index=True)
    judge_endpoint_id = models.PositiveIntegerField(null=True, blank=True, db_index=True)
    judge_name = models.CharField(max_length=200, help_text="The endpoint's name (or the import's source).")
    rubric = models.ForeignKey(RubricVersion, on_delete=models.PROTECT, related_name="validations")
    human_alpha_min = models.FloatField(
        default=DEFAULT_HUMAN_ALPHA_MIN, validators=[MinValueValidator(-1), MaxValueValidator(1)]
    )
    judge_agreement_min = models.FloatField(
        default=DEFAULT_JUDGE_AGREEMENT_MIN, validators=[MinValueValidator(0), MaxValueValidator(1)]
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    calls_sent = models.PositiveIntegerField(default=0)
    calls_cached = models.PositiveIntegerField(default=0)
    scored_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True, help_text="The recorded report: per-metric verdicts.")
    recorded_at = models.DateTimeField(null=True, blank=True)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "rubric__version", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "judge_endpoint_id", "rubric"], name="annotation_judge_validation_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.judge_name} on {self.rubric.label} ({self.project})"


class JudgeScore(models.Model):
    """The judge's value for one metric of one sampled turn (−1 = not applicable; None unless ok)."""

    class Status(models.TextChoices):
        OK = "ok", "Scored"
        UNPARSABLE = "unparsable", "Unparsable after re-asks"
        FAILED = "failed", "Judge call failed"

    validation = models.ForeignKey(JudgeValidation, on_delete=models.CASCADE, related_name="scores")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judge_scores")
    metric = models.CharField(max_length=40)
    value = models.SmallIntegerField(null=True, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.OK)
    llm_call_id = models.PositiveIntegerField(null=True, blank=True, help_text="audits.LLMCall (the ledger row).")

    class Meta:
        ordering = ["validation", "item", "metric"]
        constraints = [
            models.UniqueConstraint(fields=["validation", "item", "metric"], name="annotation_judge_score_unique")
        ]


class RubricWorkshop(models.Model):
    """A rubric-refinement workshop: the disagreements discussed, and the rubric version it produced.

    When it changed the definition of some metrics, humans re-label those metrics on the sampled turns in
    `relabel_stage` (under the new guideline); the other metrics keep their earlier labels.
    """

    project = models.ForeignKey(AnnotationProject, on_delete=models.CASCADE, related_name="rubric_workshops")
    from_rubric = models.ForeignKey(RubricVersion, on_delete=models.PROTECT, related_name="workshops_from")
    to_rubric = models.ForeignKey(
        RubricVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="workshops_to"
    )
    held_on = models.DateField()
    participants = models.TextField(blank=True, max_length=NOTE_MAX)
    notes = models.TextField(blank=True, max_length=NOTE_MAX)
    disagreements = models.JSONField(
        default=list, blank=True, help_text='Discussed cases: [{"item": id, "metric": key, "note": "..."}].'
    )
    relabel_stage = models.ForeignKey(Stage, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "held_on", "id"]

    def __str__(self) -> str:
        return f"workshop {self.held_on} on {self.from_rubric.label}"
