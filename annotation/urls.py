"""Pages of annotation, mounted at /annotation/."""

from django.urls import path
from django.views.generic import RedirectView

from annotation.views import norming, projects, training

app_name = "annotation"
urlpatterns = [
    path("", RedirectView.as_view(pattern_name="annotation:my-training"), name="index"),
    # Researchers
    path("projects/", projects.ProjectListView.as_view(), name="projects"),
    path("projects/new/", projects.ProjectCreateView.as_view(), name="project-create"),
    path("projects/<int:pk>/", projects.ProjectDetailView.as_view(), name="project"),
    path("projects/<int:pk>/import/", projects.ItemImportView.as_view(), name="project-import"),
    path(
        "projects/<int:pk>/pass-rates.<str:fmt>",
        projects.PassRateExportView.as_view(),
        name="project-pass-rates",
    ),
    path("stages/<int:pk>/", projects.StageDetailView.as_view(), name="stage"),
    path("stages/<int:pk>/<str:action>/", projects.StageActionView.as_view(), name="stage-action"),
    path("enrollments/<int:pk>/replace/", projects.ReplacementView.as_view(), name="enrollment-replace"),
    # Annotators
    path("training/", training.MyTrainingView.as_view(), name="my-training"),
    path("training/<int:stage_pk>/", training.TrainingStageView.as_view(), name="training-stage"),
    path("training/<int:stage_pk>/guideline/", training.GuidelineView.as_view(), name="training-guideline"),
    path("training/<int:stage_pk>/examples/", training.ExamplesView.as_view(), name="training-examples"),
    path("training/<int:stage_pk>/pilot/", training.PilotLabelView.as_view(), name="training-pilot"),
    path("training/<int:stage_pk>/feedback/", training.PilotFeedbackView.as_view(), name="training-feedback"),
    path("training/<int:stage_pk>/norming/", training.NormingView.as_view(), name="training-norming"),
    path(
        "training/<int:stage_pk>/qualification/",
        training.QualificationLabelView.as_view(),
        name="training-qualification",
    ),
    # Norming threads (annotators of the stage and moderators)
    path("threads/<int:pk>/", norming.ThreadView.as_view(), name="thread"),
    path("comments/<int:pk>/pin/", norming.CommentPinView.as_view(), name="comment-pin"),
    path("moderation/", norming.ModerationView.as_view(), name="moderation"),
]
