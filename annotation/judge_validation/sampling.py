"""A stratified sample of tutor turns, pure: strata (tutor × domain × condition), their allocation and a seeded draw.

Each stratum gets either its proportional share of a total size (largest-remainder rounding, so every count is within
one of the exact proportion and the counts add up to the size) or a fixed count (all its turns when it has fewer), and
the turns inside a stratum are drawn with a fixed seed. Each stratum's inclusion probability is chosen / available:
every turn of a stratum had the same chance of being drawn.

The same candidates, size (or count per stratum) and seed always give the same sample, whatever order the
candidates come in.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Literal

Stratum = tuple[Hashable, ...]
AllocationMode = Literal["proportional", "per_stratum"]


@dataclass(frozen=True)
class Candidate:
    """A tutor turn that may be sampled: its id and its stratum, e.g. (tutor, domain, condition).

    ``draw_key`` names the stratum by content (e.g. the tutor endpoint's identity, the domain, the condition's
    key) and ``order`` places the turn by content (e.g. its question's content hash and its index): with both
    set, the draw is the same on any database, whatever ids the rows got; without them the stratum's value and
    the ids stand in.
    """

    id: int
    stratum: Stratum
    draw_key: str = ""
    order: tuple = ()


@dataclass(frozen=True)
class StratumAllocation:
    stratum: Stratum
    available: int
    exact_share: float  # what the stratum was due before rounding: size × available / total, or the fixed count
    chosen: int

    @property
    def inclusion_probability(self) -> float:
        """The chance each of the stratum's turns had of being drawn (0 for a stratum given none)."""
        return self.chosen / self.available if self.available else 0.0


@dataclass(frozen=True)
class StratifiedSample:
    ids: list[int]  # chosen turn ids, grouped by stratum (strata in sorted order), each group sorted
    allocation: list[StratumAllocation] = field(default_factory=list)
    size_requested: int = 0  # the size, or the count per stratum × the strata
    seed: int = 0
    mode: AllocationMode = "proportional"
    per_stratum: int | None = None

    @property
    def short(self) -> bool:
        """True when there were fewer candidates than asked for (the whole pool, or some stratum's count):
        then those strata gave all they had."""
        return len(self.ids) < self.size_requested


def _stratum_order(stratum: Stratum) -> tuple:
    # Strata mix ints and strings; compare them as (type name, value) pairs so the order is total.
    return tuple((type(part).__name__, part) for part in stratum)


def proportional_allocation(available: dict[Stratum, int], size: int, seed: int = 0) -> dict[Stratum, int]:
    """Hamilton's largest-remainder apportionment of ``size`` over strata in proportion to ``available``.

    Every stratum gets the floor or the ceiling of its exact share (so it is within ±1 of proportional)
    and never more than it has. Ties between equal remainders are broken by a seeded shuffle, not by the
    strata's names, so no stratum is favoured systematically.
    """
    total = sum(available.values())
    if size < 0:
        raise ValueError("the sample size cannot be negative")
    if size >= total:
        return dict(available)
    strata = sorted(available, key=_stratum_order)
    exact = {s: size * available[s] / total for s in strata}
    counts = {s: math.floor(exact[s]) for s in strata}
    left = size - sum(counts.values())
    tie_breaker = random.Random(f"allocation:{seed}")
    shuffled = strata[:]
    tie_breaker.shuffle(shuffled)
    position = {s: i for i, s in enumerate(shuffled)}
    by_remainder = sorted(strata, key=lambda s: (-(exact[s] - counts[s]), position[s]))
    for stratum in by_remainder[:left]:
        counts[stratum] += 1
    return counts


def fixed_allocation(available: dict[Stratum, int], per_stratum: int) -> dict[Stratum, int]:
    """``per_stratum`` turns from every stratum, or all of a stratum's turns when it has fewer."""
    if per_stratum < 1:
        raise ValueError("the count per stratum must be at least 1")
    return {stratum: min(per_stratum, n) for stratum, n in available.items()}


def stratified_sample(
    candidates: Iterable[Candidate], size: int = 0, seed: int = 0, *, per_stratum: int | None = None
) -> StratifiedSample:
    """Draw ``size`` candidates proportionally per stratum or, with ``per_stratum``, that many from every
    stratum (``size`` is then not used), reproducibly with ``seed``."""
    by_stratum: dict[Stratum, list[int]] = defaultdict(list)
    draw_keys: dict[Stratum, str] = {}
    order: dict[int, tuple] = {}
    seen: set[int] = set()
    for candidate in candidates:
        if candidate.id in seen:
            raise ValueError(f"candidate {candidate.id} appears twice")
        seen.add(candidate.id)
        stratum = tuple(candidate.stratum)
        by_stratum[stratum].append(candidate.id)
        draw_keys[stratum] = candidate.draw_key or repr(stratum)
        order[candidate.id] = candidate.order
    available = {stratum: len(ids) for stratum, ids in by_stratum.items()}
    total = sum(available.values())
    if per_stratum is None:
        counts = proportional_allocation(available, size, seed)
        due = {s: size * n / total if total else 0.0 for s, n in available.items()}
        requested = size
    else:
        counts = fixed_allocation(available, per_stratum)
        due = {s: float(per_stratum) for s in available}
        requested = per_stratum * len(available)
    chosen: list[int] = []
    allocation = []
    for stratum in sorted(by_stratum, key=_stratum_order):
        # The input order must not change the draw: turns in content order (then id).
        ids = sorted(by_stratum[stratum], key=lambda turn: (order[turn], turn))
        # A generator per stratum, seeded by the seed and the stratum's content key: adding a stratum elsewhere
        # does not change which turns this one draws, and neither do the rows' database ids.
        rng = random.Random(f"stratum:{seed}:{draw_keys[stratum]}")
        picked = sorted(rng.sample(ids, counts[stratum]))
        chosen.extend(picked)
        allocation.append(
            StratumAllocation(
                stratum=stratum, available=available[stratum], exact_share=due[stratum], chosen=len(picked)
            )
        )
    return StratifiedSample(
        ids=chosen,
        allocation=allocation,
        size_requested=requested,
        seed=seed,
        mode="proportional" if per_stratum is None else "per_stratum",
        per_stratum=per_stratum,
    )
