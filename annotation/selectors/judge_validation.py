"""Reads of judge validation: its projects' labels and report, the label planner's inputs, and an audit's judge status.

They are: a validation project's labelling stage and sampled items; the human labels, consensus and judge scores of a
validation project under one rubric version, assembled into `annotation.judge_validation.report`'s report; the (judge,
consensus) pairs and sample design the label planner reads; the judge's status for an audit — "judge validated on rubric
vX (date, N turns, per-metric verdicts)" or "not validated"; and an audit's human subset (the settled consensus of its
validation project's sampled turns, with their inclusion probabilities) for judge-corrected contrasts.

The audits app asks `judge_validation_status` and `human_subset` (through `audits.selectors.judge_validation`)
for its pages, exports and reports, so this module reads annotation's tables only and never imports the audits
app.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from django.urls import reverse

from annotation.judge_validation import mrbench, validity
from annotation.judge_validation import report as report_math
from annotation.judge_validation.rubric import SCALE
from annotation.models import (
    NOT_APPLICABLE,
    Adjudication,
    AnnotationProject,
    GoldLabel,
    JudgeScore,
    JudgeValidation,
    Label,
    Phase,
    RubricVersion,
    RubricWorkshop,
    Stage,
)
from annotation.models.validation import DEFAULT_HUMAN_ALPHA_MIN, DEFAULT_JUDGE_AGREEMENT_MIN
from annotation.selectors.agreement_report import annotator_pseudonyms

JUDGE_NOT_VALIDATED = "not validated"
CONSENSUS_FROM_GOLD = "gold"  # imported sets: the source's label is the consensus (options["consensus"])
ROLE_MAIN = "sample"  # Item.metadata["role"] of a sampled turn (the training turns are "training")


# --- The project's stage and sample ---------------------------------------------------------------


def validation_stage(project: AnnotationProject) -> Stage | None:
    """The project's labelling stage (None for a project imported from a labelled file, which has none)."""
    return project.stages.order_by("order").first()


def sampled_items(project: AnnotationProject):
    """The sampled turns' items in sample order (the training turns are not among them)."""
    return project.items.filter(metadata__role=ROLE_MAIN).order_by("id")


# --- Rubric versions of a project -----------------------------------------------------------------


def project_rubrics(project: AnnotationProject) -> list[RubricVersion]:
    """The project's rubric versions in order: the one it started with, then each workshop's."""
    first = RubricVersion.objects.filter(pk=project.options.get("rubric_version_id")).first()
    if first is None:
        return []
    chain = [first]
    workshops = {w.from_rubric_id: w for w in RubricWorkshop.objects.filter(project=project, to_rubric__isnull=False)}
    while chain[-1].pk in workshops and len(chain) < 100:
        chain.append(workshops[chain[-1].pk].to_rubric)
    return chain


def label_stages(project: AnnotationProject, rubric: RubricVersion) -> dict[str, Stage | None]:
    """Which stage holds the human labels of each metric under ``rubric``: the first stage, unless a
    workshop on the way to ``rubric`` changed the metric and had it re-labelled."""
    first_stage = project.stages.order_by("order").first()
    metrics = list(project.questions.values_list("key", flat=True))
    sources: dict[str, Stage | None] = {metric: first_stage for metric in metrics}
    for version in project_rubrics(project):
        if version.pk == rubric.pk:
            break
        workshop = (
            RubricWorkshop.objects.filter(project=project, from_rubric=version, to_rubric__isnull=False)
            .select_related("relabel_stage", "to_rubric")
            .first()
        )
        if workshop and workshop.relabel_stage is not None:
            for metric in workshop.to_rubric.changed_metrics:
                sources[metric] = workshop.relabel_stage
    return sources


# --- The report -----------------------------------------------------------------------------------


def sample_item_ids(project: AnnotationProject) -> list[int]:
    return list(
        project.items.filter(metadata__role__in=["sample", "imported"]).order_by("id").values_list("id", flat=True)
    )


