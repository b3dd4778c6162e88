"""Serializers of the project report's and the stage dashboard's API response bodies.

The OpenAPI schema documents each body through them. Statistics are full-precision floats (rounding is for display
only); an undefined one is null with its reason."""

from rest_framework import serializers


class StatisticSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True, help_text="Full precision; null when undefined.")
    n_units = serializers.IntegerField()
    undefined_reason = serializers.CharField(allow_null=True, allow_blank=True)


class AgreementCellSerializer(serializers.Serializer):
    fleiss_kappa = StatisticSerializer()
    krippendorff_alpha = StatisticSerializer()
    level = serializers.CharField(required=False)
    items = serializers.IntegerField()


class AgreementGroupSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="all, subject or modality")
    group = serializers.CharField(help_text="The group's title.")
    value = serializers.CharField(
        allow_blank=True,
        help_text="The items' subject or modality (as in the items and the label export) that selects the group; "
        "empty for all items.",
    )
    pre = AgreementCellSerializer(help_text="Before discussion (final pre-discussion labels).")
    post = AgreementCellSerializer(help_text="After discussion.")


class QuestionAgreementSerializer(serializers.Serializer):
    question = serializers.CharField()
    prompt = serializers.CharField()
    has_post_discussion = serializers.BooleanField()
    groups = AgreementGroupSerializer(many=True)


class AnnotatorAgreementSerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="Pseudonym.")
    compared = serializers.IntegerField()
    agreement = serializers.FloatField(allow_null=True)


class ReportStageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    order = serializers.IntegerField()
    name = serializers.CharField()
    workforce = serializers.DictField()
    agreement = QuestionAgreementSerializer(many=True)
    annotators = AnnotatorAgreementSerializer(many=True)
    adjudication = serializers.DictField()
    distribution = serializers.ListField(child=serializers.DictField())
    volume = serializers.DictField(help_text="Labels by phase, post-discussion and revised labels, items, annotators.")
    time_and_cost = serializers.DictField()


class ReportSerializer(serializers.Serializer):
    project = serializers.DictField()
    generated_at = serializers.CharField()
    items = serializers.IntegerField()
    conventions = serializers.ListField(child=serializers.CharField())
    stages = ReportStageSerializer(many=True)
    gate = serializers.ListField(child=serializers.DictField())
    crowd = serializers.ListField(
        child=serializers.DictField(), help_text="Per stage with a crowd link: its recruits by pseudonym."
    )
    conflicts = serializers.DictField()
    totals = serializers.DictField()


class AnnotatorActivitySerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="Pseudonym.")
    labels = serializers.IntegerField(help_text="Main items submitted.")
    median_seconds = serializers.FloatField(allow_null=True)


class DashboardAgreementSerializer(serializers.Serializer):
    question = serializers.CharField()
    fleiss_kappa = StatisticSerializer()
    krippendorff_alpha = StatisticSerializer()
    items = serializers.IntegerField()


class StageDashboardSerializer(serializers.Serializer):
    stage = serializers.IntegerField()
    project = serializers.IntegerField()
    items = serializers.DictField(
        child=serializers.IntegerField(), help_text="complete / in_progress / waiting / total"
    )
    statuses = serializers.DictField(child=serializers.IntegerField())
    labels = serializers.IntegerField()
    revised_labels = serializers.IntegerField()
    reservations_held = serializers.IntegerField()
    annotators = AnnotatorActivitySerializer(many=True)
    agreement = DashboardAgreementSerializer(many=True, help_text="Pre-discussion, on the labels so far.")
    disagreement_rate = serializers.FloatField(allow_null=True)
    adjudication_rate = serializers.FloatField(allow_null=True)
    in_queue = serializers.IntegerField(help_text="Items waiting for a discussion or a reviewer.")
    running = serializers.BooleanField(help_text="Items are still being labelled or reserved.")
    generated_at = serializers.DateTimeField()
