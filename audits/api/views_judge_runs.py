"""API of judging runs (researchers only): each run as it ended, its batches, and cancelling a running one.

A run reads done, done with failures or failed, with the cause in the provider's words, beside its Batch API
batches."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from audits.selectors.judge_runs import judge_run_by_id, judge_runs_list
from audits.services.judge_runs import judge_run_cancel
from edufair_web.accounts.permissions import IsResearcher


class JudgeBatchSerializer(serializers.Serializer):
    round = serializers.IntegerField()
    status = serializers.CharField()
    final_status = serializers.CharField(
        help_text="How it ended at the provider: completed, failed, expired, cancelled."
    )
    lines = serializers.IntegerField()
    completed = serializers.IntegerField(allow_null=True)
    answered = serializers.IntegerField()
    failed = serializers.IntegerField()
    unrun = serializers.IntegerField(help_text="Lines the provider never ran.")
    provider_batch_id = serializers.CharField()
    validation_errors = serializers.ListField(
        child=serializers.DictField(),
        help_text="The provider's reasons for rejecting it: {code, message, param, line}.",
    )
    error = serializers.CharField()


class JudgeRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(
        choices=["queued", "running", "done", "done_with_failures", "failed"],
        help_text="done: every turn scored; done_with_failures: some not; failed: none, or the run broke off.",
    )
    status_label = serializers.CharField()
    open = serializers.BooleanField()
    via_batch = serializers.BooleanField()
    total = serializers.IntegerField()
    judged = serializers.IntegerField()
    scored = serializers.IntegerField()
    percent = serializers.IntegerField()
    calls_sent = serializers.IntegerField(help_text="Calls that reached the provider and were run there.")
    calls_cached = serializers.IntegerField()
    batches = JudgeBatchSerializer(many=True)
    cause = serializers.CharField(help_text="Why turns went unscored or the run failed, in the provider's words.")
    error = serializers.CharField(help_text="The same as cause (kept for older clients).")
    cancellable = serializers.BooleanField()
    cancel_requested_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


RUN_ID = OpenApiParameter("id", int, OpenApiParameter.PATH, description="The judging run's id.")


class JudgeRunViewSet(viewsets.ViewSet):
    permission_classes = [IsResearcher]
    lookup_value_regex = "[0-9]+"

    @extend_schema(
        parameters=[
            OpenApiParameter("owner", str, description='Only the runs of this owner, e.g. "audit:3:rubric:7".')
        ],
        responses=JudgeRunSerializer(many=True),
    )
    def list(self, request):
        return Response(judge_runs_list(owner=request.query_params.get("owner", "")[:120]))

    @extend_schema(parameters=[RUN_ID], responses=JudgeRunSerializer)
    def retrieve(self, request, pk=None):
        return Response(self._run(pk))

    @extend_schema(
        parameters=[RUN_ID],
        request=None,
        responses={200: JudgeRunSerializer, 409: dict},
        description="Cancel the run: a queued run ends at once; a running batch run asks the provider to cancel "
        "its open batches and sends nothing more (the lines they finished are kept). An online run cannot be "
        "cancelled (409).",
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        self._run(pk)
        try:
            judge_run_cancel(run_id=int(pk))
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self._run(pk))

    @staticmethod
    def _run(pk) -> dict:
        found = judge_run_by_id(int(pk)) if str(pk).isdigit() else None
        if found is None:
            raise Http404("No such judging run.")
        return found
