"""Models of running audits: the audit, its conditions, dialogues, turns and judge scores.

There is one dialogue per (tutor, question, condition), and the judge scores each tutor turn.

Progress is never kept anywhere but here: the dialogue rows by status, the turns by the judge's verdict and the ledger
rows, summed as they are written into running totals that always equal a recount (`audits.models.progress`). A
dialogue is claimed by compare-and-swap on its status (and a lease, so work a killed worker held is taken up again),
and its turns and scores are written in one short transaction with the state change to `done`.
"""

import re

from django.conf import settings
from django.db import models

from audits.engine import DEFAULT_T_MAX, END_REASONS
from audits.judge import DEFAULT_MAX_REASKS
from edufair_web.text_limits import NOTE_MAX

from .design import PromptTemplate
from .leased_job import LeasedJob
from .llm import LLMCall, ModelEndpoint
from .questionbank import Question


class Audit(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft (not launched)"
        RUNNING = "running", "Running"
        PAUSED = "paused", "Paused"
        CANCELLED = "cancelled", "Cancelled"
        FINISHED = "finished", "Finished"

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, max_length=NOTE_MAX)
    tutors = models.ManyToManyField(ModelEndpoint, related_name="audits_as_tutor")
    student_endpoint = models.ForeignKey(
        ModelEndpoint, on_delete=models.PROTECT, related_name="audits_as_student", help_text="Run at temperature 0."
    )
    judge_endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="audits_as_judge")
    check_endpoint = models.ForeignKey(
        ModelEndpoint,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="audits_as_checker",
        help_text="Model for the reveal/confirm check; blank: the judge.",
    )
    questions = models.ManyToManyField(Question, related_name="audits")
    question_selection = models.JSONField(
        default=dict, blank=True, help_text="How the questions were chosen (domains, counts or fractions, seed)."
    )
    design = models.JSONField(default=dict, blank=True, help_text="The condition design as chosen.")
    seed = models.IntegerField(default=0)
    t_max = models.PositiveSmallIntegerField(default=DEFAULT_T_MAX)
    answer_precheck = models.BooleanField(
        default=False, help_text="Skip the model's reveal check when the answer appears nowhere in the exchange."
    )
    max_reasks = models.PositiveSmallIntegerField(
        default=DEFAULT_MAX_REASKS, help_text="Re-asks of a judge whose reply is invalid."
    )
    tutor_template = models.ForeignKey(PromptTemplate, on_delete=models.PROTECT, related_name="+")
    tutor_informed_template = models.ForeignKey(
        PromptTemplate,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Tutor prompt for conditions that tell the tutor who the student is.",
    )
    student_template = models.ForeignKey(PromptTemplate, on_delete=models.PROTECT, related_name="+")
    judge_template = models.ForeignKey(PromptTemplate, on_delete=models.PROTECT, related_name="+")
    check_template = models.ForeignKey(PromptTemplate, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    batch_size = models.PositiveIntegerField(default=100, help_text="Dialogues per worker task.")
    cloned_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="clones")
    clone_change = models.CharField(max_length=200, blank=True, help_text="The one factor changed from its source.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    config_hash = models.CharField(
        max_length=64, blank=True, db_index=True, help_text="Content hash of the config file it was created from."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    launched_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    next_sweep_at = models.DateTimeField(
        null=True, blank=True, help_text="When the next check for work held by dead workers is due."
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name

    def endpoints(self) -> list[ModelEndpoint]:
        found = [*self.tutors.all(), self.student_endpoint, self.judge_endpoint]
        if self.check_endpoint_id:
            found.append(self.check_endpoint)
        return found

    @property
    def uses_simulation(self) -> bool:
        return any(endpoint.is_simulation for endpoint in self.endpoints())


class Condition(models.Model):
    """One demographic condition of an audit, stored as plain values so later design edits never
    rewrite what an audit ran."""

    class Kind(models.TextChoices):
        CONTROL = "control", "Control (no cue)"
        EXPLICIT = "explicit", "Explicit statement"
        IMPLICIT = "implicit", "Implicit (name only)"
        OPPOSITE = "opposite", "Opposite (stated × perceived gender)"

    audit = models.ForeignKey(Audit, on_delete=models.CASCADE, related_name="conditions")
    key = models.CharField(max_length=200, help_text="The specification's stable key, unique in the audit.")
    label = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    dimension = models.CharField(max_length=40, blank=True, help_text="Dimension key; several joined by '+'.")
    level = models.CharField(max_length=100, blank=True, help_text="Level key; several joined by '+'.")
    name_cue = models.CharField(max_length=60, blank=True)
    name_gender = models.CharField(max_length=10, blank=True)
    name_ethnicity = models.CharField(max_length=40, blank=True)
    name_row = models.CharField(max_length=20, blank=True, help_text="Implicit rows: gender, ethnicity or both.")
    stated_gender = models.CharField(max_length=20, blank=True)
    perceived_gender = models.CharField(max_length=20, blank=True)
    persona_cue = models.TextField(blank=True, help_text="What the student persona says about itself.")
    tutor_cue = models.TextField(blank=True, help_text="What the tutor is told about the student.")
    spec = models.JSONField(default=dict, blank=True, help_text="The full specification as built.")

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["audit", "key"], name="condition_unique_key_in_audit")]

    def __str__(self) -> str:
        return self.key

    def cue_labels(self) -> list[str]:
        """What the tutor can perceive, as `dimension=level` labels (planted biases match these)."""
        labels = []
        if self.kind == self.Kind.EXPLICIT:
            labels += [f"{d}={lv}" for d, lv in zip(self.dimension.split("+"), self.level.split("+"), strict=False)]
        if self.kind == self.Kind.IMPLICIT:
            if self.name_gender:
                labels.append(f"gender={self.name_gender}")
            if self.name_ethnicity:
                labels.append(f"ethnicity={self.name_ethnicity}")
        if self.kind == self.Kind.OPPOSITE and self.perceived_gender:
            labels.append(f"gender={self.perceived_gender}")
        return labels

    def simulated_self_description(self) -> str:
        """What the *simulated* student says about itself: the quoted persona statement, or its name."""
        if self.name_cue and self.kind == self.Kind.IMPLICIT:
            return f"Hi, I'm {self.name_cue}."
        quoted = re.search(r'"(.+)"', self.persona_cue or "", re.DOTALL)
        return quoted.group(1) if quoted else (self.persona_cue or "")


