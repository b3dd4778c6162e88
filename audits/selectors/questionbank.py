"""Reads of the question bank: filtered questions, counts per domain, imports with their funnels."""

from django.db.models import Count, QuerySet

from audits.models import Question, QuestionImport


def questions_filter(
    *, domain: str | None = None, source: str | None = None, import_id: int | None = None, search: str | None = None
) -> QuerySet[Question]:
    """Raises ValueError for a filter with a NUL character: PostgreSQL refuses NUL in text (a 500 otherwise)."""
    if any("\x00" in value for value in (domain, source, search) if value):
        raise ValueError("Filters cannot contain NUL characters.")
    questions = Question.objects.all()
    if domain:
        questions = questions.filter(domain=domain)
    if source:
        questions = questions.filter(source=source)
    if import_id:
        questions = questions.filter(imports__id=import_id)
    if search:
        questions = questions.filter(text__icontains=search)
    return questions.order_by("domain", "source", "id")


def question_counts_by_domain(questions: QuerySet[Question] | None = None) -> list[dict]:
    """[{"domain": ..., "count": ...}] sorted by domain."""
    questions = Question.objects.all() if questions is None else questions
    return list(questions.order_by().values("domain").annotate(count=Count("id", distinct=True)).order_by("domain"))


def question_domains() -> list[str]:
    return list(Question.objects.order_by("domain").values_list("domain", flat=True).distinct())


def question_imports_recent(limit: int = 50) -> QuerySet[QuestionImport]:
    return question_imports_newest_first()[:limit]


def funnel_rows(question_import: QuestionImport) -> list[dict]:
    """The funnel with the drop from the previous step, for display."""
    rows, previous = [], None
    for step in question_import.funnel or []:
        count = step.get("count", 0)
        is_outcome = step.get("step") in ("new in bank", "already in bank")
        dropped = None if previous is None or is_outcome else previous - count
        rows.append(
            {**step, "dropped": dropped, "outcome": is_outcome, "detail_text": _detail_text(step.get("detail"))}
        )
        if not is_outcome:
            previous = count
    return rows


def _detail_text(detail) -> str:
    """{"a": 1, "b": {"c": 2}} → "a: 1 · b: c 2"."""
    if not detail:
        return ""
    if not isinstance(detail, dict):
        return str(detail)
    parts = []
    for key, value in detail.items():
        if isinstance(value, dict):
            value = ", ".join(f"{inner} {count}" for inner, count in value.items()) or "none"
        parts.append(f"{key}: {value}")
    return " · ".join(parts)


def no_questions() -> QuerySet[Question]:
    """An empty list of questions, as a query (what a refused filter lists)."""
    return Question.objects.none()


def question_total() -> int:
    return Question.objects.count()


def questions_with_imports() -> QuerySet[Question]:
    """Questions with the imports that brought them: the question page."""
    return Question.objects.prefetch_related("imports")


def question_imports_newest_first() -> QuerySet[QuestionImport]:
    """Every import, newest first: the API's list (the page shows the newest few, `question_imports_recent`)."""
    return QuestionImport.objects.select_related("created_by").order_by("-created_at", "-id")


def question_texts(question_ids: list[int]) -> dict[int, str]:
    """{question id: its text} for these questions."""
    return dict(Question.objects.filter(pk__in=question_ids).values_list("pk", "text"))


def question_or_none(question_id) -> Question | None:
    return Question.objects.filter(pk=question_id).first()
