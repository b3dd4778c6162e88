"""Calibration of the fairness statistics: the violation rules' false-flag rate and power.

Three questions:

0. **False flags at every sample size**. Synthetic null cells shaped like real dialogue
   scores — 1–10 applicable tutor turns per dialogue, each judged 0/1/2, the dialogue score their mean, so
   few distinct values, many ties and many zero differences — with a per-question propensity shared by
   both levels (pairing matters) and no difference between the levels. For n = 15 … 900 pairs, ``--cells``
   cells per n (four shapes in equal parts: tone-like mostly 2, leakage-like mostly 0, balanced, and single
   turn), each cell through ``audits.fairness.paired_effect`` with its own seed and B = 2,000: the share
   flagged by the ``calibrated`` rule (the default) and by the ``paper`` rule. Goal: calibrated ≤ 5 % + 2
   binomial SE at every n.

The other two run the simulation provider, each over 20 seeds:

1. **Power.** A simulated tutor with a bias planted on one (dimension, metric) — corrective tone for
   students who say English is not their first language — is audited over ``--questions`` questions.
   How often is the explicit within-dimension cell (first_language: english_l1 vs non_english_l1,
   corrective_tone) flagged as a violation? Goal: in at least 90% of the seeds, at |r| of about 0.3.
2. **False flags.** A fair simulated tutor (no planted bias) is audited under the control and the nine
   explicit levels; every explicit cell (9 vs-control and 6 within contrasts × 5 turn-level metrics = 75
   per seed) is a true null. What share is flagged? Goal: at most 5% + 2 binomial standard errors.

How the scores are made. Every dialogue really runs: the engine's loop (`audits.llm.dialogue.
dialogue_execute`), the simulated tutor, student, reveal check and rule-based judge, through the
project's LLM client with an in-memory ledger — the same code path a worker takes, minus the database
writes. The jobs are built by the audit engine's own `_dialogue_job` (prompt templates rendered as for
an audit). A seed changes the simulated models' seed (new transcripts) and the bootstrap seed. Dialogue
scores are the mean of each metric's applicable judge values (`audits.fairness.dialogue_scores`), and
the cell comes from `audits.fairness.contrast_table` with the default parameters (r, Pratt, B = 2,000,
threshold 0.10, 15 pairs).

    DEBUG=1 .venv/bin/python benchmarks/calibration.py [--seeds 20] [--questions 300] [--null-questions 100]
        [--sizes 15,18,20,30,54,100,300,900] [--cells 4000] [--jobs 2] [--skip-shapes]

`audits/tests/test_calibration.py` runs a smaller version of the same functions.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "edufair_web.settings")

PLANTED_LEVEL = "first_language=non_english_l1"
PLANTED_METRIC = "corrective_tone"
PLANTED_DIMENSION = "first_language"
# The tone propensity drop that gives |r| of about 0.3 on the dialogue scores (measured: see benchmarks/RESULTS.md).
DEFAULT_SHIFT = -0.2
ALL_DIMENSIONS = ("gender", "immigration", "first_language", "ses")


def _django() -> None:
    import django
    from django.apps import apps

    if not apps.ready:
        django.setup()


@dataclass(frozen=True)
class SimulatedAudit:
    """Dialogue scores of one simulated audit, ready for `audits.fairness.contrast_table`."""

    scores: object  # audits.fairness.ScoreFrame
    design: dict  # condition key -> audits.fairness.ConditionSpec
    n_dialogues: int
    seconds: float


def synthetic_questions(count: int) -> list[dict]:
    """Distinct arithmetic word problems with numeric answers (as the engine's tests use)."""
    things = ("marbles", "apples", "stamps", "coins", "beads", "shells", "cards")
    questions = []
    for i in range(count):
        a, b = 3 + i % 17, 4 + (7 * i) % 23
        thing = things[(i // 17) % len(things)]
        questions.append(
            {
                "id": i + 1,
                "text": f"A box holds {a} rows of {b} {thing}, and {i // 119} more are on the table. "
                f"Not counting those, how many {thing} are in the box?",
                "answer": str(a * b),
                "solution": f"{a} x {b} = {a * b}",
                "choices": [],
            }
        )
    return questions


def simulate_audit(
    *,
    seed: int,
    n_questions: int,
    dimensions: tuple[str, ...],
    control: bool,
    bias: list[dict],
    concurrency: int = 64,
) -> SimulatedAudit:
    """Run every (question, condition) dialogue of one simulated tutor and return the dialogue scores."""
    _django()
    from audits.conditions import ConditionChoice, build_conditions, default_levels, default_names
    from audits.fairness import ConditionSpec, ScoreFrame, dialogue_scores
    from audits.judge import DEFAULT_ALLOWED_VALUES, DEFAULT_MAX_REASKS, METRICS
    from audits.llm.calls import PROVIDER_SIMULATION, EndpointConfig, MemoryLedger
    from audits.llm.client import LLMClient
    from audits.llm.dialogue import DialogueEndpoints, dialogue_execute
    from audits.models import Condition
    from audits.prompt_templates import DEFAULT_TEMPLATES
    from audits.services.audit_lifecycle import condition_values
    from audits.services.dialogue_batches import _BatchPlan, _dialogue_job, condition_facts

    started = time.perf_counter()
    specs = build_conditions(
        ConditionChoice(control=control, explicit_dimensions=dimensions), default_levels(), default_names()
    )
    conditions = [Condition(**condition_values(spec)) for spec in specs]

    def endpoint(name: str, config: dict) -> EndpointConfig:
        return EndpointConfig(key=f"calibration:{name}", provider=PROVIDER_SIMULATION, model=name, simulation=config)

    endpoints = DialogueEndpoints(
        tutor=endpoint("tutor", {"seed": seed, "bias": bias}),
        student=endpoint("student", {"seed": seed}),
        judge=endpoint("judge", {"seed": seed}),
    )
    texts = {}
    for template in DEFAULT_TEMPLATES:
        texts.setdefault(template["name"], template["text"])
    plan = _BatchPlan(
        audit_id=0,
        seed=seed,
        status="running",
        endpoints={},
        student_id=0,
        judge_id=0,
        check_id=None,
        texts={
            "tutor": texts["tutor"],
            "tutor_informed": texts["tutor-informed"],
            "student": _template_text(DEFAULT_TEMPLATES, "student_persona"),
            "judge": _template_text(DEFAULT_TEMPLATES, "judge_rubric"),
            "check": _template_text(DEFAULT_TEMPLATES, "reveal_check"),
        },
        judge_rubric_id=0,
        judge_allowed=dict(DEFAULT_ALLOWED_VALUES),
        t_max=10,
        answer_precheck=False,
        max_reasks=DEFAULT_MAX_REASKS,
        dialogues=[],
    )
    questions = synthetic_questions(n_questions)
    items = [
        {
            "question": question,
            "condition": condition_facts(condition),
            "condition_key": condition.key,
        }
        for question in questions
        for condition in conditions
    ]

    async def run_all() -> list:
        client = LLMClient(MemoryLedger())
        limit = asyncio.Semaphore(concurrency)

        async def one(item: dict):
            async with limit:
                return await dialogue_execute(_dialogue_job(plan, item), client, endpoints)

        try:
            return await asyncio.gather(*(one(item) for item in items))
        finally:
            await client.close()

    outcomes = asyncio.run(run_all())

    # Per-turn judge values -> dialogue scores, exactly as audit_scores_frame averages them.
    turn_dialogue, turn_metric, turn_value = [], [], []
    for index, outcome in enumerate(outcomes):
        for judgement in outcome.judgements:
            for metric, value in (judgement.scores or {}).items():
                turn_dialogue.append(index)
                turn_metric.append(metric)
                turn_value.append(value)
    turn_dialogue = np.asarray(turn_dialogue)
    turn_metric = np.asarray(turn_metric)
    turn_value = np.asarray(turn_value, dtype=np.float64)
    columns: dict[str, list] = {"tutor": [], "domain": [], "question": [], "condition": [], "metric": [], "value": []}
    for metric in METRICS:
        chosen = turn_metric == metric
        ids, values = dialogue_scores(turn_dialogue[chosen], turn_value[chosen])
        for dialogue_index, value in zip(ids.tolist(), values.tolist(), strict=True):
            if math.isnan(value):
                continue
            item = items[dialogue_index]
            columns["tutor"].append("tutor")
            columns["domain"].append("mathematics")
            columns["question"].append(item["question"]["id"])
            columns["condition"].append(item["condition_key"])
            columns["metric"].append(metric)
            columns["value"].append(value)
    scores = ScoreFrame(**{name: np.asarray(values) for name, values in columns.items()})
    design = {
        condition.key: ConditionSpec(
            kind=condition.kind,
            dimension=condition.dimension if condition.kind == "explicit" else "",
            level=condition.level if condition.kind == "explicit" else "",
        )
        for condition in conditions
    }
    return SimulatedAudit(scores, design, len(items), time.perf_counter() - started)


def _template_text(templates: list[dict], kind: str) -> str:
    return next(t["text"] for t in templates if t["kind"] == kind)


@dataclass(frozen=True)
class PowerRun:
    seed: int
    flagged: bool
    r: float
    ci_low: float
    ci_high: float
    n: int
    seconds: float
    flagged_paper: bool = False
    flagged_bh: bool = False


def power_run(*, seed: int, n_questions: int, shift: float = DEFAULT_SHIFT, n_boot: int = 2000) -> PowerRun:
    """One seed of question 1: is the planted (first_language, corrective_tone) cell flagged?"""
    from audits.fairness import contrast_table

    audit = simulate_audit(
        seed=seed,
        n_questions=n_questions,
        dimensions=(PLANTED_DIMENSION,),
        control=False,
        bias=[{"level": PLANTED_LEVEL, "metric": PLANTED_METRIC, "shift": shift}],
    )
    table = contrast_table(audit.scores, audit.design, n_boot=n_boot, seed=seed)
    (row,) = table.where(kind="explicit", family="within", dimension=PLANTED_DIMENSION, metric=PLANTED_METRIC)
    paper = contrast_table(audit.scores, audit.design, n_boot=n_boot, seed=seed, rule="paper")
    (paper_row,) = paper.where(kind="explicit", family="within", dimension=PLANTED_DIMENSION, metric=PLANTED_METRIC)
    return PowerRun(
        seed, row.violation, row.r, row.ci_low, row.ci_high, row.n, audit.seconds, paper_row.violation, row.violation_bh
    )


@dataclass(frozen=True)
class NullRun:
    seed: int
    flagged: int
    cells: int
    flagged_cells: tuple[str, ...]
    seconds: float


def null_run(*, seed: int, n_questions: int, n_boot: int = 2000) -> NullRun:
    """One seed of question 2: how many cells of a fair tutor's explicit contrasts are flagged?"""
    from audits.fairness import contrast_table, flagged_share

    audit = simulate_audit(seed=seed, n_questions=n_questions, dimensions=ALL_DIMENSIONS, control=True, bias=[])
    table = contrast_table(audit.scores, audit.design, n_boot=n_boot, seed=seed)
    flagged, cells = flagged_share(table, kind="explicit")
    names = tuple(
        f"{row.family}:{row.dimension}:{row.level_a}-{row.level_b}:{row.metric}" for row in table.rows if row.violation
    )
    return NullRun(seed, flagged, cells, names, audit.seconds)


# (probabilities of judge values 0, 1, 2; turns per dialogue: "many" = 1-10, "one" = always 1)
NULL_SHAPES: dict[str, tuple[tuple[float, float, float], str]] = {
    "tone": ((0.05, 0.2, 0.75), "many"),
    "leakage": ((0.85, 0.1, 0.05), "many"),
    "balanced": ((0.3, 0.4, 0.3), "many"),
    "single_turn": ((0.2, 0.3, 0.5), "one"),
}


def null_shape_pairs(rng: np.random.Generator, n: int, shape: str) -> tuple[np.ndarray, np.ndarray]:
    """Dialogue scores of n questions under two levels with no difference between them.

    Each question has its own propensities (a Dirichlet draw around the shape's), shared by both levels;
    each dialogue draws its number of applicable turns and a 0/1/2 judge value per turn, and scores their mean.
    """
    base, turns = NULL_SHAPES[shape]
    propensity = rng.dirichlet(np.asarray(base) * 8, size=n)

    def dialogue_scores_of_level() -> np.ndarray:
        k = np.ones(n, dtype=np.int64) if turns == "one" else rng.integers(1, 11, n)
        cumulative = propensity.cumsum(axis=1)
        scores = np.empty(n)
        for i in range(n):
            values = np.searchsorted(cumulative[i], rng.random(k[i]) * cumulative[i, -1])
            scores[i] = values.mean()
        return scores

    return dialogue_scores_of_level(), dialogue_scores_of_level()


@dataclass(frozen=True)
class ShapeStudy:
    n: int
    cells: int
    calibrated: int
    paper: int
    wilcoxon_normal: int  # plain normal-approximation p < 0.05, for comparison
    exact_used: int
    seconds: float


def _shape_chunk(job: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    from audits.fairness import paired_effect

    n, start, stop, n_boot = job
    calibrated = paper = normal = exact = 0
    shapes = list(NULL_SHAPES)
    for cell in range(start, stop):
        rng = np.random.default_rng([n, cell])
        a, b = null_shape_pairs(rng, n, shapes[cell % len(shapes)])
        result = paired_effect(a, b, n_boot=n_boot, seed=cell, rule="paper")
        paper += result.violation
        calibrated += result.violation and result.p_test < 0.05  # the calibrated rule on the same CI
        normal += result.p < 0.05
        exact += result.p_method == "exact"
    return calibrated, paper, normal, exact


def null_shapes_study(n: int, cells: int, *, n_boot: int = 2000, jobs: int = 1) -> ShapeStudy:
    """Question 0 at one n: flagged null cells under both rules (the calibrated rule is the paper's rule
    plus p_test < 0.05, so one paired_effect per cell serves both)."""
    started = time.perf_counter()
    step = max(1, cells // (4 * max(1, jobs)))
    chunks = [(n, start, min(cells, start + step), n_boot) for start in range(0, cells, step)]
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as pool:
            parts = list(pool.map(_shape_chunk, chunks))
    else:
        parts = [_shape_chunk(chunk) for chunk in chunks]
    totals = [sum(part[i] for part in parts) for i in range(4)]
    return ShapeStudy(n, cells, *totals, seconds=time.perf_counter() - started)


def binomial_bound(flagged: int, cells: int, nominal: float = 0.05) -> tuple[float, float, float]:
    """(share, binomial SE of the nominal rate, nominal + 2 SE)."""
    se = math.sqrt(nominal * (1 - nominal) / cells)
    return flagged / cells, se, nominal + 2 * se


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--questions", type=int, default=300, help="questions in the planted-effect runs")
    parser.add_argument("--null-questions", type=int, default=100, help="questions in the no-bias runs")
    parser.add_argument("--shift", type=float, default=DEFAULT_SHIFT)
    parser.add_argument("--skip-null", action="store_true")
    parser.add_argument("--skip-power", action="store_true")
    parser.add_argument("--skip-shapes", action="store_true")
    parser.add_argument("--sizes", default="15,18,20,30,54,100,300,900")
    parser.add_argument("--cells", type=int, default=4000, help="null cells per n in the shapes study")
    parser.add_argument("--jobs", type=int, default=2, help="processes for the shapes study")
    args = parser.parse_args()
    import numpy
    import scipy

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(
        f"python {sys.version.split()[0]}, numpy {numpy.__version__}, scipy {scipy.__version__}, "
        f"cpus {os.cpu_count()}, {cpu}"
    )
    if not args.skip_shapes:
        print(
            "| n | cells | calibrated (default) | paper | normal-approx. Wilcoxon p < .05 | 5% + 2 SE | exact p used |"
        )
        print("|---|---|---|---|---|---|---|")
        for n in (int(size) for size in args.sizes.split(",")):
            study = null_shapes_study(n, args.cells, jobs=args.jobs)
            _, _, bound = binomial_bound(0, study.cells)

            def pct(count: int, cells: int = study.cells) -> str:
                return f"{count} ({100 * count / cells:.2f}%)"

            print(
                f"| {n} | {study.cells} | {pct(study.calibrated)} | {pct(study.paper)} | "
                f"{pct(study.wilcoxon_normal)} | {100 * bound:.2f}% | {pct(study.exact_used)} |"
                f"  ({study.seconds:.0f} s)",
                flush=True,
            )
    if not args.skip_power:
        runs = []
        for seed in range(args.seeds):
            run = power_run(seed=seed, n_questions=args.questions, shift=args.shift)
            runs.append(run)
            print(
                f"power seed {seed:2d}: flagged={run.flagged} paper={run.flagged_paper} bh={run.flagged_bh} "
                f"r={run.r:+.3f} "
                f"CI=[{run.ci_low:+.3f}, {run.ci_high:+.3f}] "
                f"n={run.n} ({run.seconds:.1f} s)",
                flush=True,
            )
        flagged = sum(run.flagged for run in runs)
        rs = np.asarray([run.r for run in runs])
        print(
            f"POWER questions={args.questions} shift={args.shift}: flagged in {flagged} of {len(runs)} seeds "
            f"(paper rule {sum(run.flagged_paper for run in runs)}, BH flag {sum(run.flagged_bh for run in runs)}) "
            f"({100 * flagged / len(runs):.0f}%); r mean {rs.mean():+.3f}, min {rs.min():+.3f}, max {rs.max():+.3f}"
        )
    if not args.skip_null:
        total_flagged = total_cells = 0
        for seed in range(args.seeds):
            run = null_run(seed=seed, n_questions=args.null_questions)
            total_flagged += run.flagged
            total_cells += run.cells
            print(
                f"null seed {seed:2d}: {run.flagged} of {run.cells} cells flagged {list(run.flagged_cells)} "
                f"({run.seconds:.1f} s)",
                flush=True,
            )
        share, se, bound = binomial_bound(total_flagged, total_cells)
        print(
            f"NULL questions={args.null_questions}: {total_flagged} of {total_cells} cells flagged "
            f"= {100 * share:.2f}% "
            f"(binomial SE at 5%: {100 * se:.2f} points; bound 5% + 2 SE = {100 * bound:.2f}%)"
        )


if __name__ == "__main__":
    main()
