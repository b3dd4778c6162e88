"""Researcher pages of judge validation: the project list and import, the create form, the report and the workshop.

The pages: the list of validation projects (and the MRBench-style import), the one-action form that builds a validation
project from an audit, the report (several judges side by side, per rubric version, with verdicts under a named rule,
``?rule=``, the label planner for a target half-width, ``?half_width=``, and the judge's cue check on the audit's
contrasts) with its actions — thresholds, recording verdicts, adding a judge, hiding or showing the persona cue — and
the rubric-workshop form. A judge added or re-run is judged on a worker; the report shows each judge's run (turns judged
of the total, its batches) and reloads itself while one is open."""

from __future__ import annotations

from datetime import date

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views import View

from annotation.agreement_units import units_text
from annotation.judge_validation import judging, services
from annotation.judge_validation.audit_source import audit_by_id, endpoint_by_id, endpoints_by_name, finished_audits
from annotation.judge_validation.cue_check import cue_section
from annotation.judge_validation.importing import MRBenchError, labelled_file_import
from annotation.judge_validation.planner import (
    DEFAULT_HALF_WIDTH,
    PlannerInputError,
    design_inputs_from,
    target_half_width_from,
)
from annotation.judge_validation.report import (
    DEFAULT_VERDICT_RULE,
    NA,
    VerdictRuleError,
    verdict_rule_from,
)
from annotation.judge_validation.rubric import METRIC_QUESTIONS
from annotation.judge_validation.validity import EPSILON_EXPERT, EpsilonError, epsilon_from
from annotation.models import AnnotationProject, JudgeValidation, RubricVersion
from annotation.selectors.exports import JUDGE_VALIDATION_FORMATS, export_judge_validation
from annotation.selectors.judge_validation import (
    item_sources,
    project_rubrics,
    transcript_links,
)
from annotation.selectors.judge_validation_planned import planned_validation_report
from annotation.selectors.projects import stages_in_order
from annotation.selectors.validation_projects import (
    item_gold_values,
    item_judge_scores,
    project_judges,
    rubric_workshops_of,
    sampled_item_count,
    validation_projects,
)
from annotation.services.training import SetupError
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.converters import parse_id
from edufair_web.upload_limits import upload_size_error


