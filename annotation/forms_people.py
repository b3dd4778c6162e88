"""Django forms of the people and crowd pages.

They cover a new person, usernames to enrol, a replacement by username, and a stage's crowd link settings."""

from django import forms

from annotation.models import CrowdLink
from annotation.services.crowd import CONFIG_FIELDS
from edufair_web.accounts.roles import ROLES


class PersonCreateForm(forms.Form):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False)
    role = forms.ChoiceField(choices=[(role, role) for role in ROLES])

    def __init__(self, *args, roles=ROLES, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = [(role, role) for role in ROLES if role in roles]


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

    class Meta:
        model = CrowdLink
        fields = list(CONFIG_FIELDS)
        labels = {
            "is_open": "Open to new recruits",
            "max_recruits": "Maximum recruits",
            "items_per_recruit": "Quota (main items per recruit)",
            "participant_param": "Participant id parameter",
            "study_param": "Study id parameter",
            "session_param": "Session id parameter",
            "completion_url": "Completed: URL",
            "completion_code": "Completed: code",
            "screened_out_url": "Screened out: URL",
            "screened_out_code": "Screened out: code",
            "not_consented_url": "Not consented: URL",
            "not_consented_code": "Not consented: code",
        }
