"""Model of a main label's earlier versions, kept when an annotator revises it.

When an annotator revises a label, the answer it replaces is kept here (the audit trail), and the `Label` row carries
the current answer that agreement and resolution read."""

from django.db import models

from edufair_web.text_limits import NOTE_MAX

from .labels import Label


class LabelRevision(models.Model):
    """One replaced version of a label: version 1 is the first answer, the `Label` row is the newest."""

    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveSmallIntegerField(help_text="1 for the first answer, then 2, 3, …")
    value = models.CharField(max_length=100, blank=True)
    unsure = models.BooleanField(default=False)
    justification = models.TextField(blank=True, max_length=NOTE_MAX)
    given_at = models.DateTimeField(help_text="When this version was given.")
    replaced_at = models.DateTimeField(help_text="When the annotator replaced it by the next version.")

    class Meta:
        ordering = ["label", "version"]
        constraints = [models.UniqueConstraint(fields=["label", "version"], name="annotation_label_revision_unique")]

    def __str__(self) -> str:
        return f"{self.label_id} v{self.version}={'unsure' if self.unsure else self.value}"


class HeldRevision(models.Model):
    """A revision given within the window after the item's resolution had started: kept, not counted.

    The blind labels the resolution read stay as they were (`workflow.revision_rules`); the annotator is
    answered as for any revision and sees this answer as their latest, so nothing tells them the others
    have submitted. Researchers see it in the label's history."""

    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="held_revisions")
    value = models.CharField(max_length=100, blank=True)
    unsure = models.BooleanField(default=False)
    justification = models.TextField(blank=True, max_length=NOTE_MAX)
    given_at = models.DateTimeField()

    class Meta:
        ordering = ["label", "given_at", "id"]

    def __str__(self) -> str:
        return f"{self.label_id} held={'unsure' if self.unsure else self.value}"
