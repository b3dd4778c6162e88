"""Pages of the audit engine (researchers only): model endpoints, audits and their controls, and transcripts.

The pages cover model endpoints, audits with live progress and their controls, clone-with-one-change, and the transcript
viewer. Views validate input and call services."""

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db import models, transaction
from django.http import HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views import View
from django.views.generic import CreateView, DetailView, ListView, TemplateView, UpdateView

from audits.conditions import ConditionChoice
from audits.design import (
    CallBudget,
    Price,
    QuestionSelection,
    TutorPlan,
    cost_estimate,
    launch_check,
    selection_text,
)
from audits.endpoint_roles import JUDGE, STUDENT, TUTOR
from audits.forms import DesignPreviewForm, EndpointRolesField, LabelPlanForm
from audits.judge import DEFAULT_MAX_REASKS
from audits.llm.dialogue import requests_preview
from audits.models import Audit, Dialogue, Domain, ModelEndpoint, PromptTemplate, Question
from audits.models.llm import ENDPOINT_REQUEST_FIELDS
from audits.run_outcome import LABELS as OUTCOME_LABELS
from audits.run_outcome import TONES, run_outcome
from audits.selectors.design import design_dimensions
from audits.selectors.endpoints import audit_reported_models, endpoint_model_mismatches, endpoints_for_role
from audits.selectors.questionbank import question_domains
from audits.selectors.runs import (
    audit_list,
    audit_progress,
    audit_requests_sent,
    clone_factor_value,
    dialogue_transcript,
)
from audits.services.audit_lifecycle import (
    audit_cancel,
    audit_clone,
    audit_create_from_design,
    audit_launch,
    audit_pause,
    audit_resume,
    audit_retry_failed,
)
from audits.services.calibration_runs import (
    CALIBRATION_METRICS,
    SHIFT_BOUND,
    calibration_levels,
    calibration_tutor_get_or_create,
)
from audits.services.design import design_preview_compute
from audits.services.endpoints import endpoint_connection_test, endpoint_revision_bump
from audits.services.judging import audit_turns_rejudge
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.api_parameters import choice_refusal
from edufair_web.converters import IdModelMultipleChoiceField, parse_id
from edufair_web.display import AUDIT_COST_CURRENCY
from edufair_web.json_input import DepthBoundedDecoder
from edufair_web.text_limits import NOTE_MAX

# --- forms ----------------------------------------------------------------------------------------


def _endpoint_formfield(field, **kwargs):
    # A base URL typed without a scheme is taken as https (Django 6's default; said explicitly now).
    if isinstance(field, models.URLField):
        kwargs["assume_scheme"] = "https"
    # JSON nested too deeply or with a number of thousands of digits is a form error, not a 500.
    if isinstance(field, models.JSONField):
        kwargs["decoder"] = DepthBoundedDecoder
    return field.formfield(**kwargs)


