"""Clone an audit with one change (researchers only): the clone form and its post."""

from django import forms
from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views import View

from audits.models import Audit, ModelEndpoint, PromptTemplate
from audits.selectors.design import prompt_templates_filter
from audits.selectors.endpoints import endpoint_list
from audits.selectors.runs import clone_factor_value
from audits.services.audit_lifecycle import audit_clone
from audits.views.launch import ConditionFieldsForm
from edufair_web.accounts.permissions import ResearcherRequiredMixin


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
    endpoint = forms.ModelChoiceField(queryset=endpoint_list(), required=False)
    judge_template = forms.ModelChoiceField(queryset=prompt_templates_filter(kind="judge_rubric"), required=False)
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
