"""Question bank pages: the bank with filters and counts, uploads, an import's funnel and progress, a question."""

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.generic import DetailView, FormView, ListView

from audits.forms import QuestionImportForm
from audits.models import Question, QuestionImport, QuestionSource
from audits.questionbank.jsonl import __doc__ as GENERIC_SCHEMA_DOC
from audits.questionbank.records import ImportFileError
from audits.selectors.questionbank import (
    funnel_rows,
    no_questions,
    question_counts_by_domain,
    question_domains,
    question_imports_recent,
    question_total,
    questions_filter,
    questions_with_imports,
)
from audits.services.questionbank import question_import_submit
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.converters import parse_id


def _generic_schema_table() -> str:
    lines = [line for line in (GENERIC_SCHEMA_DOC or "").splitlines() if line.startswith("|")]
    return "\n".join(lines)


class QuestionBankView(ResearcherRequiredMixin, ListView):
    template_name = "audits/questionbank.html"
    context_object_name = "questions"
    paginate_by = 50

    def filters(self) -> dict:
        params = self.request.GET
        import_id = params.get("import", "")
        return {
            "domain": params.get("domain", ""),
            "source": params.get("source", ""),
            "import_id": parse_id(import_id),
            "search": params.get("q", "").strip(),
        }

    def get_queryset(self):
        try:
            return questions_filter(**self.filters())
        except ValueError as exc:  # a NUL character in a filter: say so and list nothing
            messages.error(self.request, str(exc))
            return no_questions()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        filters = self.filters()
        imports = list(question_imports_recent())
        for question_import in imports:
            question_import.funnel_rows = funnel_rows(question_import)
        query = self.request.GET.copy()
        query.pop("page", None)
        context.update(
            filters=filters,
            counts_all=question_counts_by_domain(),
            counts_filtered=question_counts_by_domain(self.object_list),
            total_all=question_total(),
            domains=question_domains(),
            sources=QuestionSource.choices,
            imports=imports,
            upload_form=kwargs.get("upload_form") or QuestionImportForm(),
            query_string=query.urlencode(),
            generic_schema=_generic_schema_table(),
        )
        return context


class QuestionImportCreateView(ResearcherRequiredMixin, FormView):
    form_class = QuestionImportForm
    template_name = "audits/question_import_new.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["generic_schema"] = _generic_schema_table()
        return context

    def form_invalid(self, form):
        # A refused upload (over the size limit, no file, a bad parameter) is the client's error: the form, with 400.
        return self.render_to_response(self.get_context_data(form=form), status=400)

    def form_valid(self, form):
        try:
            question_import = question_import_submit(
                source=form.cleaned_data["source"],
                uploaded_file=form.cleaned_data["file"],
                parameters=form.parameters(),
                user=self.request.user,
            )
        except ImportFileError as error:
            form.add_error(None, str(error))
            return self.form_invalid(form)
        if question_import.status == QuestionImport.Status.FAILED:
            messages.error(self.request, f"The file was rejected; nothing was imported. {question_import.error}")
        elif question_import.status == QuestionImport.Status.DONE:
            messages.success(
                self.request,
                f"Imported: {question_import.questions_created} new question(s), "
                f"{question_import.questions_existing} already in the bank.",
            )
        else:
            messages.info(self.request, "The file is large; it is being imported in the background.")
        return redirect(reverse("audits:question-import-detail", args=[question_import.pk]))


class QuestionImportDetailView(ResearcherRequiredMixin, DetailView):
    model = QuestionImport
    template_name = "audits/question_import_detail.html"
    context_object_name = "question_import"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["funnel_rows"] = funnel_rows(self.object)
        return context


class QuestionImportStatusView(QuestionImportDetailView):
    """The status block alone, polled by htmx while the import runs."""

    template_name = "audits/partials/import_status.html"


class QuestionDetailView(ResearcherRequiredMixin, DetailView):
    model = Question
    template_name = "audits/question_detail.html"
    context_object_name = "question"

    def get_queryset(self):
        return questions_with_imports()