class ModelEndpointForm(forms.ModelForm):
    roles = EndpointRolesField()

    class Meta:
        model = ModelEndpoint
        formfield_callback = _endpoint_formfield
        labels = {
            "base_url": "Base URL",
            "api_key_env": "API key variable",
            "max_tokens": "Max tokens",
            "max_concurrency": "Max concurrency (requests in flight)",
            "requests_per_minute": "Requests per minute",
            "tokens_per_minute": "Tokens per minute",
            "extra_params": "Extra request parameters (JSON)",
            "simulation_config": "Simulation settings (JSON)",
            "price_input_per_million": f"Price per million input tokens ({AUDIT_COST_CURRENCY})",
            "price_output_per_million": f"Price per million output tokens ({AUDIT_COST_CURRENCY})",
            "batch_capable": "Batch API capable",
            "batch_price_factor": "Batch price factor",
            "batch_fallback": "Without a Batch API",
            "reasoning_format": "How reasoning arrives",
            "temperature_parameter": "Temperature parameter",
            "token_limit_parameter": "Token limit parameter",
            "api_key_header": "API key header",
            "extra_headers": "Extra headers (JSON, not secret)",
            "query_params": "Query parameters (JSON, not secret)",
        }
        # Every audit cost is in one currency (`edufair_web.display`), so an endpoint's prices are too.
        help_texts = {
            "reasoning_format": "How the model's reasoning arrives: auto (a reasoning field, and <think> blocks "
            "removed from the reply), field (a separate field only), tags (inside the reply only; a reply cut off "
            "by max tokens before </think> is all reasoning: set this for DeepSeek-R1-Distill without a reasoning "
            "parser, whose chat template opens <think> in the prompt, since auto cannot tell such a reply from an "
            "answer), none (the reply as it comes). Only the reply is the turn; the reasoning is kept in the ledger.",
            "price_input_per_million": f"In {AUDIT_COST_CURRENCY}; costs on the pages are in it.",
            "price_output_per_million": f"In {AUDIT_COST_CURRENCY}.",
        }
        fields = [
            "name",
            "provider",
            "base_url",
            "model",
            "api_key_env",
            "temperature",
            "max_tokens",
            "timeout",
            "max_concurrency",
            "requests_per_minute",
            "tokens_per_minute",
            "revision",
            "extra_params",
            "simulation_config",
            "price_input_per_million",
            "price_output_per_million",
            "batch_capable",
            "batch_price_factor",
            "batch_fallback",
            *ENDPOINT_REQUEST_FIELDS,
            "roles",
            "description",
        ]

    # Choices with a default: a form sent without one (a script, an older page) takes the model's default — for
    # batch_fallback the safe choice, refuse the run; for the request settings "auto".
    DEFAULTED = ("batch_fallback", "reasoning_format", "temperature_parameter", "token_limit_parameter")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in self.DEFAULTED:
            self.fields[name].required = False

    def clean(self) -> dict:
        cleaned = super().clean()
        for name in self.DEFAULTED:
            if not cleaned.get(name) and name not in self.errors:
                cleaned[name] = ModelEndpoint._meta.get_field(name).get_default()
        return cleaned


class ConditionFieldsForm(forms.Form):
    """The design's condition fields (`audits/partials/condition_fields.html`): the launch form's, and the clone
    form's when the conditions are the factor changed."""

    control = forms.BooleanField(required=False, initial=True, label="Control (no cue)")
    explicit_dimensions = forms.MultipleChoiceField(
        choices=(), required=False, widget=forms.CheckboxSelectMultiple, label="Explicit: dimensions"
    )
    intersectional_dimensions = forms.MultipleChoiceField(
        choices=(), required=False, widget=forms.CheckboxSelectMultiple, label="Intersectional: cross these dimensions"
    )
    implicit = forms.BooleanField(required=False, label="Implicit (names)")
    names_per_cell = forms.IntegerField(required=False, min_value=1, help_text="Names per gender × ethnicity.")
    tell_tutor_name = forms.BooleanField(required=False, label="Also tell the tutor the name")
    opposite = forms.BooleanField(required=False, label="Opposite (2 × 2 gender)")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The dimensions the launch draws its levels from (the tables, or the defaults), as the preview offers.
        self.fields["explicit_dimensions"].choices = design_dimensions()
        self.fields["intersectional_dimensions"].choices = design_dimensions()

    def clean(self):
        data = super().clean()
        if len(data.get("intersectional_dimensions") or []) == 1:
            self.add_error("intersectional_dimensions", "Cross at least two dimensions, or none.")
        return data

    def condition_values(self) -> dict:
        """The condition fields as `audits.conditions.ConditionChoice` takes them (its seed aside)."""
        data = self.cleaned_data
        return {
            "control": data.get("control", False),
            "explicit_dimensions": list(data.get("explicit_dimensions") or []),
            "intersectional_dimensions": list(data.get("intersectional_dimensions") or []),
            "implicit": data.get("implicit", False),
            "names_per_cell": data.get("names_per_cell"),
            "tell_tutor_name": data.get("tell_tutor_name", False),
            "opposite": data.get("opposite", False),
        }