def _human_labels(stage: Stage, metric: str, items: set[int]) -> tuple[dict, dict]:
    pre: dict[int, dict[int, str]] = defaultdict(dict)
    post: dict[int, dict[int, str]] = defaultdict(dict)
    rows = Label.objects.filter(
        assignment__stage=stage,
        assignment__submitted_at__isnull=False,
        phase=Phase.MAIN,
        question__key=metric,
        assignment__item_id__in=items,
        unsure=False,
    ).values_list("assignment__item_id", "assignment__annotator_id", "round", "value")
    for item, annotator, round_, value in rows:
        (post if round_ == Label.Round.POST else pre)[item][annotator] = value
    final = {item: {**by_annotator, **post.get(item, {})} for item, by_annotator in pre.items()}
    return dict(pre), final


def _settled(
    project: AnnotationProject, stage: Stage | None, metric: str, items: set[int]
) -> dict[int, tuple[str, datetime | None]]:
    """Item → its settled consensus value on ``metric`` and when it was settled."""
    if project.options.get("consensus") == CONSENSUS_FROM_GOLD:
        rows = GoldLabel.objects.filter(item_id__in=items, question__key=metric).values_list("item_id", "value")
        return {item: (value, None) for item, value in rows}
    if stage is None:
        return {}
    rows = (
        Adjudication.objects.filter(stage=stage, question__key=metric, item_id__in=items)
        .exclude(final_value="")
        .values_list("item_id", "final_value", "created_at")
    )
    return {item: (value, at) for item, value, at in rows}


def _consensus(project: AnnotationProject, stage: Stage | None, metric: str, items: set[int]) -> dict[int, str]:
    return {item: value for item, (value, _) in _settled(project, stage, metric, items).items()}


def _on_scale(value: str) -> float | None:
    """A label value as a number on the rubric's scale; None for "n/a" (and anything off the scale)."""
    return float(value) if value in SCALE else None


def judge_values(validation: JudgeValidation, metric: str) -> dict[int, str]:
    """Item → the judge's value as a label value ("n/a" for −1); unusable scores are left out."""
    rows = JudgeScore.objects.filter(validation=validation, metric=metric, status=JudgeScore.Status.OK).values_list(
        "item_id", "value"
    )
    return {item: NOT_APPLICABLE if value == -1 else str(value) for item, value in rows if value is not None}


def transcript_links(project: AnnotationProject) -> dict[int, str]:
    return {item: source["link"] for item, source in item_sources(project).items() if source["link"]}


def item_sources(project: AnnotationProject) -> dict[int, dict]:
    """Item → where it comes from, as the report names it: the source id, the conversation (an audit's
    dialogue, or the imported file's conversation id, record and Split), the tutor, and a link to its
    transcript (the audit's dialogue page, or the imported item shown on the report page, ``?item=ID``)."""
    found = {}
    for item_id, external_id, metadata in project.items.values_list("id", "external_id", "metadata"):
        if metadata.get("dialogue_id"):
            url = reverse("audits:dialogue-detail", args=[metadata["dialogue_id"]])
            link = f"{url}#turn-{metadata.get('turn_index', 0)}"
            conversation = f"dialogue {metadata['dialogue_id']}, turn {metadata.get('turn_index', 0)}"
        elif metadata.get("role") == "imported":
            link = reverse("annotation:judge-validation", args=[project.pk]) + f"?item={item_id}"
            conversation = str(metadata.get("conversation_id", ""))
        else:
            link, conversation = "", ""
        found[item_id] = {
            "external_id": external_id,
            "conversation_id": conversation,
            "record": metadata.get("record"),
            "split": metadata.get("split", ""),
            "tutor": metadata.get("tutor", ""),
            "link": link,
        }
    return found


