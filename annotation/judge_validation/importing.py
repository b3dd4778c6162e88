"""Import of a published human-labelled file (MRBench V1/V2, BEA 2025) as a judge-validation project.

The file is read by `mrbench`. The project has one item per tutor response, the file's labels as the consensus (gold
labels), and what the file lacks and what it warned about kept in the project's options for the page, the API and the
command to state.

The file's labels are single labels per response: there is no human–human α, so the report gives no pass on
them (it says the human reliability is unknown)."""

from __future__ import annotations

from django.db import transaction

from annotation.judge_validation import mrbench
from annotation.judge_validation import rubric as rubric_spec
from annotation.judge_validation.audit_source import default_judge_template
from annotation.judge_validation.mrbench import MRBenchError, ParsedFile
from annotation.judge_validation.services import rubric_version_for_template
from annotation.models import AnnotationProject, GoldLabel, Item
from annotation.services.projects import project_create, question_create
from edufair_web.record_bounds import RecordTooLarge, json_list_check
from edufair_web.upload_limits import record_limit

__all__ = ["MRBenchError", "labelled_file_import", "judge_input"]

NOT_GIVEN_PROBLEM = "(not given in the source file: read the problem from the dialogue)"
NOT_GIVEN_ANSWER = "(not given in the source file)"


def judge_input(response: mrbench.ImportedResponse) -> dict:
    """What the judge's prompt reads for an imported response: placeholders ("Not Available") never reach
    it, and a worked solution goes to the solution field only — the answer field gets the final answer
    when the solution states one on its last line."""
    problem = NOT_GIVEN_PROBLEM
    if response.topic:
        problem = f"{NOT_GIVEN_PROBLEM}\nTopic: {response.topic}"
    if response.preamble:
        problem = f"{response.preamble}\n{problem}"
    return {
        "problem": problem,
        "answer": response.answer or NOT_GIVEN_ANSWER,
        "solution": response.solution or NOT_GIVEN_ANSWER,
        "history": [list(turn) for turn in response.history],
        "turn_text": response.response,
    }


def import_summary(parsed: ParsedFile, filename: str) -> dict:
    return {
        "schema": parsed.schema,
        "schema_name": mrbench.SCHEMA_NAMES[parsed.schema],
        "filename": filename,
        "n_records": parsed.n_records,
        "n_responses": len(parsed.responses),
        "dimensions": parsed.dimensions,
        "missing_dimensions": parsed.missing_dimensions,
        "unlabelled_metrics": parsed.unlabelled_metrics,
        "repeated_conversations": parsed.repeated_conversations,
        "warnings": parsed.warnings,
    }


@transaction.atomic
def labelled_file_import(*, data: bytes | str, filename: str = "", name: str = "", by=None):
    """A judge-validation project whose items are the file's tutor responses and whose consensus is the
    file's labels (gold labels). Add judges to it as to any validation project. All or nothing."""
    try:  # before the file is parsed: a parsed record takes several times its text
        json_list_check(data, record_limit())
    except RecordTooLarge as exc:
        raise MRBenchError(str(exc)) from None
    parsed = mrbench.parse_labelled_file(data)
    rubric = rubric_version_for_template(template=default_judge_template(), by=by)
    label = "BEA 2025" if parsed.schema == mrbench.BEA2025 else "MRBench"
    project = project_create(
        name=(name or f"Judge validation on {filename or f'a {label} file'} (imported labels)")[:200],
        description=f"{len(parsed.responses)} tutor responses with their published human labels ({label}), "
        "mapped to the rubric; no new annotation.",
        kind=AnnotationProject.Kind.JUDGE_VALIDATION,
        subjects=["mathematics"],
        by=by,
    )
    project.options = {
        "consensus": "gold",
        "imported_from": parsed.schema,
        "filename": filename,
        "hide_persona_cue": False,
        "rubric_version_id": rubric.pk,
        "import": import_summary(parsed, filename),
    }
    project.save(update_fields=["options"])
    questions = {spec["key"]: question_create(project=project, **spec) for spec in rubric_spec.question_specs()}
    items = Item.objects.bulk_create(
        [
            Item(
                project=project,
                external_id=r.external_id,
                payload={
                    "text": f"Topic: {r.topic}" if r.topic else "",
                    "turns": [{"role": role, "text": text} for role, text in [*r.history, ("tutor", r.response)]],
                    "highlight": len(r.history),
                },
                subject="mathematics",
                category="",
                modality=Item.Modality.MULTI_TURN if r.history else Item.Modality.SINGLE_TURN,
                metadata={
                    "role": "imported",
                    "source": parsed.schema,
                    "conversation_id": r.conversation_id,
                    "record": r.record,
                    "split": r.split,
                    "data": r.data,
                    "tutor": r.tutor,
                    "source_labels": r.source_labels,
                    "labels": r.labels,
                    "unmapped": r.unmapped,
                    "judge_input": judge_input(r),
                },
            )
            for r in parsed.responses
        ]
    )
    gold = []
    for item, r in zip(items, parsed.responses, strict=True):
        for metric, value in r.labels.items():
            dimensions = next(row["dimensions"] for row in mrbench.MAPPING if row["metric"] == metric)
            source = ", ".join(f"{d}={r.source_labels[d]}" for d in dimensions if d in r.source_labels)
            gold.append(
                GoldLabel(
                    item=item,
                    question=questions[metric],
                    value=value,
                    rationale=f"Imported from {label} ({r.external_id}): {source}",
                )
            )
    GoldLabel.objects.bulk_create(gold)
    return project
