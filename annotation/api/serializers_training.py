"""Serializers for the annotators' training and labelling API.

They cover an item to label (payload only — no gold, no metadata), answers to submit, the training state, pilot feedback
(after submission), worked examples and norming threads."""

from rest_framework import serializers

from annotation.models import Comment, Item, Thread
from edufair_web.text_limits import LINE_MAX, NOTE_MAX


class AnnotatorItemSerializer(serializers.ModelSerializer):
    """What an annotator may see of an item. Metadata is left out on purpose (it may carry what the
    annotator must not see, such as a persona cue or the gold source)."""

    class Meta:
        model = Item
        fields = ["id", "external_id", "payload", "subject", "category", "modality"]


class AnswerSerializer(serializers.Serializer):
    value = serializers.CharField(required=False, allow_null=True, allow_blank=True, default=None, max_length=LINE_MAX)
    unsure = serializers.BooleanField(default=False)
    justification = serializers.CharField(required=False, allow_blank=True, default="", max_length=NOTE_MAX)


class LabelSubmitSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    # A plain string rather than a choice field: the OpenAPI enum would collide with the training-set phase.
    phase = serializers.CharField(help_text="pilot, qualification or main", max_length=LINE_MAX)
    answers = serializers.DictField(child=AnswerSerializer(), help_text="Question key → answer.")
    seconds = serializers.FloatField(default=0, min_value=0, help_text="Active time on the item, in seconds.")

    def validate_phase(self, value: str) -> str:
        if value not in ("pilot", "qualification", "main"):
            raise serializers.ValidationError("The phase is pilot, qualification or main.")
        return value


class GuidelineConfirmSerializer(serializers.Serializer):
    version = serializers.IntegerField(required=False, allow_null=True)


class CommentSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username", read_only=True)

    class Meta:
        model = Comment
        fields = ["id", "author", "body", "pinned", "created_at"]
        read_only_fields = ["pinned", "created_at"]


class ThreadCommentSerializer(serializers.Serializer):
    """A comment as the caller may see it (`selectors.threads.thread_comments`): the author is a username
    for moderators and a pseudonym ("Annotator 2", "Adjudicator") for annotators; ``you`` marks your own."""

    id = serializers.IntegerField()
    author = serializers.CharField()
    you = serializers.BooleanField()
    body = serializers.CharField()
    pinned = serializers.BooleanField()
    created_at = serializers.DateTimeField()


class ThreadSerializer(serializers.ModelSerializer):
    item = AnnotatorItemSerializer(read_only=True)

    class Meta:
        model = Thread
        fields = ["id", "stage", "item", "kind", "reason", "is_open", "created_at"]


# --- Response bodies (documented in the OpenAPI schema) ---------------------------------------------


class ChoiceSerializer(serializers.Serializer):
    value = serializers.CharField()
    label = serializers.CharField()
    key = serializers.CharField(help_text="The keyboard key that selects it.")


class FormQuestionSerializer(serializers.Serializer):
    """A question as the label form shows it (`selectors.label_form.label_form_questions`)."""

    key = serializers.CharField()
    prompt = serializers.CharField()
    help_text = serializers.CharField(allow_blank=True)
    choices = ChoiceSerializer(many=True)
    allow_unsure = serializers.BooleanField()
    justify_values = serializers.CharField(allow_blank=True, help_text="Comma-separated values that need a why.")


class CountSerializer(serializers.Serializer):
    seen = serializers.IntegerField(required=False)
    labelled = serializers.IntegerField(required=False)
    total = serializers.IntegerField()


class PilotFeedbackStateSerializer(serializers.Serializer):
    shown = serializers.BooleanField(help_text="Whether your pilot's gold is open to you.")
    refusal = serializers.CharField(allow_null=True, help_text="Why it is not, once your pilot is in.")


class GateStateSerializer(serializers.Serializer):
    """Pass or fail; scores only for a pilot whose gold is open to you and a gate you passed."""

    rules = serializers.DictField(child=serializers.CharField())
    passed = serializers.BooleanField(allow_null=True)
    pilot_score = serializers.FloatField(allow_null=True)
    qualification_correct = serializers.IntegerField(allow_null=True)
    qualification_total = serializers.IntegerField(allow_null=True)
    qualification_score = serializers.FloatField(allow_null=True)
    pilot_coverage = serializers.FloatField(allow_null=True)
    rule = serializers.CharField(allow_null=True)
    reasons = serializers.ListField(child=serializers.CharField())


class TrainingStateSerializer(serializers.Serializer):
    stage = serializers.IntegerField()
    step = serializers.CharField()
    step_title = serializers.CharField()
    guideline_version = serializers.IntegerField(allow_null=True)
    guideline_confirmed = serializers.BooleanField()
    examples = CountSerializer()
    pilot = CountSerializer()
    norming_done = serializers.BooleanField()
    qualification = CountSerializer()
    pilot_feedback = PilotFeedbackStateSerializer()
    gate = GateStateSerializer()


class GuidelineTextSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    text = serializers.CharField()
    change_note = serializers.CharField(allow_blank=True)


class WorkedExampleOutSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    item = AnnotatorItemSerializer()
    question = serializers.CharField()
    value = serializers.CharField()
    label = serializers.CharField()
    rationale = serializers.CharField()
    seen = serializers.BooleanField()


class TrainingNextSerializer(serializers.Serializer):
    phase = serializers.CharField()
    labelled = serializers.IntegerField()
    total = serializers.IntegerField()
    item = AnnotatorItemSerializer()
    questions = FormQuestionSerializer(many=True)


class LabelSubmitResultSerializer(serializers.Serializer):
    assignment = serializers.IntegerField()
    created = serializers.BooleanField()
    state = TrainingStateSerializer()


class FeedbackAnswerSerializer(serializers.Serializer):
    question = serializers.CharField()
    prompt = serializers.CharField()
    your_value = serializers.CharField(allow_null=True)
    your_label = serializers.CharField()
    unsure = serializers.BooleanField()
    gold_value = serializers.CharField(allow_null=True)
    gold_label = serializers.CharField(allow_null=True)
    rationale = serializers.CharField(allow_blank=True)
    agrees = serializers.BooleanField()


class FeedbackItemSerializer(serializers.Serializer):
    item = AnnotatorItemSerializer()
    answers = FeedbackAnswerSerializer(many=True, help_text="Per question: your answer beside gold.")
    thread = serializers.IntegerField(allow_null=True, help_text="The item's norming thread, if one opened.")


class PilotFeedbackSerializer(serializers.Serializer):
    pilot_score = serializers.FloatField(allow_null=True)
    pilot_coverage = serializers.FloatField(allow_null=True)
    threshold = serializers.FloatField()
    unsure_rule = serializers.CharField()
    min_coverage = serializers.FloatField(allow_null=True)
    gate_rules = serializers.DictField(child=serializers.CharField())
    items = FeedbackItemSerializer(many=True)
