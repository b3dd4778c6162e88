"""Benchmark of the fairness analysis at EduFair-Bench paper scale, against a plain scipy loop.

The analysis is audits.fairness.analyze.

Synthetic dialogues: 5 tutors × 1,907 questions (907 maths, 500 physics, 500 chemistry) × 22 conditions
(control; 9 explicit levels; 8 implicit name conditions in 7 name cells — female/male × white/black, one of
them with two names, plus three cells whose names cue gender only; the 4 opposite cells), which
``fairness.build_contrasts`` turns into 29 contrasts per (tutor, domain). Each dialogue has 1–10 tutor turns.

* 5 turn-level (judge) metrics: each tutor turn is scored 0/1/2, 10 % not applicable, and the dialogue
  score is the mean over applicable turns, so scores take the few distinct values real ones do.
* 4 conversation-level metrics from the same simulated transcript: tutor_turns (1–10), tutor_avg_word
  (words per tutor turn), tutor_question_rate (share of tutor turns with a question),
  tutor_student_word_ratio (tutor words / student words). The last three take many distinct values.
* 2 student metrics (the simulator check): student_turns, student_avg_word.

About 1 % of dialogues failed (no score at all). Small tutor × condition biases are planted. Columns have
the types the app's frame has (ids as int64, domain and metric as numpy unicode).

Measured, in this order:
* wall time of ``fairness.analyze(..., student_metrics=())`` — 5 tutors × 3 domains × 9 metrics × 29
  contrasts = 3,915 cells — plus the paper's summaries, B = 2,000, ``--jobs`` worker processes, the median
  of ``--runs`` runs (a 9-metric frame: 1,887,930 dialogue scores);
* memory during one more such analysis, sampled from /proc: this process's RSS before and at its peak,
  the largest worker process's RSS (which counts the pages it shares with this process) and the peak of
  the PSS summed over this process and its workers (shared pages split, i.e. the memory the run holds);
* a per-cell ``scipy.stats.wilcoxon`` + ``scipy.stats.bootstrap`` loop on ``--baseline-cells`` cells of
  both tables, timed in the same run and extrapolated to all cells (the ratio is that / the median), and
  whether those cells' r, |Z|, p and CI equal scipy's bit for bit (the mean-difference CI is compared with
  scipy.stats.bootstrap of the mean); before everything, that ``fairness.bootstrap_indices`` (the kernel's
  fast draw) equals ``Generator.integers`` for 141 (n, seed) pairs;
* unless ``--no-student``: ``analyze`` with the default student metrics (11 metrics, 4,785 cells) on an
  11-metric frame.

    .venv/bin/python benchmarks/fairness_scale.py --runs 5 --jobs 2 --baseline-cells 18
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audits import fairness  # noqa: E402

TUTORS = {1: "llama-3.1-8b", 2: "qwen2.5-7b", 3: "tutorrl-7b", 4: "deepseek-r1-70b", 5: "gpt-5-mini"}
DOMAINS = {"mathematics": 907, "physics": 500, "chemistry": 500}
EXPLICIT = {
    "gender": ("female", "male", "non-binary"),
    "immigration": ("native-born", "immigrant"),
    "first_language": ("english-l1", "non-english-l1"),
    "ses": ("lower-income", "higher-income"),
}
# Implicit name conditions: (name, gender cued, ethnicity cued); "" = the name does not cue it.
NAMES = (
    ("Emily", "female", "white"),
    ("Claire", "female", "white"),
    ("Lakisha", "female", "black"),
    ("Connor", "male", "white"),
    ("Jamal", "male", "black"),
    ("Mary", "female", ""),
    ("John", "male", ""),
    ("Alex", "non-binary", ""),
)
CONDITIONS = 22
CONTRASTS = 29
MAX_TURNS = 10


def paper_design() -> dict[int, fairness.ConditionSpec]:
    specs = [fairness.ConditionSpec("control")]
    specs += [
        fairness.ConditionSpec("explicit", dimension=d, level=lv) for d, levels in EXPLICIT.items() for lv in levels
    ]
    specs += [fairness.ConditionSpec("implicit", level=name, name_gender=g, name_ethnicity=e) for name, g, e in NAMES]
    specs += [
        fairness.ConditionSpec("opposite", stated_gender=s, perceived_gender=p)
        for s in ("female", "male")
        for p in ("female", "male")
    ]
    return {condition_id: spec for condition_id, spec in enumerate(specs, start=101)}


METRICS = fairness.TURN_METRICS + fairness.CONVERSATION_METRICS + fairness.STUDENT_METRICS


def _tutor_dialogues(rng: np.random.Generator, n_conditions: int, question_effect: dict) -> np.ndarray:
    """One tutor's dialogue scores, shape (condition, question, metric) in the order of METRICS."""
    n_questions = question_effect["turns"].size
    n_turn = len(fairness.TURN_METRICS)
    shape = (n_conditions, n_questions)
    bias = {name: rng.normal(0, scale, (n_conditions, 1)) for name, scale in (("turns", 0.3), ("words", 0.04))}
    # tutor turns: 1..10, driven by the question and a small tutor × condition bias
    turns = np.clip(
        np.rint(question_effect["turns"] + rng.normal(0, 0.3) + bias["turns"] + rng.normal(0, 1.5, shape)),
        1,
        MAX_TURNS,
    ).astype(np.int64)
    in_dialogue = np.arange(MAX_TURNS) < turns[..., None]  # (condition, question, turn)

    out = np.empty((*shape, len(METRICS)))
    # judge metrics: 0/1/2 per tutor turn, 10 % not applicable, dialogue score = mean of applicable turns
    latent = (
        question_effect["quality"][None, :, :]
        + rng.normal(0, 0.3, (1, 1, n_turn))
        + rng.normal(0, 0.08, (n_conditions, 1, n_turn))
    )
    for m in range(n_turn):
        noise = rng.logistic(0, 0.6, (*shape, MAX_TURNS))
        value = np.digitize(latent[..., m, None] + noise, [-0.7, 0.7]).astype(np.float64)
        applicable = in_dialogue & (rng.random((*shape, MAX_TURNS)) > 0.10)
        counts = applicable.sum(axis=-1)
        with np.errstate(invalid="ignore"):
            out[..., m] = np.where(counts > 0, (value * applicable).sum(axis=-1) / counts, np.nan)

    # transcript: words per tutor turn, questions asked, the simulated student's words per turn
    tutor_words = np.maximum(
        1,
        np.rint(
            np.exp(np.log(60) + rng.normal(0, 0.3) + question_effect["words"][None, :, None] + bias["words"][..., None])
            * rng.lognormal(0, 0.45, (*shape, MAX_TURNS))
        ),
    )
    asks = rng.random((*shape, MAX_TURNS)) < np.clip(0.45 + rng.normal(0, 0.1), 0.05, 0.95)
    # the student restates its persona: its words differ between conditions (the simulator check's point)
    student_words = np.maximum(
        1, np.rint(np.exp(np.log(18) + rng.normal(0, 0.15, (n_conditions, 1, 1))) * rng.lognormal(0, 0.6, (*shape, 10)))
    )
    tutor_total = (tutor_words * in_dialogue).sum(axis=-1)
    student_total = (student_words * in_dialogue).sum(axis=-1)
    c = n_turn
    out[..., c] = turns
    out[..., c + 1] = tutor_total / turns
    out[..., c + 2] = (asks & in_dialogue).sum(axis=-1) / turns
    out[..., c + 3] = tutor_total / student_total
    out[..., c + 4] = turns  # student turns: one before each tutor turn
    out[..., c + 5] = student_total / turns
    failed = rng.random(shape) < 0.01
    out[failed] = np.nan
    return out


