"""Annotator pages for training, each step asked of the same step machine as the API.

The pages: what to do next, the guideline, worked examples, pilot and qualification labelling, pilot feedback and the
norming discussion. Since every page asks the same step machine, a step out of order is refused by the server (403)
whatever the page shows; the pilot's gold and the annotator's scores are shown only as `workflow.pilot_feedback`
allows (`selectors.training.own_gate_fields`)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views import View

from annotation.markdown_text import markdown_safe
from annotation.models import Phase, TrainingItem
from annotation.selectors.labelling_settings import labelling_settings
from annotation.selectors.training import (
    enrollments_of_user,
    examples_seen_ids,
    guideline_current,
    norming_threads,
    own_gate_fields,
    pilot_feedback,
    stage_gate_rules,
    training_counts,
    training_item_next,
    training_item_of,
    training_progress,
    worked_examples,
)
from annotation.services.labelling import NoAssignment
from annotation.services.labels import any_phase_label_submit
from annotation.services.training import example_mark_seen, guideline_confirm, norming_acknowledge
from annotation.workflow.answers import LabelInvalid
from annotation.workflow.pilot_feedback import GATE_FAILED, POLICY_STATEMENTS
from annotation.workflow.training import STEP_TITLES, TRAINING_STEPS, Action, Step, StepRefused, check_action, next_step
from annotation.workflow.training import waiting_reason as step_waiting_reason
from edufair_web.accounts.permissions import AnnotatorRequiredMixin
from edufair_web.converters import parse_id

from .common import answers_from_post, enrollment_or_403, label_form_context, refused_response

STEP_URLS = {
    Step.GUIDELINE: "annotation:training-guideline",
    Step.EXAMPLES: "annotation:training-examples",
    Step.PILOT: "annotation:training-pilot",
    Step.NORMING: "annotation:training-norming",
    Step.QUALIFICATION: "annotation:training-qualification",
}


def step_url(step: Step, stage_id: int) -> str:
    if step in STEP_URLS:
        return reverse(STEP_URLS[step], args=[stage_id])
    return reverse("annotation:training-stage", args=[stage_id])


class MyTrainingView(AnnotatorRequiredMixin, View):
    """Every stage the annotator is enrolled in, with the next thing to do in each."""

    def get(self, request):
        rows = []
        for enrollment in enrollments_of_user(request.user):
            step = next_step(training_progress(enrollment))
            rows.append(
                {
                    "enrollment": enrollment,
                    "step": step,
                    "step_title": STEP_TITLES[step],
                    "url": step_url(step, enrollment.stage_id),
                }
            )
        return render(request, "annotation/my_training.html", {"rows": rows})


class TrainingStageView(AnnotatorRequiredMixin, View):
    """The "what to do next" page of one stage: the five steps, which are done, and the next one."""

    def get(self, request, stage_pk):
        enrollment = enrollment_or_403(request, stage_pk)
        progress = training_progress(enrollment)
        current = next_step(progress)
        order = list(TRAINING_STEPS)
        steps = []
        for step in order:
            if current in order:
                state = "done" if order.index(step) < order.index(current) else ("now" if step == current else "later")
            else:
                state = "done" if current in (Step.PASSED, Step.FAILED) else "later"
            if step == Step.GUIDELINE and current != Step.GUIDELINE and progress.confirmed_current_guideline:
                state = "done"
            steps.append({"step": step, "title": STEP_TITLES[step], "state": state, "url": step_url(step, stage_pk)})
        context = {
            "enrollment": enrollment,
            "stage": enrollment.stage,
            "progress": progress,
            "current": current,
            "current_title": STEP_TITLES[current],
            "current_url": step_url(current, stage_pk),
            "steps": steps,
            "waiting_reason": step_waiting_reason(progress) if current == Step.WAITING else "",
            "pilot_done": progress.pilot_done,
            "feedback_shown": progress.pilot_done and progress.feedback_refusal is None,
            "feedback_refusal": progress.feedback_refusal if progress.pilot_done else "",
            "own": own_gate_fields(enrollment, progress),
            "gate_failed": GATE_FAILED,
            "feedback_rule": POLICY_STATEMENTS.get(labelling_settings(enrollment.stage).pilot_feedback, ""),
            "gate_rules": stage_gate_rules(enrollment.stage),
        }
        return render(request, "annotation/training_stage.html", context)


class GuidelineView(AnnotatorRequiredMixin, View):
    def get(self, request, stage_pk):
        enrollment = enrollment_or_403(request, stage_pk)
        guideline = guideline_current(enrollment.stage)
        if guideline is None:
            return refused_response(request, StepRefused("The stage has no guideline yet."), enrollment.stage)
        progress = training_progress(enrollment)
        context = {
            "stage": enrollment.stage,
            "guideline": guideline,
            "guideline_html": markdown_safe(guideline.text),
            "confirmed": progress.confirmed_current_guideline,
        }
        return render(request, "annotation/guideline.html", context)

    def post(self, request, stage_pk):
        enrollment = enrollment_or_403(request, stage_pk)
        raw = request.POST.get("version", "")
        version = parse_id(raw) if raw else None
        try:
            if raw and version is None:
                raise StepRefused("That is not a version of the guideline; open it again to confirm it.")
            guideline_confirm(enrollment=enrollment, version=version)
        except StepRefused as exc:
            return refused_response(request, exc, enrollment.stage)
        messages.success(request, "Guideline confirmed.")
        return redirect(step_url(next_step(training_progress(enrollment)), stage_pk))


class ExamplesView(AnnotatorRequiredMixin, View):
    """Worked examples one by one: the item, its label and the rationale; "Next" records it as studied."""

    def get(self, request, stage_pk):
        enrollment = enrollment_or_403(request, stage_pk)
        try:
            check_action(training_progress(enrollment), Action.VIEW_EXAMPLES)
        except StepRefused as exc:
            return refused_response(request, exc, enrollment.stage)
        examples = worked_examples(enrollment.stage)
        if not examples:
            return redirect("annotation:training-stage", stage_pk)
        seen = examples_seen_ids(enrollment)
        index = parse_id(request.GET.get("n", ""))
        if index is None:
            index = next((i for i, e in enumerate(examples) if e.id not in seen), 0)
        index = max(0, min(index, len(examples) - 1))
        example = examples[index]
        context = {
            "stage": enrollment.stage,
            "example": example,
            "example_label": example.question.choice_label(example.value),
            "index": index,
            "number": index + 1,
            "total": len(examples),
            "seen_count": len(seen),
        }
        return render(request, "annotation/example.html", context)

    def post(self, request, stage_pk):
        enrollment = enrollment_or_403(request, stage_pk)
        examples = worked_examples(enrollment.stage)
        example = next((e for e in examples if str(e.id) == request.POST.get("example")), None)
        if example is None:
            return refused_response(request, StepRefused("That example is not part of this stage."), enrollment.stage)
        try:
            example_mark_seen(enrollment=enrollment, example=example)
        except StepRefused as exc:
            return refused_response(request, exc, enrollment.stage)
        index = examples.index(example)
        if index + 1 < len(examples):
            return redirect(reverse("annotation:training-examples", args=[stage_pk]) + f"?n={index + 1}")
        return redirect(step_url(next_step(training_progress(enrollment)), stage_pk))


class TrainingLabelView(AnnotatorRequiredMixin, View):
    """Pilot or qualification labelling, one item at a time, through the shared label form."""

    phase: str = Phase.PILOT
    action = Action.LABEL_PILOT
    template_name = "annotation/training_label.html"

    def _render(self, request, enrollment, item, errors=None, submitted=None, status=200):
        done, total = training_counts(enrollment, self.phase)
        context = {
            "stage": enrollment.stage,
            "phase": self.phase,
            "phase_title": TrainingItem.Phase(self.phase).label,
            "done": done,
            "total": total,
            **label_form_context(
                stage=enrollment.stage,
                item=item,
                action=request.path,
                errors=errors,
                submitted=submitted,
            ),
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request, stage_pk):
        enrollment = enrollment_or_403(request, stage_pk)
        try:
            check_action(training_progress(enrollment), self.action)
        except StepRefused as exc:
            return refused_response(request, exc, enrollment.stage)
        item = training_item_next(enrollment, self.phase)
        if item is None:
            return redirect("annotation:training-stage", stage_pk)
        return self._render(request, enrollment, item)

    def post(self, request, stage_pk):
        enrollment = enrollment_or_403(request, stage_pk)
        stage = enrollment.stage
        item = training_item_of(stage, self.phase, parse_id(request.POST.get("item", "")))
        if item is None:
            return refused_response(request, StepRefused(f"That item is not part of this {self.phase}."), stage)
        answers, seconds = answers_from_post(stage, request.POST)
        try:
            any_phase_label_submit(
                annotator=request.user, stage=stage, item=item.item, phase=self.phase, answers=answers, seconds=seconds
            )
        except StepRefused as exc:
            return refused_response(request, exc, stage)
        except NoAssignment as exc:
            return refused_response(request, StepRefused(str(exc)), stage)
        except LabelInvalid as exc:
            return self._render(request, enrollment, item.item, errors=exc.errors, submitted=request.POST, status=400)
        if training_item_next(enrollment, self.phase) is not None:
            return redirect(request.path)
        if self.phase == Phase.PILOT:
            progress = training_progress(enrollment)
            if progress.feedback_refusal is None:
                messages.success(request, "Pilot submitted. Here is how your answers compare with gold.")
                return redirect("annotation:training-feedback", stage_pk)
            messages.success(request, "Pilot submitted. " + progress.feedback_refusal)
        return redirect("annotation:training-stage", stage_pk)


class PilotLabelView(TrainingLabelView):
    phase = Phase.PILOT
    action = Action.LABEL_PILOT


class QualificationLabelView(TrainingLabelView):
    phase = Phase.QUALIFICATION
    action = Action.LABEL_QUALIFICATION


class PilotFeedbackView(AnnotatorRequiredMixin, View):
    """After the whole pilot is in: agreement with gold, and per item the gold label and its rationale."""

    def get(self, request, stage_pk):
        enrollment = enrollment_or_403(request, stage_pk)
        try:
            check_action(training_progress(enrollment), Action.VIEW_PILOT_FEEDBACK)
        except StepRefused as exc:
            return refused_response(request, exc, enrollment.stage)
        enrollment.refresh_from_db()
        context = {
            "stage": enrollment.stage,
            "enrollment": enrollment,
            "rows": pilot_feedback(enrollment),
            "threshold": enrollment.stage.pilot_threshold,
            "gate_rules": stage_gate_rules(enrollment.stage),
            "next_url": step_url(next_step(training_progress(enrollment)), stage_pk),
        }
        return render(request, "annotation/pilot_feedback.html", context)


class NormingView(AnnotatorRequiredMixin, View):
    """The stage's norming threads; finishing this step opens the qualification test."""

    def get(self, request, stage_pk):
        enrollment = enrollment_or_403(request, stage_pk)
        try:
            check_action(training_progress(enrollment), Action.NORMING)
        except StepRefused as exc:
            return refused_response(request, exc, enrollment.stage)
        progress = training_progress(enrollment)
        # The threads discuss the pilot's gold: listed only to those it is open to (`Action.READ_NORMING`).
        closed = progress.feedback_refusal
        context = {
            "stage": enrollment.stage,
            "enrollment": enrollment,
            "threads": [] if closed else norming_threads(enrollment.stage, enrollment),
            "threads_closed": closed or "",
        }
        return render(request, "annotation/norming.html", context)

    def post(self, request, stage_pk):
        enrollment = enrollment_or_403(request, stage_pk)
        try:
            norming_acknowledge(enrollment=enrollment)
        except StepRefused as exc:
            return refused_response(request, exc, enrollment.stage)
        return redirect(step_url(next_step(training_progress(enrollment)), stage_pk))
