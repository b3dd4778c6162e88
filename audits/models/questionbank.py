"""Tables of the question bank: the questions tutors are audited on, and the imports that brought them.

A question is unique by (source, source_id), so re-importing a file adds nothing new. Every import keeps
its parameters (thresholds, seed) and its funnel — how many items entered and how many were left after
each filter rule — so a reader can see where items went.
"""

from django.conf import settings
from django.db import models


class QuestionSource(models.TextChoices):
    SOCRATEACH = "socrateach", "SocraTeach (multi-turn dialogues)"
    SCIQ = "sciq", "SciQ (multiple-choice science)"
    GENERIC = "generic", "Generic JSONL / CSV"


class Domain(models.TextChoices):
    """The domains EduFair-Bench audits; generic imports may bring other (lower-case slug) domains."""

    MATHEMATICS = "mathematics", "Mathematics"
    PHYSICS = "physics", "Physics"
    CHEMISTRY = "chemistry", "Chemistry"


class QuestionImport(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed (nothing imported)"

    source = models.CharField(max_length=20, choices=QuestionSource.choices)
    file = models.FileField(upload_to="question_imports/%Y/%m/", blank=True, help_text="The uploaded file, kept.")
    original_filename = models.CharField(max_length=255)
    file_size = models.BigIntegerField(default=0)
    file_sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    parameters = models.JSONField(
        default=dict, blank=True, help_text="Filter thresholds, classifier settings and seed, as used."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    phase = models.CharField(max_length=40, blank=True, help_text="What a running import is doing now.")
    progress_done = models.BigIntegerField(default=0)
    progress_total = models.BigIntegerField(default=0)
    funnel = models.JSONField(
        default=list, blank=True, help_text='Steps in order: [{"step": ..., "count": ..., "detail": {...}}].'
    )
    questions_created = models.IntegerField(default=0)
    questions_existing = models.IntegerField(default=0, help_text="Kept items already in the bank (left as they were).")
    error = models.TextField(blank=True, help_text="Why the file was rejected; names the record or line and field.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_source_display()} · {self.original_filename} ({self.status})"

    @property
    def progress_percent(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        if not self.progress_total:
            return 0
        return min(100, int(100 * self.progress_done / self.progress_total))

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)


class Question(models.Model):
    domain = models.CharField(max_length=40, db_index=True, help_text="mathematics, physics, chemistry, …")
    source = models.CharField(max_length=20, choices=QuestionSource.choices, db_index=True)
    source_id = models.CharField(max_length=200, help_text="The item's id in its source (or a content hash).")
    content_hash = models.CharField(max_length=64, db_index=True, help_text="SHA-256 of the normalised text+answer.")
    text = models.TextField()
    answer = models.TextField()
    solution = models.TextField(blank=True, help_text="Worked solution or analysis, when the source has one.")
    choices = models.JSONField(default=list, blank=True)
    support = models.TextField(blank=True, help_text="SciQ's supporting paragraph.")
    classifier_confidence = models.FloatField(
        null=True, blank=True, help_text="SciQ domain classifier's probability for the assigned domain."
    )
    reference_dialogue = models.JSONField(
        default=list,
        blank=True,
        help_text='The source\'s tutoring dialogue: [{"role": "tutor"|"student", "text": ...}].',
    )
    metadata = models.JSONField(default=dict, blank=True)
    first_import = models.ForeignKey(
        QuestionImport, null=True, blank=True, on_delete=models.SET_NULL, related_name="first_questions"
    )
    imports = models.ManyToManyField(QuestionImport, blank=True, related_name="questions")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["domain", "source", "id"]
        constraints = [models.UniqueConstraint(fields=["source", "source_id"], name="question_unique_source_id")]
        indexes = [models.Index(fields=["domain", "source"])]

    def __str__(self) -> str:
        return f"{self.domain} · {self.source}:{self.source_id}"
