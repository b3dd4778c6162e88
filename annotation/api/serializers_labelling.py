"""Serializers for main labelling and adjudication: the answers an annotator submits (reusing the training
answer shape), post-discussion answers, a reviewer's decisions, and the stage's assignment settings."""

from rest_framework import serializers

from annotation.models import StageLabelling

from .serializers_training import AnswerSerializer


class MainSubmitSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    answers = serializers.DictField(child=AnswerSerializer(), help_text="Question key → answer.")
    seconds = serializers.FloatField(default=0, min_value=0, help_text="Active time on the item, in seconds.")


class DiscussionAnswersSerializer(serializers.Serializer):
    answers = serializers.DictField(child=AnswerSerializer(), help_text="Disputed question key → revised answer.")
    comment = serializers.CharField(required=False, allow_blank=True, default="")


class ReviewerDecisionSerializer(serializers.Serializer):
    decisions = serializers.DictField(child=serializers.CharField(), help_text="Open question key → final value.")
    note = serializers.CharField(help_text="Why; recorded with the decision.")


class StageLabellingSerializer(serializers.ModelSerializer):
    class Meta:
        model = StageLabelling
        fields = ["strategy", "seed", "reservation_minutes"]


class ConflictDispositionSerializer(serializers.Serializer):
    disposition = serializers.ChoiceField(choices=["removed", "retained"])
    note = serializers.CharField(required=False, allow_blank=True, default="")
