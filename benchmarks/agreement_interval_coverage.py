"""Coverage of the bootstrap intervals of Krippendorff's α, Fleiss' κ, Cohen's κ and Gwet's AC1 at nominal 95 %.

Synthetic ratings: ``--raters`` raters × ``--items`` items on an ordered three-point scale (0, 1, 2); each item's
true value is drawn with shares 60 / 30 / 10 %, and each rater reports it with probability ``--keep`` and
otherwise a value drawn uniformly from the scale. The population value of each coefficient is the coefficient on
one very large sample (``--population`` items, its own seed). Over ``--seeds`` seeds, each sample goes through
``annotation.agreement_intervals``: α (ordinal, all raters), Fleiss' κ (all raters), Cohen's κ (linear
weights, raters 1 and 2) and AC1 (all raters), each with ``--boot`` resamples; an interval covers when
low ≤ population value ≤ high. Aim: every coverage ≥ 93 %.

    .venv/bin/python benchmarks/agreement_interval_coverage.py [--seeds 500] [--items 100] [--raters 3]
        [--boot 1000] [--keep 0.7] [--population 200000]

Exits 1 if an aim is missed.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from annotation.agreement import cohen_kappa, fleiss_kappa_from_counts, krippendorff_alpha  # noqa: E402
from annotation.agreement_intervals import ac1_interval, alpha_interval, cohen_interval, fleiss_interval  # noqa: E402
from annotation.gwet import gwet_ac_from_counts, weight_matrix  # noqa: E402

SCALE = (0.0, 1.0, 2.0)
SHARES = (0.6, 0.3, 0.1)
AIM = 0.93


def simulate(rng: np.random.Generator, raters: int, items: int, keep: float) -> np.ndarray:
    """Raters × items ratings on SCALE."""
    truth = rng.choice(len(SCALE), size=items, p=SHARES)
    noise = rng.integers(0, len(SCALE), size=(raters, items))
    return np.where(rng.random((raters, items)) < keep, truth, noise).astype(float)


def population_values(raters: int, keep: float, size: int) -> dict[str, float]:
    data = simulate(np.random.default_rng(2**31 - 1), raters, size, keep)
    counts = np.stack([(data == v).sum(axis=0) for v in SCALE], axis=1)
    return {
        "alpha": krippendorff_alpha(data, "ordinal").value,
        "fleiss": fleiss_kappa_from_counts(counts).value,
        "kappa": cohen_kappa(list(data[0]), list(data[1]), "linear", labels=list(SCALE)).value,
        "ac1": gwet_ac_from_counts(counts, weight_matrix(SCALE)),
    }


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=500)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--raters", type=int, default=3)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--keep", type=float, default=0.7)
    parser.add_argument("--population", type=int, default=200_000)
    args = parser.parse_args()

    started = time.perf_counter()
    truth = population_values(args.raters, args.keep, args.population)
    covered = {name: 0 for name in truth}
    defined = {name: 0 for name in truth}
    widths = {name: [] for name in truth}
    for seed in range(args.seeds):
        data = simulate(np.random.default_rng(seed), args.raters, args.items, args.keep)
        pairs = [(i, data[0, i], data[1, i]) for i in range(args.items)]
        intervals = {
            "alpha": alpha_interval(data, "ordinal", n_boot=args.boot),
            "fleiss": fleiss_interval(data.T, n_boot=args.boot),
            "kappa": cohen_interval(pairs, SCALE, weights="linear", n_boot=args.boot),
            "ac1": ac1_interval(data.T, SCALE, n_boot=args.boot),
        }
        for name, interval in intervals.items():
            if interval["low"] is None:
                continue
            defined[name] += 1
            covered[name] += interval["low"] <= truth[name] <= interval["high"]
            widths[name].append(interval["high"] - interval["low"])
    elapsed = time.perf_counter() - started

    print(f"CPU: {cpu_model()}; Python {platform.python_version()}; {elapsed:.0f} s")
    print(
        f"{args.seeds} seeds, {args.raters} raters x {args.items} items, keep {args.keep}, "
        f"{args.boot} resamples, population {args.population} items"
    )
    print("| coefficient | population value | coverage | defined | mean width |")
    print("|---|---|---|---|---|")
    ok = True
    for name in truth:
        coverage = covered[name] / defined[name] if defined[name] else float("nan")
        ok &= coverage >= AIM
        print(
            f"| {name} | {truth[name]:.4f} | {coverage:.1%} | {defined[name]}/{args.seeds} "
            f"| {np.mean(widths[name]):.3f} |"
        )
    print("aim met" if ok else f"AIM MISSED: coverage below {AIM:.0%}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
