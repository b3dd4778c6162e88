"""API routes of audits, merged into the project's router under /api/."""

from rest_framework.routers import DefaultRouter

router = DefaultRouter()

# Audit engine: endpoints, audits (with launch/pause/resume/cancel/clone/progress actions), dialogues.
from audits.api.views_runs import AuditViewSet, DialogueViewSet, ModelEndpointViewSet  # noqa: E402

router.register("model-endpoints", ModelEndpointViewSet, basename="model-endpoint")
router.register("audits", AuditViewSet, basename="audit")
router.register("dialogues", DialogueViewSet, basename="dialogue")

# Judging runs (re-judging under a rubric version, judge validation) and the cancelling of a batch run.
from audits.api.views_judge_runs import JudgeRunViewSet  # noqa: E402

router.register("judge-runs", JudgeRunViewSet, basename="judge-run")

# Question bank and demographic design: questions, imports (upload + funnel), dimensions, levels, names, templates.
from audits.api.views_questionbank import (  # noqa: E402
    DemographicDimensionViewSet,
    DemographicLevelViewSet,
    NameCueViewSet,
    PromptTemplateViewSet,
    QuestionImportViewSet,
    QuestionViewSet,
)

router.register("questions", QuestionViewSet, basename="question")
router.register("question-imports", QuestionImportViewSet, basename="question-import")
router.register("demographic-dimensions", DemographicDimensionViewSet, basename="demographic-dimension")
router.register("demographic-levels", DemographicLevelViewSet, basename="demographic-level")
router.register("name-cues", NameCueViewSet, basename="name-cue")
router.register("prompt-templates", PromptTemplateViewSet, basename="prompt-template")
