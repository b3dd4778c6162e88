"""Model endpoint pages (researchers only): the list, the form, the connection test and a changed model."""

from django import forms
from django.contrib import messages
from django.db import models
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views import View
from django.views.generic import CreateView, ListView, UpdateView

from audits.forms import EndpointRolesField
from audits.models import ModelEndpoint
from audits.models.llm import ENDPOINT_REQUEST_FIELDS
from audits.selectors.endpoints import endpoint_list, endpoint_model_mismatches
from audits.services.endpoints import endpoint_connection_test, endpoint_revision_bump
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.display import AUDIT_COST_CURRENCY
from edufair_web.json_input import DepthBoundedDecoder


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


class EndpointListView(ResearcherRequiredMixin, ListView):
    template_name = "audits/runs/endpoint_list.html"
    context_object_name = "endpoints"

    def get_queryset(self):
        return endpoint_list()

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