def imported_section(project: AnnotationProject) -> dict | None:
    """For a project imported from a labelled file: what the file was and lacked, the mapping table, and
    the counts of its labels per dimension, per tutor and per rubric metric, counted from the stored items."""
    summary = project.options.get("import")
    if not summary and project.options.get("consensus") != CONSENSUS_FROM_GOLD:
        return None
    rows = project.items.filter(metadata__role="imported").values_list("metadata", flat=True)
    counts = mrbench.label_counts(list(rows))
    return {
        **(summary or {}),
        "mapping": mrbench.MAPPING,
        "not_in_rubric": list(mrbench.NOT_IN_RUBRIC),
        "counts": counts,
    }


def item_strata(project: AnnotationProject) -> dict[int, dict[str, str]]:
    """Item → its tutor and condition by name, where the item carries them (the judge's direction per stratum)."""
    conditions = {
        row.get("condition_id"): row.get("condition")
        for row in project.options.get("sample", {}).get("allocation", [])
        if row.get("condition")
    }
    found = {}
    for item_id, metadata in project.items.values_list("id", "metadata"):
        condition = conditions.get(metadata.get("condition_id")) or metadata.get("condition") or ""
        found[item_id] = {"tutor": str(metadata.get("tutor") or ""), "condition": str(condition)}
    return found


def _name_annotators(metrics: list[dict], pseudonyms: dict[int, str]) -> None:
    """The layers name annotators by their pseudonyms (as the project's report does), never by user id."""

    def name(annotator) -> str:
        return pseudonyms.get(int(annotator), f"user-{annotator}")

    for row in metrics:
        for annotator in row["layers"]["human_ceiling"]["per_annotator"]:
            annotator["annotator"] = name(annotator["annotator"])
        for judge_layers in row["layers"]["judges"].values():
            alt = judge_layers["judge_vs_humans"]["alt_test"]
            for annotator in alt["per_annotator"]:
                annotator["annotator"] = name(annotator["annotator"])
            alt["unmet"] = [_pseudonymised(text, pseudonyms) for text in alt["unmet"]]


def _pseudonymised(text: str, pseudonyms: dict[int, str]) -> str:
    """The alt-test's unmet requirement with "annotator 12" read as the annotator's pseudonym."""
    for user_id, pseudonym in pseudonyms.items():
        text = text.replace(f"annotator {user_id} ", f"annotator {pseudonym} ").replace(
            f", so {user_id} is", f", so {pseudonym} is"
        )
    return text


