"""Reads of the demographic design and templates, as plain data for `audits.conditions` and the pages."""

from django.db.models import Max, QuerySet

from audits.conditions import (
    ConditionChoice,
    ConditionSpec,
    LevelInfo,
    NameInfo,
    build_conditions,
    default_levels,
    default_names,
)
from audits.models import DemographicDimension, DemographicLevel, NameCue, PromptTemplate, Question


def levels_info() -> list[LevelInfo]:
    return [
        LevelInfo(
            dimension=level.dimension.key,
            key=level.key,
            label=level.label,
            persona_statement=level.persona_statement,
            tutor_statement=level.tutor_statement,
            dimension_name=level.dimension.name,
        )
        for level in DemographicLevel.objects.select_related("dimension")
    ]


def names_info(*, active_only: bool = True) -> list[NameInfo]:
    names = NameCue.objects.all()
    if active_only:
        names = names.filter(active=True)
    return [NameInfo(name.name, name.gender, name.ethnicity) for name in names]


def design_levels() -> list[LevelInfo]:
    """The levels a new design draws on: the table's, or the project defaults while the table is empty."""
    if not DemographicLevel.objects.exists():
        return default_levels()
    return levels_info()


def design_names() -> list[NameInfo]:
    """The active names a new design draws on: the table's, or the project defaults while the table is empty.

    A table whose names are all retired stays the researcher's choice: it gives no names, not the defaults.
    """
    if not NameCue.objects.exists():
        return default_names()
    return names_info()


def design_conditions(*, choice: ConditionChoice) -> list[ConditionSpec]:
    """The conditions a choice yields over `design_levels` and `design_names` — what the design preview
    shows and what `audit_create_from_design` launches, so the two always describe the same design."""
    return build_conditions(choice, design_levels(), design_names())


def design_dimensions() -> list[tuple[str, str]]:
    """(key, name) of each dimension `design_levels` offers, in order: the choices of the design forms."""
    dimensions: dict[str, str] = {}
    for level in design_levels():
        dimensions.setdefault(level.dimension, level.dimension_name or level.dimension)
    return list(dimensions.items())


def dimensions_with_levels() -> QuerySet[DemographicDimension]:
    return DemographicDimension.objects.prefetch_related("levels")


def name_grid() -> dict[str, dict[str, list[NameCue]]]:
    """Names by ethnicity, then gender, for the design page."""
    grid: dict[str, dict[str, list[NameCue]]] = {}
    for name in NameCue.objects.all():
        grid.setdefault(name.ethnicity, {}).setdefault(name.gender, []).append(name)
    return grid


def prompt_templates_latest() -> list[PromptTemplate]:
    """The newest version of each (kind, name) family."""
    newest = PromptTemplate.objects.values("kind", "name").annotate(top=Max("version"))
    wanted = {(row["kind"], row["name"], row["top"]) for row in newest}
    return [t for t in PromptTemplate.objects.all() if (t.kind, t.name, t.version) in wanted]


def question_ids_by_domain(
    *, domains: list[str] | None = None, sources: list[str] | None = None
) -> dict[str, list[int]]:
    questions = Question.objects.all()
    if domains:
        questions = questions.filter(domain__in=domains)
    if sources:
        questions = questions.filter(source__in=sources)
    grouped: dict[str, list[int]] = {domain: [] for domain in domains or []}
    for question_id, domain in questions.values_list("id", "domain").order_by("id"):
        grouped.setdefault(domain, []).append(question_id)
    return grouped


def levels_with_dimension() -> QuerySet[DemographicLevel]:
    return DemographicLevel.objects.select_related("dimension")


def name_cues() -> QuerySet[NameCue]:
    return NameCue.objects.all()


def prompt_templates_filter(*, kind: str | None = None, name: str | None = None) -> QuerySet[PromptTemplate]:
    """Prompt templates, of one kind and one name (a family's versions) when given: the template page and the API."""
    templates = PromptTemplate.objects.all()
    if kind:
        templates = templates.filter(kind=kind)
    if name:
        templates = templates.filter(name=name)
    return templates


def prompt_template_has_later_versions(*, template: PromptTemplate) -> bool:
    return template.next_versions.exists()


def prompt_template_newest(*, kind: str, name: str) -> PromptTemplate | None:
    """The newest version of a template family, or None: what a new version follows."""
    return PromptTemplate.objects.filter(kind=kind, name=name).order_by("-version").first()
