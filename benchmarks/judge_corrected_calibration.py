"""Calibration of the judge-corrected (PPI++) difference against a cue-sensitive judge and a noisy one.

Synthetic cells from ``audits.judge_corrected_simulation.simulate_cell`` (``--questions`` questions per side, four
domains of unequal size as strata, equal human labels per domain, so unequal inclusion probabilities), each through
``audits.judge_corrected.corrected_difference`` at alpha = 0.05, over ``--seeds`` seeds:

1. **Fair tutor, cue-sensitive judge.** No difference between the sides in the human scores, but the judge is
   harsher by ``--cue`` points on side B, with ``--labels-per-stratum`` labels per domain. Aims: the judge-only
   interval excludes 0 in most seeds (the judge alone makes a false finding), and the corrected interval covers 0 in
   at least 93 % of them.
2. **Planted bias, unbiased noisy judge.** Side B's human scores are higher by ``--delta``; the judge is unbiased
   between the sides but noisy (SD ``--noise``). The labels per domain are the planner's
   (``audits.judge_corrected.labels_needed``) for ``--target`` half-width (below δ), from the judge's error SD and
   score SD measured on one pilot cell (its own seed) and Kish's design effect of the allocation. Aims: the
   corrected interval covers δ in at least 93 % of the seeds and excludes 0 in most; its mean half-width is at most
   the target.

    .venv/bin/python benchmarks/judge_corrected_calibration.py [--seeds 200] [--questions 800] [--cue 0.5]
        [--labels-per-stratum 20] [--delta 0.4] [--noise 0.8] [--target 0.25]

Exits 1 if an aim is missed. ``audits/tests/test_judge_corrected.py`` runs a smaller version.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from audits.judge_corrected import (  # noqa: E402
    LabelPlan,
    corrected_difference,
    error_sd,
    kish_design_effect,
    labels_needed,
)
from audits.judge_corrected_simulation import (  # noqa: E402
    equal_allocation_probabilities,
    simulate_cell,
    stratum_sizes,
)

PILOT_SEED = 1_000_000
PILOT_LABELS_PER_STRATUM = 60
CUE_JUDGE_NOISE_SD = 0.5


@dataclass(frozen=True)
class Aim:
    name: str
    measured: float
    goal: str
    met: bool


@dataclass(frozen=True)
class ScenarioResult:
    judge_only_flagged: float
    covered: float
    excludes_zero: float
    mean_half_width: float


def scenario(
    seeds: range, *, questions: int, delta: float, judge: str, cue: float, noise: float, labels_per_stratum: int
) -> ScenarioResult:
    flagged = covered = excludes = 0
    half_widths = []
    for seed in seeds:
        cell = simulate_cell(
            seed,
            questions=questions,
            delta=delta,
            judge=judge,
            cue_penalty=cue,
            judge_noise_sd=noise,
            labels_per_stratum=labels_per_stratum,
        )
        result = corrected_difference(cell.side_a, cell.side_b, alpha=0.05)
        flagged += result.judge_only.excludes_zero
        covered += result.corrected.ci_low <= cell.true_difference <= result.corrected.ci_high
        excludes += result.corrected.excludes_zero
        half_widths.append(result.corrected.half_width)
    count = len(seeds)
    return ScenarioResult(flagged / count, covered / count, excludes / count, float(np.mean(half_widths)))


def planned_labels(*, questions: int, delta: float, noise: float, target: float) -> tuple[LabelPlan, float, float]:
    """The planner's labels for the noisy judge, from one pilot cell; also the pilot's error SD and design effect."""
    pilot = simulate_cell(
        PILOT_SEED,
        questions=questions,
        delta=delta,
        judge="noisy",
        judge_noise_sd=noise,
        labels_per_stratum=PILOT_LABELS_PER_STRATUM,
    )
    sd_a = error_sd(pilot.side_a.judge_labelled, pilot.side_a.human)
    sd_b = error_sd(pilot.side_b.judge_labelled, pilot.side_b.human)
    sizes = stratum_sizes(questions)
    # Equal allocation: the weights are proportional to the stratum sizes whatever the count per stratum.
    design_effect = kish_design_effect(equal_allocation_probabilities(sizes, 1))
    plan = labels_needed(
        sd_a,
        sd_b,
        target,
        alpha=0.05,
        strata_a=len(sizes),
        strata_b=len(sizes),
        design_effect=design_effect,
        n_turns_a=questions,
        n_turns_b=questions,
        judge_sd_a=float(pilot.side_a.judge_all.std()),
        judge_sd_b=float(pilot.side_b.judge_all.std()),
    )
    return plan, math.hypot(sd_a, sd_b) / math.sqrt(2), design_effect


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--questions", type=int, default=800)
    parser.add_argument("--cue", type=float, default=0.5)
    parser.add_argument("--labels-per-stratum", type=int, default=20)
    parser.add_argument("--delta", type=float, default=0.4)
    parser.add_argument("--noise", type=float, default=0.8)
    parser.add_argument("--target", type=float, default=0.25)
    args = parser.parse_args(argv)
    if not args.target < args.delta:
        parser.error("--target must be below --delta: the planted difference should be resolvable")
    started = time.perf_counter()
    seeds = range(args.seeds)

    cue = scenario(
        seeds,
        questions=args.questions,
        delta=0.0,
        judge="cue",
        cue=args.cue,
        noise=CUE_JUDGE_NOISE_SD,
        labels_per_stratum=args.labels_per_stratum,
    )
    plan, pilot_error_sd, design_effect = planned_labels(
        questions=args.questions, delta=args.delta, noise=args.noise, target=args.target
    )
    planted = scenario(
        seeds,
        questions=args.questions,
        delta=args.delta,
        judge="noisy",
        cue=0.0,
        noise=args.noise,
        labels_per_stratum=plan.per_stratum_a,
    )
    elapsed = time.perf_counter() - started

    aims = [
        Aim("(i) judge-only CI excludes 0", cue.judge_only_flagged, "> 50 %", cue.judge_only_flagged > 0.5),
        Aim("(i) corrected CI covers 0", cue.covered, ">= 93 %", cue.covered >= 0.93),
        Aim("(ii) corrected CI covers delta", planted.covered, ">= 93 %", planted.covered >= 0.93),
        Aim("(ii) corrected CI excludes 0", planted.excludes_zero, "> 50 %", planted.excludes_zero > 0.5),
    ]
    print(f"Judge-corrected calibration: {args.seeds} seeds, {args.questions} questions per side, 4 domain strata")
    print(
        f"(i)  fair tutor, judge harsher by {args.cue} on side B (noise SD {CUE_JUDGE_NOISE_SD}), "
        f"{args.labels_per_stratum} labels per domain ({4 * args.labels_per_stratum} per side); "
        f"mean corrected half-width {cue.mean_half_width:.3f}"
    )
    print(
        f"(ii) delta = {args.delta}, unbiased judge with noise SD {args.noise}; pilot error SD {pilot_error_sd:.3f}, "
        f"design effect {design_effect:.3f}; planner for half-width {args.target}: {plan.per_side} per side -> "
        f"{plan.per_stratum_a} per domain ({4 * plan.per_stratum_a} per side), predicted (lambda = 1) "
        f"{plan.predicted_half_width:.3f}; mean corrected half-width {planted.mean_half_width:.3f}"
    )
    aims.append(
        Aim(
            "(ii) mean half-width <= target",
            planted.mean_half_width,
            f"<= {args.target}",
            planted.mean_half_width <= args.target,
        )
    )
    print()
    print("| aim | measured | goal | met |")
    print("|---|---|---|---|")
    for aim in aims:
        measured = f"{aim.measured:.3f}" if "half-width" in aim.name else f"{100 * aim.measured:.1f} %"
        print(f"| {aim.name} | {measured} | {aim.goal} | {'yes' if aim.met else 'NO'} |")
    print()
    print(f"wall time {elapsed:.2f} s (both scenarios and the pilot, after imports); CPU {cpu_model()}")
    return 0 if all(aim.met for aim in aims) else 1


if __name__ == "__main__":
    sys.exit(main())