def validation_report(
    project: AnnotationProject,
    *,
    rubric: RubricVersion | None = None,
    validations: list | None = None,
    rule: str = report_math.DEFAULT_VERDICT_RULE,
    epsilon: float = validity.EPSILON_EXPERT,
    layers: bool = True,
) -> dict:
    """The report of every judge validated on the project under ``rubric`` (default: the latest version
    that has a validation), side by side on the same human labels, with verdicts under the named ``rule`` and,
    unless ``layers`` is False, the three validity layers per metric (the alt-test at ``epsilon``)."""
    if rubric is None:
        latest = project.judge_validations.select_related("rubric").order_by("-rubric__version", "-id").first()
        rubric = latest.rubric if latest else (project_rubrics(project) or [None])[-1]
    if rubric is None:
        raise ValueError("This project has no rubric version.")
    if validations is None:
        validations = list(project.judge_validations.filter(rubric=rubric).order_by("id"))
    first = validations[0] if validations else None
    thresholds = report_math.Thresholds(
        human_alpha_min=first.human_alpha_min if first else DEFAULT_HUMAN_ALPHA_MIN,
        judge_agreement_min=first.judge_agreement_min if first else DEFAULT_JUDGE_AGREEMENT_MIN,
    )
    items = set(sample_item_ids(project))
    stages = label_stages(project, rubric)
    imported = imported_section(project)
    unlabelled = set((imported or {}).get("unlabelled_metrics", []))
    strata = item_strata(project) if layers else {}
    metrics = []
    for metric in project.questions.order_by("position").values_list("key", flat=True):
        stage = stages.get(metric)
        pre, post = _human_labels(stage, metric, items) if stage is not None else ({}, {})
        labels = report_math.MetricLabels(
            metric=metric,
            scale=SCALE,
            human_pre=pre,
            human_post=post,
            consensus=_consensus(project, stage, metric, items),
        )
        judges = {str(v.pk): judge_values(v, metric) for v in validations}
        missing = ""
        if metric in unlabelled:
            missing = (
                f"the imported file has no usable {mrbench.METRIC_DIMENSIONS[metric]} labels: left out of the verdicts"
            )
        row = report_math.metric_report(labels, judges, thresholds, missing, rule)
        row["label_stage"] = stage.pk if stage is not None else None
        if layers:
            kappas = {key: section["kappa_linear"] for key, section in row["judges"].items()}
            row["layers"] = validity.metric_layers(
                labels, judges, kappas, strata={i: strata.get(i, {}) for i in items}, epsilon=epsilon
            )
        metrics.append(row)
    if layers:
        _name_annotators(metrics, annotator_pseudonyms(project))
    sources = item_sources(project)
    for row in metrics:
        for section in row["judges"].values():
            for difference in section["largest_differences"]:
                difference["source"] = sources.get(difference["item"], {})
    return {
        "project": {"id": project.pk, "name": project.name, "audit_id": project.source_audit_id},
        "rubric": {"id": rubric.pk, "label": rubric.label, "judge_template_id": rubric.judge_template_id},
        "thresholds": {
            "human_alpha_min": thresholds.human_alpha_min,
            "judge_agreement_min": thresholds.judge_agreement_min,
        },
        "verdict_rule": report_math.verdict_rule_info(rule),
        "alt_test": {
            "epsilon": epsilon,
            "epsilon_text": validity.epsilon_text(epsilon),
            "epsilon_defaults": validity.EPSILON_MEANINGS,
        },
        "verdict_rules": [report_math.verdict_rule_info(name) for name in report_math.VERDICT_RULES],
        "n_sample": len(items),
        "consensus_source": project.options.get("consensus", "adjudication"),
        "judges": [
            {
                "key": str(v.pk),
                "id": v.pk,
                "name": v.judge_name,
                "endpoint_id": v.judge_endpoint_id,
                "status": v.status,
                "recorded_at": v.recorded_at.isoformat() if v.recorded_at else None,
                "calls_sent": v.calls_sent,
                "calls_cached": v.calls_cached,
            }
            for v in validations
        ],
        "metrics": metrics,
        "best_judge": report_math.best_judge_per_metric(metrics),
        "imported": imported,
    }


# --- The judge's status on an audit ---------------------------------------------------------------


@dataclass(frozen=True)
class JudgeValidationStatus:
    validated: bool
    text: str
    rubric_label: str = ""
    recorded_at: str = ""
    n_turns: int = 0
    verdicts: dict[str, str] = field(default_factory=dict)  # metric → pass | fail | undecided, under ``rule``
    rule: str = report_math.DEFAULT_VERDICT_RULE  # the verdict rule the verdicts follow
    validation_id: int | None = None
    project_id: int | None = None
    on_audit_id: int | None = None

    @property
    def failed_metrics(self) -> list[str]:
        """Metrics whose judge did not pass: tables mark them."""
        return [metric for metric, outcome in self.verdicts.items() if outcome != report_math.PASS]

    def __str__(self) -> str:
        return self.text


def _template_id(rubric_version) -> int | None:
    if rubric_version is None:
        return None
    if isinstance(rubric_version, RubricVersion):
        return rubric_version.judge_template_id
    return getattr(rubric_version, "pk", rubric_version)  # a PromptTemplate, or its id


