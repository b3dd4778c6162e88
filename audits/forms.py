"""Forms of the audits pages: question import upload, demographic design edits, templates, design preview.

The design preview's label plan has its own small form (`LabelPlanForm`), shared by the preview page and the
launch form: a target half-width and the judge's error SD, or, left blank, the SD its newest recorded validation
measured (read through the audits app's one door into annotation).
"""

from dataclasses import dataclass

from django import forms
from django.urls import reverse

from audits.conditions import ConditionChoice
from audits.design import CallBudget, DesignPreview, QuestionSelection, TutorPlan
from audits.design_label_plan import (
    LABEL_PLAN_HALF_WIDTH,
    LABEL_PLAN_HALF_WIDTH_MAX,
    LABEL_PLAN_HALF_WIDTH_MIN,
    DesignLabelPlan,
    design_label_plan,
)
from audits.endpoint_roles import JUDGE, ROLE_CHOICES, all_roles
from audits.judge import DEFAULT_JUDGE_ATTEMPTS
from audits.models import DemographicDimension, DemographicLevel, ModelEndpoint, NameCue, PromptTemplate
from audits.prompt_templates import (
    JUDGE_RUBRIC,
    TEMPLATE_KIND_CHOICES,
    template_metrics_errors,
    template_placeholder_errors,
)
from audits.questionbank.socrateach import SocraTeachFilter
from audits.selectors.endpoints import endpoints_for_role
from audits.selectors.judge_validation import JudgeErrorSDs, judge_error_sds
from edufair_web.rubric_metrics import REGISTRY
from edufair_web.text_limits import DOCUMENT_MAX, NOTE_MAX
from edufair_web.upload_limits import MaxUploadSize

IMPORT_SOURCE_CHOICES = [
    ("socrateach", "SocraTeach (SocraTeach_multi.json)"),
    ("sciq", "SciQ (JSON list or JSON lines)"),
    ("jsonl", "Generic JSON lines"),
    ("csv", "Generic CSV"),
]
SOCRATEACH_FIELDS = ("min_exchanges", "min_student_errors", "min_correct_after_last_error", "forbid_disclosure",
                     "reply_labels")  # fmt: skip
SCIQ_FIELDS = ("threshold", "per_domain_max", "min_keyword_hits", "seed")


class QuestionImportForm(forms.Form):
    source = forms.ChoiceField(choices=IMPORT_SOURCE_CHOICES)
    file = forms.FileField(
        help_text="UTF-8 text. A file that fails validation is rejected whole.",
        validators=[MaxUploadSize("questions")],
    )
    # SocraTeach filter (EduFair-Bench's four rules; thresholds are parameters).
    min_exchanges = forms.IntegerField(min_value=0, initial=SocraTeachFilter.min_exchanges, required=False)
    min_student_errors = forms.IntegerField(min_value=0, initial=SocraTeachFilter.min_student_errors, required=False)
    min_correct_after_last_error = forms.IntegerField(
        min_value=0, initial=SocraTeachFilter.min_correct_after_last_error, required=False
    )
    forbid_disclosure = forms.BooleanField(
        initial=True, required=False, label="Drop dialogues that disclose the answer"
    )
    reply_labels = forms.ChoiceField(
        choices=[
            ("auto", "user_type label when present, else the tutor's feedback"),
            ("user_type", "user_type labels only"),
            ("tutor_feedback", "the tutor's feedback in the next round only"),
        ],
        initial="auto",
        required=False,
        label="How a student error is read",
    )
    # SciQ classifier and sampling.
    threshold = forms.FloatField(min_value=0, max_value=1, initial=0.65, required=False, label="Probability threshold")
    per_domain_max = forms.IntegerField(min_value=1, initial=500, required=False, label="At most per domain")
    min_keyword_hits = forms.IntegerField(min_value=1, initial=2, required=False, label="Keyword hits for a seed label")
    seed = forms.IntegerField(min_value=0, initial=0, required=False, label="Sampling seed")

    def parameters(self) -> dict:
        data = self.cleaned_data
        names = {"socrateach": SOCRATEACH_FIELDS, "sciq": SCIQ_FIELDS}.get(data["source"], ())
        return {name: data[name] for name in names if data.get(name) not in (None, "")}


class DemographicDimensionForm(forms.ModelForm):
    class Meta:
        model = DemographicDimension
        fields = ["key", "name", "description", "order"]


class DemographicLevelForm(forms.ModelForm):
    class Meta:
        model = DemographicLevel
        fields = ["dimension", "key", "label", "persona_statement", "tutor_statement", "order"]
        widgets = {
            "persona_statement": forms.Textarea(attrs={"rows": 2}),
            "tutor_statement": forms.Textarea(attrs={"rows": 2}),
        }


class NameCueForm(forms.ModelForm):
    class Meta:
        model = NameCue
        fields = ["name", "gender", "ethnicity", "active"]