def fmt(value, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def stat(result: dict) -> dict:
    """An AgreementResult dict as the page shows it: the value, or "undefined" with the reason."""
    if result.get("value") is None:
        return {"text": "undefined", "title": result.get("undefined_reason") or "", "n": result.get("n_units", 0)}
    return {"text": fmt(result["value"]), "title": "", "n": result.get("n_units", 0)}


def alpha_cell(result: dict) -> dict:
    """Human α as the page shows it, with its own units (items with ≥ 2 ratings, pairable values)."""
    cell = stat(result)
    cell["units"] = units_text(result["units"]) if result.get("units") else ""
    return cell


def kappa_cell(kappa: dict) -> dict:
    """κ with its CI as the page shows it, with its own units (turns both judge and consensus rated)."""
    cell = stat(kappa)
    cell["units"] = units_text(kappa["units"]) if kappa.get("units") else ""
    if kappa.get("ci_low") is not None:
        cell["ci"] = f"{fmt(kappa['ci_low'])} to {fmt(kappa['ci_high'])}"
    return cell


def imported_tables(imported: dict | None) -> dict | None:
    """The imported file's counts reshaped for the template: a row per dimension (label → n) and a row
    per tutor (responses, then each dimension's counts as text)."""
    if not imported:
        return None
    counts = imported["counts"]
    dimensions = list(counts["dimensions"])
    return {
        "dimensions": [
            {"name": d, "counts": " · ".join(f"{label} {n}" for label, n in counts["dimensions"][d].items())}
            for d in dimensions
        ],
        "dimension_names": dimensions,
        "tutors": [
            {
                "name": tutor,
                "responses": row["responses"],
                "cells": [
                    " · ".join(f"{label} {n}" for label, n in row["dimensions"].get(d, {}).items()) or "—"
                    for d in dimensions
                ],
            }
            for tutor, row in counts["tutors"].items()
        ],
        "metrics": [
            {"metric": m, "counts": " · ".join(f"{value} {n}" for value, n in counts["metrics"].get(m, {}).items())}
            for m in METRIC_QUESTIONS
        ],
    }


def report_tables(report: dict, links: dict[int, str]) -> dict:
    """The report reshaped for the template (which cannot index dicts by variable)."""
    judges = report["judges"]
    rows, details = [], []
    for row in report["metrics"]:
        cells = []
        for judge in judges:
            section = row["judges"][judge["key"]]
            cells.append(
                {
                    "judge": judge,
                    "exact": fmt(section["exact_agreement"]),
                    "within_one": fmt(section["within_one"]),
                    "kappa": kappa_cell(section["kappa_linear"]),
                    "alpha_with_judge": stat(section["alpha_with_judge"]),
                    "n": section["n_compared"],
                    "verdict": section["verdict"],
                    "verdict_by_rule": section.get("verdict_by_rule", {}),
                    "best": report["best_judge"].get(row["metric"]) == judge["key"] and len(judges) > 1,
                }
            )
            confusion = section["confusion"]
            if not section["n_compared"]:
                continue  # nothing compared yet (a fresh project, or a judge not run): no all-zero matrix
            details.append(
                {
                    "metric": row["metric"],
                    "judge": judge,
                    "categories": ["n/a" if c == NA else c for c in confusion["categories"]],
                    "confusion": [
                        {"label": "n/a" if c == NA else c, "counts": counts}
                        for c, counts in zip(confusion["categories"], confusion["rows"], strict=True)
                    ],
                    "differences": [
                        {**d, "link": d.get("source", {}).get("link") or links.get(d["item"], "")}
                        for d in section["largest_differences"]
                    ],
                }
            )
        rows.append(
            {
                "metric": row["metric"],
                "prompt": METRIC_QUESTIONS.get(row["metric"], {}).get("prompt", ""),
                "alpha_pre": alpha_cell(row["human_alpha_pre"]),
                "alpha_post": alpha_cell(row["human_alpha_post"]),
                "n_labelled": row["n_items_labelled"],
                "n_consensus": row["n_consensus"],
                "cells": cells,
            }
        )
    return {"rows": rows, "details": details}


def interval_text(found: dict | None, digits: int = 3) -> str:
    """An estimate with its interval, e.g. "0.812 (0.731 to 0.880)", or "undefined (reason)"."""
    found = found or {}
    estimate = found.get("estimate", found.get("value"))
    if estimate is None:
        reason = found.get("undefined_reason") or "not computed"
        return f"undefined ({reason})"
    low, high = found.get("low", found.get("ci_low")), found.get("high", found.get("ci_high"))
    text = fmt(estimate, digits)
    if low is not None:
        text += f" ({fmt(low, digits)} to {fmt(high, digits)})"
    return text


def layer_tables(report: dict) -> list[dict]:
    """The three validity layers per metric, reshaped for the template."""
    names = {judge["key"]: judge["name"] for judge in report["judges"]}
    found = []
    for row in report["metrics"]:
        layers = row.get("layers")
        if not layers:
            continue
        ceiling = layers["human_ceiling"]
        alpha = ceiling["human_alpha"]
        units = alpha.get("units") or {}
        p_below = alpha.get("p_below") or {}
        judges = []
        for key, judge_layers in layers["judges"].items():
            versus, way = judge_layers["judge_vs_humans"], judge_layers["direction"]
            alt = versus["alt_test"]
            judges.append(
                {
                    "name": names.get(key, key),
                    "kappa": interval_text(versus["kappa_linear"]),
                    "kappa_units": units_text(versus["kappa_linear"].get("units") or {}),
                    "ac1": interval_text(versus["ac1"]),
                    "ac2": interval_text(versus["ac2_linear"]),
                    "warning": versus["prevalence_warning"],
                    "shares": " · ".join(f"{c} {share:.0%}" for c, share in versus["class_shares"].items()),
                    "alt": {
                        "omega": fmt(alt["omega"]),
                        "rho": fmt(alt["rho"]),
                        "passed": alt["passed"],
                        "epsilon": alt["epsilon_text"],
                        "unmet": alt["unmet"],
                        "per_annotator": alt["per_annotator"],
                    },
                    "mean": interval_text(way["mean_difference"]),
                    "mean_n": way["mean_difference"]["n"],
                    "strata": [
                        {"kind": kind, "stratum": r["stratum"], "text": interval_text(r), "n": r["n"]}
                        for kind, rows in way["by_stratum"].items()
                        for r in rows
                    ],
                    "ranks": [
                        {"kind": kind, "text": interval_text(r), "n_groups": r["n_groups"]}
                        for kind, r in way["rank_agreement"].items()
                    ],
                }
            )
        found.append(
            {
                "metric": row["metric"],
                "alpha": interval_text(alpha),
                "alpha_units": units_text(units),
                "p_below": " · ".join(f"P(α < {float(m):.3f}) = {fmt(p, 2)}" for m, p in p_below.items()),
                "annotators": [
                    {
                        "annotator": a["annotator"],
                        "kappa": stat(a["kappa_vs_others"]),
                        "n": a["n_items"],
                        "alpha_without": stat(a["alpha_without"]),
                    }
                    for a in ceiling["per_annotator"]
                ],
                "judges": judges,
                "by_rho": [
                    {"name": names.get(r["judge"], r["judge"]), "rho": fmt(r["rho"])} for r in layers["judges_by_rho"]
                ],
            }
        )
    return found


class ValidationListView(ResearcherRequiredMixin, View):
    def get(self, request):
        projects = validation_projects()
        return render(
            request, "annotation/judge_validation/list.html", {"projects": projects, "audits": finished_audits()}
        )

    def post(self, request):
        upload = request.FILES.get("file")
        if upload is None:
            messages.error(request, "Choose an MRBench or BEA 2025 JSON file.")
            return redirect("annotation:judge-validations")
        too_large = upload_size_error("items", upload.size)
        if too_large:
            messages.error(request, f"Not imported: {too_large}")
            return redirect("annotation:judge-validations")
        try:
            project = labelled_file_import(data=upload.read(), filename=upload.name, by=request.user)
        except MRBenchError as exc:
            messages.error(request, f"Not imported: {exc}.")
            return redirect("annotation:judge-validations")
        summary = project.options["import"]
        messages.success(
            request,
            f"Imported {summary['n_responses']} labelled tutor responses from {summary['n_records']} dialogues "
            f"({summary['schema_name']}). Add a judge to it.",
        )
        for warning in summary["warnings"]:
            messages.warning(request, warning[:1].upper() + warning[1:] + ".")
        return redirect("annotation:judge-validation", pk=project.pk)


class ValidationCreateView(ResearcherRequiredMixin, View):
    template_name = "annotation/judge_validation/create.html"

    def _context(self, request, errors=None):
        return {
            "audits": finished_audits(),
            "chosen": request.POST.get("audit") or request.GET.get("audit") or "",
            "per_stratum": request.POST.get("per_stratum") or request.GET.get("per_stratum") or "",
            "defaults": {
                "size": services.DEFAULT_SAMPLE_SIZE,
                "training_pool": services.DEFAULT_TRAINING_POOL,
                "overlap": services.DEFAULT_OVERLAP,
            },
            "errors": errors or [],
        }

    def get(self, request):
        return render(request, self.template_name, self._context(request))

    def post(self, request):
        audit_id = parse_id(request.POST.get("audit", ""))
        audit = audit_by_id(audit_id) if audit_id is not None else None
        if audit is None:
            return render(request, self.template_name, self._context(request, ["Choose an audit."]), status=400)
        per_stratum = (request.POST.get("per_stratum") or "").strip()
        try:
            project = services.validation_project_create(
                audit=audit,
                size=int(request.POST.get("size") or services.DEFAULT_SAMPLE_SIZE),
                seed=int(request.POST.get("seed") or 0),
                per_stratum=int(per_stratum) if per_stratum else None,
                hide_persona_cue=request.POST.get("show_persona_cue") != "on",
                overlap=int(request.POST.get("overlap") or services.DEFAULT_OVERLAP),
                training_pool=int(request.POST.get("training_pool") or services.DEFAULT_TRAINING_POOL),
                human_alpha_min=float(request.POST.get("human_alpha_min") or 0.8),
                judge_agreement_min=float(request.POST.get("judge_agreement_min") or 0.8),
                by=request.user,
            )
        except (SetupError, ValueError) as exc:
            return render(request, self.template_name, self._context(request, [str(exc)]), status=400)
        messages.success(request, f"Validation project created with {sampled_item_count(project)} turns.")
        return redirect("annotation:judge-validation", pk=project.pk)


def _validation_project(pk) -> AnnotationProject:
    return get_object_or_404(AnnotationProject, pk=pk, kind=AnnotationProject.Kind.JUDGE_VALIDATION)


class ValidationReportView(ResearcherRequiredMixin, View):
    def get(self, request, pk):
        project = _validation_project(pk)
        if request.GET.get("item"):
            return self._item(request, project, request.GET["item"])
        rubrics = project_rubrics(project)
        chosen = next((r for r in rubrics if str(r.pk) == request.GET.get("rubric")), None)
        try:
            rule, rule_error = verdict_rule_from(request.GET.get("rule")), ""
        except VerdictRuleError as exc:
            rule, rule_error = DEFAULT_VERDICT_RULE, str(exc)
        try:
            epsilon, epsilon_error = epsilon_from(request.GET.get("epsilon")), ""
        except EpsilonError as exc:
            epsilon, epsilon_error = EPSILON_EXPERT, str(exc)
        try:
            half_width, planner_error = target_half_width_from(request.GET.get("half_width")), ""
        except PlannerInputError as exc:
            half_width, planner_error = DEFAULT_HALF_WIDTH, str(exc)
        try:
            design_inputs, design_error = design_inputs_from(request.GET), ""
        except PlannerInputError as exc:
            design_inputs, design_error = None, str(exc)
        report = planned_validation_report(
            project, rubric=chosen, rule=rule, epsilon=epsilon, half_width=half_width, design_inputs=design_inputs
        )
        fmt = request.GET.get("export")
        if fmt:
            refused = rule_error or epsilon_error or planner_error or design_error
            if fmt not in JUDGE_VALIDATION_FORMATS or refused:
                raise Http404(refused or "The export is csv or json.")
            body, content_type, filename = export_judge_validation(report, fmt)
            response = HttpResponse(body, content_type=content_type)
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
            return response
        rubric = chosen or RubricVersion.objects.get(pk=report["rubric"]["id"])
        stages = stages_in_order(project)
        judges = project_judges(project, rubric)
        validations = [{"v": v, "run": judging.judge_run_state(v)} for v in judges]
        audit = audit_by_id(project.source_audit_id) if project.source_audit_id else None
        return render(
            request,
            "annotation/judge_validation/report.html",
            {
                "project": project,
                "audit": audit,
                "report": report,
                "planner": report["planner"],
                "planner_error": planner_error,
                "design_plan": report["validation_plan"],
                "design_error": design_error,
                "rule_error": rule_error,
                "epsilon_error": epsilon_error,
                "layers": layer_tables(report),
                "cue": cue_section(audit, project.pk) if audit is not None else None,
                "tables": report_tables(report, transcript_links(project)),
                "imported": imported_tables(report["imported"]),
                "rubrics": rubrics,
                "validations": validations,
                "runs_open": any(row["run"] and row["run"]["open"] for row in validations),
                "endpoints": endpoints_by_name(),
                "stages": stages,
                "workshops": rubric_workshops_of(project),
                "sample": project.options.get("sample", {}),
                "hidden": project.options.get("hide_persona_cue", True),
            },
        )

    def _item(self, request, project, item_id):
        """One item's transcript with its source ids and its labels (linked from "where they differ")."""
        found = parse_id(str(item_id))
        if found is None:
            raise Http404("Not an item id.")
        item = get_object_or_404(project.items, pk=found)
        gold = item_gold_values(item)
        scores = [
            {
                "judge": v.judge_name,
                "values": {
                    s.metric: "unusable" if s.value is None else NA if s.value == -1 else str(s.value)
                    for s in scores_of_item
                },
            }
            for v, scores_of_item in item_judge_scores(project, item)
        ]
        return render(
            request,
            "annotation/judge_validation/item.html",
            {
                "project": project,
                "item": item,
                "source": item_sources(project).get(item.pk, {}),
                "turns": item.payload.get("turns", []),
                "highlight": item.payload.get("highlight"),
                "rows": [
                    {
                        "metric": metric,
                        "consensus": gold.get(metric, "—"),
                        "judges": [row["values"].get(metric, "—") for row in scores],
                    }
                    for metric in METRIC_QUESTIONS
                ],
                "judges": [row["judge"] for row in scores],
                "source_labels": item.metadata.get("source_labels", {}),
                "unmapped": item.metadata.get("unmapped", {}),
            },
        )


class ValidationActionView(ResearcherRequiredMixin, View):
    """POST actions on the report page: thresholds, record, add-judge, persona."""

    def post(self, request, pk, action):
        project = _validation_project(pk)
        back = reverse("annotation:judge-validation", args=[project.pk])
        try:
            if action == "thresholds":
                validation = get_object_or_404(
                    JudgeValidation, pk=parse_id(request.POST.get("validation", "")), project=project
                )
                services.thresholds_set(
                    validation=validation,
                    human_alpha_min=float(request.POST["human_alpha_min"]),
                    judge_agreement_min=float(request.POST["judge_agreement_min"]),
                )
                messages.success(request, "Thresholds saved; the verdicts below use them.")
            elif action == "record":
                validation = get_object_or_404(
                    JudgeValidation, pk=parse_id(request.POST.get("validation", "")), project=project
                )
                validation = services.validation_record(validation=validation, by=request.user)
                rule = validation.result["verdict_rule"]["name"]
                messages.success(
                    request,
                    f"Verdicts recorded for {validation.judge_name} on {validation.rubric.label} (the {rule} rule).",
                )
            elif action == "add-judge":
                endpoint_id = parse_id(request.POST.get("endpoint", ""))
                endpoint = endpoint_by_id(endpoint_id) if endpoint_id is not None else None
                if endpoint is None:
                    raise Http404("No such endpoint.")
                rubric = next((r for r in project_rubrics(project) if str(r.pk) == request.POST.get("rubric")), None)
                if rubric is None:
                    raise SetupError("Choose a rubric version of this project.")
                validation, run = judging.judge_validation_add(project=project, endpoint=endpoint, rubric=rubric)
                if run is None:
                    messages.success(request, f"{endpoint.name}'s scores under {rubric.label} copied from the audit.")
                else:
                    how = "through the Batch API" if run.via_batch else "through the ledger"
                    messages.success(
                        request,
                        f"{endpoint.name} is judging the sample under {rubric.label} on a worker ({how}); "
                        "its progress shows below.",
                    )
                back += f"?rubric={rubric.pk}"
            elif action == "cancel-run":
                validation = get_object_or_404(
                    JudgeValidation, pk=parse_id(request.POST.get("validation", "")), project=project
                )
                run = judging.judge_run_cancel(validation)
                messages.success(
                    request,
                    f"{validation.judge_name}'s judging run: cancelled"
                    + (" at the provider; the lines it finished are kept." if run and run["via_batch"] else "."),
                )
                back += f"?rubric={validation.rubric_id}"
            elif action == "persona":
                hidden = request.POST.get("hidden") == "1"
                services.persona_visibility_set(project=project, hidden=hidden)
                messages.success(
                    request, "The persona cue is now " + ("hidden from" if hidden else "shown to") + " annotators."
                )
            else:
                raise Http404("Unknown action.")
        except (SetupError, ValueError, KeyError) as exc:
            messages.error(request, str(exc))
        return redirect(back)


class WorkshopCreateView(ResearcherRequiredMixin, View):
    template_name = "annotation/judge_validation/workshop.html"

    def _context(self, project, errors=None, data=None):
        rubrics = project_rubrics(project)
        return {
            "project": project,
            "from_rubric": rubrics[-1] if rubrics else None,
            "metrics": list(METRIC_QUESTIONS),
            "errors": errors or [],
            "data": data or {},
            "today": date.today().isoformat(),
        }

    def get(self, request, pk):
        project = _validation_project(pk)
        return render(request, self.template_name, self._context(project))

    def post(self, request, pk):
        project = _validation_project(pk)
        context = self._context(project, data=request.POST)
        from_rubric = context["from_rubric"]
        disagreements = []
        for line in (request.POST.get("disagreements") or "").splitlines():
            # One per line: item id, metric, note — e.g. "412, corrective_tone, neutral vs encouraging"
            parts = [p.strip() for p in line.split(",", 2)]
            if len(parts) >= 2 and parts[0].isdigit():
                disagreements.append(
                    {"item": int(parts[0]), "metric": parts[1], "note": parts[2] if len(parts) > 2 else ""}
                )
            elif line.strip():
                context["errors"] = [f"Cannot read the line {line!r}: write item id, metric, note."]
                return render(request, self.template_name, context, status=400)
        try:
            workshop = services.workshop_record(
                project=project,
                from_rubric=from_rubric,
                held_on=date.fromisoformat(request.POST.get("held_on") or date.today().isoformat()),
                participants=request.POST.get("participants", ""),
                notes=request.POST.get("notes", ""),
                disagreements=disagreements,
                guideline=request.POST.get("guideline") or from_rubric.guideline,
                changed_metrics=request.POST.getlist("changed_metrics"),
                judge_prompt=request.POST.get("judge_prompt") or None,
                by=request.user,
            )
        except (SetupError, ValueError) as exc:
            context["errors"] = [str(exc)]
            return render(request, self.template_name, context, status=400)
        messages.success(request, f"Workshop recorded; {workshop.to_rubric.label} is the new rubric version.")
        return redirect(reverse("annotation:judge-validation", args=[project.pk]) + f"?rubric={workshop.to_rubric_id}")