def judge_validation_status(
    audit, judge_endpoint=None, rubric_version=None, rule: str = report_math.DEFAULT_VERDICT_RULE
) -> JudgeValidationStatus:
    """Whether the audit's judge (endpoint + rubric version; both default to the audit's) has a recorded
    validation, with its per-metric verdicts under the named verdict ``rule`` (a recording made before the
    rules had names is read under it by `report.recorded_outcome`). A validation on this audit is
    preferred; one on another audit with the same judge and rubric version counts too, and the text says
    which audit it was and names the rule."""
    endpoint_id = judge_endpoint.pk if judge_endpoint is not None else audit.judge_endpoint_id
    template_id = _template_id(rubric_version) or audit.judge_template_id
    candidates = JudgeValidation.objects.filter(
        judge_endpoint_id=endpoint_id,
        rubric__judge_template_id=template_id,
        status=JudgeValidation.Status.RECORDED,
    ).select_related("rubric")
    found = candidates.filter(audit_id=audit.pk).order_by("-recorded_at").first() or (
        candidates.order_by("-recorded_at").first()
    )
    if found is None:
        return JudgeValidationStatus(validated=False, text=JUDGE_NOT_VALIDATED)
    result = found.result or {}
    agreement_min = (result.get("thresholds") or {}).get("judge_agreement_min", found.judge_agreement_min)
    verdicts = {
        metric: report_math.recorded_outcome(row, agreement_min, rule)[0]
        for metric, row in (result.get("metrics") or {}).items()
    }
    recorded = found.recorded_at.date().isoformat() if found.recorded_at else ""
    by_outcome = defaultdict(list)
    for metric, outcome in verdicts.items():
        by_outcome[outcome].append(metric)
    parts = [f"{outcome}: {', '.join(metrics)}" for outcome, metrics in sorted(by_outcome.items())]
    where = "" if found.audit_id == audit.pk else f", on audit #{found.audit_id}" if found.audit_id else ""
    text = (
        f"judge validated on {found.rubric.label} ({recorded}, {result.get('n_turns', 0)} turns{where}; "
        + f"verdicts by the {rule} rule: "
        + "; ".join(parts)
        + ")"
    )
    return JudgeValidationStatus(
        validated=True,
        text=text,
        rubric_label=found.rubric.label,
        recorded_at=recorded,
        n_turns=int(result.get("n_turns", 0)),
        verdicts=verdicts,
        rule=rule,
        validation_id=found.pk,
        project_id=found.project_id,
        on_audit_id=found.audit_id,
    )


# --- What the label planner reads -----------------------------------------------------------------


def judge_consensus_pairs(
    project: AnnotationProject, rubric: RubricVersion, validation: JudgeValidation
) -> dict[str, list[tuple[float, float]]]:
    """Metric → (judge value, human consensus) per sampled turn where both are on the scale ("n/a" and
    unusable scores left out), in item order: the validation's measure of the judge's error."""
    items = set(sample_item_ids(project))
    stages = label_stages(project, rubric)
    pairs: dict[str, list[tuple[float, float]]] = {}
    for metric in project.questions.order_by("position").values_list("key", flat=True):
        stage = stages.get(metric)
        consensus = _consensus(project, stage, metric, items) if stage is not None else {}
        judge = judge_values(validation, metric)
        found = []
        for item in sorted(consensus):
            human, judged = _on_scale(consensus[item]), _on_scale(judge.get(item, ""))
            if human is not None and judged is not None:
                found.append((judged, human))
        pairs[metric] = found
    return pairs


@dataclass(frozen=True)
class SampleDesign:
    """How the project's turns were sampled, as the planner needs it: the audit's domains, and per
    (tutor, condition) — one side of a contrast — the inclusion probabilities of its sampled turns."""

    domains: tuple[str, ...]
    side_probabilities: dict[tuple, list[float]]


def sample_design(project: AnnotationProject) -> SampleDesign:
    allocation = project.options.get("sample", {}).get("allocation", [])
    domains = tuple(sorted({row["domain"] for row in allocation}))
    sides: dict[tuple, list[float]] = defaultdict(list)
    probability = _allocation_probabilities(project)
    for metadata in sampled_items(project).values_list("metadata", flat=True):
        found = _item_probability(metadata, probability)
        if found is not None:
            condition = metadata.get("condition_id", metadata.get("condition_kind"))
            sides[(metadata.get("tutor_id"), condition)].append(found)
    return SampleDesign(domains=domains, side_probabilities=dict(sides))


