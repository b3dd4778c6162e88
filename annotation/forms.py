"""Forms of the annotation pages; they validate input and leave every write to the services."""

from django import forms
from django.contrib.auth.models import User

from annotation import presets
from annotation.models import Enrollment, LabelQuestion, Stage, StageLabelling, TrainingItem, WorkedExample
from annotation.subjects import preset_subjects_text
from edufair_web.accounts.roles import ANNOTATOR
from edufair_web.text_limits import DOCUMENT_MAX, LINE_MAX, NOTE_MAX
from edufair_web.upload_limits import MaxUploadSize


def _lines(text: str) -> list[str]:
    return [part.strip() for part in text.replace(",", "\n").splitlines() if part.strip()]


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=NOTE_MAX)
    categories = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        max_length=NOTE_MAX,
        help_text="One per line (or comma-separated). Left empty with the preset: SafeTutors' 11 risk categories.",
    )
    subjects = forms.CharField(
        required=False,
        max_length=NOTE_MAX,
        help_text="One per line (or comma-separated); items and enrolments name these exactly. "
        f"Empty with the preset: {preset_subjects_text()}.",
    )
    preset = forms.ChoiceField(
        choices=[("", "No preset (add stages yourself)"), *presets.PRESETS.items()],
        required=False,
        initial=presets.SAFETUTORS,
    )

    def clean_categories(self):
        return _lines(self.cleaned_data["categories"])

    def clean_subjects(self):
        return _lines(self.cleaned_data["subjects"])


class ItemImportForm(forms.Form):
    file = forms.FileField(
        help_text="JSONL (one item per line) or CSV; see the format below.", validators=[MaxUploadSize("items")]
    )
    format = forms.ChoiceField(choices=[("jsonl", "JSONL"), ("csv", "CSV")])


class GuidelineForm(forms.Form):
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 12}), help_text="Markdown.", max_length=DOCUMENT_MAX)
    change_note = forms.CharField(required=False, max_length=500)


class EnrollForm(forms.Form):
    user = forms.ModelChoiceField(queryset=User.objects.filter(groups__name=ANNOTATOR).order_by("username"))
    subject = forms.CharField(required=False, max_length=100)

    def __init__(self, *args, stage: Stage | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if stage is not None:
            enrolled = Enrollment.objects.filter(stage=stage).values("user_id")
            self.fields["user"].queryset = self.fields["user"].queryset.exclude(id__in=enrolled)
            if stage.project.subjects:  # one vocabulary: the project's subjects (services.enrollment checks it too)
                self.fields["subject"] = forms.ChoiceField(
                    choices=[("", "—"), *((s, s) for s in stage.project.subjects)], required=False
                )


class StageLabellingForm(forms.ModelForm):
    """How the stage hands out its main items: the strategy, the random strategy's seed, the reservation,
    and how long and on how many recent items an annotator may revise a submitted label (left empty: kept);
    and who sees the pilot's gold, and whether the pilot is closed."""

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
        widgets = {"strategy": forms.RadioSelect, "pilot_feedback": forms.RadioSelect}

    reservation_minutes = forms.IntegerField(
        min_value=1,
        help_text="An item handed out and not submitted within this time can go to someone else.",
    )
    pilot_feedback = forms.ChoiceField(
        choices=StageLabelling.PilotFeedback.choices,
        required=False,
        widget=forms.RadioSelect,
        help_text="Who sees the pilot's gold answers, rationales and their own pilot score (left empty: kept). "
        "Those who fail never see more than pass or fail.",
    )
    revision_minutes = forms.IntegerField(
        min_value=0,
        required=False,
        help_text="An annotator may revise a label this long after submitting it (0: never). Once the item's "
        "resolution has started, a revision is kept but no longer counts.",
    )
    revision_items = forms.IntegerField(
        min_value=0,
        max_value=100,
        required=False,
        help_text="…and only on their last this many submitted items.",
    )


class StageItemRuleForm(forms.Form):
    """Which items are the stage's main work (`services.labelling.stage_item_rule_set` checks the rest)."""

    rule = forms.ChoiceField(choices=StageLabelling.ItemRule.choices, widget=forms.RadioSelect)
    source_stage = forms.ModelChoiceField(
        queryset=Stage.objects.none(), required=False, help_text="Settled rule: the earlier stage."
    )
    source_values = forms.CharField(
        required=False, max_length=500, help_text="Settled rule: the values that qualify, comma-separated (e.g. valid)."
    )
    items = forms.CharField(
        required=False,
        max_length=DOCUMENT_MAX,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="List rule: the items' ids from the import, separated by spaces, commas or lines.",
    )

    def __init__(self, *args, stage: Stage | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if stage is not None:
            self.fields["source_stage"].queryset = stage.project.stages.exclude(pk=stage.pk).order_by("order")

    def clean_source_values(self) -> list[str]:
        return [v.strip() for v in self.cleaned_data["source_values"].split(",") if v.strip()]

    def clean_items(self) -> list[str]:
        return [v for v in self.cleaned_data["items"].replace(",", " ").split() if v]


class TrainingSetForm(forms.Form):
    phase = forms.ChoiceField(choices=TrainingItem.Phase.choices)
    size = forms.IntegerField(
        min_value=1,
        required=False,
        help_text="Empty: the stage's pilot or test size. A pilot larger than the stage's pilot size is a pool: "
        "each annotator labels their own even draw of pilot-size items from it.",
    )
    seed = forms.IntegerField(initial=0)
    accept_uneven = forms.BooleanField(required=False, help_text="Keep a pilot even when the spread cannot be even.")


class WorkedExampleForm(forms.Form):
    item = forms.CharField(help_text="The item's id from the import.", max_length=LINE_MAX)
    question = forms.ModelChoiceField(queryset=LabelQuestion.objects.none())
    kind = forms.ChoiceField(choices=WorkedExample.Kind.choices)
    value = forms.CharField(max_length=100)
    rationale = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=NOTE_MAX)

    def __init__(self, *args, stage: Stage | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if stage is not None:
            self.fields["question"].queryset = stage.questions.all()


class ReplacementForm(forms.Form):
    replacement = forms.ModelChoiceField(
        queryset=User.objects.filter(groups__name=ANNOTATOR).order_by("username"),
        required=False,
        help_text="Optional: the recruit who takes this place (enrolled in the same stage).",
    )
    note = forms.CharField(required=False, max_length=500)


class CommentForm(forms.Form):
    body = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=5000)