class AuditForm(ConditionFieldsForm):
    """The launch form. Its design part (questions, conditions, dialogue length) is read into the same plain
    values the design preview uses, so both pages show one computation (`design_preview_compute`)."""

    TUTOR_HELP = (
        "Tutors are the endpoints not used as the student or the judge of this audit, among those with the tutor "
        "role (each list offers the endpoints of its role)."
    )
    # The calibration run's planted tutor, as the preview counts it before it exists.
    CALIBRATION_PLAN = "calibration tutor (simulation)"

    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=NOTE_MAX)
    student_endpoint = forms.ModelChoiceField(queryset=ModelEndpoint.objects.all(), help_text="Run at temperature 0.")
    judge_endpoint = forms.ModelChoiceField(queryset=ModelEndpoint.objects.all())
    check_endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.all(), required=False, help_text="Reveal/confirm check; blank: the judge."
    )
    tutors = IdModelMultipleChoiceField(
        queryset=ModelEndpoint.objects.all(),
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text=TUTOR_HELP,
        error_messages={"invalid_choice": "Endpoint %(value)s is the student or the judge here, not a tutor."},
    )
    domains = forms.MultipleChoiceField(choices=(), widget=forms.CheckboxSelectMultiple, required=False)
    count = forms.IntegerField(required=False, min_value=1, help_text="At most this many questions per domain.")
    fraction = forms.FloatField(required=False, min_value=0.01, max_value=1, help_text="Or a stratified fraction.")
    per_domain = forms.CharField(
        required=False,
        max_length=NOTE_MAX,
        label="Per domain",
        help_text="Overrides, e.g. “mathematics=0.3, physics=50”: a decimal is a fraction, a whole number a count.",
    )
    seed = forms.IntegerField(initial=0, min_value=0)
    t_max = forms.IntegerField(initial=10, min_value=1, max_value=50, label="T_max (tutor turns)")
    answer_precheck = forms.BooleanField(required=False, help_text="Skip the model check when no answer appears.")
    max_reasks = forms.IntegerField(initial=DEFAULT_MAX_REASKS, min_value=0, max_value=10, label="Judge re-asks")
    calibration = forms.BooleanField(
        required=False,
        label="Calibration run (simulation)",
        help_text="Adds a seeded simulated tutor with one planted bias: the audit must find that cell.",
    )
    calibration_level = forms.ChoiceField(choices=(), required=False, label="Planted on students whose cue is")
    calibration_metric = forms.ChoiceField(
        choices=[(metric, metric) for metric in CALIBRATION_METRICS],
        required=False,
        initial="corrective_tone",
        label="Tutor behaviour shifted",
    )
    calibration_shift = forms.FloatField(
        required=False,
        initial=-0.4,
        min_value=-SHIFT_BOUND,
        max_value=SHIFT_BOUND,
        label="Shift (of the behaviour's probability)",
        help_text="Negative: the tutor does less of it for that level, e.g. −0.4.",
    )
    launch = forms.BooleanField(required=False, initial=True, label="Launch now")
    confirm = forms.BooleanField(required=False, label="Launch anyway")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        domains = Question.objects.order_by("domain").values_list("domain", flat=True).distinct()
        self.fields["domains"].choices = [(d, d) for d in domains]
        self.fields["calibration_level"].choices = calibration_levels()
        # Role-appropriate lists: each offers the endpoints of its role (`ModelEndpoint.roles`), and the endpoints
        # chosen as student and judge are not offered as tutors.
        self.fields["student_endpoint"].queryset = endpoints_for_role(role=STUDENT)
        self.fields["judge_endpoint"].queryset = endpoints_for_role(role=JUDGE)
        self.fields["check_endpoint"].queryset = endpoints_for_role(role=JUDGE)
        taken = [self.data.get(self.add_prefix(role)) for role in ("student_endpoint", "judge_endpoint")]
        taken = [pk for pk in (parse_id(value) for value in taken if isinstance(value, str)) if pk is not None]
        self.fields["tutors"].queryset = endpoints_for_role(role=TUTOR).exclude(pk__in=taken)

    def clean_per_domain(self) -> dict[str, float | int]:
        overrides = {}
        for part in filter(None, (p.strip() for p in self.cleaned_data["per_domain"].split(","))):
            domain, sep, value = (x.strip() for x in part.partition("="))
            if not sep or not domain:
                raise forms.ValidationError(f"“{part}”: write domain=value, e.g. mathematics=0.3.")
            try:
                number = float(value) if "." in value else int(value)
            except ValueError:
                raise forms.ValidationError(f"“{part}”: the value must be a fraction or a whole number.") from None
            if isinstance(number, float) and not 0 < number <= 1 or isinstance(number, int) and number < 0:
                raise forms.ValidationError(f"“{part}”: a fraction lies in (0, 1], a count is at least 0.")
            overrides[domain] = number
        return overrides

    def clean(self):
        data = super().clean()
        if data.get("count") and data.get("fraction"):
            raise forms.ValidationError("Choose a count or a fraction per domain, not both.")
        if data.get("calibration"):
            self._check_calibration(data)
        return data

    def _check_calibration(self, data: dict) -> None:
        """A calibration run plants its bias on a level the design cues, or the run could not find it."""
        for name in ("calibration_level", "calibration_metric", "calibration_shift"):
            if data.get(name) in (None, "") and name not in self.errors:
                self.add_error(name, "A calibration run needs it.")
        level = data.get("calibration_level") or ""
        if not level:
            return
        dimension = level.partition("=")[0]
        cued = {*(data.get("explicit_dimensions") or []), *(data.get("intersectional_dimensions") or [])}
        if data.get("implicit"):
            cued |= {"gender", "ethnicity"}
        if data.get("opposite"):
            cued.add("gender")
        if dimension not in cued:
            self.add_error(
                "calibration_level",
                f"No condition of the design cues {dimension}: add it to the explicit dimensions, or the run "
                "cannot find the planted cell.",
            )
        if data.get("calibration_shift") == 0:
            self.add_error("calibration_shift", "A shift of 0 plants nothing.")

    def calibration_values(self) -> dict | None:
        """The planted bias of a calibration run (`calibration_tutor_get_or_create`'s values), or None."""
        data = self.cleaned_data
        if not data.get("calibration"):
            return None
        return {
            "level": data["calibration_level"],
            "metric": data["calibration_metric"],
            "shift": data["calibration_shift"],
            "seed": data.get("seed") or 0,
        }

    # The design part as the plain values `audits.design` and `audit_create_from_design` take.

    def selection_values(self) -> dict:
        data = self.cleaned_data
        values = {"domains": list(data.get("domains") or []), "seed": data.get("seed") or 0}
        for key in ("count", "fraction", "per_domain"):
            if data.get(key):
                values[key] = data[key]
        return values

    def selection(self) -> QuestionSelection:
        values = self.selection_values()
        return QuestionSelection(**{**values, "domains": tuple(values["domains"])})

    def choice_values(self) -> dict:
        return {**self.condition_values(), "seed": self.cleaned_data.get("seed") or 0}

    def condition_choice(self) -> ConditionChoice:
        values = self.choice_values()
        tuples = ("explicit_dimensions", "intersectional_dimensions")
        return ConditionChoice(**{k: tuple(v) if k in tuples else v for k, v in values.items()})

    def tutor_plans(self) -> list[TutorPlan]:
        plans = [TutorPlan(str(endpoint)) for endpoint in self.cleaned_data.get("tutors") or []]
        if self.cleaned_data.get("calibration"):
            plans.append(TutorPlan(self.CALIBRATION_PLAN))
        return plans

    def budget(self) -> CallBudget:
        data = self.cleaned_data
        reasks = data.get("max_reasks")
        return CallBudget(
            t_max=data.get("t_max") or 10, judge_attempts=1 + (DEFAULT_MAX_REASKS if reasks is None else reasks)
        )

    @staticmethod
    def initial_from_preview(query) -> dict:
        """The launch form's initial values for a design carried over from the preview page's query string
        (parsed by the preview's own form; nothing when it does not validate)."""
        if "domains" not in query:
            return {}
        domains = question_domains() or [choice for choice, _ in Domain.choices]
        preview = DesignPreviewForm(query, domains=domains, dimensions=design_dimensions())
        if not preview.is_valid():
            return {}
        data = preview.cleaned_data
        initial = {
            key: data[key]
            for key in (
                "domains",
                "seed",
                "control",
                "explicit_dimensions",
                "intersectional_dimensions",
                "implicit",
                "names_per_cell",
                "tell_tutor_name",
                "opposite",
                "t_max",
            )
        }
        initial["max_reasks"] = data["judge_attempts"] - 1
        if data["mode"] == "fraction":
            initial["fraction"] = data["fraction"]
        elif data["mode"] == "count":
            initial["count"] = data["count"]
        plan = LabelPlanForm(query)
        if plan.is_valid() and plan.cleaned_data["judge_endpoint"] is not None:
            initial["judge_endpoint"] = plan.cleaned_data["judge_endpoint"]
        return initial