def synthetic_scores(
    design: dict[int, fairness.ConditionSpec], metrics: tuple[str, ...] = METRICS, seed: int = 0
) -> fairness.ScoreFrame:
    """Rows ordered (tutor, condition, question, metric) for the given metrics (a subset of METRICS, in
    METRICS order); values as described in the module docstring, the same whichever metrics are kept."""
    rng = np.random.default_rng(seed)
    n_questions, n_conditions = sum(DOMAINS.values()), len(design)
    keep = [METRICS.index(m) for m in metrics]
    n_metrics = len(keep)
    question_effect = {
        "turns": rng.normal(5.0, 1.5, n_questions),
        "quality": rng.normal(0, 0.8, (n_questions, len(fairness.TURN_METRICS))),
        "words": rng.normal(0, 0.25, n_questions),
    }
    per_tutor = n_conditions * n_questions * n_metrics
    value = np.empty(len(TUTORS) * per_tutor)
    for t in range(len(TUTORS)):
        scores = _tutor_dialogues(rng, n_conditions, question_effect)[..., keep]
        value[t * per_tutor : (t + 1) * per_tutor] = scores.ravel()
    domain_of = np.repeat(np.arange(len(DOMAINS)), list(DOMAINS.values()))
    question_ids = np.arange(10_000, 10_000 + n_questions, dtype=np.int64)
    per_condition = n_questions * n_metrics
    return fairness.ScoreFrame(
        tutor=np.repeat(np.asarray(list(TUTORS), dtype=np.int64), per_tutor),
        domain=np.tile(np.repeat(np.asarray(list(DOMAINS))[domain_of], n_metrics), len(TUTORS) * n_conditions),
        question=np.tile(np.repeat(question_ids, n_metrics), len(TUTORS) * n_conditions),
        condition=np.tile(np.repeat(np.asarray(list(design), dtype=np.int64), per_condition), len(TUTORS)),
        metric=np.tile(np.asarray(metrics), len(TUTORS) * n_conditions * n_questions),
        value=value,
    )


