"""Serializers for annotators: an item to label (payload only — no gold, no metadata), answers to submit,
the training state, pilot feedback (after submission), worked examples and norming threads."""

from rest_framework import serializers

from annotation.models import Comment, Item, Thread


class AnnotatorItemSerializer(serializers.ModelSerializer):
    """What an annotator may see of an item. Metadata is left out on purpose (it may carry what the
    annotator must not see, such as a persona cue or the gold source)."""

    class Meta:
        model = Item
        fields = ["id", "external_id", "payload", "subject", "category", "modality"]


class AnswerSerializer(serializers.Serializer):
    value = serializers.CharField(required=False, allow_null=True, allow_blank=True, default=None)
    unsure = serializers.BooleanField(default=False)
    justification = serializers.CharField(required=False, allow_blank=True, default="")


class LabelSubmitSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    # A plain string rather than a choice field: the OpenAPI enum would collide with the training-set phase.
    phase = serializers.CharField(help_text="pilot, qualification or main")
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