class CloneForm(ConditionFieldsForm):
    FACTORS = [
        ("student_endpoint", "Student model"),
        ("judge_endpoint", "Judge model"),
        ("judge_template", "Judge rubric version"),
        ("seed", "Seed"),
        ("tutors", "Tutor"),
        ("conditions", "Conditions"),
    ]
    factor = forms.ChoiceField(choices=FACTORS)
    endpoint = forms.ModelChoiceField(queryset=ModelEndpoint.objects.all(), required=False)
    judge_template = forms.ModelChoiceField(queryset=PromptTemplate.objects.filter(kind="judge_rubric"), required=False)
    seed = forms.IntegerField(required=False)

    @classmethod
    def for_audit(cls, audit: Audit) -> "CloneForm":
        """The clone form opened on the audit's own conditions (its stored design), ready to change."""
        design = audit.design or {}
        return cls(initial={name: design[name] for name in ConditionFieldsForm.base_fields if name in design})

    def value(self):
        factor = self.cleaned_data["factor"]
        if factor == "conditions":
            return self.condition_values()
        if factor == "seed":
            return self.cleaned_data.get("seed")
        if factor == "judge_template":
            template = self.cleaned_data.get("judge_template")
            return template.pk if template else None
        endpoint = self.cleaned_data.get("endpoint")
        if endpoint is None:
            return None
        return [endpoint.pk] if factor == "tutors" else endpoint.pk


