"""API paths of annotation that are not viewsets (actions on one object, uploads), under /api/."""

from django.urls import path

import edufair_web.converters  # noqa: F401  (registers the <id:…> path converter)

from . import views_training as training

urlpatterns = [
    path("annotation/training/<id:stage_pk>/", training.TrainingStateView.as_view(), name="annotation-training"),
    path(
        "annotation/training/<id:stage_pk>/guideline/",
        training.GuidelineAPIView.as_view(),
        name="annotation-training-guideline",
    ),
    path(
        "annotation/training/<id:stage_pk>/examples/",
        training.ExamplesAPIView.as_view(),
        name="annotation-training-examples",
    ),
    path(
        "annotation/training/<id:stage_pk>/examples/<id:example_pk>/seen/",
        training.ExampleSeenAPIView.as_view(),
        name="annotation-training-example-seen",
    ),
    path(
        "annotation/training/<id:stage_pk>/<str:phase>/next/",
        training.TrainingNextItemAPIView.as_view(),
        name="annotation-training-next",
    ),
    path(
        "annotation/training/<id:stage_pk>/feedback/",
        training.PilotFeedbackAPIView.as_view(),
        name="annotation-training-feedback",
    ),
    path(
        "annotation/training/<id:stage_pk>/norming/",
        training.NormingAPIView.as_view(),
        name="annotation-training-norming",
    ),
    path("annotation/stages/<id:stage_pk>/labels/", training.LabelSubmitAPIView.as_view(), name="annotation-labels"),
    path(
        "annotation/threads/<id:thread_pk>/comments/",
        training.ThreadCommentsAPIView.as_view(),
        name="annotation-thread-comments",
    ),
    path(
        "annotation/comments/<id:comment_pk>/pin/", training.CommentPinAPIView.as_view(), name="annotation-comment-pin"
    ),
]

# Main labelling, stage settings, adjudication, discussion, conflicts, report and exports.
from . import views_adjudication as adjudication  # noqa: E402
from . import views_conflicts as conflicts  # noqa: E402
from . import views_discussion as discussion  # noqa: E402
from . import views_labelling as labelling  # noqa: E402
from . import views_reports as reports  # noqa: E402
from . import views_stage_settings as stage_settings  # noqa: E402

urlpatterns += [
    path("annotation/main/<id:stage_pk>/next/", labelling.MainNextAPIView.as_view(), name="annotation-main-next"),
    path("annotation/main/<id:stage_pk>/submit/", labelling.MainSubmitAPIView.as_view(), name="annotation-main-submit"),
    path(
        "annotation/main/<id:stage_pk>/settings/",
        stage_settings.StageLabellingSettingsAPIView.as_view(),
        name="annotation-main-settings",
    ),
    path(
        "annotation/main/<id:stage_pk>/items/<id:item_pk>/discussion/",
        discussion.DiscussionAPIView.as_view(),
        name="annotation-main-discussion",
    ),
    path(
        "annotation/main/<id:stage_pk>/items/<id:item_pk>/discussion/close/",
        discussion.DiscussionCloseAPIView.as_view(),
        name="annotation-main-discussion-close",
    ),
    path(
        "annotation/main/<id:stage_pk>/recent/", labelling.RecentItemsAPIView.as_view(), name="annotation-main-recent"
    ),
    path(
        "annotation/main/<id:stage_pk>/items/<id:item_pk>/revise/",
        labelling.ReviseAPIView.as_view(),
        name="annotation-main-revise",
    ),
    path("annotation/main/disputed/", discussion.MyDisputedItemsAPIView.as_view(), name="annotation-main-disputed"),
    path(
        "annotation/main/<id:stage_pk>/dashboard/",
        reports.StageDashboardAPIView.as_view(),
        name="annotation-main-dashboard",
    ),
    path(
        "annotation/main/<id:stage_pk>/aggregation/",
        reports.StageAggregationAPIView.as_view(),
        name="annotation-main-aggregation",
    ),
    path("annotation/adjudication/", adjudication.AdjudicationQueueAPIView.as_view(), name="annotation-adjudication"),
    path(
        "annotation/adjudication/threads/",
        adjudication.AdjudicationThreadsAPIView.as_view(),
        name="annotation-adjudication-threads",
    ),
    path(
        "annotation/adjudication/<id:stage_pk>/<id:item_pk>/",
        adjudication.AdjudicationItemAPIView.as_view(),
        name="annotation-adjudication-item",
    ),
    path(
        "annotation/projects/<id:project_pk>/conflicts/",
        conflicts.ConflictsAPIView.as_view(),
        name="annotation-conflicts",
    ),
    path(
        "annotation/conflicts/<id:conflict_pk>/disposition/",
        conflicts.ConflictDispositionAPIView.as_view(),
        name="annotation-conflict-disposition",
    ),
    path("annotation/projects/<id:project_pk>/report/", reports.ReportAPIView.as_view(), name="annotation-report"),
    path(
        "annotation/projects/<id:project_pk>/labels/",
        reports.LabelsExportAPIView.as_view(),
        name="annotation-labels-export",
    ),
]

