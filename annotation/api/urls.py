"""API routes of annotation, merged into the project's router under /api/."""

from rest_framework.routers import DefaultRouter

from .views_projects import (
    EnrollmentViewSet,
    GoldLabelViewSet,
    GuidelineViewSet,
    ItemViewSet,
    LabelQuestionViewSet,
    ProjectViewSet,
    StageViewSet,
    WorkedExampleViewSet,
)

router = DefaultRouter()
router.register("annotation/projects", ProjectViewSet, basename="annotation-project")
router.register("annotation/questions", LabelQuestionViewSet, basename="annotation-question")
router.register("annotation/items", ItemViewSet, basename="annotation-item")
router.register("annotation/gold-labels", GoldLabelViewSet, basename="annotation-gold")
router.register("annotation/stages", StageViewSet, basename="annotation-stage")
router.register("annotation/guidelines", GuidelineViewSet, basename="annotation-guideline")
router.register("annotation/worked-examples", WorkedExampleViewSet, basename="annotation-example")
router.register("annotation/enrollments", EnrollmentViewSet, basename="annotation-enrollment")
