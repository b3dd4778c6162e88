"""API views for annotators' training and labelling steps, driven by the same step machine as the pages.

The same steps as the pages, so a step out of order is 403 here too. Responses carry only the caller's own data: items
without gold until the pilot is submitted (and then only as the stage's feedback rule allows), never another
annotator's labels, and no score or count to one who failed (`workflow.pilot_feedback`)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Comment, Enrollment, Stage, Thread
from annotation.selectors.label_form import label_form_questions
from annotation.selectors.projects import project_item
from annotation.selectors.threads import ThreadHidden, thread_access, thread_comments
from annotation.selectors.training import (
    enrollment_of,
    examples_seen_ids,
    guideline_current,
    norming_threads,
    own_gate_fields,
    pilot_feedback,
    stage_gate_rules,
    training_counts,
    training_item_next,
    training_progress,
    worked_examples,
)
from annotation.services.adjudication import discussion_comment
from annotation.services.labelling import NoAssignment
from annotation.services.labels import any_phase_label_submit
from annotation.services.resolution import ResolutionRefused
from annotation.services.training import (
    SetupError,
    comment_pin,
    comment_post,
    example_mark_seen,
    guideline_confirm,
    norming_acknowledge,
)
from annotation.workflow.answers import LabelInvalid, answers_from_json
from annotation.workflow.training import STEP_TITLES, Action, StepRefused, check_action, next_step
from edufair_web.accounts.permissions import IsAdjudicator, IsAnnotator

from .serializers_training import (
    AnnotatorItemSerializer,
    CommentSerializer,
    GuidelineConfirmSerializer,
    GuidelineTextSerializer,
    LabelSubmitResultSerializer,
    LabelSubmitSerializer,
    PilotFeedbackSerializer,
    ThreadCommentSerializer,
    ThreadSerializer,
    TrainingNextSerializer,
    TrainingStateSerializer,
    WorkedExampleOutSerializer,
)


def _enrollment(request, stage_pk) -> Enrollment:
    enrollment = enrollment_of(request.user, stage_pk)
    if enrollment is None:
        get_object_or_404(Stage, pk=stage_pk)
        raise PermissionDenied("You are not enrolled in this stage.")
    return enrollment


def _check(enrollment: Enrollment, action: Action):
    try:
        check_action(training_progress(enrollment), action)
    except StepRefused as exc:
        raise PermissionDenied(str(exc)) from exc


def _gate_state(enrollment: Enrollment, progress) -> dict:
    """The gate as the annotator may see it (`selectors.training.own_gate_fields`): pass or fail, and scores
    only where allowed; never a count, a score or a reason to one who failed (each would teach the gold)."""
    own = own_gate_fields(enrollment, progress)
    return {
        "rules": stage_gate_rules(enrollment.stage),
        "passed": own["gate_passed"],
        "pilot_score": own["pilot_score"],
        "qualification_correct": own["qualification_correct"],
        "qualification_total": own["qualification_total"],
        "qualification_score": own["qualification_score"],
        "pilot_coverage": own["pilot_coverage"],
        "rule": enrollment.gate_rule or None,
        "reasons": [],
    }


def _state(enrollment: Enrollment) -> dict:
    enrollment.refresh_from_db()
    progress = training_progress(enrollment)
    step = next_step(progress)
    return {
        "stage": enrollment.stage_id,
        "step": step.value,
        "step_title": STEP_TITLES[step],
        "guideline_version": progress.current_guideline_version,
        "guideline_confirmed": progress.confirmed_current_guideline,
        "examples": {"seen": progress.examples_seen, "total": progress.examples_total},
        "pilot": {"labelled": progress.pilot_labelled, "total": progress.pilot_total},
        "norming_done": progress.norming_done,
        "qualification": {"labelled": progress.qualification_labelled, "total": progress.qualification_total},
        "pilot_feedback": {
            "shown": progress.pilot_done and progress.feedback_refusal is None,
            "refusal": progress.feedback_refusal if progress.pilot_done else None,
        },
        "gate": _gate_state(enrollment, progress),
    }


class TrainingStateView(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(responses=TrainingStateSerializer)
    def get(self, request, stage_pk):
        """Where the caller is in the stage's training, and their gate result once decided."""
        return Response(_state(_enrollment(request, stage_pk)))


