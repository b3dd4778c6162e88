"""Models of crowd entry links: a stage's recruiting-platform link, its annotators and their visits.

The platform is a recruiting one (Prolific); the annotators are the pseudonymous ones the link made. Each visit keeps
its raw platform ids, and the recruit the latest ones (read only by the researcher's outcome list and exports)."""

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models

from .projects import Stage


class CrowdLink(models.Model):
    """A stage's entry link: which query parameters carry the platform's ids, how many recruits it takes, each
    recruit's quota of main items, and where a finished recruit goes with which code."""

    stage = models.OneToOneField(Stage, on_delete=models.CASCADE, related_name="crowd_link")
    key = models.CharField(max_length=43, unique=True, help_text="The random part of the entry URL.")
    is_open = models.BooleanField(default=True, help_text="A closed link takes no new recruits.")
    max_recruits = models.PositiveIntegerField(default=30, validators=[MinValueValidator(1)])
    items_per_recruit = models.PositiveIntegerField(
        default=10, validators=[MinValueValidator(1)], help_text="Main items a recruit labels to complete."
    )
    # What a recruit is told before they start (the start page, then the first training page): time, pay, quota.
    estimated_minutes = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="About how many minutes the study takes a recruit, training included; empty: not stated.",
    )
    pay_amount = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="What a recruit who completes is paid, in pay_currency; empty: not stated.",
    )
    pay_currency = models.CharField(max_length=3, default="GBP", help_text="ISO 4217 code of the pay, e.g. GBP.")
    participant_param = models.CharField(max_length=64, default="PROLIFIC_PID")
    study_param = models.CharField(max_length=64, default="STUDY_ID")
    session_param = models.CharField(max_length=64, default="SESSION_ID")
    completion_url = models.URLField(
        max_length=500, blank=True, help_text="Where a recruit who completed is sent, with ?cc=<code> added."
    )
    completion_code = models.CharField(max_length=64, help_text="The code of a recruit who completed the quota.")
    screened_out_url = models.URLField(
        max_length=500, blank=True, help_text="Where a screened-out recruit is sent, with ?cc=<code> added."
    )
    screened_out_code = models.CharField(max_length=64, help_text="The code of a recruit the gate screened out.")
    # Whom the link trusts (annotation.services.crowd_entry): a signed entry, an approved list, or both.
    signature_required = models.BooleanField(
        default=False, help_text="Only entries signed with the link's secret (HMAC-SHA256) get in."
    )
    signature_param = models.CharField(max_length=64, default="sig")
    entry_secret = models.CharField(max_length=64, blank=True, help_text="The key the recruiting page signs with.")
    approved_only = models.BooleanField(default=False, help_text="Only participant ids on the approved list get in.")
    reservation_minutes = models.PositiveIntegerField(
        default=30,
        validators=[MinValueValidator(1)],
        help_text="A recruit idle this long (no page opened) gives their place and unsubmitted items back.",
    )
    not_consented_url = models.URLField(
        max_length=500, blank=True, help_text="Where a recruit who did not consent is sent, with ?cc=<code> added."
    )
    not_consented_code = models.CharField(
        max_length=64, help_text="The code of a recruit who chose not to consent (or to leave) on the crowd pages."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"crowd link of {self.stage}"

    def arrival_terms(self) -> dict:
        """What a recruit is told before starting: minutes (None: not stated), pay as text ('' : not stated), and
        the quota of main items."""
        pay = f"{self.pay_amount:,.2f} {self.pay_currency}" if self.pay_amount is not None else ""
        return {"minutes": self.estimated_minutes, "pay": pay, "quota": self.items_per_recruit}

    def code_for(self, outcome: str) -> str:
        """The code a recruit with this outcome is shown ('' for an outcome without one)."""
        return getattr(self, OUTCOME_FIELDS[outcome][0], "") if outcome in OUTCOME_FIELDS else ""

    def url_for(self, outcome: str) -> str:
        """Where a recruit with this outcome is sent back to the platform ('' for nowhere)."""
        return getattr(self, OUTCOME_FIELDS[outcome][1], "") if outcome in OUTCOME_FIELDS else ""


class CrowdRecruit(models.Model):
    """The pseudonymous annotator one participant became: found again by the keyed hash of the participant id; the
    latest raw ids are kept for the researcher, who approves, rejects or pays each participant on the platform."""

    class Outcome(models.TextChoices):
        COMPLETED = "completed", "Completed"
        SCREENED_OUT = "screened_out", "Screened out"
        NOT_CONSENTED = "not_consented", "Did not consent"

    link = models.ForeignKey(CrowdLink, on_delete=models.CASCADE, related_name="recruits")
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="crowd_recruit")
    participant_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now_add=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Set when the recruit gave their place back (returned the study, or idle past the link's reservation time).
    released_at = models.DateTimeField(null=True, blank=True)
    release_reason = models.CharField(max_length=16, blank=True)
    code = models.CharField(max_length=64, blank=True, help_text="The completion code the recruit was shown.")
    participant_id = models.CharField(max_length=128, blank=True, help_text="The platform's id, latest visit.")
    study_id = models.CharField(max_length=128, blank=True, help_text="The platform's study id, latest visit.")
    session_id = models.CharField(max_length=128, blank=True, help_text="The platform's session id, latest visit.")

    class Meta:
        ordering = ["link", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["link", "participant_hash"], name="annotation_crowd_participant_unique")
        ]

    def __str__(self) -> str:
        return self.user.username


# Each outcome's code and redirect URL on the link (Prolific: one completion code per outcome, each with its URL).
OUTCOME_FIELDS = {
    CrowdRecruit.Outcome.COMPLETED: ("completion_code", "completion_url"),
    CrowdRecruit.Outcome.SCREENED_OUT: ("screened_out_code", "screened_out_url"),
    CrowdRecruit.Outcome.NOT_CONSENTED: ("not_consented_code", "not_consented_url"),
}


class CrowdVisit(models.Model):
    """One arrival through the link, with the platform's raw ids (for the researcher-only export)."""

    recruit = models.ForeignKey(CrowdRecruit, on_delete=models.CASCADE, related_name="visits")
    participant_id = models.CharField(max_length=128)
    study_id = models.CharField(max_length=128, blank=True)
    session_id = models.CharField(max_length=128, blank=True)
    # Keyed hashes of the browser's entry cookie and of the client address: possible duplicates are read from them.
    browser_hash = models.CharField(max_length=64, blank=True)
    address_hash = models.CharField(max_length=64, blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["recruit", "at", "id"]


class CrowdApprovedParticipant(models.Model):
    """A participant id the researcher approved for the link (from the platform's export), as the same keyed hash
    a recruit's id is stored as."""

    link = models.ForeignKey(CrowdLink, on_delete=models.CASCADE, related_name="approved")
    participant_hash = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["link", "participant_hash"], name="annotation_crowd_approved_unique")
        ]