# --- endpoints ------------------------------------------------------------------------------------


class EndpointListView(ResearcherRequiredMixin, ListView):
    template_name = "audits/runs/endpoint_list.html"
    context_object_name = "endpoints"

    def get_queryset(self):
        return ModelEndpoint.objects.all()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        mismatches = endpoint_model_mismatches()
        context["endpoints"] = list(context["endpoints"])
        for endpoint in context["endpoints"]:
            endpoint.model_mismatches = mismatches.get(endpoint.pk, [])
        return context


class EndpointCreateView(ResearcherRequiredMixin, CreateView):
    model = ModelEndpoint
    form_class = ModelEndpointForm
    template_name = "audits/runs/endpoint_form.html"

    def get_success_url(self):
        return reverse("audits:endpoints")


class EndpointUpdateView(ResearcherRequiredMixin, UpdateView):
    model = ModelEndpoint
    form_class = ModelEndpointForm
    template_name = "audits/runs/endpoint_form.html"

    def get_success_url(self):
        return reverse("audits:endpoints")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["mismatches"] = endpoint_model_mismatches(endpoints=[self.object]).get(self.object.pk, [])
        return context


class EndpointModelChangedView(ResearcherRequiredMixin, View):
    """POST: the model behind this endpoint's URL changed — bump its revision, so nothing is reused."""

    def post(self, request, pk):
        endpoint = get_object_or_404(ModelEndpoint, pk=pk)
        revision = endpoint_revision_bump(endpoint=endpoint)
        messages.success(
            request,
            f"{endpoint}: now revision {revision}. Its earlier answers are kept but no longer reused: "
            "the next run asks the model anew.",
        )
        return HttpResponseRedirect(reverse("audits:endpoints"))


