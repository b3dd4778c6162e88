"""Tables of the demographic design and the prompts: dimensions, levels, name cues, prompt templates.

Levels carry the explicit persona statement ("English is not my first language…"); name cues carry the
gender and ethnicity a name connotes, for the implicit condition. Prompt templates are versioned and a
version an audit has used can never change: saving or deleting it raises `PromptTemplateImmutableError`;
editing goes through `audits.services.design.prompt_template_revise`, which writes a new version.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from audits.prompt_templates import (
    JUDGE_RUBRIC,
    TEMPLATE_KIND_CHOICES,
    template_metrics_errors,
    template_placeholder_errors,
)
from edufair_web.rubric_metrics import DEFAULT_RUBRIC_METRICS, allowed_values
from edufair_web.text_limits import DOCUMENT_MAX, NOTE_MAX


class DemographicDimension(models.Model):
    key = models.SlugField(max_length=40, unique=True, help_text="Stable key, e.g. first_language.")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True, max_length=NOTE_MAX)
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["order", "key"]

    def __str__(self) -> str:
        return self.name


class DemographicLevel(models.Model):
    dimension = models.ForeignKey(DemographicDimension, on_delete=models.CASCADE, related_name="levels")
    key = models.SlugField(max_length=40, help_text="Stable key within the dimension, e.g. non_english_l1.")
    label = models.CharField(max_length=100)
    persona_statement = models.TextField(
        max_length=NOTE_MAX,
        help_text="What the simulated student says about themself in the explicit condition (first person).",
    )
    tutor_statement = models.TextField(
        max_length=NOTE_MAX,
        blank=True,
        help_text="What the tutor is told when a design informs the tutor (third person), e.g. the opposite design.",
    )
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["dimension__order", "order", "key"]
        constraints = [models.UniqueConstraint(fields=["dimension", "key"], name="level_unique_key_in_dimension")]

    def __str__(self) -> str:
        return f"{self.dimension.name}: {self.label}"


class NameCue(models.Model):
    """A first name that connotes a gender and an ethnicity, for the implicit (name-only) condition."""

    class Gender(models.TextChoices):
        FEMALE = "female", "Female"
        MALE = "male", "Male"

    name = models.CharField(max_length=60, unique=True)
    gender = models.CharField(max_length=10, choices=Gender.choices)
    ethnicity = models.SlugField(max_length=40, help_text="Group key, e.g. black, east_asian, hispanic, white.")
    active = models.BooleanField(default=True, help_text="Inactive names are kept but not used in new designs.")

    class Meta:
        ordering = ["ethnicity", "gender", "name"]
        indexes = [models.Index(fields=["gender", "ethnicity"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.gender}, {self.ethnicity})"


class PromptTemplateImmutableError(ValidationError):
    """Raised when something tries to change or delete a template version an audit has used."""


class PromptTemplate(models.Model):
    kind = models.CharField(max_length=20, choices=TEMPLATE_KIND_CHOICES)
    name = models.SlugField(max_length=60, help_text="Variant within the kind, e.g. tutor or tutor-informed.")
    version = models.PositiveIntegerField(default=1)
    text = models.TextField(
        max_length=DOCUMENT_MAX, help_text="string.Template syntax: ${placeholder}; a literal dollar sign is $$."
    )
    description = models.TextField(blank=True, max_length=NOTE_MAX)
    previous = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="next_versions")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    used_at = models.DateTimeField(
        null=True, blank=True, help_text="When an audit first used this version; from then on it cannot change."
    )
    metrics = models.JSONField(
        default=list,
        blank=True,
        help_text="A judge rubric's metrics (keys of the metric registry), in the order it asks for them: the judge's "
        "reply must score each. Empty for other kinds; a judge rubric saved without them asks for the default five.",
    )

    # Fields whose value a used version must keep forever.
    FROZEN_FIELDS = ("kind", "name", "version", "text", "description", "previous_id", "metrics")

    class Meta:
        ordering = ["kind", "name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "name", "version"], name="prompt_template_unique_version")
        ]

    def __str__(self) -> str:
        return f"{self.kind}/{self.name} v{self.version}"

    def save(self, *args, **kwargs) -> None:
        if self.kind == JUDGE_RUBRIC and not self.metrics:
            self.metrics = list(DEFAULT_RUBRIC_METRICS)
        if self.pk is not None:
            stored = type(self).objects.filter(pk=self.pk).values(*self.FROZEN_FIELDS, "used_at").first()
            if stored is not None and stored["used_at"] is not None:
                changed = [field for field in self.FROZEN_FIELDS if getattr(self, field) != stored[field]]
                if changed or self.used_at != stored["used_at"]:
                    raise PromptTemplateImmutableError(
                        f"{self} has been used by an audit and cannot change "
                        f"({', '.join(changed) or 'used_at'}); save a new version instead."
                    )
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        used = type(self).objects.filter(pk=self.pk, used_at__isnull=False).exists()
        if used:
            raise PromptTemplateImmutableError(f"{self} has been used by an audit and cannot be deleted.")
        return super().delete(*args, **kwargs)

    @property
    def is_used(self) -> bool:
        return self.used_at is not None

    @property
    def judge_metrics(self) -> tuple[str, ...]:
        """The metrics this rubric version asks the judge for (the default rubric's while none are stored)."""
        return tuple(self.metrics) or DEFAULT_RUBRIC_METRICS

    @property
    def judge_allowed_values(self) -> dict[str, frozenset[int]]:
        """What the judge's parser requires of a reply to this rubric version: each of its metrics, on its scale."""
        return allowed_values(self.judge_metrics)

    def clean(self) -> None:
        problems = template_placeholder_errors(self.kind, self.text)
        if problems:
            raise ValidationError({"text": problems})
        problems = template_metrics_errors(self.kind, self.metrics)
        if problems:
            raise ValidationError({"metrics": problems})
