"""What a new project's stage still lacks before annotators can start: one checklist, each step linked to its page."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from annotation.models import AnnotationProject, Enrollment, GoldLabel, Item, Stage, StageLabelling, TrainingItem


@dataclass(frozen=True)
class ChecklistStep:
    key: str
    title: str
    done: bool
    detail: str
    url: str


@dataclass(frozen=True)
class StageChecklist:
    stage: Stage
    steps: tuple[ChecklistStep, ...]

    @property
    def missing(self) -> list[ChecklistStep]:
        return [step for step in self.steps if not step.done]

    @property
    def ready(self) -> bool:
        return not self.missing


def stage_first_run_checklist(stage: Stage) -> StageChecklist:
    """The steps before annotators can start on ``stage``: gold imported, pilot and test drawn, worked examples,
    a guideline, items to label, annotators enrolled; each done or not, with where it is done."""
    project = stage.project
    stage_url = reverse("annotation:stage", args=[stage.pk])
    import_url = reverse("annotation:project", args=[project.pk]) + "#import-items"
    questions = list(stage.questions.values_list("pk", flat=True))
    gold_items = (
        GoldLabel.objects.filter(item__project=project, question_id__in=questions).values("item_id").distinct().count()
    )
    phases = dict.fromkeys(TrainingItem.Phase.values, 0)
    for phase in stage.training_items.values_list("phase", flat=True):
        phases[phase] += 1
    pilot, test = phases[TrainingItem.Phase.PILOT], phases[TrainingItem.Phase.QUALIFICATION]
    examples = stage.worked_examples.count()
    guidelines = stage.guidelines.count()
    enrolled = Enrollment.objects.filter(stage=stage).exclude(status=Enrollment.Status.REPLACED).count()
    to_label, to_label_text = _items_to_label(stage, project)
    steps = (
        ChecklistStep(
            "gold",
            "Import gold items",
            gold_items > 0,
            f"{gold_items} items with a gold label for this stage's questions.",
            import_url,
        ),
        ChecklistStep(
            "pilot",
            "Draw the pilot",
            pilot >= stage.pilot_size,
            f"{pilot} of {stage.pilot_size} pilot items.",
            stage_url + "#training-sets",
        ),
        ChecklistStep(
            "test",
            "Draw the qualification test",
            test >= stage.qualification_size,
            f"{test} of {stage.qualification_size} test items.",
            stage_url + "#training-sets",
        ),
        ChecklistStep(
            "examples",
            "Add worked examples",
            examples > 0,
            f"{examples} worked example{'s' if examples != 1 else ''}.",
            stage_url + "#worked-examples",
        ),
        ChecklistStep(
            "guideline",
            "Publish a guideline",
            guidelines > 0,
            f"{guidelines} version{'s' if guidelines != 1 else ''} published.",
            stage_url + "#guideline",
        ),
        ChecklistStep("items", "Give the stage items to label", to_label, to_label_text, stage_url + "#main-items"),
        ChecklistStep(
            "enrolled",
            "Enrol annotators",
            enrolled > 0,
            f"{enrolled} annotator{'s' if enrolled != 1 else ''} enrolled.",
            reverse("annotation:stage-people", args=[stage.pk]),
        ),
    )
    return StageChecklist(stage=stage, steps=steps)


def _items_to_label(stage: Stage, project: AnnotationProject) -> tuple[bool, str]:
    settings = StageLabelling.objects.filter(stage=stage).first()
    rule = settings.item_rule if settings else StageLabelling.ItemRule.ALL
    if rule == StageLabelling.ItemRule.LIST:
        listed = len(settings.item_ids or [])
        return listed > 0, f"An explicit list of {listed} item{'s' if listed != 1 else ''}."
    if rule == StageLabelling.ItemRule.SETTLED:
        return True, "The items an earlier stage settles."
    # Gold items go to training; the rest of the project's items are the main work.
    main = Item.objects.filter(project=project, gold_labels__isnull=True).count()
    return main > 0, f"{main} project item{'s' if main != 1 else ''} without gold to label."


def project_first_run_checklists(project: AnnotationProject) -> list[StageChecklist]:
    """Every stage's checklist, in stage order."""
    stages = project.stages.select_related("project").order_by("order")
    return [stage_first_run_checklist(stage) for stage in stages]
