"""Pages of the audit engine (researchers only): model endpoints, audits with live progress and their
controls, clone-with-one-change, and the transcript viewer. Views validate input and call services."""

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db import models, transaction
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views import View
from django.views.generic import CreateView, DetailView, ListView, TemplateView, UpdateView

from audits.api.views_runs import clone_value
from audits.design import selection_text
from audits.models import Audit, Dialogue, ModelEndpoint, PromptTemplate, Question
from audits.selectors.endpoints import audit_reported_models, endpoint_model_mismatches
from audits.selectors.runs import audit_list, audit_progress, dialogue_transcript
from audits.services import runs as run_services
from audits.services.endpoints import endpoint_revision_bump
from audits.services.judging import audit_turns_rejudge
from edufair_web.accounts.permissions import ResearcherRequiredMixin

# --- forms ----------------------------------------------------------------------------------------


def _endpoint_formfield(field, **kwargs):
    # A base URL typed without a scheme is taken as https (Django 6's default; said explicitly now).
    if isinstance(field, models.URLField):
        kwargs["assume_scheme"] = "https"
    return field.formfield(**kwargs)


class ModelEndpointForm(forms.ModelForm):
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
            "price_input_per_million": "Price per million input tokens",
            "price_output_per_million": "Price per million output tokens",
            "batch_capable": "Batch API capable",
            "batch_price_factor": "Batch price factor",
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
            "description",
        ]


class AuditForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    tutors = forms.ModelMultipleChoiceField(queryset=ModelEndpoint.objects.all(), widget=forms.CheckboxSelectMultiple)
    student_endpoint = forms.ModelChoiceField(queryset=ModelEndpoint.objects.all(), help_text="Run at temperature 0.")
    judge_endpoint = forms.ModelChoiceField(queryset=ModelEndpoint.objects.all())
    check_endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.all(), required=False, help_text="Reveal/confirm check; blank: the judge."
    )
    domains = forms.MultipleChoiceField(choices=(), widget=forms.CheckboxSelectMultiple)
    count = forms.IntegerField(required=False, min_value=1, help_text="At most this many questions per domain.")
    fraction = forms.FloatField(required=False, min_value=0.01, max_value=1, help_text="Or a stratified fraction.")
    seed = forms.IntegerField(initial=0)
    control = forms.BooleanField(required=False, initial=True)
    explicit_dimensions = forms.MultipleChoiceField(choices=(), required=False, widget=forms.CheckboxSelectMultiple)
    implicit = forms.BooleanField(required=False, label="Implicit (names)")
    names_per_cell = forms.IntegerField(required=False, min_value=1, help_text="Names per gender × ethnicity.")
    opposite = forms.BooleanField(required=False, label="Opposite (2 × 2 gender)")
    t_max = forms.IntegerField(initial=10, min_value=1, max_value=50, label="T_max (tutor turns)")
    answer_precheck = forms.BooleanField(required=False, help_text="Skip the model check when no answer appears.")
    max_reasks = forms.IntegerField(initial=2, min_value=0, max_value=10, label="Judge re-asks")
    launch = forms.BooleanField(required=False, initial=True, label="Launch now")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from audits.selectors.design import design_dimensions

        domains = Question.objects.order_by("domain").values_list("domain", flat=True).distinct()
        self.fields["domains"].choices = [(d, d) for d in domains]
        # The dimensions the launch draws its levels from (the tables, or the defaults), as the preview offers.
        self.fields["explicit_dimensions"].choices = design_dimensions()

    def clean(self):
        data = super().clean()
        if data.get("count") and data.get("fraction"):
            raise forms.ValidationError("Choose a count or a fraction per domain, not both.")
        return data


class CloneForm(forms.Form):
    FACTORS = [
        ("student_endpoint", "Student model"),
        ("judge_endpoint", "Judge model"),
        ("judge_template", "Judge rubric version"),
        ("seed", "Seed"),
        ("tutors", "Tutor"),
    ]
    factor = forms.ChoiceField(choices=FACTORS)
    endpoint = forms.ModelChoiceField(queryset=ModelEndpoint.objects.all(), required=False)
    judge_template = forms.ModelChoiceField(queryset=PromptTemplate.objects.filter(kind="judge_rubric"), required=False)
    seed = forms.IntegerField(required=False)

    def value(self):
        factor = self.cleaned_data["factor"]
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
        ok, message = run_services.endpoint_connection_test(endpoint=endpoint)
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


