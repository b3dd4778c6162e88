"""Seeded synthetic contrast cells for calibrating the judge-corrected difference (``audits.judge_corrected``).

Pure numpy. One cell has ``questions`` questions, each asked once under condition A and once under condition B, and
belonging to one domain (the strata: domain sizes follow ``domain_shares``). Per turn:

* the human ("true") score is ``3 + 0.6·q + domain_mean[d] + δ·[side B] + ε``, ``q ~ N(0, 1)`` the question's
  difficulty shared by both sides (the pairing), ``ε ~ N(0, 0.5²)`` per turn. It is kept continuous and unclipped
  (think of a mean over several human raters) so that δ is exactly the difference of the two sides' expected
  human scores: the estimand the corrected interval should cover;
* the judge gives ``round(human + leniency[d] + η)`` clipped to 1..5, ``η ~ N(0, judge_noise_sd²)``, with a
  domain-dependent leniency the same on both sides. A ``"cue"`` judge is also harsher by ``cue_penalty`` on side B
  turns (it reacts to the condition's cue, not to the answer); a ``"noisy"`` judge is not.

Each side's human subset is drawn independently, stratified by domain: ``labels_per_stratum`` turns without
replacement from each domain, so the inclusion probability ``labels_per_stratum / domain size`` differs between
domains and the labelled turns over-represent the small ones; the domain-dependent leniency makes weighting by
1/π necessary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from audits.judge_corrected import SideData

JudgeKind = Literal["cue", "noisy"]

DOMAIN_SHARES: tuple[float, ...] = (0.4, 0.3, 0.2, 0.1)
DOMAIN_MEANS: tuple[float, ...] = (0.3, 0.0, -0.2, -0.4)
DOMAIN_LENIENCY: tuple[float, ...] = (0.3, 0.0, -0.2, 0.4)
DIFFICULTY_SD = 0.6
TURN_SD = 0.5
SCALE = (1, 5)


@dataclass(frozen=True)
class SimulatedCell:
    """A synthetic cell: both sides' data, the planted difference B − A and the domains' sizes."""

    side_a: SideData
    side_b: SideData
    true_difference: float
    stratum_sizes: tuple[int, ...]


def stratum_sizes(questions: int, domain_shares: tuple[float, ...] = DOMAIN_SHARES) -> tuple[int, ...]:
    """Questions per domain: ``questions · share`` rounded, the remainder given to the first domain."""
    shares = np.asarray(domain_shares, dtype=float)
    sizes = np.floor(questions * shares / shares.sum()).astype(int)
    sizes[0] += questions - sizes.sum()
    return tuple(int(size) for size in sizes)


def equal_allocation_probabilities(sizes: tuple[int, ...], labels_per_stratum: int) -> np.ndarray:
    """The inclusion probability of every labelled turn when each stratum gets ``labels_per_stratum`` labels."""
    if any(labels_per_stratum > size for size in sizes):
        raise ValueError(f"{labels_per_stratum} labels per stratum exceed the smallest stratum ({min(sizes)})")
    return np.concatenate([np.full(labels_per_stratum, labels_per_stratum / size) for size in sizes])


def _side(
    rng: np.random.Generator,
    domain: np.ndarray,
    difficulty: np.ndarray,
    sizes: tuple[int, ...],
    *,
    shift: float,
    judge_penalty: float,
    judge_noise_sd: float,
    labels_per_stratum: int,
) -> SideData:
    n = domain.size
    human = 3 + DIFFICULTY_SD * difficulty + np.asarray(DOMAIN_MEANS)[domain] + shift + rng.normal(0, TURN_SD, n)
    raw = human + np.asarray(DOMAIN_LENIENCY)[domain] - judge_penalty + rng.normal(0, judge_noise_sd, n)
    judge = np.clip(np.round(raw), *SCALE)
    labelled = np.concatenate(
        [
            rng.choice(np.flatnonzero(domain == stratum), labels_per_stratum, replace=False)
            for stratum in range(len(sizes))
        ]
    )
    return SideData(
        judge_all=judge,
        human=human[labelled],
        judge_labelled=judge[labelled],
        inclusion_probability=equal_allocation_probabilities(sizes, labels_per_stratum),
    )


def simulate_cell(
    seed: int,
    *,
    questions: int = 800,
    delta: float = 0.0,
    judge: JudgeKind = "noisy",
    cue_penalty: float = 0.5,
    judge_noise_sd: float = 0.8,
    labels_per_stratum: int = 20,
    domain_shares: tuple[float, ...] = DOMAIN_SHARES,
) -> SimulatedCell:
    """One seeded cell: a tutor fair (δ = 0) or with δ planted on side B, judged by a ``"cue"`` or ``"noisy"``
    judge, with ``labels_per_stratum`` human labels per domain on each side (see the module docstring)."""
    if judge not in ("cue", "noisy"):
        raise ValueError(f"judge must be 'cue' or 'noisy', got {judge!r}")
    if len(domain_shares) != len(DOMAIN_MEANS):
        raise ValueError(f"the simulation has {len(DOMAIN_MEANS)} domains, got {len(domain_shares)} shares")
    rng = np.random.default_rng(seed)
    sizes = stratum_sizes(questions, domain_shares)
    domain = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    difficulty = rng.normal(0, 1, questions)
    common = dict(judge_noise_sd=judge_noise_sd, labels_per_stratum=labels_per_stratum)
    side_a = _side(rng, domain, difficulty, sizes, shift=0.0, judge_penalty=0.0, **common)
    penalty_b = cue_penalty if judge == "cue" else 0.0
    side_b = _side(rng, domain, difficulty, sizes, shift=delta, judge_penalty=penalty_b, **common)
    return SimulatedCell(side_a=side_a, side_b=side_b, true_difference=float(delta), stratum_sizes=sizes)
