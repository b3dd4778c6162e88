"""Pages of annotation, mounted at /annotation/."""

from django.urls import path
from django.views.generic import RedirectView

import edufair_web.converters  # noqa: F401  (registers the <id:…> path converter)
from annotation.views import norming, projects, training

app_name = "annotation"
urlpatterns = [
    path("", RedirectView.as_view(pattern_name="annotation:my-training"), name="index"),
    # Researchers
    path("projects/", projects.ProjectListView.as_view(), name="projects"),
    path("projects/new/", projects.ProjectCreateView.as_view(), name="project-create"),
    path("projects/<id:pk>/", projects.ProjectDetailView.as_view(), name="project"),
    path("projects/<id:pk>/import/", projects.ItemImportView.as_view(), name="project-import"),
    path(
        "projects/<id:pk>/pass-rates.<str:fmt>",
        projects.PassRateExportView.as_view(),
        name="project-pass-rates",
    ),
    path("stages/<id:pk>/", projects.StageDetailView.as_view(), name="stage"),
    path("stages/<id:pk>/<str:action>/", projects.StageActionView.as_view(), name="stage-action"),
    path("enrollments/<id:pk>/replace/", projects.ReplacementView.as_view(), name="enrollment-replace"),
    # Annotators
    path("training/", training.MyTrainingView.as_view(), name="my-training"),
    path("training/<id:stage_pk>/", training.TrainingStageView.as_view(), name="training-stage"),
    path("training/<id:stage_pk>/guideline/", training.GuidelineView.as_view(), name="training-guideline"),
    path("training/<id:stage_pk>/examples/", training.ExamplesView.as_view(), name="training-examples"),
    path("training/<id:stage_pk>/pilot/", training.PilotLabelView.as_view(), name="training-pilot"),
    path("training/<id:stage_pk>/feedback/", training.PilotFeedbackView.as_view(), name="training-feedback"),
    path("training/<id:stage_pk>/norming/", training.NormingView.as_view(), name="training-norming"),
    path(
        "training/<id:stage_pk>/qualification/",
        training.QualificationLabelView.as_view(),
        name="training-qualification",
    ),
    # Norming threads (annotators of the stage and moderators)
    path("threads/<id:pk>/", norming.ThreadView.as_view(), name="thread"),
    path("comments/<id:pk>/pin/", norming.CommentPinView.as_view(), name="comment-pin"),
    path("moderation/", norming.ModerationView.as_view(), name="moderation"),
]

# Main labelling, adjudication, reports, exports and conflicts.
from annotation.views import adjudication, dashboard, labelling, reports  # noqa: E402

urlpatterns += [
    path("label/", labelling.MyLabellingView.as_view(), name="my-labelling"),
    path("label/<id:stage_pk>/", labelling.LabelView.as_view(), name="label"),
    path("label/<id:stage_pk>/items/<id:item_pk>/revise/", labelling.ReviseView.as_view(), name="revise"),
    path(
        "label/<id:stage_pk>/items/<id:item_pk>/discussion/",
        labelling.DiscussionView.as_view(),
        name="discussion",
    ),
    path("dashboard/<id:stage_pk>/", dashboard.StageDashboardView.as_view(), name="stage-dashboard"),
    path("dashboard/<id:stage_pk>/live/", dashboard.StageDashboardLiveView.as_view(), name="stage-dashboard-live"),
    path("adjudicate/", adjudication.QueueView.as_view(), name="adjudicate"),
    path("adjudicate/<id:stage_pk>/<id:item_pk>/", adjudication.ItemView.as_view(), name="adjudicate-item"),
    path("projects/<id:pk>/report/", reports.ReportView.as_view(), name="report"),
    path("projects/<id:pk>/report.<str:fmt>", reports.ReportDownloadView.as_view(), name="report-download"),
    path("projects/<id:pk>/labels.<str:fmt>", reports.LabelsExportView.as_view(), name="labels-export"),
    path("projects/<id:pk>/conflicts/", reports.ConflictsView.as_view(), name="conflicts"),
]

# Judge validation.
from annotation.views import judge_validation  # noqa: E402

urlpatterns += [
    path("judge-validation/", judge_validation.ValidationListView.as_view(), name="judge-validations"),
    path("judge-validation/new/", judge_validation.ValidationCreateView.as_view(), name="judge-validation-create"),
    path("judge-validation/<id:pk>/", judge_validation.ValidationReportView.as_view(), name="judge-validation"),
    path(
        "judge-validation/<id:pk>/workshop/",
        judge_validation.WorkshopCreateView.as_view(),
        name="judge-validation-workshop",
    ),
    path(
        "judge-validation/<id:pk>/<slug:action>/",
        judge_validation.ValidationActionView.as_view(),
        name="judge-validation-action",
    ),
]

# Label Studio import.
from annotation.views import label_studio  # noqa: E402

urlpatterns += [
    path(
        "projects/<id:pk>/label-studio-import/",
        label_studio.LabelStudioImportView.as_view(),
        name="label-studio-import",
    ),
]

# People (researchers and operators) and crowd entry links.
from annotation.views import crowd, crowd_entry, crowd_leave, people  # noqa: E402

urlpatterns += [
    path("people/", people.PeopleView.as_view(), name="people"),
    path("people/<id:pk>/invite/", people.PersonInviteView.as_view(), name="person-invite"),
    path("people/<id:pk>/deactivate/", people.PersonDeactivateView.as_view(), name="person-deactivate"),
    path("people/welcome/<str:uidb64>/<str:token>/", people.InviteAcceptView.as_view(), name="invite-accept"),
    path("people/stages/<id:stage_pk>/", people.StagePeopleView.as_view(), name="stage-people"),
    path("people/stages/<id:stage_pk>/crowd/", people.CrowdLinkConfigureView.as_view(), name="crowd-configure"),
    path("people/stages/<id:stage_pk>/crowd.csv", people.CrowdExportView.as_view(), name="crowd-export"),
    path("people/enrollments/<id:pk>/replace/", people.StageReplaceView.as_view(), name="stage-replace"),
    path("crowd/return/", crowd_entry.CrowdReturnView.as_view(), name="crowd-return"),
    path("crowd/<slug:key>/", crowd_entry.CrowdEntryView.as_view(), name="crowd-entry"),
    path("crowd/<slug:key>/done/", crowd.CrowdDoneView.as_view(), name="crowd-done"),
    path("crowd/<slug:key>/leave/", crowd_leave.CrowdLeaveView.as_view(), name="crowd-leave"),
]