class AuditCreateView(ResearcherRequiredMixin, TemplateView):
    template_name = "audits/runs/audit_form.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.setdefault("form", AuditForm())
        return context

    def post(self, request):
        form = AuditForm(request.POST)
        if not form.is_valid():
            return self.render_to_response(self.get_context_data(form=form))
        data = form.cleaned_data
        selection = {"domains": data["domains"], "seed": data["seed"]}
        if data.get("count"):
            selection["count"] = data["count"]
        if data.get("fraction"):
            selection["fraction"] = data["fraction"]
        choice = {
            "control": data["control"],
            "explicit_dimensions": data["explicit_dimensions"],
            "implicit": data["implicit"],
            "names_per_cell": data.get("names_per_cell"),
            "opposite": data["opposite"],
            "seed": data["seed"],
        }
        try:
            with transaction.atomic():
                audit = run_services.audit_create_from_design(
                    name=data["name"],
                    description=data["description"],
                    tutors=list(data["tutors"]),
                    student_endpoint=data["student_endpoint"],
                    judge_endpoint=data["judge_endpoint"],
                    check_endpoint=data.get("check_endpoint"),
                    selection=selection,
                    choice=choice,
                    seed=data["seed"],
                    t_max=data["t_max"],
                    answer_precheck=data["answer_precheck"],
                    max_reasks=data["max_reasks"],
                    created_by=request.user,
                )
                if data["launch"]:
                    run_services.audit_launch(audit=audit)
        except ValueError as exc:
            form.add_error(None, str(exc))
            return self.render_to_response(self.get_context_data(form=form))
        return HttpResponseRedirect(reverse("audits:audit-detail", args=[audit.pk]))


class AuditDetailView(ResearcherRequiredMixin, DetailView):
    model = Audit
    template_name = "audits/runs/audit_detail.html"
    context_object_name = "audit"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        audit = self.object
        context.update(live_context(self.request, audit))
        context["clone_form"] = CloneForm()
        context["conditions"] = audit.conditions.all()
        context["tutors"] = audit.tutors.all()
        context["reported_models"] = audit_reported_models(audit=audit)
        context["selection_text"] = selection_text(audit.question_selection)
        return context


def live_context(request, audit: Audit) -> dict:
    """The run page's live panel: controls, progress, outcome, failures and the page of dialogues
    (filtered by ?status=, paged by ?page=), all from rows."""
    dialogues = audit.dialogues.select_related("tutor", "question", "condition").order_by("pk")
    wanted = request.GET.get("status")
    if wanted:
        dialogues = dialogues.filter(status=wanted)
    return {
        "audit": audit,
        "progress": audit_progress(audit=audit),
        "page": Paginator(dialogues, 50).get_page(request.GET.get("page")),
    }


class AuditProgressView(ResearcherRequiredMixin, View):
    """The live panel (htmx polls it while the audit runs), controls and dialogue table included."""

    def get(self, request, pk):
        audit = get_object_or_404(Audit, pk=pk)
        return render(request, "audits/runs/_progress.html", live_context(request, audit))


class AuditActionView(ResearcherRequiredMixin, View):
    ACTIONS = {
        "launch": run_services.audit_launch,
        "pause": run_services.audit_pause,
        "resume": run_services.audit_resume,
        "cancel": run_services.audit_cancel,
        "retry-failed": run_services.audit_retry_failed,
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
                clone = run_services.audit_clone(
                    audit=audit, change={factor: clone_value(factor, form.value())}, created_by=request.user
                )
            except (ValueError, ModelEndpoint.DoesNotExist, PromptTemplate.DoesNotExist) as exc:
                messages.error(request, str(exc))
                return HttpResponseRedirect(reverse("audits:audit-detail", args=[pk]))
            messages.success(request, f"Cloned with {clone.clone_change}. Launch it to run only the new calls.")
            return HttpResponseRedirect(reverse("audits:audit-detail", args=[clone.pk]))
        messages.error(request, "Choose the factor to change and its new value.")
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
