"""Demographic design pages: dimensions, levels, names, prompt templates (versioned), and the design preview."""

from django.contrib import messages
from django.db.models import ProtectedError
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse, reverse_lazy
from django.views.generic import CreateView, DeleteView, DetailView, FormView, TemplateView, UpdateView

from audits.forms import (
    DemographicDimensionForm,
    DemographicLevelForm,
    DesignPreviewForm,
    LabelPlanForm,
    NameCueForm,
    PromptTemplateCreateForm,
    PromptTemplateReviseForm,
)
from audits.models import DemographicDimension, DemographicLevel, Domain, NameCue, PromptTemplate
from audits.selectors.design import (
    design_dimensions,
    dimensions_with_levels,
    name_grid,
    prompt_templates_filter,
    prompt_templates_latest,
)
from audits.selectors.questionbank import question_domains
from audits.services.design import design_preview_compute, prompt_template_create, prompt_template_revise
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.converters import parse_id

DESIGN_URL = reverse_lazy("audits:design")


class DesignOverviewView(ResearcherRequiredMixin, TemplateView):
    template_name = "audits/design.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(
            dimensions=dimensions_with_levels(),
            name_grid=name_grid(),
            templates=prompt_templates_latest(),
        )
        return context


class _DesignFormMixin(ResearcherRequiredMixin):
    template_name = "audits/design_form.html"
    success_url = DESIGN_URL
    heading = ""

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["heading"] = self.heading
        return context


class DimensionCreateView(_DesignFormMixin, CreateView):
    model = DemographicDimension
    form_class = DemographicDimensionForm
    heading = "New dimension"


class DimensionUpdateView(_DesignFormMixin, UpdateView):
    model = DemographicDimension
    form_class = DemographicDimensionForm
    heading = "Edit dimension"


class LevelCreateView(_DesignFormMixin, CreateView):
    model = DemographicLevel
    form_class = DemographicLevelForm
    heading = "New level"

    def get_initial(self):
        initial = super().get_initial()
        dimension = parse_id(self.request.GET.get("dimension", ""))
        if dimension is not None:
            initial["dimension"] = dimension
        return initial


class LevelUpdateView(_DesignFormMixin, UpdateView):
    model = DemographicLevel
    form_class = DemographicLevelForm
    heading = "Edit level"


class NameCueCreateView(_DesignFormMixin, CreateView):
    model = NameCue
    form_class = NameCueForm
    heading = "New name"


class NameCueUpdateView(_DesignFormMixin, UpdateView):
    model = NameCue
    form_class = NameCueForm
    heading = "Edit name"


class NameCueDeleteView(ResearcherRequiredMixin, DeleteView):
    model = NameCue
    success_url = DESIGN_URL
    template_name = "audits/design_confirm_delete.html"


class PromptTemplateDetailView(ResearcherRequiredMixin, DetailView):
    model = PromptTemplate
    template_name = "audits/prompt_template_detail.html"
    context_object_name = "template_version"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["versions"] = prompt_templates_filter(kind=self.object.kind, name=self.object.name)
        return context


class PromptTemplateCreateView(ResearcherRequiredMixin, FormView):
    form_class = PromptTemplateCreateForm
    template_name = "audits/design_form.html"
    extra_context = {"heading": "New prompt template"}

    def form_valid(self, form):
        template = prompt_template_create(user=self.request.user, **form.cleaned_data)
        messages.success(self.request, f"Saved {template}.")
        return redirect(reverse("audits:prompt-template-detail", args=[template.pk]))


class PromptTemplateReviseView(ResearcherRequiredMixin, FormView):
    """The only way to edit a template on a page: it saves a new version."""

    form_class = PromptTemplateReviseForm
    template_name = "audits/design_form.html"

    def dispatch(self, request, *args, **kwargs):
        self.template_version = get_object_or_404(PromptTemplate, pk=kwargs["pk"])
        return super().dispatch(request, *args, **kwargs)

    def get_form_kwargs(self):
        kwargs = super().get_form_kwargs()
        kwargs["template"] = self.template_version
        return kwargs

    def get_initial(self):
        return {"text": self.template_version.text, "description": self.template_version.description}

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["heading"] = f"Edit {self.template_version} — saves a new version"
        context["note"] = (
            f"{self.template_version} has been used by an audit and will never change."
            if self.template_version.is_used
            else f"{self.template_version} stays as it is; your edit becomes the next version."
        )
        return context

    def form_valid(self, form):
        template = prompt_template_revise(
            template=self.template_version,
            text=form.cleaned_data["text"],
            description=form.cleaned_data["description"],
            metrics=form.cleaned_data.get("metrics") or None,
            user=self.request.user,
        )
        messages.success(self.request, f"Saved {template}.")
        return redirect(reverse("audits:prompt-template-detail", args=[template.pk]))


class PromptTemplateDeleteView(ResearcherRequiredMixin, DeleteView):
    model = PromptTemplate
    success_url = DESIGN_URL
    template_name = "audits/design_confirm_delete.html"

    def form_valid(self, form):
        if self.object.is_used:
            messages.error(self.request, f"{self.object} has been used by an audit and cannot be deleted.")
            return HttpResponseRedirect(reverse("audits:prompt-template-detail", args=[self.object.pk]))
        try:
            return super().form_valid(form)
        except ProtectedError:
            messages.error(self.request, f"{self.object} has later versions; delete those first.")
            return HttpResponseRedirect(reverse("audits:prompt-template-detail", args=[self.object.pk]))


class DesignPreviewView(ResearcherRequiredMixin, TemplateView):
    """GET form: the preview is computed from the query string, so a preview can be bookmarked and shared.

    The computation is `design_preview_compute`, the launch form's too: conditions as for a launched audit,
    and contrasts from the analysis's own `build_contrasts`, so the page lists what an audit of this design
    will report. "Launch this design" carries the same query string to the launch form."""

    template_name = "audits/design_preview.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        domains = question_domains() or [choice for choice, _ in Domain.choices]
        submitted = "domains" in self.request.GET
        form = DesignPreviewForm(
            self.request.GET if submitted else None, domains=domains, dimensions=design_dimensions()
        )
        plan_form = LabelPlanForm(self.request.GET if submitted else None)
        context.update(form=form, plan_form=plan_form)
        if submitted and form.is_valid():
            try:
                computed = design_preview_compute(
                    selection=form.selection(),
                    tutors=form.tutor_plans(),
                    choice=form.condition_choice(),
                    budget=form.budget(),
                )
            except ValueError as error:
                form.add_error(None, str(error))
                return context
            context.update(
                preview=computed.preview,
                conditions=computed.conditions,
                launch_url=f"{reverse('audits:audit-new')}?{self.request.GET.urlencode()}",
                label_plan=plan_form.label_plan(computed.preview) if plan_form.is_valid() else None,
            )
        return context
