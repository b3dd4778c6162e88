"""Pages of audits, mounted at /audits/. Each area keeps its own block; append a new area as a new block."""

from django.urls import path

import edufair_web.converters  # noqa: F401  (registers the <id:…> path converter)
from audits.views import design, questionbank

app_name = "audits"

questionbank_urls = [
    path("questionbank/", questionbank.QuestionBankView.as_view(), name="questionbank"),
    path("questionbank/imports/new/", questionbank.QuestionImportCreateView.as_view(), name="question-import-new"),
    path(
        "questionbank/imports/<id:pk>/", questionbank.QuestionImportDetailView.as_view(), name="question-import-detail"
    ),
    path(
        "questionbank/imports/<id:pk>/status/",
        questionbank.QuestionImportStatusView.as_view(),
        name="question-import-status",
    ),
    path("questionbank/questions/<id:pk>/", questionbank.QuestionDetailView.as_view(), name="question-detail"),
]

design_urls = [
    path("design/", design.DesignOverviewView.as_view(), name="design"),
    path("design/preview/", design.DesignPreviewView.as_view(), name="design-preview"),
    path("design/dimensions/new/", design.DimensionCreateView.as_view(), name="dimension-new"),
    path("design/dimensions/<id:pk>/edit/", design.DimensionUpdateView.as_view(), name="dimension-edit"),
    path("design/levels/new/", design.LevelCreateView.as_view(), name="level-new"),
    path("design/levels/<id:pk>/edit/", design.LevelUpdateView.as_view(), name="level-edit"),
    path("design/names/new/", design.NameCueCreateView.as_view(), name="name-new"),
    path("design/names/<id:pk>/edit/", design.NameCueUpdateView.as_view(), name="name-edit"),
    path("design/names/<id:pk>/delete/", design.NameCueDeleteView.as_view(), name="name-delete"),
    path("design/templates/new/", design.PromptTemplateCreateView.as_view(), name="prompt-template-new"),
    path("design/templates/<id:pk>/", design.PromptTemplateDetailView.as_view(), name="prompt-template-detail"),
    path("design/templates/<id:pk>/revise/", design.PromptTemplateReviseView.as_view(), name="prompt-template-revise"),
    path("design/templates/<id:pk>/delete/", design.PromptTemplateDeleteView.as_view(), name="prompt-template-delete"),
]

urlpatterns = [
    *questionbank_urls,
    *design_urls,
]

# Audit engine: model endpoints, audits with live progress and controls, transcripts.
from audits.views import clone, endpoints, launch, live_panel, runs, transcripts  # noqa: E402

runs_urls = [
    path("endpoints/", endpoints.EndpointListView.as_view(), name="endpoints"),
    path("endpoints/new/", endpoints.EndpointCreateView.as_view(), name="endpoint-new"),
    path("endpoints/<id:pk>/edit/", endpoints.EndpointUpdateView.as_view(), name="endpoint-edit"),
    path("endpoints/<id:pk>/test/", endpoints.EndpointTestView.as_view(), name="endpoint-test"),
    path(
        "endpoints/<id:pk>/model-changed/", endpoints.EndpointModelChangedView.as_view(), name="endpoint-model-changed"
    ),
    path("runs/", runs.AuditListView.as_view(), name="audits"),
    path("runs/new/", launch.AuditCreateView.as_view(), name="audit-new"),
    path("runs/new/preview/", launch.AuditLaunchPreviewView.as_view(), name="audit-new-preview"),
    path("runs/<id:pk>/", runs.AuditDetailView.as_view(), name="audit-detail"),
    path("runs/<id:pk>/progress/", live_panel.AuditProgressView.as_view(), name="audit-progress"),
    path("runs/<id:pk>/clone/", clone.AuditCloneView.as_view(), name="audit-clone"),
    path("runs/<id:pk>/<slug:action>/", runs.AuditActionView.as_view(), name="audit-action"),
    path("dialogues/<id:pk>/", transcripts.DialogueDetailView.as_view(), name="dialogue-detail"),
]
urlpatterns += runs_urls

# Fairness results, under results/ (runs/<pk>/<action>/ would catch runs/<pk>/results/): dashboard,
# results pages (heatmaps, cell rows, pairs with transcripts), exports, the analysis's progress (polled
# while a worker computes it) and retry, compare, and the judge-corrected table with its downloads.
from audits.views import (  # noqa: E402
    analysis_progress,
    compare,
    dashboard,
    judge_corrected,
    results,
    results_cell,
    results_exports,
    results_pairs,
    results_report,
)

results_urls = [
    path("", dashboard.DashboardView.as_view(), name="dashboard"),
    path("results/<id:pk>/", results.AuditResultsView.as_view(), name="results"),
    path("results/<id:pk>/cell/", results_cell.ResultsCellView.as_view(), name="results-cell"),
    path("results/<id:pk>/pairs/", results_pairs.ContrastPairsView.as_view(), name="results-pairs"),
    path("results/<id:pk>/report/", results_report.ResultsReportView.as_view(), name="results-report"),
    path("results/<id:pk>/export/", results_exports.ResultsExportView.as_view(), name="results-export"),
    path("results/<id:pk>/status/", analysis_progress.AnalysisStatusView.as_view(), name="results-status"),
    path("results/<id:pk>/retry/", analysis_progress.AnalysisRetryView.as_view(), name="results-retry"),
    path("results/compare/", compare.CompareView.as_view(), name="results-compare"),
    path(
        "results/<id:pk>/judge-corrected/", judge_corrected.JudgeCorrectedView.as_view(), name="results-judge-corrected"
    ),
    path(
        "results/<id:pk>/judge-corrected/export/",
        judge_corrected.JudgeCorrectedExportView.as_view(),
        name="results-judge-corrected-export",
    ),
]
urlpatterns += results_urls