class EndpointTestView(ResearcherRequiredMixin, View):
    """POST: one request to the endpoint; answers a small fragment for htmx (or redirects)."""

    def post(self, request, pk):
        endpoint = get_object_or_404(ModelEndpoint, pk=pk)
        ok, message = endpoint_connection_test(endpoint=endpoint)
        if request.headers.get("HX-Request"):
            return render(request, "audits/runs/_connection.html", {"ok": ok, "message": message})
        (messages.success if ok else messages.error)(request, f"{endpoint}: {message}")
        return HttpResponseRedirect(reverse("audits:endpoints"))


# --- audits ---------------------------------------------------------------------------------------


class AuditListView(ResearcherRequiredMixin, ListView):
    template_name = "audits/runs/audit_list.html"
    context_object_name = "audits"
    paginate_by = 50

    def get_queryset(self):
        return audit_list(user=self.request.user)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        for audit in context["audits"]:  # how each run ended, as the run page says it (audits.run_outcome)
            outcome = run_outcome(audit.status, done=audit.n_done, failed=audit.n_failed)
            audit.outcome_label, audit.outcome_tone = OUTCOME_LABELS.get(outcome, outcome), TONES.get(outcome, "")
        return context


def _price(endpoint: ModelEndpoint | None) -> Price:
    if endpoint is None:
        return Price("—")
    return Price(str(endpoint), float(endpoint.price_input_per_million), float(endpoint.price_output_per_million))


def missing_choice(*, student, judge) -> str:
    """What the launch form's preview waits for ("" when nothing): it needs the student model and the judge."""
    missing = [what for what, chosen in (("a student model", student), ("a judge", judge)) if not chosen]
    return f"Choose {' and '.join(missing)} to see the preview." if missing else ""


def launch_preview(form: AuditForm) -> dict:
    """The launch form's preview of a bound form: the design preview page's computation
    (`design_preview_compute`), the cost at the endpoints' prices and the launch check. Only what is missing while
    the student model or the judge is not chosen, and `pending` (the form's errors to show) while the design part of
    the form does not validate."""
    not_design = {"name", "description", "launch", "confirm", "student_endpoint", "judge_endpoint", "check_endpoint"}
    design_fields = set(AuditForm.base_fields) - not_design
    form.is_valid()
    data = form.cleaned_data
    missing = missing_choice(student=data.get("student_endpoint"), judge=data.get("judge_endpoint"))
    pending = bool(design_fields & set(form.errors) or form.non_field_errors())
    if missing or pending:
        return {"missing": missing, "pending": pending}
    try:
        computed = design_preview_compute(
            selection=form.selection(),
            tutors=form.tutor_plans(),
            choice=form.condition_choice(),
            budget=form.budget(),
        )
    except ValueError as error:
        return {"preview_error": str(error)}
    tutors = list(data.get("tutors") or [])
    judge = data.get("judge_endpoint")
    prices = {str(endpoint): _price(endpoint) for endpoint in tutors}
    prices[AuditForm.CALIBRATION_PLAN] = Price(AuditForm.CALIBRATION_PLAN)  # a simulation costs nothing
    cost = cost_estimate(
        computed.preview,
        tutors=prices,
        student=_price(data.get("student_endpoint")),
        judge=_price(judge),
        check=_price(data.get("check_endpoint") or judge),
    )
    student, check = data.get("student_endpoint"), data.get("check_endpoint")
    requests = []
    if student is not None and judge is not None:
        requests = requests_preview(
            tutors=[tutor.to_config() for tutor in tutors],
            student=student.to_config(),
            judge=judge.to_config(),
            check=check.to_config() if check else None,
        )
    chosen = [*tutors, student, judge, check]
    failed = sorted({str(endpoint) for endpoint in chosen if endpoint is not None and endpoint.last_test_ok is False})
    # The label plan's own fields (and the launch form's judge endpoint): a bad value there hides the plan, not
    # the preview, and never blocks the launch.
    plan_form = LabelPlanForm(form.data)
    return {
        "preview": computed.preview,
        "conditions": computed.conditions,
        "cost": cost,
        "check": launch_check(computed.preview, failed_endpoints=failed),
        "requests": requests,
        "plan_form": plan_form,
        "label_plan": plan_form.label_plan(computed.preview) if plan_form.is_valid() else None,
    }


