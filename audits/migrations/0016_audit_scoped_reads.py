"""Audit-scoped reads: each judge score names its dialogue and audit (an audit's reads start from its own scores),
and an audit's running totals of paid calls and judged turns (the live panel reads them, never the ledger).

The new columns and totals are filled from the rows already stored."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def fill_scores(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "UPDATE audits_turnscore s SET dialogue_id = t.dialogue_id, audit_id = d.audit_id "
            "FROM audits_turn t JOIN audits_dialogue d ON d.id = t.dialogue_id WHERE t.id = s.turn_id"
        )
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # check the new keys now, so the columns can be altered
        return
    TurnScore = apps.get_model("audits", "TurnScore")
    Turn = apps.get_model("audits", "Turn")
    turns = Turn.objects.filter(pk=OuterRef("turn_id"))
    TurnScore.objects.update(
        dialogue_id=Subquery(turns.values("dialogue_id")[:1]),
        audit_id=Subquery(turns.values("dialogue__audit_id")[:1]),
    )


def fill_tallies(apps, schema_editor):
    """Each audit's totals, recounted from its ledger rows and turns (as `audits.services.progress_tally` keeps them)."""
    from django.db.models import Count, F, FloatField, Q, Sum

    LLMCall = apps.get_model("audits", "LLMCall")
    Dialogue = apps.get_model("audits", "Dialogue")
    Turn = apps.get_model("audits", "Turn")
    AuditCallTally = apps.get_model("audits", "AuditCallTally")
    AuditTally = apps.get_model("audits", "AuditTally")
    rows = (
        LLMCall.objects.filter(first_audit__isnull=False)
        .values("first_audit_id", "endpoint_id")
        .annotate(
            n=Count("pk"),
            n_ok=Count("pk", filter=Q(status="ok")),
            n_unparsable=Count("pk", filter=Q(status="unparsable")),
            n_attempts=Sum("attempts"),
            n_prompt=Sum("prompt_tokens"),
            n_completion=Sum("completion_tokens"),
            n_reasoning=Sum("reasoning_tokens"),
            n_billed_prompt=Sum(F("prompt_tokens") * F("price_factor"), output_field=FloatField()),
            n_billed_completion=Sum(F("completion_tokens") * F("price_factor"), output_field=FloatField()),
        )
        .order_by()
    )
    AuditCallTally.objects.bulk_create(
        AuditCallTally(
            audit_id=row["first_audit_id"],
            endpoint_ref=row["endpoint_id"] or 0,
            calls=row["n"],
            ok=row["n_ok"],
            unparsable=row["n_unparsable"],
            attempts=row["n_attempts"] or 0,
            prompt_tokens=row["n_prompt"] or 0,
            completion_tokens=row["n_completion"] or 0,
            reasoning_tokens=row["n_reasoning"] or 0,
            billed_prompt=row["n_billed_prompt"] or 0.0,
            billed_completion=row["n_billed_completion"] or 0.0,
        )
        for row in rows
    )
    tallies = {}
    for row in (
        Dialogue.objects.values("audit_id", "status").annotate(n=Count("pk"), cached=Sum("calls_cached")).order_by()
    ):
        tally = tallies.setdefault(row["audit_id"], AuditTally(audit_id=row["audit_id"]))
        if row["status"] in DIALOGUE_STATUSES:
            setattr(tally, row["status"], row["n"])
        tally.calls_cached += row["cached"] or 0
    for row in (
        Turn.objects.filter(judge_status__in=TURN_STATUSES)
        .values("dialogue__audit_id", "judge_status")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        tally = tallies.setdefault(row["dialogue__audit_id"], AuditTally(audit_id=row["dialogue__audit_id"]))
        setattr(tally, f"turns_{row['judge_status']}", row["n"])
    AuditTally.objects.bulk_create(tallies.values())


# AuditTally, kept by the database on every write to a dialogue or a turn (whatever writes it: a claim, a dialogue
# finishing, a cancel, a retry removing a failed dialogue's turns, re-judging, the admin). Each row adds its counts
# ({counts}: one per column, as 0/1 or a number) to its audit's tally; a removed or changed row takes its old ones
# back (an UPDATE only: the tally is there, unless its audit is being deleted).
DIALOGUE_STATUSES = ("pending", "running", "done", "failed", "cancelled")
TURN_STATUSES = ("ok", "unparsable", "failed")
_COLUMNS = (*DIALOGUE_STATUSES, "calls_cached", *(f"turns_{s}" for s in TURN_STATUSES))
_INT = {"postgresql": "::int", "sqlite": ""}


def _counts(table: str, row: str, vendor: str) -> list[str]:
    cast = _INT[vendor]
    if table == "audits_dialogue":
        found = [f"({row}.status = '{s}'){cast}" for s in DIALOGUE_STATUSES] + [f"{row}.calls_cached"]
        return found + ["0"] * len(TURN_STATUSES)
    return ["0"] * (len(DIALOGUE_STATUSES) + 1) + [f"({row}.judge_status = '{s}'){cast}" for s in TURN_STATUSES]


def _audit_of(table: str, row: str) -> str:
    if table == "audits_dialogue":
        return f"{row}.audit_id"
    return f"(SELECT audit_id FROM audits_dialogue WHERE id = {row}.dialogue_id)"  # noqa: S608 (row: OLD or NEW)


_ADD = (
    "INSERT INTO audits_audittally (audit_id, {columns}) SELECT {audit}, {counts} WHERE {audit} IS NOT NULL "
    "ON CONFLICT (audit_id) DO UPDATE SET {sums};"
)
_REMOVE = "UPDATE audits_audittally SET {less} WHERE audit_id = {audit};"


def _add(table: str, row: str, vendor: str) -> str:
    sums = ", ".join(f"{c} = audits_audittally.{c} + excluded.{c}" for c in _COLUMNS)
    counts = ", ".join(_counts(table, row, vendor))
    return _ADD.format(columns=", ".join(_COLUMNS), audit=_audit_of(table, row), counts=counts, sums=sums)


def _remove(table: str, row: str, vendor: str) -> str:
    less = ", ".join(f"{c} = {c} - {n}" for c, n in zip(_COLUMNS, _counts(table, row, vendor), strict=True))
    return _REMOVE.format(less=less, audit=_audit_of(table, row))


# What a row counts by: an update changing none of these leaves the tally alone (a lease renewed, a text edited).
_WATCHED = {
    "audits_dialogue": ("status", "calls_cached", "audit_id"),
    "audits_turn": ("judge_status", "dialogue_id"),
}
# Which rows count at all (a student's turn has no verdict).
_COUNTED = {"audits_dialogue": "TRUE", "audits_turn": "{row}.judge_status IN ('ok', 'unparsable', 'failed')"}


def _changed(table: str, differs: str) -> str:
    return " OR ".join(f"OLD.{c} {differs} NEW.{c}" for c in _WATCHED[table])


def _postgres_triggers(table: str) -> str:
    name = f"{table}_tally"
    return (
        f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"IF TG_OP <> 'INSERT' THEN {_remove(table, 'OLD', 'postgresql')} END IF; "
        f"IF TG_OP <> 'DELETE' THEN {_add(table, 'NEW', 'postgresql')} END IF; "
        "RETURN NULL; END $$; "
        f"CREATE TRIGGER {name}_insert AFTER INSERT ON {table} "
        f"FOR EACH ROW WHEN ({_COUNTED[table].format(row='NEW')}) EXECUTE FUNCTION {name}(); "
        f"CREATE TRIGGER {name}_delete AFTER DELETE ON {table} "
        f"FOR EACH ROW WHEN ({_COUNTED[table].format(row='OLD')}) EXECUTE FUNCTION {name}(); "
        f"CREATE TRIGGER {name}_update AFTER UPDATE ON {table} "
        f"FOR EACH ROW WHEN ({_changed(table, 'IS DISTINCT FROM')}) EXECUTE FUNCTION {name}();"
    )


def _sqlite_triggers(table: str) -> list[str]:
    name = f"{table}_tally"
    return [
        f"CREATE TRIGGER {name}_insert AFTER INSERT ON {table} WHEN {_COUNTED[table].format(row='NEW')} "
        f"BEGIN {_add(table, 'NEW', 'sqlite')} END;",
        f"CREATE TRIGGER {name}_delete AFTER DELETE ON {table} WHEN {_COUNTED[table].format(row='OLD')} "
        f"BEGIN {_remove(table, 'OLD', 'sqlite')} END;",
        f"CREATE TRIGGER {name}_update AFTER UPDATE ON {table} WHEN {_changed(table, 'IS NOT')} "
        f"BEGIN {_remove(table, 'OLD', 'sqlite')} {_add(table, 'NEW', 'sqlite')} END;",
    ]


def create_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for table in _WATCHED:
        if vendor == "postgresql":
            schema_editor.execute(_postgres_triggers(table))
        elif vendor == "sqlite":
            for statement in _sqlite_triggers(table):
                schema_editor.execute(statement)
        else:
            raise NotImplementedError(f"an audit's tally needs triggers for {vendor}")


def drop_triggers(apps, schema_editor):
    for table in _WATCHED:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"DROP FUNCTION IF EXISTS {table}_tally() CASCADE;")
        else:
            for event in ("insert", "delete", "update"):
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_tally_{event};")