class GuidelineAPIView(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(responses=GuidelineTextSerializer)
    def get(self, request, stage_pk):
        enrollment = _enrollment(request, stage_pk)
        guideline = guideline_current(enrollment.stage)
        if guideline is None:
            raise NotFound("The stage has no guideline yet.")
        return Response({"version": guideline.version, "text": guideline.text, "change_note": guideline.change_note})

    @extend_schema(request=GuidelineConfirmSerializer, responses=TrainingStateSerializer)
    def post(self, request, stage_pk):
        """Confirm having read the current version (send `version` to make sure it is the one you read)."""
        enrollment = _enrollment(request, stage_pk)
        serializer = GuidelineConfirmSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            guideline_confirm(enrollment=enrollment, version=serializer.validated_data.get("version"))
        except StepRefused as exc:
            raise PermissionDenied(str(exc)) from exc
        return Response(_state(enrollment))


class ExamplesAPIView(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(responses=WorkedExampleOutSerializer(many=True))
    def get(self, request, stage_pk):
        enrollment = _enrollment(request, stage_pk)
        _check(enrollment, Action.VIEW_EXAMPLES)
        seen = examples_seen_ids(enrollment)
        return Response(
            [
                {
                    "id": example.id,
                    "kind": example.kind,
                    "item": AnnotatorItemSerializer(example.item).data,
                    "question": example.question.key,
                    "value": example.value,
                    "label": example.question.choice_label(example.value),
                    "rationale": example.rationale,
                    "seen": example.id in seen,
                }
                for example in worked_examples(enrollment.stage)
            ]
        )


class ExampleSeenAPIView(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(request=None, responses=TrainingStateSerializer)
    def post(self, request, stage_pk, example_pk):
        enrollment = _enrollment(request, stage_pk)
        example = next((e for e in worked_examples(enrollment.stage) if e.id == example_pk), None)
        if example is None:
            raise NotFound("No such example in this stage.")
        try:
            example_mark_seen(enrollment=enrollment, example=example)
        except StepRefused as exc:
            raise PermissionDenied(str(exc)) from exc
        return Response(_state(enrollment))


class TrainingNextItemAPIView(APIView):
    """The next pilot or qualification item: the payload and the questions, never gold. 204 when there is
    no item left (the phase is all labelled), as for every "next item"; 403 for a step out of order."""

    permission_classes = [IsAnnotator]
    actions = {"pilot": Action.LABEL_PILOT, "qualification": Action.LABEL_QUALIFICATION}

    @extend_schema(responses={200: TrainingNextSerializer, 204: None})
    def get(self, request, stage_pk, phase):
        if phase not in self.actions:
            raise NotFound("The phase is pilot or qualification.")
        enrollment = _enrollment(request, stage_pk)
        done, total = training_counts(enrollment, phase)
        if total and done >= total:
            return Response(status=status.HTTP_204_NO_CONTENT)
        _check(enrollment, self.actions[phase])
        item = training_item_next(enrollment, phase)
        if item is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(
            {
                "phase": phase,
                "labelled": done,
                "total": total,
                "item": AnnotatorItemSerializer(item).data,
                "questions": label_form_questions(enrollment.stage),
            }
        )


class LabelSubmitAPIView(APIView):
    """Submit one item's answers in a phase (pilot, qualification, main). Out of training order → 403;
    a repeated submit changes nothing (200 instead of 201)."""

    permission_classes = [IsAnnotator]

    @extend_schema(
        request=LabelSubmitSerializer, responses={201: LabelSubmitResultSerializer, 200: LabelSubmitResultSerializer}
    )
    def post(self, request, stage_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        serializer = LabelSubmitSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        item = project_item(stage.project_id, data["item"])
        if item is None:
            raise NotFound("No such item in this project.")
        answers = answers_from_json(data["answers"])
        try:
            result = any_phase_label_submit(
                annotator=request.user,
                stage=stage,
                item=item,
                phase=data["phase"],
                answers=answers,
                seconds=data["seconds"],
            )
        except StepRefused as exc:
            raise PermissionDenied(str(exc)) from exc
        except NoAssignment as exc:
            raise NotFound(str(exc)) from exc
        except LabelInvalid as exc:
            return Response({"answers": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        enrollment = Enrollment.objects.get(stage=stage, user=request.user)
        return Response(
            {"assignment": result.assignment.id, "created": result.created, "state": _state(enrollment)},
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )


class PilotFeedbackAPIView(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(responses=PilotFeedbackSerializer)
    def get(self, request, stage_pk):
        """After the whole pilot, as the stage's feedback rule allows (403 with the reason otherwise): agreement
        with gold and, per item, gold and rationale beside your answer."""
        enrollment = _enrollment(request, stage_pk)
        _check(enrollment, Action.VIEW_PILOT_FEEDBACK)
        enrollment.refresh_from_db()
        rows = pilot_feedback(enrollment)
        return Response(
            {
                "pilot_score": enrollment.pilot_score,
                "pilot_coverage": enrollment.pilot_coverage,
                "threshold": enrollment.stage.pilot_threshold,
                "unsure_rule": enrollment.stage.unsure_rule,
                "min_coverage": enrollment.stage.unsure_min_coverage
                if enrollment.stage.unsure_rule == "exclude"
                else None,
                "gate_rules": stage_gate_rules(enrollment.stage),
                "items": [
                    {
                        "item": AnnotatorItemSerializer(row["item"]).data,
                        "answers": row["answers"],
                        "thread": row["thread_id"],
                    }
                    for row in rows
                ],
            }
        )


class NormingAPIView(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(responses=ThreadSerializer(many=True))
    def get(self, request, stage_pk):
        enrollment = _enrollment(request, stage_pk)
        _check(enrollment, Action.READ_NORMING)
        return Response(ThreadSerializer(norming_threads(enrollment.stage, enrollment), many=True).data)

    @extend_schema(request=None, responses=TrainingStateSerializer)
    def post(self, request, stage_pk):
        """Finish the norming step (the discussion itself goes on)."""
        enrollment = _enrollment(request, stage_pk)
        try:
            norming_acknowledge(enrollment=enrollment)
        except StepRefused as exc:
            raise PermissionDenied(str(exc)) from exc
        return Response(_state(enrollment))


def _thread_access(request, thread_pk):
    """The caller's access to the thread (`selectors.threads.thread_access`): 404 for a thread they may not
    know of, 403 for a norming thread of their stage before their pilot is in."""
    thread = get_object_or_404(Thread.objects.select_related("stage", "item"), pk=thread_pk)
    try:
        return thread_access(user=request.user, thread=thread)
    except ThreadHidden as exc:
        raise NotFound("No such thread.") from exc
    except StepRefused as exc:
        raise PermissionDenied(str(exc)) from exc


def _shown_comment(request, access, comment_id: int) -> dict:
    return next(c for c in thread_comments(access=access, user=request.user) if c["id"] == comment_id)


class ThreadCommentsAPIView(APIView):
    """A thread's comments. Norming threads: the annotators of the stage (after their pilot) and moderators.
    An item's discussion: only as the blindness rule allows (its annotators while it is open and disputed,
    and moderators), and no posting once it is closed. Authors are pseudonyms to annotators."""

    permission_classes = [IsAnnotator]

    @extend_schema(responses=ThreadCommentSerializer(many=True))
    def get(self, request, thread_pk):
        access = _thread_access(request, thread_pk)
        return Response(ThreadCommentSerializer(thread_comments(access=access, user=request.user), many=True).data)

    @extend_schema(request=CommentSerializer, responses=ThreadCommentSerializer)
    def post(self, request, thread_pk):
        access = _thread_access(request, thread_pk)
        serializer = CommentSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        body = serializer.validated_data["body"]
        try:
            if access.discussion is not None:
                thread = access.thread
                comment = discussion_comment(stage=thread.stage, item=thread.item, author=request.user, body=body)
            else:
                comment = comment_post(thread=access.thread, author=request.user, body=body, moderator=access.moderator)
        except StepRefused as exc:
            raise PermissionDenied(str(exc)) from exc
        except ResolutionRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except SetupError as exc:
            return Response({"body": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        shown = _shown_comment(request, access, comment.pk)
        return Response(ThreadCommentSerializer(shown).data, status=status.HTTP_201_CREATED)


class CommentPinAPIView(APIView):
    permission_classes = [IsAdjudicator]

    @extend_schema(request=None, responses=CommentSerializer)
    def post(self, request, comment_pk):
        """Pin (or, with {"pinned": false}, unpin) a clarification for the next guideline version."""
        comment = get_object_or_404(Comment.objects.select_related("thread__stage__project"), pk=comment_pk)
        try:
            comment = comment_pin(comment=comment, pinned=bool(request.data.get("pinned", True)))
        except SetupError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(CommentSerializer(comment).data)
