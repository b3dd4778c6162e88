"""API paths of annotation that are not viewsets (actions on one object, uploads), under /api/."""

from django.urls import path

from . import views_training as training

urlpatterns = [
    path("annotation/training/<int:stage_pk>/", training.TrainingStateView.as_view(), name="annotation-training"),
    path(
        "annotation/training/<int:stage_pk>/guideline/",
        training.GuidelineAPIView.as_view(),
        name="annotation-training-guideline",
    ),
    path(
        "annotation/training/<int:stage_pk>/examples/",
        training.ExamplesAPIView.as_view(),
        name="annotation-training-examples",
    ),
    path(
        "annotation/training/<int:stage_pk>/examples/<int:example_pk>/seen/",
        training.ExampleSeenAPIView.as_view(),
        name="annotation-training-example-seen",
    ),
    path(
        "annotation/training/<int:stage_pk>/<str:phase>/next/",
        training.TrainingNextItemAPIView.as_view(),
        name="annotation-training-next",
    ),
    path(
        "annotation/training/<int:stage_pk>/feedback/",
        training.PilotFeedbackAPIView.as_view(),
        name="annotation-training-feedback",
    ),
    path(
        "annotation/training/<int:stage_pk>/norming/",
        training.NormingAPIView.as_view(),
        name="annotation-training-norming",
    ),
    path("annotation/stages/<int:stage_pk>/labels/", training.LabelSubmitAPIView.as_view(), name="annotation-labels"),
    path(
        "annotation/threads/<int:thread_pk>/comments/",
        training.ThreadCommentsAPIView.as_view(),
        name="annotation-thread-comments",
    ),
    path(
        "annotation/comments/<int:comment_pk>/pin/", training.CommentPinAPIView.as_view(), name="annotation-comment-pin"
    ),
]
