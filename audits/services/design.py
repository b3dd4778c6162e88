"""Writes of the demographic design and the prompt templates, and the one computation of a design preview.

They cover default seeding, the default template of a kind and template versions; the preview page and the launch form
share the design preview.

Template versions are immutable once used: `prompt_template_mark_used` is the one door an audit calls when
it starts using a version, and `prompt_template_revise` is the one door for editing — it always writes a
new version, whatever the state of the old one.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from audits.conditions import DEFAULT_DIMENSIONS, DEFAULT_NAMES, ConditionChoice, ConditionSpec
from audits.design import CallBudget, DesignPreview, QuestionSelection, TutorPlan, preview_design
from audits.models import DemographicDimension, DemographicLevel, NameCue, PromptTemplate
from audits.prompt_templates import DEFAULT_TEMPLATES, template_metrics_errors, template_placeholder_errors
from audits.selectors.design import design_conditions, prompt_template_newest, question_ids_by_domain


class TemplateTextError(ValueError):
    """The template text uses unknown placeholders or lacks required ones."""


class TemplateMetricsError(TemplateTextError):
    """A judge rubric's metric list names a metric the registry does not hold (or another kind names metrics)."""


@transaction.atomic
def design_defaults_seed() -> dict[str, int]:
    """Create the default dimensions, levels, names and templates that are missing. Never overwrites edits."""
    created = {"dimensions": 0, "levels": 0, "names": 0, "templates": 0}
    for order, spec in enumerate(DEFAULT_DIMENSIONS):
        dimension, made = DemographicDimension.objects.get_or_create(
            key=spec["key"], defaults={"name": spec["name"], "order": order}
        )
        created["dimensions"] += made
        for level_order, (key, label, persona, tutor) in enumerate(spec["levels"]):
            _, made = DemographicLevel.objects.get_or_create(
                dimension=dimension,
                key=key,
                defaults={"label": label, "persona_statement": persona, "tutor_statement": tutor, "order": level_order},
            )
            created["levels"] += made
    for ethnicity, by_gender in DEFAULT_NAMES.items():
        for gender, names in by_gender.items():
            for name in names:
                _, made = NameCue.objects.get_or_create(name=name, defaults={"gender": gender, "ethnicity": ethnicity})
                created["names"] += made
    for spec in DEFAULT_TEMPLATES:
        if not PromptTemplate.objects.filter(kind=spec["kind"], name=spec["name"]).exists():
            PromptTemplate.objects.create(version=1, **spec)
            created["templates"] += 1
    return created


def default_template(kind: str, name: str | None = None) -> PromptTemplate:
    """The newest version of a template kind (and name), creating the project default if none exists."""
    found = PromptTemplate.objects.filter(kind=kind)
    if name:
        found = found.filter(name=name)
    template = found.order_by("-version", "-id").first()
    if template is not None:
        return template
    default = next(t for t in DEFAULT_TEMPLATES if t["kind"] == kind and (name is None or t["name"] == name))
    template, _ = PromptTemplate.objects.get_or_create(
        kind=kind,
        name=default["name"],
        version=1,
        defaults={"text": default["text"], "description": default["description"]},
    )
    return template


def _check_text(kind: str, text: str, metrics=None) -> None:
    problems = template_placeholder_errors(kind, text)
    if problems:
        raise TemplateTextError("; ".join(problems))
    problems = template_metrics_errors(kind, metrics)
    if problems:
        raise TemplateMetricsError("; ".join(problems))


@transaction.atomic
def prompt_template_create(
    *, kind: str, name: str, text: str, description: str = "", metrics: list[str] | None = None, user=None
) -> PromptTemplate:
    """A new template family (version 1), or the next version if the family exists. A judge rubric names the
    metrics it asks for (`metrics`; the default rubric's when not given)."""
    _check_text(kind, text, metrics)
    latest = prompt_template_newest(kind=kind, name=name)
    return PromptTemplate.objects.create(
        kind=kind,
        name=name,
        text=text,
        description=description,
        metrics=list(metrics or []),
        version=(latest.version + 1) if latest else 1,
        previous=latest,
        created_by=user if user is not None and user.is_authenticated else None,
    )


@transaction.atomic
def prompt_template_revise(
    *,
    template: PromptTemplate,
    text: str,
    description: str | None = None,
    metrics: list[str] | None = None,
    user=None,
) -> PromptTemplate:
    """Editing a template: write version max+1 of its family with the new text; the old version stays. A judge
    rubric's new version asks for `metrics` when given, else for the metrics of the version it revises."""
    metrics = list(template.metrics) if metrics is None else list(metrics)
    _check_text(template.kind, text, metrics)
    family = PromptTemplate.objects.select_for_update().filter(kind=template.kind, name=template.name)
    next_version = (family.aggregate(top=Max("version"))["top"] or 0) + 1
    return PromptTemplate.objects.create(
        kind=template.kind,
        name=template.name,
        text=text,
        description=template.description if description is None else description,
        metrics=metrics,
        version=next_version,
        previous=template,
        created_by=user if user is not None and user.is_authenticated else None,
    )


def prompt_template_mark_used(template: PromptTemplate) -> PromptTemplate:
    """Freeze a version for good (called by whatever first uses it, e.g. an audit launch). Idempotent."""
    PromptTemplate.objects.filter(pk=template.pk, used_at__isnull=True).update(used_at=timezone.now())
    template.refresh_from_db(fields=["used_at"])
    return template


@dataclass(frozen=True)
class DesignComputed:
    preview: DesignPreview
    conditions: list[ConditionSpec]


def design_preview_compute(
    *, selection: QuestionSelection, tutors: Sequence[TutorPlan], choice: ConditionChoice, budget: CallBudget
) -> DesignComputed:
    """The preview of a design over the question bank and the design tables: the conditions
    `audit_create_from_design` would create for this choice, and `audits.design.preview_design` over them.
    Raises ValueError for a choice the conditions cannot be built from."""
    conditions = design_conditions(choice=choice)
    ids_by_domain = question_ids_by_domain(domains=list(selection.domains))
    preview = preview_design(ids_by_domain, selection, tutors, conditions, budget=budget)
    return DesignComputed(preview=preview, conditions=conditions)
