"""API view of a stage's crowd outcome list: one row per participant, paginated, for researchers only.

The rows are those of `crowd.csv` (`annotation.selectors.crowd_outcomes`): raw platform ids, status, times, main items
labelled and the code shown, so a researcher can approve, reject or pay each participant on the platform."""

from django.shortcuts import get_object_or_404
from rest_framework import serializers
from rest_framework.generics import ListAPIView

from annotation.models import Stage
from annotation.selectors.crowd_outcomes import crowd_outcome_rows
from edufair_web.accounts.permissions import IsResearcher


class CrowdOutcomeSerializer(serializers.Serializer):
    pseudonym = serializers.CharField(help_text="The annotator the participant works as.")
    participant_id = serializers.CharField(help_text="The platform's participant id (latest visit).")
    study_id = serializers.CharField(help_text="The platform's study id (latest visit); may be empty.")
    session_id = serializers.CharField(help_text="The platform's session id (latest visit); may be empty.")
    status = serializers.CharField(
        help_text="working, completed, screened_out or not_consented (a recorded outcome, else what the gate and "
        "the quota say)."
    )
    started_at = serializers.DateTimeField(help_text="The first arrival.")
    finished_at = serializers.DateTimeField(allow_null=True, help_text="When the outcome was recorded.")
    seconds_spent = serializers.IntegerField(help_text="First arrival to the finish (or to the latest visit).")
    main_items_labelled = serializers.IntegerField()
    code = serializers.CharField(
        help_text="The completion code shown (or the one the status will show); empty while working."
    )
    pay = serializers.CharField(
        help_text="The link's stated pay for a completed recruit, two decimals; empty for other outcomes or no pay."
    )
    pay_currency = serializers.CharField(help_text="ISO 4217 code of `pay`; empty when `pay` is.")


class CrowdOutcomesAPIView(ListAPIView):
    """The stage's crowd participants with their outcomes (an empty list when the stage has no crowd link)."""

    permission_classes = [IsResearcher]
    serializer_class = CrowdOutcomeSerializer

    def get_queryset(self):
        return crowd_outcome_rows(get_object_or_404(Stage, pk=self.kwargs["stage_pk"]))
