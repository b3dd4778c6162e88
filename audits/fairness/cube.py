"""The scores as a cube and every contrast of an audit for every (tutor, domain, metric), vectorised."""

from __future__ import annotations

import contextlib
import hashlib
import math
import multiprocessing
import warnings
import weakref
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from audits.analysis_parameters import ANALYSIS_DEFAULTS, AnalysisParameters
from audits.fairness.contrasts import _contrast_effects, build_contrasts, contrast_seed
from audits.fairness.effect_table import ContrastResult, ContrastTable, _with_bh, is_flagged
from audits.fairness.frames import TURN_METRICS, ConditionSpec, Contrast, ScoreFrame
from audits.fairness.signed_rank import PairedEffect, _round_differences


@dataclass(frozen=True)
class _Cube:
    """Scores as values[tutor, condition, question, metric] (NaN = none), with the labels of each axis."""

    values: np.ndarray
    tutors: np.ndarray
    conditions: np.ndarray
    questions: np.ndarray
    metrics: tuple[Hashable, ...]
    question_domain: np.ndarray  # domain code per question
    domains: np.ndarray


def _factorize(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, code of each entry), as np.unique(return_inverse=True) gives them.

    Integers over a modest range (ids): a lookup table, no sort. Fixed-width strings (few labels:
    tutor, domain, metric): labels found in a sample, every entry binary-searched among them and checked
    equal to its label (labels missed by the sample are added and the search repeated) — np.unique's
    inverse for strings sorts the whole column, which is many times slower.
    """
    size = column.size
    if column.dtype.kind in "iu" and size:
        low, high = int(column.min()), int(column.max())
        span = high - low + 1
        if span <= max(4 * size, 1 << 16) and -(2**62) < low and high < 2**62:
            offset = column.astype(np.int64) - low
            present = np.zeros(span, dtype=bool)
            present[offset] = True
            code_of = np.cumsum(present) - 1
            return (np.flatnonzero(present) + low).astype(column.dtype), code_of[offset]
    if column.dtype.kind in "US" and size > 4096:
        labels = np.unique(column[np.linspace(0, size - 1, 4096).astype(np.int64)])
        while True:
            codes = np.searchsorted(labels, column)
            missed = []
            step = 1 << 16
            for start in range(0, size, step):
                part = column[start : start + step]
                found = labels[np.minimum(codes[start : start + step], labels.size - 1)] == part
                if not found.all():
                    missed.append(part[~found])
            if not missed:
                return labels, codes
            labels = np.union1d(labels, np.unique(np.concatenate(missed)))
    return np.unique(column, return_inverse=True)


_FRAME_COLUMNS = ("tutor", "domain", "question", "condition", "metric")
_CODES_CACHE: dict[int, tuple[Any, tuple, dict[str, tuple[np.ndarray, np.ndarray]]]] = {}


def _column_token(values: np.ndarray) -> tuple:
    sample = values[:: max(1, values.size // 512)]
    digest = hashlib.blake2b(np.ascontiguousarray(sample).view(np.uint8).tobytes(), digest_size=8).hexdigest()
    return (id(values), values.__array_interface__["data"][0], values.shape, values.strides, values.dtype.str, digest)


def _frame_codes(scores: ScoreFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``_factorize`` of every label column of the frame, cached for the frame's lifetime: ``analyze``
    builds three tables from one frame. The cache is checked against each column's identity, buffer and a
    sample of its values (a frame is meant to be read only; a column replaced or changed is factorized
    again)."""
    columns = {name: np.asarray(getattr(scores, name)) for name in _FRAME_COLUMNS}
    token = tuple(_column_token(values) for values in columns.values())
    cached = _CODES_CACHE.get(id(scores))
    if cached is not None and cached[0]() is scores and cached[1] == token:
        return cached[2]
    codes = {}
    for name, values in columns.items():
        labels, code = _factorize(values)
        codes[name] = (labels, code.astype(np.int32) if labels.size < 2**31 else code)
    key = id(scores)
    _CODES_CACHE[key] = (weakref.ref(scores, lambda _ref, key=key: _CODES_CACHE.pop(key, None)), token, codes)
    return codes


