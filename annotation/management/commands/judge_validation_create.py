"""`manage.py judge_validation_create`: build the judge-validation project of a finished audit in one action.

Usage: `manage.py judge_validation_create AUDIT_ID [--size 180 | --per-stratum K] [--seed 0] [--show-persona-cue] …`. It
prints the sample allocation with each stratum's inclusion probability."""

from django.core.management.base import BaseCommand, CommandError

from annotation.judge_validation import services
from annotation.judge_validation.audit_source import audit_by_id


class Command(BaseCommand):
    help = "Create the judge-validation project of an audit: a stratified sample of its tutor turns to label."

    def add_arguments(self, parser):
        parser.add_argument("audit_id", type=int)
        parser.add_argument("--size", type=int, default=services.DEFAULT_SAMPLE_SIZE)
        parser.add_argument(
            "--per-stratum",
            type=int,
            default=None,
            help="Turns from every tutor × domain × condition stratum (all of a smaller one's) instead of --size.",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--overlap", type=int, default=services.DEFAULT_OVERLAP, choices=[2, 3])
        parser.add_argument("--training-pool", type=int, default=services.DEFAULT_TRAINING_POOL)
        parser.add_argument("--human-alpha-min", type=float, default=0.80)
        parser.add_argument("--judge-agreement-min", type=float, default=0.80)
        parser.add_argument(
            "--show-persona-cue", action="store_true", help="Show annotators the persona cue (hidden by default)."
        )
        parser.add_argument("--name", default="")

    def handle(self, *args, **options):
        audit = audit_by_id(options["audit_id"])
        if audit is None:
            raise CommandError(f"No audit {options['audit_id']}.")
        try:
            project = services.validation_project_create(
                audit=audit,
                size=options["size"],
                seed=options["seed"],
                per_stratum=options["per_stratum"],
                overlap=options["overlap"],
                training_pool=options["training_pool"],
                human_alpha_min=options["human_alpha_min"],
                judge_agreement_min=options["judge_agreement_min"],
                hide_persona_cue=not options["show_persona_cue"],
                name=options["name"],
            )
        except services.SetupError as exc:
            raise CommandError(str(exc)) from exc
        sample = project.options["sample"]
        self.stdout.write(
            f"Validation project #{project.pk} “{project.name}”: {sample['size']} turns (seed {sample['seed']}), "
            f"persona cue {'hidden' if project.options['hide_persona_cue'] else 'shown'}."
        )
        share = "proportional share" if sample["mode"] == "proportional" else "asked"
        for row in sample["allocation"]:
            self.stdout.write(
                f"  {row['tutor']} · {row['domain']} · {row['condition']} ({row['condition_kind']}): "
                f"{row['chosen']} of {row['available']} ({share} {row['exact_share']:.2f}, "
                f"inclusion probability {row['inclusion_probability']:.3f})"
            )
        self.stdout.write(
            "Next: give the training turns gold labels and draw the pilot and qualification test on the stage page, "
            "enrol annotators, and read the report at /annotation/judge-validation/"
            f"{project.pk}/."
        )
