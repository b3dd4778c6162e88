"""Serializers for the main-labelling and adjudication API: what callers submit and every response body.

They cover the answers an annotator submits (reusing the training answer shape), post-discussion answers, a reviewer's
decisions, the stage's assignment settings, and every response body these endpoints send (so the OpenAPI schema
documents each one)."""

from rest_framework import serializers

from annotation.models import StageLabelling
from edufair_web.text_limits import LINE_MAX, NOTE_MAX

from .serializers_training import AnnotatorItemSerializer, AnswerSerializer, FormQuestionSerializer


class MainSubmitSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    answers = serializers.DictField(child=AnswerSerializer(), help_text="Question key → answer.")
    seconds = serializers.FloatField(default=0, min_value=0, help_text="Active time on the item, in seconds.")


class DiscussionAnswersSerializer(serializers.Serializer):
    answers = serializers.DictField(child=AnswerSerializer(), help_text="Disputed question key → revised answer.")
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=NOTE_MAX)


class ReviewerDecisionSerializer(serializers.Serializer):
    decisions = serializers.DictField(
        child=serializers.CharField(max_length=LINE_MAX), help_text="Open question key → final value."
    )
    note = serializers.CharField(help_text="Why; recorded with the decision.", max_length=NOTE_MAX)


class StageLabellingSerializer(serializers.ModelSerializer):
    class Meta:
        model = StageLabelling
        fields = [
            "strategy",
            "seed",
            "reservation_minutes",
            "revision_minutes",
            "revision_items",
            "pilot_feedback",
            "pilot_closed",
        ]


class ConflictDispositionSerializer(serializers.Serializer):
    disposition = serializers.ChoiceField(choices=["removed", "retained"])
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=NOTE_MAX)


class MainProgressSerializer(serializers.Serializer):
    mine = serializers.IntegerField(help_text="Items you submitted in the stage.")


class MainNextSerializer(serializers.Serializer):
    assignment = serializers.IntegerField()
    reserved_until = serializers.DateTimeField(allow_null=True)
    item = AnnotatorItemSerializer()
    questions = FormQuestionSerializer(many=True)
    progress = MainProgressSerializer()


class MainSubmitResultSerializer(serializers.Serializer):
    assignment = serializers.IntegerField()
    created = serializers.BooleanField()


class ReviseSerializer(serializers.Serializer):
    answers = serializers.DictField(child=AnswerSerializer(), help_text="Question key → answer (every question).")
    seconds = serializers.FloatField(default=0, min_value=0, help_text="Active time of the revisit, in seconds.")


class ReviseResultSerializer(serializers.Serializer):
    assignment = serializers.IntegerField()
    revised = serializers.ListField(child=serializers.CharField(), help_text="Questions given a new version.")


class RecentAnswerSerializer(serializers.Serializer):
    question = serializers.CharField()
    value = serializers.CharField(allow_blank=True)
    unsure = serializers.BooleanField()
    justification = serializers.CharField(allow_blank=True)
    revisions = serializers.IntegerField(help_text="How many times this label was revised.")


class RecentItemSerializer(serializers.Serializer):
    item = AnnotatorItemSerializer()
    submitted_at = serializers.DateTimeField()
    revisable = serializers.BooleanField()
    refusal = serializers.CharField(allow_blank=True, help_text="Why it cannot be revised, when it cannot.")
    window = serializers.CharField(help_text="The revision window in time and position (or why it is over).")
    answers = RecentAnswerSerializer(many=True, help_text="Your latest answers.")


class AnswerSideSerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="A pseudonym to annotators.")
    you = serializers.BooleanField()
    username = serializers.CharField(required=False, help_text="Adjudicators and researchers only.")
    pre = serializers.JSONField(allow_null=True, help_text="The first answer.")
    post = serializers.JSONField(allow_null=True, help_text="The answer after discussion, if given.")


class DecisionSerializer(serializers.Serializer):
    method = serializers.CharField()
    final_value = serializers.CharField(allow_blank=True)
    note = serializers.CharField(allow_blank=True)
    decided_by = serializers.CharField(allow_null=True)


class ItemQuestionSerializer(serializers.Serializer):
    key = serializers.CharField()
    answers = AnswerSideSerializer(many=True)
    decision = DecisionSerializer(allow_null=True)


class DiscussionCommentSerializer(serializers.Serializer):
    author = serializers.CharField()
    you = serializers.BooleanField()
    body = serializers.CharField()
    at = serializers.DateTimeField()


class DiscussionStateSerializer(serializers.Serializer):
    thread = serializers.IntegerField(help_text="The thread id (its comments: /api/annotation/threads/{id}/comments/).")
    open = serializers.BooleanField()
    comments = DiscussionCommentSerializer(many=True, required=False)


class ItemDetailSerializer(serializers.Serializer):
    """An item's labels side by side and its discussion, as the caller may see them. After the last
    post-discussion answer closed the discussion, an annotator gets only stage, item id and discussion."""

    stage = serializers.IntegerField()
    item = serializers.JSONField(help_text="The item (as annotators see it), or its id once you may no longer see it.")
    status = serializers.CharField(allow_null=True, required=False)
    questions = ItemQuestionSerializer(many=True, required=False)
    discussion = DiscussionStateSerializer(allow_null=True)


class QueueRowSerializer(serializers.Serializer):
    project = serializers.IntegerField()
    stage = serializers.IntegerField()
    item = serializers.IntegerField()
    external_id = serializers.CharField()
    status = serializers.CharField()
    thread = serializers.IntegerField(allow_null=True, help_text="The item's discussion thread, if one opened.")


class ThreadRowSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    project = serializers.IntegerField()
    stage = serializers.IntegerField()
    item = serializers.IntegerField()
    external_id = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    open = serializers.BooleanField()
    comments = serializers.IntegerField()
    status = serializers.CharField(allow_null=True, help_text="The item's resolution status.")
    created_at = serializers.DateTimeField()


class DisputedItemSerializer(serializers.Serializer):
    stage = serializers.IntegerField()
    item = serializers.IntegerField()
    external_id = serializers.CharField()
    thread = serializers.IntegerField()
    open = serializers.BooleanField()
    status = serializers.CharField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    answered = serializers.BooleanField(help_text="You gave your post-discussion answers to every disputed question.")


class ConflictRowSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.IntegerField()
    earlier_stage = serializers.IntegerField()
    later_stage = serializers.IntegerField()
    detail = serializers.DictField()
    disposition = serializers.CharField()
    note = serializers.CharField(allow_blank=True)


class ConflictDispositionResultSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    disposition = serializers.CharField()
    note = serializers.CharField(allow_blank=True)