def _build_cube(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    metrics: Sequence[Hashable],
    question_keys: Mapping[Hashable, str] | None = None,
) -> _Cube:
    codes = _frame_codes(scores)
    metric_lookup = {m: i for i, m in enumerate(metrics)}
    metric_labels, metric_all = codes["metric"]
    to_table = np.asarray([metric_lookup.get(m, -1) for m in metric_labels.tolist()], dtype=np.int64)
    metric_code = to_table[metric_all]
    keep = metric_code >= 0
    rows = None if keep.all() else np.flatnonzero(keep)
    if rows is not None:
        metric_code = metric_code[rows]

    def factorized(name: str) -> tuple[np.ndarray, np.ndarray]:
        # the labels present among this table's rows, as if factorized on those rows alone
        labels, code = codes[name]
        if rows is not None:
            code = code[rows]
        present = np.bincount(code, minlength=labels.size) > 0
        if present.all():
            return labels, code
        return labels[present], (np.cumsum(present) - 1)[code]

    tutors, tutor_code = factorized("tutor")
    conditions, condition_code = factorized("condition")
    questions, question_code = factorized("question")
    if question_keys is not None:
        # Resample questions in the order of their content keys, not of their (database) ids.
        order = np.asarray(
            sorted(range(questions.size), key=lambda i: (question_keys.get(questions[i].item(), ""), i)), dtype=np.int64
        )
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        questions, question_code = questions[order], rank[question_code]
    domains, domain_code = factorized("domain")
    unknown = [c for c in conditions.tolist() if c not in design]
    if unknown:
        raise ValueError(f"conditions missing from the design: {unknown[:5]}")

    question_domain = np.full(questions.size, -1, dtype=np.int64)
    question_domain[question_code] = domain_code
    if np.any(question_domain[question_code] != domain_code):
        raise ValueError("a question appears under more than one domain")

    shape = (tutors.size, conditions.size, questions.size, len(metrics))
    flat = np.ravel_multi_index((tutor_code, condition_code, question_code, metric_code), shape)
    if flat.size and np.bincount(flat, minlength=math.prod(shape)).max() > 1:
        raise ValueError("more than one score for the same (tutor, question, condition, metric)")
    values = np.full(shape, np.nan)
    value = np.asarray(scores.value)
    values.ravel()[flat] = (value if rows is None else value[rows]).astype(np.float64)
    return _Cube(values, tutors, conditions, questions, tuple(metrics), question_domain, domains)


def _side_values(block: np.ndarray, side: Sequence[Sequence[int]]) -> np.ndarray:
    """Per-question side value: nanmean within each group of conditions, then the plain mean of the groups."""
    group_values = []
    for group in side:
        if len(group) == 1:
            group_values.append(block[group[0]])
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                group_values.append(np.nanmean(block[list(group)], axis=0))
    total = group_values[0]
    for value in group_values[1:]:
        total = total + value
    return total if len(group_values) == 1 else total / len(group_values)


