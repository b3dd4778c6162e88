"""Serializers of the project report's and the stage dashboard's API response bodies.

The OpenAPI schema documents each body through them. Statistics are full-precision floats (rounding is for display
only); an undefined one is null with its reason."""

from rest_framework import serializers

from annotation.crowd_aggregation import METHOD_KEYS


class StatisticSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True, help_text="Full precision; null when undefined.")
    n_units = serializers.IntegerField()
    undefined_reason = serializers.CharField(allow_null=True, allow_blank=True)


_AC2_HELP = "Gwet's AC2 with linear weights over the scale's order; ordinal questions only."


class AgreementCellSerializer(serializers.Serializer):
    fleiss_kappa = StatisticSerializer()
    krippendorff_alpha = StatisticSerializer()
    gwet_ac1 = StatisticSerializer()
    gwet_ac2_linear = StatisticSerializer(required=False, help_text=_AC2_HELP)
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


class AggregateAgreementSerializer(serializers.Serializer):
    n_items = serializers.IntegerField(help_text="Items with both the aggregate and the reference value.")
    accuracy = serializers.FloatField(allow_null=True)
    cohen_kappa = serializers.FloatField(allow_null=True, help_text="Unweighted Cohen's κ (scikit-learn).")
    undefined_reason = serializers.CharField(allow_null=True)


class AnnotatorCompetenceSerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="Pseudonym.")
    competence = serializers.FloatField(
        allow_null=True, help_text="On the method's own scale (see competence_measure); null when not finite."
    )
    labels = serializers.IntegerField(help_text="Labels of the annotator the model saw.")


class ItemAggregateSerializer(serializers.Serializer):
    item_id = serializers.IntegerField()
    external_id = serializers.CharField(allow_blank=True)
    label = serializers.CharField(help_text="The value of highest posterior (a tie: the value listed first).")
    posterior = serializers.FloatField(help_text="The posterior probability of the label.")
    soft_label = serializers.DictField(
        child=serializers.FloatField(), help_text="The posterior of every value of the question; sums to 1."
    )
    n_labels = serializers.IntegerField()
    final_value = serializers.CharField(allow_null=True, help_text="The adjudicated final value, if settled.")
    gold_value = serializers.CharField(allow_null=True)


class MethodAggregateSerializer(serializers.Serializer):
    method = serializers.CharField(help_text=f"One of {', '.join(METHOD_KEYS)}.")
    title = serializers.CharField()
    competence_measure = serializers.CharField(help_text="What the competence number is for this method.")
    undefined_reason = serializers.CharField(allow_null=True)
    annotators = AnnotatorCompetenceSerializer(many=True)
    versus_final = AggregateAgreementSerializer(help_text="Against the adjudicated finals.")
    versus_gold = AggregateAgreementSerializer(help_text="Against gold labels, on items that have one.")
    items = ItemAggregateSerializer(many=True, required=False, help_text="Per item (the stage endpoint only).")


class QuestionAggregateSerializer(serializers.Serializer):
    question = serializers.CharField()
    prompt = serializers.CharField()
    values = serializers.ListField(child=serializers.CharField(), help_text="The soft labels' values, in order.")
    labels = serializers.IntegerField(help_text="First answers aggregated (Unsure left out).")
    unsure_left_out = serializers.IntegerField()
    items = serializers.IntegerField()
    methods = MethodAggregateSerializer(many=True)


class StageAggregationSerializer(serializers.Serializer):
    stage = serializers.IntegerField()
    project = serializers.IntegerField()
    name = serializers.CharField()
    order = serializers.IntegerField()
    questions = QuestionAggregateSerializer(many=True)


class AggregationMethodSerializer(serializers.Serializer):
    key = serializers.CharField()
    title = serializers.CharField()
    competence = serializers.CharField(help_text="What the method's competence number is.")


class ReportAggregationSerializer(serializers.Serializer):
    uses = serializers.CharField(help_text="Which aggregate the final labels are, and what stands beside them.")
    methods = AggregationMethodSerializer(many=True)
    stages = StageAggregationSerializer(many=True, help_text="Without the items (the stage endpoint has them).")


class ReportSerializer(serializers.Serializer):
    project = serializers.DictField()
    generated_at = serializers.CharField()
    items = serializers.IntegerField()
    conventions = serializers.ListField(child=serializers.CharField())
    stages = ReportStageSerializer(many=True)
    aggregation = ReportAggregationSerializer()
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
    gwet_ac1 = StatisticSerializer()
    gwet_ac2_linear = StatisticSerializer(allow_null=True, help_text=_AC2_HELP + " Null for a nominal one.")
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