class AuditCreateView(ResearcherRequiredMixin, TemplateView):
    """The launch form, with the design's preview beside it (refreshed by htmx as the form changes). A
    design the launch check blocks is refused; one with warnings needs "launch anyway"."""

    template_name = "audits/runs/audit_form.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.setdefault("form", AuditForm(initial=AuditForm.initial_from_preview(self.request.GET)))
        if not context["form"].is_bound:  # the page says at once what the preview waits for
            initial = context["form"].initial
            context.setdefault(
                "missing",
                missing_choice(student=initial.get("student_endpoint"), judge=initial.get("judge_endpoint")),
            )
        if "plan_form" not in context:
            posted = self.request.POST if self.request.method == "POST" else None
            context["plan_form"] = LabelPlanForm(posted, initial=LabelPlanForm.initial_from_preview(self.request.GET))
        return context

    def post(self, request):
        form = AuditForm(request.POST)
        launch = launch_preview(form)
        if not form.is_valid():
            return self.render_to_response(self.get_context_data(form=form, **launch))
        refusal = launch["check"].refusal(confirmed=form.cleaned_data["confirm"]) if "check" in launch else None
        if refusal or "preview_error" in launch:
            form.add_error(None, refusal or launch["preview_error"])
            return self.render_to_response(self.get_context_data(form=form, **launch))
        data = form.cleaned_data
        try:
            with transaction.atomic():
                tutors, description = list(data["tutors"]), data["description"]
                calibration = form.calibration_values()
                if calibration is not None:
                    planted = calibration_tutor_get_or_create(**calibration)
                    tutors += [] if planted in tutors else [planted]
                    description = f"Calibration run (simulation): {planted.name}. {description}".strip()
                audit = audit_create_from_design(
                    name=data["name"],
                    description=description,
                    tutors=tutors,
                    student_endpoint=data["student_endpoint"],
                    judge_endpoint=data["judge_endpoint"],
                    check_endpoint=data.get("check_endpoint"),
                    selection=form.selection_values(),
                    choice=form.choice_values(),
                    seed=data["seed"],
                    t_max=data["t_max"],
                    answer_precheck=data["answer_precheck"],
                    max_reasks=data["max_reasks"],
                    created_by=request.user,
                )
                if data["launch"]:
                    audit_launch(audit=audit)
        except ValueError as exc:
            form.add_error(None, str(exc))
            return self.render_to_response(self.get_context_data(form=form, **launch))
        return HttpResponseRedirect(reverse("audits:audit-detail", args=[audit.pk]))


class AuditLaunchPreviewView(ResearcherRequiredMixin, View):
    """POST (htmx, on every change of the launch form): the preview panel, and the tutor list without the
    endpoints now chosen as student or judge (swapped out of band)."""

    def post(self, request):
        form = AuditForm(request.POST)
        return render(
            request, "audits/partials/launch_preview.html", {"form": form, "oob": True, **launch_preview(form)}
        )


class AuditDetailView(ResearcherRequiredMixin, DetailView):
    model = Audit
    template_name = "audits/runs/audit_detail.html"
    context_object_name = "audit"

    def get(self, request, *args, **kwargs):
        refusal = status_filter_refusal(request)
        if refusal:
            return HttpResponseBadRequest(refusal)
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        audit = self.object
        context.update(live_context(self.request, audit))
        context["clone_form"] = CloneForm.for_audit(self.object)
        context["conditions"] = audit.conditions.all()
        context["tutors"] = audit.tutors.all()
        context["reported_models"] = audit_reported_models(audit=audit)
        context["requests_sent"] = audit_requests_sent(audit=audit)
        context["selection_text"] = selection_text(audit.question_selection)
        return context