def _allocation_probabilities(project: AnnotationProject) -> dict[tuple, float]:
    """(tutor id, domain, condition kind) → chosen / available, for samples recorded before each item carried
    its inclusion probability (they were stratified by condition kind)."""
    found = {}
    for row in project.options.get("sample", {}).get("allocation", []):
        if row.get("available") and "condition_kind" in row and "condition_id" not in row:
            found[(row["tutor_id"], row["domain"], row["condition_kind"])] = row["chosen"] / row["available"]
    return found


def _item_probability(metadata: dict, by_stratum: dict[tuple, float]) -> float | None:
    recorded = metadata.get("inclusion_probability")
    if recorded is not None:
        return float(recorded)
    found = by_stratum.get((metadata.get("tutor_id"), metadata.get("domain"), metadata.get("condition_kind")))
    return None if not found else float(found)


# --- An audit's human subset ----------------------------------------------------------------------


@dataclass(frozen=True)
class HumanSubset:
    """The human truth on an audit's sampled tutor turns: per metric, audit Turn id → (the settled consensus as
    a number on the rubric's scale, the turn's inclusion probability); "n/a" is left out.

    ``labelled_items``: sampled turns with a settled consensus on at least one metric (n/a included);
    ``updated_at``: when the newest consensus was settled."""

    project_id: int
    project_name: str
    rubric_label: str
    labelled_items: int
    updated_at: datetime | None
    values: dict[str, dict[int, tuple[float, float]]]


def audit_validation_project(audit) -> tuple[AnnotationProject, RubricVersion] | None:
    """The audit's judge-validation project and the rubric version whose labels count: the newest project
    built from the audit with a rubric version of the audit's judge template (that version), else the newest
    project built from it (the version it started with); None when there is none."""
    projects = list(
        AnnotationProject.objects.filter(
            kind=AnnotationProject.Kind.JUDGE_VALIDATION, source_audit_id=audit.pk
        ).order_by("-id")
    )
    fallback = None
    for project in projects:
        rubrics = project_rubrics(project)
        matching = next((r for r in rubrics if r.judge_template_id == audit.judge_template_id), None)
        if matching is not None:
            return project, matching
        if fallback is None and rubrics:
            fallback = (project, rubrics[0])
    return fallback


def human_subset(audit) -> HumanSubset | None:
    """The settled consensus of the audit's judge-validation project on its sampled turns (see HumanSubset),
    or None when the audit has no judge-validation project."""
    found = audit_validation_project(audit)
    if found is None:
        return None
    project, rubric = found
    items = list(
        sampled_items(project).filter(source_turn_id__isnull=False).values_list("id", "source_turn_id", "metadata")
    )
    by_stratum = _allocation_probabilities(project)
    turn_of = {item: turn for item, turn, _ in items}
    probability = {item: _item_probability(metadata, by_stratum) for item, _, metadata in items}
    stages = label_stages(project, rubric)
    values: dict[str, dict[int, tuple[float, float]]] = {}
    labelled: set[int] = set()
    newest: datetime | None = None
    for metric in project.questions.order_by("position").values_list("key", flat=True):
        stage = stages.get(metric)
        settled = _settled(project, stage, metric, set(turn_of)) if stage is not None else {}
        values[metric] = {}
        for item, (value, at) in settled.items():
            labelled.add(item)
            if at is not None and (newest is None or at > newest):
                newest = at
            number = _on_scale(value)
            if number is not None and probability[item] is not None:
                values[metric][turn_of[item]] = (number, probability[item])
    return HumanSubset(
        project_id=project.pk,
        project_name=project.name,
        rubric_label=rubric.label,
        labelled_items=len(labelled),
        updated_at=newest,
        values=values,
    )