def contrast_pairs(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    *,
    tutor: Hashable,
    domain: Hashable,
    contrast: Contrast,
    metric: Hashable,
    metrics: Sequence[Hashable] = TURN_METRICS,
    question_keys: Mapping[Hashable, str] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(questions, side A values, side B values) of one cell, aligned as contrast_table resamples them.

    ``metrics`` must be the table's metrics: they decide which questions the cell resamples. Passing the
    two value arrays to ``paired_effect`` (with the row's ``seed``) reproduces the row exactly; the page
    uses the question ids to show the paired transcripts.
    """
    cube = _build_cube(scores, design, metrics, question_keys)
    t = int(np.flatnonzero(cube.tutors == tutor)[0])
    d = int(np.flatnonzero(cube.domains == domain)[0])
    m = list(cube.metrics).index(metric)
    questions, a, b = _contrast_block(cube, t, d, contrast)
    return cube.questions[questions], a[:, m], b[:, m]


def _contrast_sides(cube: _Cube, tutor: int, domain: int, contrast: Contrast) -> tuple[np.ndarray, ...] | None:
    """(the domain's questions, side A values, side B values: question × metric), or None when a side has
    no condition in the cube."""
    condition_index = {c: i for i, c in enumerate(cube.conditions.tolist())}

    def resolve(side: tuple[tuple[Hashable, ...], ...]) -> list[list[int]] | None:
        groups = [[condition_index[c] for c in group if c in condition_index] for group in side]
        return None if any(not g for g in groups) else groups

    side_a, side_b = resolve(contrast.side_a), resolve(contrast.side_b)
    if side_a is None or side_b is None:
        return None
    in_domain = np.flatnonzero(cube.question_domain == domain)
    block = cube.values[tutor][:, in_domain, :]  # (condition, question, metric)
    return in_domain, _side_values(block, side_a), _side_values(block, side_b)


def _contrast_block(cube: _Cube, tutor: int, domain: int, contrast: Contrast) -> tuple[np.ndarray, ...]:
    sides = _contrast_sides(cube, tutor, domain, contrast)
    if sides is None:
        empty = np.empty((0, len(cube.metrics)))
        return np.empty(0, dtype=np.int64), empty, empty
    in_domain, a, b = sides
    both = ~np.isnan(a) & ~np.isnan(b)
    universe = np.flatnonzero(both.any(axis=1))  # questions with at least one complete metric pair
    return in_domain[universe], a[universe], b[universe]


@dataclass(frozen=True)
class _BlockJob:
    """What analysing one (tutor, domain) block needs; a forked worker inherits it. ``metric_sets``:
    column indices of the cube's metrics, one tuple per table."""

    cube: _Cube
    contrasts: tuple[Contrast, ...]
    params: AnalysisParameters
    seeds: Mapping[tuple[int, int, int], int]  # (tutor, domain, contrast index) -> bootstrap seed
    metric_sets: tuple[tuple[int, ...], ...]

    def run(self, task: tuple[int, int, int, int]) -> list[list[tuple[int, list[PairedEffect], np.ndarray]]]:
        """For (tutor, domain, first contrast, end contrast): per metric set, (contrast index, effects,
        questions) of every contrast of the range with a question."""
        t, d, first, end = task
        out: list[list[tuple[int, list[PairedEffect], np.ndarray]]] = [[] for _ in self.metric_sets]
        for i in range(first, end):
            contrast = self.contrasts[i]
            sides = _contrast_sides(self.cube, t, d, contrast)
            if sides is None:
                continue
            in_domain, a, b = sides
            both = ~np.isnan(a) & ~np.isnan(b)
            # tables whose questions coincide share the resamples: one kernel call for their metrics
            by_universe: dict[bytes, list[int]] = {}
            universes = [np.flatnonzero(both[:, list(columns)].any(axis=1)) for columns in self.metric_sets]
            for k, universe in enumerate(universes):
                if universe.size:
                    by_universe.setdefault(universe.tobytes(), []).append(k)
            for members in by_universe.values():
                universe = universes[members[0]]
                columns = [c for k in members for c in self.metric_sets[k]]
                d_values = _round_differences(
                    a[universe][:, columns], b[universe][:, columns], self.params.round_decimals
                )
                effects = _contrast_effects(d_values, self.params, self.seeds[(t, d, i)])
                offset = 0
                for k in members:
                    width = len(self.metric_sets[k])
                    out[k].append((i, effects[offset : offset + width], in_domain[universe]))
                    offset += width
        return out


_FORKED_JOB: _BlockJob | None = None  # in a forked worker: the job it runs (inherited, not pickled)


def _forked_task(task: tuple[int, int, int, int]) -> tuple[tuple[int, int, int, int], list]:
    assert _FORKED_JOB is not None
    return task, _FORKED_JOB.run(task)


def _one_blas_thread() -> contextlib.AbstractContextManager:
    """One BLAS thread while the kernel runs: its dense products are small, and OpenBLAS threads (two on
    two cores, competing with the workers or other processes) slow them down several times."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def _start_worker(job: _BlockJob) -> None:
    """A forked worker's initializer: its job, and one BLAS thread."""
    global _FORKED_JOB
    _FORKED_JOB = job
    _one_blas_thread()


def _dispatch_blocks(
    job: _BlockJob, blocks: Sequence[tuple[int, int]], n_jobs: int
) -> Iterator[tuple[tuple[int, int], list]]:
    """(block, result) for every block, as each finishes (in order when ``n_jobs`` <= 1); a result is
    per metric set, the (contrast index, effects, questions) of the block's contrasts in order.

    With ``n_jobs`` > 1: that many forked worker processes (the analysis is numpy code that holds the
    GIL in most of its calls, so threads do not scale). Blocks are split into ranges of contrasts, about a
    dozen tasks per worker, largest first, so the workers finish together; the job, cube included, is
    inherited by the fork, and only the results travel back. Where fork is unavailable or not allowed
    (a daemonic process), threads. Results never depend on the number of jobs.
    """
    n_contrasts = len(job.contrasts)
    if n_jobs <= 1 or not blocks:
        for t, d in blocks:
            yield (t, d), job.run((t, d, 0, n_contrasts))
        return
    workers = min(n_jobs, len(blocks) * max(1, n_contrasts))
    parts = max(1, min(n_contrasts, math.ceil(12 * workers / len(blocks))))
    bounds = [round(k * n_contrasts / parts) for k in range(parts + 1)]
    tasks = [(t, d, bounds[k], bounds[k + 1]) for t, d in blocks for k in range(parts) if bounds[k] < bounds[k + 1]]
    size = {d: int(np.count_nonzero(job.cube.question_domain == d)) for _, d in blocks}
    tasks.sort(key=lambda task: -size[task[1]] * (task[3] - task[2]))
    pending = {block: parts for block in blocks}
    done: dict[tuple[int, int], dict[int, list]] = {block: {} for block in blocks}

    def finished(results: Iterable[tuple[tuple[int, int, int, int], list]]) -> Iterator[tuple[tuple[int, int], list]]:
        for (t, d, first, _), result in results:
            done[(t, d)][first] = result
            pending[(t, d)] -= 1
            if not pending[(t, d)]:
                parts_in_order = [done[(t, d)][k] for k in sorted(done[(t, d)])]
                yield (t, d), [[row for part in parts_in_order for row in part[k]] for k in range(len(job.metric_sets))]

    try:
        if multiprocessing.current_process().daemon:
            raise ValueError("daemonic processes cannot have children")
        # fork: initargs are inherited, not pickled
        pool = multiprocessing.get_context("fork").Pool(workers, initializer=_start_worker, initargs=(job,))
    except (ValueError, OSError):
        with ThreadPoolExecutor(max_workers=workers) as threads:
            yield from finished(zip(tasks, threads.map(job.run, tasks), strict=True))
        return
    try:
        yield from finished(pool.imap_unordered(_forked_task, tasks))
    finally:
        pool.terminate()
        pool.join()


def contrast_table(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    *,
    metrics: Sequence[Hashable] = TURN_METRICS,
    parameters: AnalysisParameters = ANALYSIS_DEFAULTS,
    level_order: Mapping[str, Sequence[str]] | None = None,
    tutors: Sequence[Hashable] | None = None,
    domains: Sequence[Hashable] | None = None,
    tutor_identity: Mapping[Hashable, str] | None = None,
    question_keys: Mapping[Hashable, str] | None = None,
    n_jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    **overrides: Any,
) -> ContrastTable:
    """Every contrast of ``build_contrasts(design)`` for every (tutor, domain, metric) in ``scores``.

    A cell's questions are those of the domain where both sides have a score for at least one of
    ``metrics``; each metric's pairs are the questions where both sides have that metric. One index
    matrix (``bootstrap_indices``, seed ``contrast_seed``) per (tutor, domain, contrast) serves all metrics.
    Each row equals ``paired_effect(a, b, seed=row.seed, ...)`` on the arrays of ``contrast_pairs``.

    p_adjusted: Benjamini–Hochberg over ``p_test`` of the sufficient cells of one family of this table
    (explicit vs_control, explicit within, implicit names, opposite), across tutors, domains and metrics;
    NaN for insufficient cells; ``violation_bh`` flags p_adjusted < fdr_q with |r| >= threshold.
    ``tutors``/``domains`` restrict the analysis (the BH families shrink with it).

    Seeds and resampling depend on content only, never on database ids: a cell's seed comes from ``seed``,
    ``tutor_identity[tutor]`` (e.g. the endpoint's provider, URL, model and sampling; default str(tutor)),
    the domain and the contrast's levels; with ``question_keys`` (question → content key) the questions
    are resampled in the order of their keys, so re-imported questions resample the same way.
    ``n_jobs`` worker processes (forked; threads where fork is unavailable) share the (tutor, domain)
    blocks; results do not depend on it. ``parameters`` (audits.analysis_parameters) hold every choice that
    changes a number; ``overrides`` change some of them by name (``n_boot=300, seed=4``). ``progress`` is
    called as ``progress(cells_done, cells_total)`` (cells = contrast × metric rows) after each block.
    """
    return _contrast_tables(
        scores,
        design,
        metric_sets=(tuple(metrics),),
        parameters=parameters.replaced(**overrides),
        level_order=level_order,
        tutors=tutors,
        domains=domains,
        tutor_identity=tutor_identity,
        question_keys=question_keys,
        n_jobs=n_jobs,
        progress=progress,
    )[0]


def _contrast_tables(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    *,
    metric_sets: Sequence[Sequence[Hashable]],
    parameters: AnalysisParameters = ANALYSIS_DEFAULTS,
    level_order: Mapping[str, Sequence[str]] | None = None,
    tutors: Sequence[Hashable] | None = None,
    domains: Sequence[Hashable] | None = None,
    tutor_identity: Mapping[Hashable, str] | None = None,
    question_keys: Mapping[Hashable, str] | None = None,
    n_jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    **overrides: Any,
) -> list[ContrastTable]:
    """``contrast_table`` for several metric sets at once, one table each (BH families per table), equal
    to separate calls; where two sets' questions coincide in a (tutor, domain, contrast), its resamples are
    drawn once for both. ``progress`` counts the cells of all the tables. (A question under two domains
    is an error here even if the two domains' scores belong to different sets.)"""
    params = parameters.replaced(**overrides)
    seed = params.seed
    contrasts = build_contrasts(design, level_order=level_order)
    metric_sets = [tuple(metrics) for metrics in metric_sets]
    all_metrics = tuple(dict.fromkeys(m for metrics in metric_sets for m in metrics))
    cube = _build_cube(scores, design, all_metrics, question_keys)
    column_of = {m: i for i, m in enumerate(all_metrics)}

    def identity(tutor: Hashable) -> Hashable:
        return tutor if tutor_identity is None else tutor_identity.get(tutor, tutor)

    tutor_codes = [i for i, t in enumerate(cube.tutors.tolist()) if tutors is None or t in tutors]
    domain_codes = [i for i, d in enumerate(cube.domains.tolist()) if domains is None or d in domains]
    blocks = [(t, d) for t in tutor_codes for d in domain_codes]
    seeds = {
        (t, d, i): contrast_seed(seed, identity(cube.tutors[t].item()), cube.domains[d], contrast)
        for t, d in blocks
        for i, contrast in enumerate(contrasts)
    }
    job = _BlockJob(
        cube, tuple(contrasts), params, seeds, tuple(tuple(column_of[m] for m in metrics) for metrics in metric_sets)
    )
    per_block = len(contrasts) * sum(len(metrics) for metrics in metric_sets)
    cells_total = len(blocks) * per_block
    cells_done = 0
    by_block: dict[tuple[int, int], list] = {}
    with _one_blas_thread():
        for block, chunk in _dispatch_blocks(job, blocks, n_jobs):
            by_block[block] = chunk
            cells_done += per_block
            if progress is not None:
                progress(cells_done, cells_total)

    tables = []
    for k, metrics in enumerate(metric_sets):
        results = [
            (contrasts[i], t, d, effects, questions) for t, d in blocks for i, effects, questions in by_block[(t, d)][k]
        ]
        rows: list[ContrastResult] = []
        for contrast, t, d, effects, questions in results:
            cell_seed = contrast_seed(seed, identity(cube.tutors[t].item()), cube.domains[d], contrast)
            for metric, result in zip(metrics, effects, strict=True):
                rows.append(
                    ContrastResult(
                        tutor=cube.tutors[t].item(),
                        domain=cube.domains[d].item(),
                        kind=contrast.kind,
                        family=contrast.family,
                        dimension=contrast.dimension,
                        level_a=contrast.level_a,
                        level_b=contrast.level_b,
                        metric=metric,
                        n_questions=int(questions.size),
                        n=result.n,
                        n_nonzero=result.n_nonzero,
                        r=result.r,
                        z=result.z,
                        p=result.p,
                        p_adjusted=math.nan,
                        ci_low=result.ci_low,
                        ci_high=result.ci_high,
                        violation=result.violation,
                        insufficient=result.insufficient,
                        n_boot_degenerate=result.n_boot_degenerate,
                        seed=cell_seed,
                        rule=params.rule,
                        p_test=result.p_test,
                        p_method=result.p_method,
                        mean_diff=result.mean_diff,
                        mean_diff_ci_low=result.mean_diff_ci_low,
                        mean_diff_ci_high=result.mean_diff_ci_high,
                        share_b_higher=result.share_b_higher,
                        share_a_higher=result.share_a_higher,
                        saturated=result.saturated,
                    )
                )
        tables.append(
            ContrastTable(
                rows=tuple(_with_bh(rows, params)), parameters=params, metrics=metrics, contrasts=tuple(contrasts)
            )
        )
    return tables


def cell_flagged(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    *,
    tutor: Hashable,
    domain: Hashable,
    dimension: str,
    metric: Hashable,
    kind: str = "explicit",
    family: str = "within",
    metrics: Sequence[Hashable] = TURN_METRICS,
    **options: Any,
) -> bool:
    """Analyse one (tutor, domain) of a frame and say whether (dimension, metric) is flagged there.

    For calibration: plant an effect in a simulated audit and count how often this returns True. The
    row is the one ``contrast_table(scores, design, metrics=metrics, **options)`` gives (BH aside).
    """
    table = contrast_table(scores, design, metrics=metrics, tutors=[tutor], domains=[domain], **options)
    return is_flagged(table, tutor=tutor, domain=domain, dimension=dimension, metric=metric, kind=kind, family=family)
