"""`manage.py run_audit AUDIT_ID | --config FILE [--wait] [--inline]`: launch (or resume) an audit.

`--config` creates the audit from a YAML/JSON file first — or, when an audit was already created from a
file with the same content (its hash, over the parsed values, so key order and comments do not count),
resumes that audit instead; `--new` always creates another. The file:

    name: Demo audit
    tutors: [sim-fair-tutor, sim-biased-tutor]     # endpoint names (or ids)
    student: sim-student
    judge: sim-judge
    selection: {domains: [mathematics], count: 20, seed: 0}
    conditions: {control: true, explicit_dimensions: [first_language, gender]}
    seed: 0
    t_max: 10

By default the audit goes to the Celery workers; `--wait` shows a progress bar until it is done.
`--inline` runs it in this process instead (no worker needed) — what `make demo` does for its audit.
Both end with the run's outcome as the run page states it (finished, finished with failures, failed); an
audit whose every dialogue failed exits non-zero.
Resuming a finished audit sends nothing and leaves its launch and finish times as they were.

`run_audit AUDIT_ID --rejudge [--inline]` re-judges the audit's unparsable and failed judge turns
(tutor turns of finished dialogues) with its judge and rubric, asking afresh for every answer the
ledger recorded unparsable; on the workers by default, in this process with `--inline`.

`run_audit AUDIT_ID --rubric TEMPLATE_ID [--judge ENDPOINT_ID] [--inline]` judges every tutor turn of the
audit's finished dialogues under another rubric version (a judge_rubric template), by the audit's judge or
the endpoint given — through the Batch API when that endpoint is batch-capable. The scores are stored
under that rubric beside the audit's own. Inline, it prints how the run ended (done, done with failures,
failed) and the cause in the provider's words.
"""

import hashlib
import json
import time
from pathlib import Path

import yaml
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from tqdm import tqdm

from audits.models import Audit, ModelEndpoint, PromptTemplate
from audits.run_outcome import FAILED, run_outcome
from audits.run_outcome import LABELS as OUTCOME_LABELS
from audits.selectors.endpoints import endpoint_by_reference
from audits.selectors.judge_runs import judge_run_view
from audits.selectors.run_pages import audit_dialogue_count
from audits.selectors.runs import audit_for_config_hash, audit_progress
from audits.services.audit_lifecycle import (
    audit_create_from_design,
    audit_dialogues_create,
    audit_launch,
    audit_resume,
    audit_resume_inline,
    audit_sweep,
)
from audits.services.dialogue_batches import audit_run_inline
from audits.services.judge_runs import audit_rejudge_open, audit_rejudge_run
from audits.services.judging import audit_turns_rejudge, audit_turns_rejudge_run
from edufair_web.json_input import MAX_DEPTH, loads

FINAL = {Audit.Status.FINISHED, Audit.Status.CANCELLED}


def _endpoint(ref) -> ModelEndpoint:
    found = endpoint_by_reference(ref)
    if found is None:
        raise CommandError(f"no model endpoint named {ref!r}")
    return found


