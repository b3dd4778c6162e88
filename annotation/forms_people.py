"""Django forms of the people and crowd pages.

They cover a new person, usernames to enrol, a replacement by username, and a stage's crowd link settings (with whom
the link trusts: a signature, an approved list uploaded as a platform export or pasted)."""

from django import forms

from annotation.models import CrowdLink
from annotation.services.crowd import CONFIG_FIELDS
from annotation.services.crowd_entry_settings import ENTRY_FIELDS, MAX_APPROVED_BYTES
from edufair_web.accounts.roles import ANNOTATOR, ROLES

# An approved list's text, uploaded or pasted (a Prolific export of 100000 participants is a few MB).


class PersonCreateForm(forms.Form):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False)
    role = forms.ChoiceField(choices=[(role, role) for role in ROLES])

    def __init__(self, *args, roles=ROLES, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = [(role, role) for role in ROLES if role in roles]
        # The role most people are given is the one offered first: an invitation meant for an annotator is not
        # sent as an adjudicator's by a form left as it opened.
        if ANNOTATOR in roles:
            self.fields["role"].initial = ANNOTATOR


class BulkEnrolForm(forms.Form):
    usernames = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        max_length=20000,
        help_text="One username per line (or separated by commas or spaces).",
    )
    subject = forms.CharField(required=False, max_length=100)


class ReplaceByUsernameForm(forms.Form):
    replacement = forms.CharField(required=False, max_length=150, help_text="Optional: the annotator who takes over.")
    note = forms.CharField(required=False, max_length=500)


# Fields a form may leave empty: the link's value (or its default) stays.
KEPT_WHEN_EMPTY = ("signature_param", "reservation_minutes", "pay_currency")


class CrowdLinkForm(forms.ModelForm):
    completion_url = forms.URLField(
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text="Where a recruit who completed is sent (?cc=code).",
    )
    screened_out_url = forms.URLField(
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text="Where a screened-out recruit is sent (?cc=code).",
    )
    not_consented_url = forms.URLField(
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text="Where a recruit who does not consent (or leaves) is sent (?cc=code).",
    )
    approved_file = forms.FileField(
        required=False,
        label="Approved participants (file)",
        help_text="The platform's export (a CSV with a 'Participant id' column) or one id per line; replaces the list.",
    )
    approved_participants = forms.CharField(
        required=False,
        max_length=MAX_APPROVED_BYTES,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Approved participants (pasted)",
        help_text="Or paste the ids here, one per line; replaces the list. Empty: the list stays as it is.",
    )
    rotate_secret = forms.BooleanField(
        required=False, label="Draw a new signing secret", help_text="Links signed with the old secret stop working."
    )

    class Meta:
        model = CrowdLink
        fields = [*CONFIG_FIELDS, *ENTRY_FIELDS]
        labels = {
            "is_open": "Open to new recruits",
            "max_recruits": "Maximum recruits",
            "items_per_recruit": "Quota (main items per recruit)",
            "estimated_minutes": "Estimated minutes (shown to recruits before they start)",
            "pay_amount": "Pay on completion (shown to recruits before they start)",
            "pay_currency": "Pay currency",
            "participant_param": "Participant id parameter",
            "study_param": "Study id parameter",
            "session_param": "Session id parameter",
            "completion_url": "Completed: URL",
            "completion_code": "Completed: code",
            "screened_out_url": "Screened out: URL",
            "screened_out_code": "Screened out: code",
            "not_consented_url": "Not consented: URL",
            "not_consented_code": "Not consented: code",
            "signature_required": "Only signed entries",
            "signature_param": "Signature parameter",
            "approved_only": "Only approved participant ids",
            "reservation_minutes": "Minutes a place is held for an idle recruit",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in KEPT_WHEN_EMPTY:  # left out: the link's value (or default) stays
            self.fields[field].required = False

    def clean_approved_file(self):
        upload = self.cleaned_data.get("approved_file")
        if upload is None:
            return ""
        if upload.size > MAX_APPROVED_BYTES:
            raise forms.ValidationError(f"The file is larger than {MAX_APPROVED_BYTES // 1_000_000} MB.")
        try:
            return upload.read().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise forms.ValidationError("The file is not UTF-8 text (save the export as CSV UTF-8).") from exc

    def settings(self) -> dict:
        """The values for `crowd_link_save`: the list only when one was uploaded or pasted."""
        values = {field: self.cleaned_data[field] for field in (*CONFIG_FIELDS, *ENTRY_FIELDS)}
        for field in KEPT_WHEN_EMPTY:
            if values[field] in (None, ""):
                del values[field]
        values["rotate_secret"] = self.cleaned_data["rotate_secret"]
        listed = self.cleaned_data["approved_file"] or self.cleaned_data["approved_participants"].strip()
        if listed:
            values["approved_participants"] = listed
        return values
