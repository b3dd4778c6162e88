"""Benchmark: the fairness analysis (audits.fairness) at EduFair-Bench paper scale, against a plain scipy loop.

Synthetic dialogue scores: 5 tutors × 1,907 questions (907 maths, 500 physics, 500 chemistry) × 18
conditions (control + 9 explicit levels, 4 implicit name cells, the 4 opposite cells) × 5 turn-level
metrics. Each dialogue has 3–10 tutor turns scored 0/1/2 (10% not applicable); its score is the mean over
applicable turns, so scores take the few distinct values real ones do. Small biases are planted.

Measured: wall time of the full analysis (contrast_table + the paper's summaries) with B = 2,000, the
median of --runs runs; peak memory (tracemalloc, in a separate run, and the process's max RSS); the time
per cell of a straightforward per-cell ``scipy.stats.wilcoxon`` + ``scipy.stats.bootstrap`` loop on a
subset of cells, extrapolated to all cells; and whether those cells' r, |Z|, p and CI are bit-identical.

    .venv/bin/python benchmarks/fairness_scale.py --runs 5 --jobs 2 --baseline-cells 12
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audits import fairness  # noqa: E402

TUTORS = ("llama-3.1-8b", "qwen2.5-7b", "tutorrl-7b", "deepseek-r1-70b", "gpt-5-mini")
DOMAINS = {"mathematics": 907, "physics": 500, "chemistry": 500}
EXPLICIT = {
    "gender": ("female", "male", "non-binary"),
    "immigration": ("native-born", "immigrant"),
    "first_language": ("english-l1", "non-english-l1"),
    "ses": ("lower-income", "higher-income"),
}


def paper_design() -> dict[int, fairness.ConditionSpec]:
    specs = [fairness.ConditionSpec("control")]
    specs += [
        fairness.ConditionSpec("explicit", dimension=d, level=lv) for d, levels in EXPLICIT.items() for lv in levels
    ]
    specs += [
        fairness.ConditionSpec("implicit", level=f"{g}-{e}-name", name_gender=g, name_ethnicity=e)
        for g in ("female", "male")
        for e in ("white", "black")
    ]
    specs += [
        fairness.ConditionSpec("opposite", stated_gender=s, perceived_gender=p)
        for s in ("female", "male")
        for p in ("female", "male")
    ]
    return {condition_id: spec for condition_id, spec in enumerate(specs, start=1)}


def synthetic_scores(design: dict[int, fairness.ConditionSpec], seed: int = 0) -> fairness.ScoreFrame:
    rng = np.random.default_rng(seed)
    n_tutors, n_conditions, n_metrics = len(TUTORS), len(design), len(fairness.TURN_METRICS)
    n_questions = sum(DOMAINS.values())
    domain_of = np.repeat(np.arange(len(DOMAINS)), list(DOMAINS.values()))
    shape = (n_tutors, n_conditions, n_questions, n_metrics)
    # latent quality: question × metric difficulty, tutor × metric skill, a planted condition bias
    latent = rng.normal(0, 0.8, (1, 1, n_questions, n_metrics)) + rng.normal(0, 0.3, (n_tutors, 1, 1, n_metrics))
    latent = latent + rng.normal(0, 0.08, (n_tutors, n_conditions, 1, n_metrics))
    turns = rng.integers(3, 11, shape)
    noise = rng.logistic(0, 0.6, (*shape, 10))
    turn_value = np.digitize(latent[..., None] + noise, [-0.7, 0.7]).astype(np.float64)  # 0, 1, 2
    applicable = (np.arange(10) < turns[..., None]) & (rng.random((*shape, 10)) > 0.10)
    counts = applicable.sum(axis=-1)
    with np.errstate(invalid="ignore"):
        value = np.where(counts > 0, (turn_value * applicable).sum(axis=-1) / counts, np.nan)
    t, c, q, m = np.indices(shape).reshape(4, -1)
    return fairness.ScoreFrame(
        tutor=np.asarray(TUTORS)[t],
        domain=np.asarray(list(DOMAINS))[domain_of[q]],
        question=q,
        condition=np.asarray(list(design))[c],
        metric=np.asarray(fairness.TURN_METRICS)[m],
        value=value.ravel(),
    )


def full_analysis(frame, design, n_boot: int, jobs: int):
    table = fairness.contrast_table(frame, design, n_boot=n_boot, n_jobs=jobs)
    cells = fairness.dimension_cells(table)
    summaries = (
        cells,
        fairness.cells_over_threshold(cells),
        fairness.metric_by_tutor(table),
        fairness.implicit_rows(table),
        fairness.opposite_decomposition(table),
        fairness.tutor_vs_backbone(cells, tutor="tutorrl-7b", backbone="qwen2.5-7b"),
    )
    return table, summaries


def scipy_cell(a: np.ndarray, b: np.ndarray, n_boot: int, seed: int) -> dict[str, float]:
    """The straightforward way: scipy.stats.wilcoxon for the cell and scipy.stats.bootstrap around it."""

    def effect(x, y):
        d = np.round(y - x, 9)
        d = d[~np.isnan(d)]
        if not np.any(d != 0):
            return 0.0
        z = stats.wilcoxon(d, zero_method="pratt", alternative="greater", method="approx").zstatistic
        return z / np.sqrt(d.size)

    d = np.round(b - a, 9)
    d = d[~np.isnan(d)]
    two_sided = stats.wilcoxon(d, zero_method="pratt", method="approx")
    ci = stats.bootstrap(
        (a, b), effect, paired=True, vectorized=False, n_resamples=n_boot, method="percentile", rng=seed
    ).confidence_interval
    return {"r": effect(a, b), "abs_z": abs(two_sided.zstatistic), "p": two_sided.pvalue, "ci": (ci.low, ci.high)}


def baseline(frame, design, table, n_boot: int, n_cells: int):
    """Time the scipy loop on n_cells cells (spread over domains and families) and compare them bit for bit."""
    rng = np.random.default_rng(1)
    contrasts = {c.key: c for c in table.contrasts}
    chosen = [table.rows[i] for i in sorted(rng.choice(len(table.rows), n_cells, replace=False))]
    seconds_per_cell: dict[str, list[float]] = {}
    identical = 0
    for row in chosen:
        key = (row.kind, row.family, row.dimension, row.level_a, row.level_b)
        _, a, b = fairness.contrast_pairs(
            frame, design, tutor=row.tutor, domain=row.domain, contrast=contrasts[key], metric=row.metric
        )
        start = time.perf_counter()
        ref = scipy_cell(a, b, n_boot, row.seed)
        seconds_per_cell.setdefault(row.domain, []).append(time.perf_counter() - start)
        same = (
            row.r == ref["r"]
            and abs(row.z) == ref["abs_z"]
            and row.p == ref["p"]
            and (row.ci_low, row.ci_high) == ref["ci"]
        )
        identical += same
        if not same:
            print("  differs:", row, ref)
    cells_per_domain = {d: sum(r.domain == d for r in table.rows) for d in DOMAINS}
    extrapolated = sum(statistics.mean(seconds_per_cell[d]) * cells_per_domain[d] for d in seconds_per_cell)
    if set(seconds_per_cell) != set(DOMAINS):  # a domain not sampled: use the overall mean for it
        overall = statistics.mean(s for v in seconds_per_cell.values() for s in v)
        extrapolated += sum(overall * cells_per_domain[d] for d in DOMAINS if d not in seconds_per_cell)
    return extrapolated, identical, len(chosen), sum(sum(v) for v in seconds_per_cell.values())


def machine() -> str:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    return f"nproc={os.cpu_count()}, CPU: {model}, Python {platform.python_version()}, numpy {np.__version__}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--baseline-cells", type=int, default=12)
    args = parser.parse_args()

    print(machine())
    print("load average before (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    design = paper_design()
    frame = synthetic_scores(design)
    print(f"frame: {len(frame):,} dialogue scores, {len(design)} conditions")
    rss_after_data = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process max RSS after generating the synthetic data: {rss_after_data:.0f} MiB")

    walls = []
    for run in range(args.runs):
        start = time.perf_counter()
        table, _ = full_analysis(frame, design, args.n_boot, args.jobs)
        walls.append(time.perf_counter() - start)
        print(f"run {run + 1}: {walls[-1]:.2f} s")
    print("load average after the timed runs (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    n_cells = len(table)
    print(
        f"cells: {n_cells} ({len(table.contrasts)} contrasts × {len(TUTORS)} tutors"
        f" × {len(DOMAINS)} domains × 5 metrics)"
    )
    print(
        f"wall time, median of {args.runs}: {statistics.median(walls):.2f} s"
        f" (min {min(walls):.2f}, max {max(walls):.2f})"
    )

    tracemalloc.start()
    full_analysis(frame, design, args.n_boot, args.jobs)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak traced memory during one analysis: {peak / 2**20:.0f} MiB; process max RSS so far: {max_rss:.0f} MiB")

    if args.baseline_cells:
        extrapolated, identical, checked, spent = baseline(frame, design, table, args.n_boot, args.baseline_cells)
        print(f"scipy loop: {checked} cells in {spent:.1f} s, extrapolated to {n_cells} cells: {extrapolated:.0f} s")
        print(f"speed-up vs extrapolated scipy loop: {extrapolated / statistics.median(walls):.0f}×")
        print(f"bit-identical (r, |Z|, p, CI) with scipy: {identical} of {checked} cells")


if __name__ == "__main__":
    main()