def rubric_metrics_field() -> forms.MultipleChoiceField:
    """The metrics a judge rubric asks for: the registry's, read when the form is built (a metric added to
    edufair_web.rubric_metrics is offered at once); none ticked means the default rubric's."""
    return forms.MultipleChoiceField(
        choices=[(metric.key, f"{metric.label} ({metric.key})") for metric in REGISTRY.values()],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="Judge rubrics only: the metrics the judge is asked for. None ticked: the revised version's, or for "
        "a new rubric the default five.",
    )


class PromptTemplateCreateForm(forms.Form):
    kind = forms.ChoiceField(choices=TEMPLATE_KIND_CHOICES)
    name = forms.SlugField(max_length=60, help_text="Variant name, e.g. tutor-informed.")
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=NOTE_MAX)
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 16}), max_length=DOCUMENT_MAX)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["metrics"] = rubric_metrics_field()

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("kind") and cleaned.get("text"):
            for problem in template_placeholder_errors(cleaned["kind"], cleaned["text"]):
                self.add_error("text", problem)
        if cleaned.get("kind"):
            for problem in template_metrics_errors(cleaned["kind"], cleaned.get("metrics")):
                self.add_error("metrics", problem)
        return cleaned


class PromptTemplateReviseForm(forms.Form):
    """Editing a template always saves a new version; the edited version is left as it was. A judge rubric's
    new version may ask for other metrics (the registry's)."""

    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=NOTE_MAX)
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 18}), max_length=DOCUMENT_MAX)

    def __init__(self, *args, template: PromptTemplate, **kwargs):
        self.template = template
        super().__init__(*args, **kwargs)
        if template.kind == JUDGE_RUBRIC:
            self.fields["metrics"] = rubric_metrics_field()
            self.fields["metrics"].initial = list(template.judge_metrics)

    def clean_text(self):
        text = self.cleaned_data["text"]
        problems = template_placeholder_errors(self.template.kind, text)
        if problems:
            raise forms.ValidationError(problems)
        return text

    def clean(self):
        cleaned = super().clean()
        metrics = cleaned.get("metrics") or None
        if metrics is not None:
            for problem in template_metrics_errors(self.template.kind, metrics):
                self.add_error("metrics", problem)
        unchanged = (
            cleaned.get("text") == self.template.text
            and cleaned.get("description", "") == self.template.description
            and (metrics is None or tuple(metrics) == self.template.judge_metrics)
        )
        if unchanged:
            self.add_error("text", "Nothing changed; a new version would be identical.")
        return cleaned