def status_filter_refusal(request) -> str | None:
    """Why the run page's ?status= cannot filter (a 400, as the API's ?status= is), or None: a misspelt status would
    otherwise show an empty table, which reads as "no such dialogues"."""
    refusal = choice_refusal(request.GET, "status", Dialogue.Status.values)
    return f"status: {refusal}" if refusal else None


def live_context(request, audit: Audit) -> dict:
    """The run page's live panel: controls, progress, outcome, failures and the page of dialogues
    (filtered by ?status=, paged by ?page=), all from rows."""
    dialogues = audit.dialogues.select_related("tutor", "question", "condition").order_by("pk")
    wanted = request.GET.get("status")
    if wanted:
        dialogues = dialogues.filter(status=wanted)
    progress = audit_progress(audit=audit)
    paginator = Paginator(dialogues, 50)
    paginator.count = progress[wanted] if wanted else progress["total"]  # the tally's count: no COUNT of the rows
    return {"audit": audit, "progress": progress, "page": paginator.get_page(request.GET.get("page"))}


class AuditProgressView(ResearcherRequiredMixin, View):
    """The live panel (htmx polls it while the audit runs), controls and dialogue table included."""

    def get(self, request, pk):
        audit = get_object_or_404(Audit, pk=pk)
        refusal = status_filter_refusal(request)
        if refusal:
            return HttpResponseBadRequest(refusal)
        return render(request, "audits/runs/_progress.html", live_context(request, audit))


class AuditActionView(ResearcherRequiredMixin, View):
    ACTIONS = {
        "launch": audit_launch,
        "pause": audit_pause,
        "resume": audit_resume,
        "cancel": audit_cancel,
        "retry-failed": audit_retry_failed,
        "rejudge": audit_turns_rejudge,
    }
    DONE = {"rejudge": "Re-judging {result} unparsable and failed turns on the workers."}

    def post(self, request, pk, action):
        audit = get_object_or_404(Audit, pk=pk)
        change = self.ACTIONS.get(action)
        if change is None:
            messages.error(request, f"Unknown action {action!r}.")
        else:
            try:
                result = change(audit=audit)
                done = self.DONE.get(action, f"{action.replace('-', ' ').capitalize()}: done.")
                messages.success(request, done.format(result=result))
            except ValueError as exc:
                messages.error(request, str(exc))
        return HttpResponseRedirect(reverse("audits:audit-detail", args=[pk]))


class AuditCloneView(ResearcherRequiredMixin, View):
    def post(self, request, pk):
        audit = get_object_or_404(Audit, pk=pk)
        form = CloneForm(request.POST)
        if form.is_valid() and form.value() is not None:
            factor = form.cleaned_data["factor"]
            try:
                clone = audit_clone(
                    audit=audit, change={factor: clone_factor_value(factor, form.value())}, created_by=request.user
                )
            except (ValueError, ModelEndpoint.DoesNotExist, PromptTemplate.DoesNotExist) as exc:
                messages.error(request, str(exc))
                return HttpResponseRedirect(reverse("audits:audit-detail", args=[pk]))
            messages.success(request, f"Cloned with {clone.clone_change}. Launch it to run only the new calls.")
            return HttpResponseRedirect(reverse("audits:audit-detail", args=[clone.pk]))
        problems = [f"{form.fields[name].label or name}: {' '.join(errors)}" for name, errors in form.errors.items()]
        messages.error(request, " ".join(["Choose the factor to change and its new value.", *problems]))
        return HttpResponseRedirect(reverse("audits:audit-detail", args=[pk]))


class DialogueDetailView(ResearcherRequiredMixin, DetailView):
    """The transcript viewer: persona, turns with the judge's scores, end reason, raw model calls."""

    model = Dialogue
    template_name = "audits/runs/dialogue_detail.html"
    context_object_name = "dialogue"

    def get_queryset(self):
        return Dialogue.objects.select_related("audit", "tutor", "question", "condition")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(dialogue_transcript(dialogue=self.object))
        return context