class Migration(migrations.Migration):
    dependencies = [("audits", "0015_merge_leased_jobs_rubric_metrics")]

    operations = [
        migrations.AddField(
            model_name="turnscore",
            name="dialogue",
            field=models.ForeignKey(
                null=True,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="audits.dialogue",
            ),
        ),
        migrations.AddField(
            model_name="turnscore",
            name="audit",
            field=models.ForeignKey(
                null=True,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="audits.audit",
            ),
        ),
        migrations.RunPython(fill_scores, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="turnscore",
            name="dialogue",
            field=models.ForeignKey(
                db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="audits.dialogue"
            ),
        ),
        migrations.AlterField(
            model_name="turnscore",
            name="audit",
            field=models.ForeignKey(
                db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="audits.audit"
            ),
        ),
        migrations.AddIndex(
            model_name="turnscore",
            index=models.Index(fields=["audit", "rubric", "dialogue"], name="turn_score_audit_rubric"),
        ),
        migrations.CreateModel(
            name="AuditCallTally",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "endpoint_ref",
                    models.PositiveIntegerField(
                        default=0, help_text="The endpoint's id (0: none), kept when the endpoint is deleted."
                    ),
                ),
                ("calls", models.BigIntegerField(default=0)),
                ("ok", models.BigIntegerField(default=0)),
                ("unparsable", models.BigIntegerField(default=0)),
                ("attempts", models.BigIntegerField(default=0)),
                ("prompt_tokens", models.BigIntegerField(default=0)),
                ("completion_tokens", models.BigIntegerField(default=0)),
                ("reasoning_tokens", models.BigIntegerField(default=0)),
                (
                    "billed_prompt",
                    models.FloatField(default=0.0, help_text="Prompt tokens times each call's price factor."),
                ),
                (
                    "billed_completion",
                    models.FloatField(default=0.0, help_text="Completion tokens times each call's price factor."),
                ),
                (
                    "audit",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="call_tallies", to="audits.audit"
                    ),
                ),
            ],
            options={
                "ordering": ["audit", "endpoint_ref"],
                "constraints": [models.UniqueConstraint(fields=("audit", "endpoint_ref"), name="call_tally_unique")],
            },
        ),
        migrations.CreateModel(
            name="AuditTally",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("pending", models.BigIntegerField(default=0)),
                ("running", models.BigIntegerField(default=0)),
                ("done", models.BigIntegerField(default=0)),
                ("failed", models.BigIntegerField(default=0)),
                ("cancelled", models.BigIntegerField(default=0)),
                (
                    "calls_cached",
                    models.BigIntegerField(default=0, help_text="The dialogues' calls answered without sending."),
                ),
                ("turns_ok", models.BigIntegerField(default=0)),
                ("turns_unparsable", models.BigIntegerField(default=0)),
                ("turns_failed", models.BigIntegerField(default=0)),
                (
                    "audit",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE, related_name="tally", to="audits.audit"
                    ),
                ),
            ],
        ),
        migrations.RunPython(fill_tallies, migrations.RunPython.noop),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