def config_hash(config: dict) -> str:
    """SHA-256 of the config's content as canonical JSON (sorted keys, no whitespace)."""
    canonical = json.dumps(config, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def config_load(path: Path):
    """The config file's content, JSON or YAML, nested at most json_input.MAX_DEPTH deep (the importers' rule);
    YAML's depth is counted on the parser's events, before PyYAML's recursive constructor builds anything."""
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            return loads(text)
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise ValueError(f"the YAML is nested too deeply (more than {MAX_DEPTH} levels)")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise CommandError(f"cannot read {path}: {exc}") from None


def audit_from_config(path: Path, user=None, *, new: bool = False) -> tuple[Audit, bool]:
    """The audit created from a config with this content (resumed: False), or a new one (True)."""
    config = config_load(path)
    if not isinstance(config, dict):
        raise CommandError(f"{path}: expected a mapping of settings")
    digest = config_hash(config)
    if not new:
        existing = audit_for_config_hash(config_hash=digest)
        if existing is not None:
            return existing, False
    required = {"name", "tutors", "student", "judge", "selection", "conditions"}
    missing = sorted(required - set(config or {}))
    if missing:
        raise CommandError(f"{path}: missing {', '.join(missing)}")
    options = {k: config[k] for k in ("seed", "t_max", "answer_precheck", "max_reasks", "batch_size") if k in config}
    if config.get("check"):
        options["check_endpoint"] = _endpoint(config["check"])
    try:
        audit = audit_create_from_design(
            name=config["name"],
            description=config.get("description", ""),
            tutors=[_endpoint(t) for t in config["tutors"]],
            student_endpoint=_endpoint(config["student"]),
            judge_endpoint=_endpoint(config["judge"]),
            selection=config["selection"],
            choice=config["conditions"],
            created_by=user,
            config_hash=digest,
            **options,
        )
    except (ValueError, TypeError) as exc:
        raise CommandError(str(exc)) from None
    return audit, True


class Command(BaseCommand):
    help = "Launch or resume an audit (by id, or created from --config FILE); --wait shows progress until done."

    def add_arguments(self, parser):
        parser.add_argument("audit_id", nargs="?", type=int)
        parser.add_argument(
            "--config", type=Path, help="YAML or JSON file describing the audit (resumed if created from it before)."
        )
        parser.add_argument("--new", action="store_true", help="With --config: create another audit even so.")
        parser.add_argument("--wait", action="store_true", help="Block with a progress bar until the audit ends.")
        parser.add_argument("--inline", action="store_true", help="Run in this process instead of on the workers.")
        parser.add_argument("--poll", type=float, default=1.0, help="Seconds between progress checks.")
        parser.add_argument(
            "--rejudge", action="store_true", help="Re-judge the audit's unparsable and failed turns instead."
        )
        parser.add_argument(
            "--rubric", type=int, help="Judge the audit's turns under this judge_rubric template (its id) instead."
        )
        parser.add_argument("--judge", type=int, help="With --rubric: the judge endpoint (id); default the audit's.")

    def handle(
        self, *args, audit_id, config, wait, inline, poll, rejudge=False, new=False, rubric=None, judge=None, **options
    ):
        if bool(audit_id) == bool(config):
            raise CommandError("give an AUDIT_ID or --config FILE (one of them)")
        if (rejudge or rubric) and config:
            raise CommandError("--rejudge and --rubric take an AUDIT_ID")
        if judge and not rubric:
            raise CommandError("--judge goes with --rubric")
        created = False
        if config:
            audit, created = audit_from_config(config, new=new)
        else:
            try:
                audit = Audit.objects.get(pk=audit_id)
            except Audit.DoesNotExist:
                raise CommandError(f"no audit {audit_id}") from None
        resumed = (
            f" (resumed: created from this config on {audit.created_at:%Y-%m-%d %H:%M})"
            if config and not created
            else ""
        )
        self.stdout.write(
            f"Audit {audit.pk}: {audit.name}" + (" [simulation]" if audit.uses_simulation else "") + resumed
        )
        if rejudge:
            self._rejudge(audit, inline=inline)
            return
        if rubric:
            self._judge_under(audit, rubric=rubric, judge=judge, inline=inline)
            return
        if inline:
            audit_dialogues_create(audit=audit)
            total = audit_dialogue_count(audit=audit)
            with tqdm(total=total, desc="dialogues", unit="dlg", file=self.stderr._out) as bar:

                def tick():
                    progress = audit_progress(audit=audit)
                    bar.n = progress["done"] + progress["failed"] + progress["cancelled"]
                    bar.refresh()

                if audit.status == Audit.Status.PAUSED:
                    audit_resume_inline(audit=audit)
                status = audit_run_inline(audit=audit, progress=tick)
                tick()
            self._summary(audit, status)
            return
        if audit.status in (Audit.Status.DRAFT, Audit.Status.FINISHED):
            batches = audit_launch(audit=audit)
        elif audit.status == Audit.Status.PAUSED:
            batches = audit_resume(audit=audit)
        elif audit.status == Audit.Status.RUNNING:
            batches = audit_sweep(audit_id=audit.pk)
        else:
            raise CommandError(f"audit {audit.pk} is {audit.status}")
        self.stdout.write(f"{batches} batch(es) sent to the workers.")
        if not wait:
            return
        audit.refresh_from_db()
        progress = audit_progress(audit=audit)
        with tqdm(total=progress["total"], desc="dialogues", unit="dlg", file=self.stderr._out) as bar:
            while True:
                audit.refresh_from_db()
                progress = audit_progress(audit=audit)
                bar.n = progress["done"] + progress["failed"] + progress["cancelled"]
                bar.set_postfix(calls=progress["calls_sent"], failed=progress["failed"])
                bar.refresh()
                if audit.status in FINAL or audit.status == Audit.Status.PAUSED:
                    break
                time.sleep(poll)
        self._summary(audit, audit.status)

    def _rejudge(self, audit: Audit, *, inline: bool) -> None:
        if inline:
            counts = audit_turns_rejudge_run(audit_id=audit.pk)
            unscored = counts["unparsable"] + counts["failed"]
            outcome = "done" if not unscored else "failed" if not counts["scored"] else "done with failures"
            self.stdout.write(
                f"Re-judged {counts['turns']} turns: {counts['scored']} scored, {counts['unparsable']} unparsable, "
                f"{counts['failed']} failed; {counts['calls_sent']} calls sent, {counts['calls_cached']} reused"
                f"{': ' + outcome if counts['turns'] else ''}."
            )
            return
        try:
            with transaction.atomic():
                queued = audit_turns_rejudge(audit=audit)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Re-judging {queued} unparsable and failed turns on the workers.")

    def _judge_under(self, audit: Audit, *, rubric: int, judge: int | None, inline: bool) -> None:
        try:
            template = PromptTemplate.objects.get(pk=rubric)
        except PromptTemplate.DoesNotExist:
            raise CommandError(f"no prompt template {rubric}") from None
        endpoint = None
        if judge:
            try:
                endpoint = ModelEndpoint.objects.get(pk=judge)
            except ModelEndpoint.DoesNotExist:
                raise CommandError(f"no model endpoint {judge}") from None
        try:
            run = audit_rejudge_open(audit=audit, judge_template=template, judge_endpoint=endpoint)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        how = "through the Batch API" if run.via_batch else "online"
        if not inline:
            self.stdout.write(f"Judging {run.total} turns under {template} {how} on the workers (run {run.pk}).")
            return
        audit_rejudge_run(run_id=run.pk)
        run.refresh_from_db()
        how = "through the Batch API" if run.via_batch else "online"  # online when it fell back to direct calls
        shown = judge_run_view(run)
        self.stdout.write(
            f"Processed {run.judged} of {run.total} turns under {template} {how}, {run.scored} scored, "
            f"{run.calls_sent} calls sent, {run.calls_cached} reused: {shown['status_label']}."
        )
        if shown["cause"]:
            self.stdout.write(f"Cause: {shown['cause']}")
        if run.status == run.Status.FAILED:
            raise CommandError(f"judging run {run.pk} failed: no turn was scored")

    def _summary(self, audit: Audit, status: str) -> None:
        """How the run ended (audits.run_outcome), as the run page says it: an audit whose every dialogue
        failed reads "failed", never "finished", and the command then exits non-zero."""
        progress = audit_progress(audit=audit)
        outcome = run_outcome(status, done=progress["done"], failed=progress["failed"])
        self.stdout.write(
            f"Audit {audit.pk} {OUTCOME_LABELS.get(outcome, outcome)}: {progress['done']} done, "
            f"{progress['failed']} failed, {progress['calls_sent']} calls sent, "
            f"{progress['calls_reused']} reused from the ledger, "
            f"{progress['turns_unparsable']} unparsable judgements, cost {progress['cost']:.4f}."
        )
        if outcome == FAILED:
            groups = progress["failure_groups"]
            cause = f" (first cause: {groups[0]['cause'][:300]})" if groups else ""
            raise CommandError(
                f"audit {audit.pk} failed: every one of its {progress['failed']} dialogues failed{cause}"
            )