def summaries(analysis):
    cells = fairness.dimension_cells(analysis.pedagogical)
    return (
        cells,
        fairness.metric_by_tutor(analysis.pedagogical),
        fairness.metric_by_tutor(analysis.conversation),
        fairness.implicit_rows(analysis.pedagogical),
        fairness.opposite_decomposition(analysis.pedagogical),
        fairness.tutor_vs_backbone(cells, tutor=3, backbone=2),  # TutorRL-7B vs its backbone Qwen2.5-7B
    )


def full_analysis(frame, design, n_boot: int, jobs: int, student: bool):
    analysis = fairness.analyze(
        frame,
        design,
        n_boot=n_boot,
        n_jobs=jobs,
        tutor_identity=TUTORS,
        student_metrics=fairness.STUDENT_METRICS if student else (),
    )
    return analysis, summaries(analysis)


def check_index_draws() -> int:
    """fairness.bootstrap_indices (the kernel's fast draw) against Generator.integers, as scipy draws."""
    rng = np.random.default_rng(7)
    checked = 0
    for n in [2, 3, 255, 256, 500, 907, 2897, *rng.integers(2, 3000, 40).tolist()]:
        for seed in rng.integers(0, 2**63, 3).tolist():
            expected = np.random.default_rng(seed).integers(0, n, (300, n))
            if not np.array_equal(fairness.bootstrap_indices(n, 300, seed), expected):
                raise SystemExit(f"bootstrap_indices differs from Generator.integers at n={n}, seed={seed}")
            checked += 1
    return checked