class EndpointRolesField(forms.MultipleChoiceField):
    """An endpoint's roles as checkboxes: the endpoint page's form and the admin's (the API takes the same list)."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("choices", ROLE_CHOICES)
        kwargs.setdefault("widget", forms.CheckboxSelectMultiple)
        kwargs.setdefault("label", "Roles")
        kwargs.setdefault("help_text", "The launch form offers the endpoint only in these lists; none ticked: all.")
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def clean(self, value) -> list[str]:
        # None ticked (or a form sent without the field: a script, an older page) is the model's default, every role.
        return super().clean(value) or all_roles()


class DesignPreviewForm(forms.Form):
    domains = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    mode = forms.ChoiceField(
        choices=[("all", "all questions"), ("fraction", "a fraction per domain"), ("count", "at most N per domain")],
        initial="all",
    )
    fraction = forms.FloatField(min_value=0.001, max_value=1, initial=0.3, required=False)
    count = forms.IntegerField(min_value=0, initial=20, required=False)
    seed = forms.IntegerField(min_value=0, initial=0)
    tutors = forms.IntegerField(min_value=0, initial=2, label="Tutors on the full selection")
    subsampled_tutors = forms.IntegerField(min_value=0, initial=0, label="Tutors on a subsample (expensive ones)")
    subsample_fraction = forms.FloatField(min_value=0.001, max_value=1, initial=0.3, required=False)
    control = forms.BooleanField(initial=True, required=False, label="Control (no cue)")
    explicit_dimensions = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple, required=False, label="Explicit: dimensions"
    )
    intersectional_dimensions = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple, required=False, label="Intersectional: cross these dimensions"
    )
    implicit = forms.BooleanField(required=False, label="Implicit (names)")
    names_per_cell = forms.IntegerField(min_value=1, required=False, label="Names per gender × ethnicity (blank: all)")
    tell_tutor_name = forms.BooleanField(required=False, label="Also tell the tutor the name")
    opposite = forms.BooleanField(required=False, label="Opposite 2 × 2 (stated × perceived gender)")
    t_max = forms.IntegerField(min_value=1, max_value=100, initial=10, label="T_max (tutor turns)")
    judge_attempts = forms.IntegerField(
        min_value=1, max_value=10, initial=DEFAULT_JUDGE_ATTEMPTS, label="Judge attempts per turn (bound)"
    )

    def __init__(self, *args, domains: list[str], dimensions: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["domains"].choices = [(domain, domain) for domain in domains]
        self.fields["domains"].initial = domains
        self.fields["explicit_dimensions"].choices = dimensions
        self.fields["explicit_dimensions"].initial = [key for key, _ in dimensions]
        self.fields["intersectional_dimensions"].choices = dimensions

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("mode") == "fraction" and not cleaned.get("fraction"):
            self.add_error("fraction", "Give the fraction of each domain to use.")
        if cleaned.get("mode") == "count" and cleaned.get("count") is None:
            self.add_error("count", "Give the number of questions per domain.")
        if cleaned.get("subsampled_tutors") and not cleaned.get("subsample_fraction"):
            self.add_error("subsample_fraction", "Give the subsample fraction for the expensive tutors.")
        if len(cleaned.get("intersectional_dimensions") or []) == 1:
            self.add_error("intersectional_dimensions", "Cross at least two dimensions, or none.")
        return cleaned

    def selection(self) -> QuestionSelection:
        data = self.cleaned_data
        return QuestionSelection(
            domains=tuple(data["domains"]),
            fraction=data["fraction"] if data["mode"] == "fraction" else None,
            count=data["count"] if data["mode"] == "count" else None,
            seed=data["seed"],
        )

    def tutor_plans(self) -> list[TutorPlan]:
        data = self.cleaned_data
        plans = [TutorPlan(f"tutor {n}") for n in range(1, data["tutors"] + 1)]
        plans += [
            TutorPlan(f"subsampled tutor {n}", fraction=data["subsample_fraction"])
            for n in range(1, data["subsampled_tutors"] + 1)
        ]
        return plans

    def condition_choice(self) -> ConditionChoice:
        data = self.cleaned_data
        return ConditionChoice(
            control=data["control"],
            explicit_dimensions=tuple(data["explicit_dimensions"]),
            intersectional_dimensions=tuple(data["intersectional_dimensions"]),
            implicit=data["implicit"],
            names_per_cell=data["names_per_cell"],
            tell_tutor_name=data["tell_tutor_name"],
            opposite=data["opposite"],
            seed=data["seed"],
        )

    def budget(self) -> CallBudget:
        return CallBudget(t_max=self.cleaned_data["t_max"], judge_attempts=self.cleaned_data["judge_attempts"])


# The typed SD stands for every metric: its plan has one row, under this name.
TYPED_SD_METRIC = ""


@dataclass(frozen=True)
class LabelPlanShown:
    """The label plan as a page shows it: where the error SD came from, and the plan (None without an SD)."""

    source: str  # "typed", "validation" or "none"
    judge: str  # the judge endpoint's name, "" when none is chosen
    measured: JudgeErrorSDs | None
    plan: DesignLabelPlan | None
    pilot_url: str


class LabelPlanForm(forms.Form):
    """How many human-labelled turns a judge-corrected reading of the design needs. On the launch form the
    judge endpoint is the launch form's own field of that name."""

    judge_endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.all(),
        required=False,
        label="Judge endpoint",
        help_text="Its newest recorded judge validation gives the error SD per metric.",
    )
    target_half_width = forms.FloatField(
        min_value=LABEL_PLAN_HALF_WIDTH_MIN,
        max_value=LABEL_PLAN_HALF_WIDTH_MAX,
        required=False,
        label="Target CI half-width",
        help_text=f"Of a judge-corrected difference B − A on the 0–2 scale; blank: {LABEL_PLAN_HALF_WIDTH}.",
    )
    judge_error_sd = forms.FloatField(
        min_value=0,
        max_value=2,
        required=False,
        label="Judge's error SD",
        help_text="SD of judge − human; blank: as the judge's newest recorded validation measured it.",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["judge_endpoint"].queryset = endpoints_for_role(role=JUDGE)

    @staticmethod
    def initial_from_preview(query) -> dict:
        """The plan's values carried over from the preview page's query string (those that validate)."""
        carried = LabelPlanForm(query)
        carried.is_valid()
        return {
            name: value
            for name, value in getattr(carried, "cleaned_data", {}).items()
            if name != "judge_endpoint" and value is not None
        }

    def label_plan(self, preview: DesignPreview) -> LabelPlanShown:
        """The plan for a valid form: the typed SD for every metric, else the measured SD per metric of the
        chosen judge's newest recorded validation, else no plan (and how to get an SD)."""
        data = self.cleaned_data
        half_width = data.get("target_half_width") or LABEL_PLAN_HALF_WIDTH
        endpoint = data.get("judge_endpoint")
        measured = judge_error_sds(endpoint.pk) if endpoint is not None else None
        typed = data.get("judge_error_sd")
        if typed is not None:
            source, plan = "typed", design_label_plan(preview, {TYPED_SD_METRIC: typed}, target_half_width=half_width)
        elif measured is not None:
            source = "validation"
            plan = design_label_plan(preview, measured.sds, n_pairs=measured.n_pairs, target_half_width=half_width)
        else:
            source, plan = "none", None
        return LabelPlanShown(
            source=source,
            judge=str(endpoint) if endpoint is not None else "",
            measured=measured,
            plan=plan,
            pilot_url=reverse("annotation:judge-validation-create"),
        )