class Dialogue(LeasedJob):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    audit = models.ForeignKey(Audit, on_delete=models.CASCADE, related_name="dialogues")
    tutor = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="dialogues")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="dialogues")
    condition = models.ForeignKey(Condition, on_delete=models.CASCADE, related_name="dialogues")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True)
    end_reason = models.CharField(max_length=10, blank=True, choices=[(r, r) for r in END_REASONS])
    error = models.TextField(blank=True)
    metrics = models.JSONField(default=dict, blank=True, help_text="Conversation-level metrics.")
    calls_sent = models.PositiveIntegerField(default=0)
    calls_cached = models.PositiveIntegerField(default=0)
    calls = models.ManyToManyField(LLMCall, blank=True, related_name="dialogues")

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["audit", "tutor", "question", "condition"], name="dialogue_unique_cell")
        ]
        indexes = [models.Index(fields=["audit", "status"])]

    def __str__(self) -> str:
        return f"dialogue {self.pk} ({self.status})"


class Turn(models.Model):
    class Role(models.TextChoices):
        TUTOR = "tutor", "Tutor"
        STUDENT = "student", "Student"

    class JudgeStatus(models.TextChoices):
        NONE = "", "Not judged (student turn)"
        OK = "ok", "Scored"
        UNPARSABLE = "unparsable", "Unparsable after re-asks"
        FAILED = "failed", "Judge call failed"

    dialogue = models.ForeignKey(Dialogue, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveSmallIntegerField()
    role = models.CharField(max_length=10, choices=Role.choices)
    text = models.TextField()
    llm_call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    judge_status = models.CharField(max_length=12, choices=JudgeStatus.choices, blank=True)

    class Meta:
        ordering = ["dialogue", "index"]
        constraints = [models.UniqueConstraint(fields=["dialogue", "index"], name="turn_unique_index")]

    def __str__(self) -> str:
        return f"{self.role} turn {self.index} of dialogue {self.dialogue_id}"


class TurnScore(models.Model):
    """One judge value for one tutor turn under one rubric version; value is None unless status is ok."""

    class Status(models.TextChoices):
        OK = "ok", "Scored"
        UNPARSABLE = "unparsable", "Unparsable after re-asks"
        FAILED = "failed", "Judge call failed"

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="scores")
    # The turn's dialogue and audit, copied so an audit's reads start from its own scores (index below).
    dialogue = models.ForeignKey(Dialogue, on_delete=models.CASCADE, related_name="+", db_index=False)
    audit = models.ForeignKey(Audit, on_delete=models.CASCADE, related_name="+", db_index=False)
    metric = models.CharField(max_length=40)
    value = models.SmallIntegerField(null=True, blank=True, help_text="-1 = not applicable.")
    rubric = models.ForeignKey(PromptTemplate, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.OK)
    raw = models.TextField(blank=True, help_text="The judge's last reply, kept when it could not be used.")
    problem = models.CharField(max_length=300, blank=True)
    judge_call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["turn", "metric"]
        constraints = [models.UniqueConstraint(fields=["turn", "metric", "rubric"], name="turn_score_unique")]
        indexes = [models.Index(fields=["audit", "rubric", "dialogue"], name="turn_score_audit_rubric")]

    def __str__(self) -> str:
        return f"{self.metric}={self.value} ({self.status})"