# Judge validation.
from . import views_judge_validation as judge_validation  # noqa: E402

urlpatterns += [
    path(
        "annotation/judge-validation/",
        judge_validation.ValidationProjectCreateAPIView.as_view(),
        name="annotation-jv-create",
    ),
    path(
        "annotation/judge-validation/mrbench/",
        judge_validation.MRBenchImportAPIView.as_view(),
        name="annotation-jv-mrbench",
    ),
    path(
        "annotation/judge-validation/audits/<id:audit_pk>/status/",
        judge_validation.AuditJudgeStatusAPIView.as_view(),
        name="annotation-jv-audit-status",
    ),
    path(
        "annotation/judge-validation/<id:project_pk>/report/",
        judge_validation.ValidationReportAPIView.as_view(),
        name="annotation-jv-report",
    ),
    path(
        "annotation/judge-validation/<id:project_pk>/judges/",
        judge_validation.JudgeAddAPIView.as_view(),
        name="annotation-jv-judges",
    ),
    path(
        "annotation/judge-validation/<id:project_pk>/workshops/",
        judge_validation.WorkshopAPIView.as_view(),
        name="annotation-jv-workshops",
    ),
    path(
        "annotation/judge-validation/<id:project_pk>/persona/",
        judge_validation.PersonaAPIView.as_view(),
        name="annotation-jv-persona",
    ),
    path(
        "annotation/judge-validation/validations/<id:validation_pk>/record/",
        judge_validation.RecordAPIView.as_view(),
        name="annotation-jv-record",
    ),
    path(
        "annotation/judge-validation/validations/<id:validation_pk>/thresholds/",
        judge_validation.ThresholdsAPIView.as_view(),
        name="annotation-jv-thresholds",
    ),
]

# Label Studio import.
from . import views_label_studio as label_studio  # noqa: E402

urlpatterns += [
    path(
        "annotation/projects/<id:project_pk>/label-studio-import/",
        label_studio.LabelStudioImportAPIView.as_view(),
        name="annotation-label-studio-import",
    ),
]

# People and crowd entry links.
from . import views_people as people  # noqa: E402

urlpatterns += [
    path("annotation/people/", people.PeopleAPIView.as_view(), name="annotation-people"),
    path(
        "annotation/people/<id:user_pk>/invite/", people.PersonInviteAPIView.as_view(), name="annotation-person-invite"
    ),
    path(
        "annotation/people/welcome/<str:uidb64>/<str:token>/",
        people.InvitationAcceptAPIView.as_view(),
        name="annotation-invitation-accept",
    ),
    path(
        "annotation/people/<id:user_pk>/deactivate/",
        people.PersonDeactivateAPIView.as_view(),
        name="annotation-person-deactivate",
    ),
    path(
        "annotation/people/stages/<id:stage_pk>/enrol/",
        people.StageEnrolAPIView.as_view(),
        name="annotation-stage-enrol",
    ),
    path(
        "annotation/people/enrollments/<id:enrollment_pk>/replace/",
        people.EnrollmentReplaceAPIView.as_view(),
        name="annotation-enrollment-replace",
    ),
    path("annotation/people/stages/<id:stage_pk>/crowd/", people.CrowdLinkAPIView.as_view(), name="annotation-crowd"),
    path(
        "annotation/people/stages/<id:stage_pk>/crowd/recruits/",
        people.CrowdRecruitsAPIView.as_view(),
        name="annotation-crowd-recruits",
    ),
    path(
        "annotation/people/stages/<id:stage_pk>/crowd/export/",
        people.CrowdExportAPIView.as_view(),
        name="annotation-crowd-export",
    ),
]

# A stage's crowd outcome list.
from . import views_crowd_outcomes as crowd_outcomes  # noqa: E402

urlpatterns += [
    path(
        "annotation/people/stages/<id:stage_pk>/crowd/outcomes/",
        crowd_outcomes.CrowdOutcomesAPIView.as_view(),
        name="annotation-crowd-outcomes",
    ),
]