class MemorySampler(threading.Thread):
    """Peaks of this process's and its worker processes' resident memory during a run, sampled from
    /proc every 0.1 s: RSS (a forked worker's RSS includes the pages it shares with this process) and
    PSS (shared pages split between the processes sharing them; the sum is the memory the run holds)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stopped = threading.Event()
        self.parent_rss = self.worker_rss = self.total_pss = 0.0

    @staticmethod
    def _field(path: str, name: str) -> float:
        try:
            for line in Path(path).read_text().splitlines():
                if line.startswith(name):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def _children(self) -> list[str]:
        pids = []
        for task in Path(f"/proc/{os.getpid()}/task").iterdir():
            try:
                pids += (task / "children").read_text().split()
            except OSError:
                pass
        return pids

    def sample(self) -> None:
        self.parent_rss = max(self.parent_rss, self._field("/proc/self/status", "VmRSS:"))
        pss = self._field("/proc/self/smaps_rollup", "Pss:")
        for pid in self._children():
            self.worker_rss = max(self.worker_rss, self._field(f"/proc/{pid}/status", "VmRSS:"))
            pss += self._field(f"/proc/{pid}/smaps_rollup", "Pss:")
        self.total_pss = max(self.total_pss, pss)

    def run(self) -> None:
        while not self.stopped.wait(0.1):
            self.sample()


def measure_memory(run) -> MemorySampler:
    sampler = MemorySampler()
    sampler.sample()
    sampler.start()
    run()
    sampler.stopped.set()
    sampler.join()
    return sampler


def _tables(analysis) -> dict[str, fairness.ContrastTable]:
    return {"pedagogical": analysis.pedagogical, "conversation": analysis.conversation, "student": analysis.student}


def scipy_cell(a: np.ndarray, b: np.ndarray, n_boot: int, seed: int) -> dict:
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


def scipy_mean_ci(a: np.ndarray, b: np.ndarray, n_boot: int, seed: int) -> tuple[float, float]:
    """scipy.stats.bootstrap of the mean paired difference (a resample with no complete pair: 0)."""

    def mean_difference(x, y):
        d = np.round(y - x, 9)
        d = d[~np.isnan(d)]
        return float(np.mean(d)) if d.size else 0.0

    ci = stats.bootstrap(
        (a, b), mean_difference, paired=True, vectorized=False, n_resamples=n_boot, method="percentile", rng=seed
    ).confidence_interval
    return ci.low, ci.high


def baseline(frame, design, analysis, n_boot: int, n_cells: int):
    """Time the scipy loop on n_cells cells (spread over both tables, domains and families) and compare them.

    Only the Wilcoxon + bootstrap of r is timed; the mean-difference bootstrap is an untimed check.
    """
    rng = np.random.default_rng(1)
    tables = _tables(analysis)
    chosen = []
    timed = [name for name, table in tables.items() if len(table)]
    for i, name in enumerate(timed):
        rows = tables[name].rows
        share = n_cells // len(timed) + (i < n_cells % len(timed))
        chosen += [(name, rows[j]) for j in sorted(rng.choice(len(rows), share, replace=False))]
    seconds: dict[tuple[str, str], list[float]] = {}
    identical = 0
    mean_ci_error = 0.0
    for name, row in chosen:
        table = tables[name]
        contrast = next(
            c for c in table.contrasts if c.key == (row.kind, row.family, row.dimension, row.level_a, row.level_b)
        )
        _, a, b = fairness.contrast_pairs(
            frame,
            design,
            tutor=row.tutor,
            domain=row.domain,
            contrast=contrast,
            metric=row.metric,
            metrics=table.metrics,
        )
        start = time.perf_counter()
        ref = scipy_cell(a, b, n_boot, row.seed)
        seconds.setdefault((name, row.domain), []).append(time.perf_counter() - start)
        same = (
            row.r == ref["r"]
            and abs(row.z) == ref["abs_z"]
            and row.p == ref["p"]
            and (row.ci_low, row.ci_high) == ref["ci"]
        )
        identical += same
        mean_low, mean_high = scipy_mean_ci(a, b, n_boot, row.seed)
        mean_ci_error = max(mean_ci_error, abs(row.mean_diff_ci_low - mean_low), abs(row.mean_diff_ci_high - mean_high))
        if not same:
            print("  differs:", name, row, ref)
    extrapolated = 0.0
    for name in timed:
        overall = statistics.mean(s for (n, _), v in seconds.items() if n == name for s in v)
        for domain in DOMAINS:
            count = sum(row.domain == domain for row in tables[name].rows)
            extrapolated += statistics.mean(seconds.get((name, domain), [overall])) * count
    return extrapolated, identical, len(chosen), mean_ci_error


def machine() -> str:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    return (
        f"nproc={os.cpu_count()}, CPU: {model}, Python {platform.python_version()}, numpy {np.__version__},"
        f" scipy {__import__('scipy').__version__}"
    )


def _load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def fresh(frame: fairness.ScoreFrame) -> fairness.ScoreFrame:
    """The same columns in a new frame object, so that no run reuses another's factorisation (the kernel
    caches it per frame object): every timed run pays for it, as an audit's single analysis does."""
    return fairness.ScoreFrame(**{field.name: getattr(frame, field.name) for field in dataclasses.fields(frame)})


def timed_runs(frame, design, args, student: bool, analysis=full_analysis):
    walls = []
    for run in range(args.runs):
        scores = fresh(frame)
        start = time.perf_counter()
        result, _ = analysis(scores, design, args.n_boot, args.jobs, student)
        walls.append(time.perf_counter() - start)
        print(f"  run {run + 1}: {walls[-1]:.2f} s (load {_load()})", flush=True)
    median = statistics.median(walls)
    print(f"  wall time, median of {args.runs}: {median:.2f} s (min {min(walls):.2f}, max {max(walls):.2f})")
    return result, median


def _rss_now() -> float:
    return MemorySampler._field("/proc/self/status", "VmRSS:")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--baseline-cells", type=int, default=18)
    parser.add_argument("--no-student", action="store_true", help="skip the 11-metric figure")
    args = parser.parse_args()

    print(machine())
    print(f"load average before (1, 5, 15 min): {_load()}")
    print(f"bootstrap_indices equal to Generator.integers: {check_index_draws()} (n, seed) checked")
    design = paper_design()
    contrasts = fairness.build_contrasts(design)
    print(f"design: {len(design)} conditions, {len(contrasts)} contrasts per (tutor, domain)")
    assert len(design) == CONDITIONS and len(contrasts) == CONTRASTS, (len(design), len(contrasts))
    frame = synthetic_scores(design, fairness.TURN_METRICS + fairness.CONVERSATION_METRICS)
    print(f"frame: {len(frame):,} dialogue scores (9 metrics), {len(frame) / 9:,.0f} dialogues")
    columns = {field.name: getattr(frame, field.name).nbytes / 2**20 for field in dataclasses.fields(frame)}
    print(
        f"frame columns: {sum(columns.values()):.0f} MiB ("
        + ", ".join(f"{k} {v:.0f}" for k, v in columns.items())
        + ")"
    )

    print("analyze(student_metrics=()): 5 turn-level + 4 conversation-level metrics")
    analysis, median = timed_runs(frame, design, args, student=False)
    n_cells = len(analysis.pedagogical) + len(analysis.conversation)
    expected = len(TUTORS) * len(DOMAINS) * CONTRASTS * 9
    print(f"cells: {n_cells:,} ({CONTRASTS} contrasts × {len(TUTORS)} tutors × {len(DOMAINS)} domains × 9 metrics)")
    assert n_cells == expected, (n_cells, expected)
    before = _rss_now()
    memory = measure_memory(lambda: full_analysis(fresh(frame), design, args.n_boot, args.jobs, False))
    print(
        f"memory during one more analysis: this process {before:.0f} MiB resident before (the frame and the"
        f" libraries), peak {memory.parent_rss:.0f} MiB; largest worker process RSS {memory.worker_rss:.0f} MiB"
        f" (shared pages included); peak PSS summed over this process and its workers {memory.total_pss:.0f} MiB"
    )
    if args.baseline_cells:
        extrapolated, identical, checked, mean_error = baseline(
            frame, design, analysis, args.n_boot, args.baseline_cells
        )
        print(f"scipy loop: {checked} cells, extrapolated to {n_cells:,} cells: {extrapolated:.0f} s")
        print(f"ratio, extrapolated scipy loop / median analysis: {extrapolated / median:.0f}×")
        print(f"bit-identical (r, |Z|, p, CI) with scipy: {identical} of {checked} cells")
        print(f"mean-difference CI vs scipy.stats.bootstrap(np.mean): largest absolute difference {mean_error:.3g}")
        if identical != checked:
            raise SystemExit("not bit-identical")

    if not args.no_student:
        del analysis, frame
        frame = synthetic_scores(design)
        print(f"analyze() with the default student metrics: {len(METRICS)} metrics, {len(frame):,} dialogue scores")
        with_student, _ = timed_runs(frame, design, args, student=True)
        print(f"cells: {sum(len(t) for t in _tables(with_student).values()):,}")
    print(f"load average at the end (1, 5, 15 min): {_load()}")


if __name__ == "__main__":
    main()
