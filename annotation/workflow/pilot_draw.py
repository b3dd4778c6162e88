"""Per-annotator pilot draws (pure): each annotator's pilot is a seeded, evenly spread draw from the stage's pilot pool.

When the researcher chooses a pilot pool larger than the stage's pilot size, every annotator labels their own draw of
pilot-size items from it, spread evenly over categories × subjects by the pilot sampler (`workflow.pilot`). The draw is
seeded by the stage and the annotator, so it is the same on every request and every door, and a handful of throwaway
identities each see a different part of the pool rather than all of it. The gate scores each annotator on their draw.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

from annotation.workflow.pilot import PoolItem, sample_pilot


def draw_seed(stage_id: int, annotator_id: int) -> int:
    """A stable seed for one annotator's draw in one stage (not guessable from a neighbour's)."""
    digest = hashlib.sha256(f"pilot-draw:{stage_id}:{annotator_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def recruit_pilot(
    pool: Sequence[PoolItem],
    size: int,
    *,
    stage_id: int,
    annotator_id: int,
    categories: Sequence[str] | None = None,
    subjects: Sequence[str] | None = None,
) -> list[int]:
    """The item ids of the annotator's pilot: the whole pool when it is no larger than ``size``, else a
    draw of ``size`` items spread as evenly as the pool allows."""
    if size <= 0 or len(pool) <= size:
        return sorted(p.id for p in pool)
    return list(
        _draw(
            tuple(sorted(pool, key=lambda p: p.id)),
            size,
            draw_seed(stage_id, annotator_id),
            tuple(categories or ()),
            tuple(subjects or ()),
        )
    )


@lru_cache(maxsize=1024)
def _draw(pool: tuple[PoolItem, ...], size: int, seed: int, categories: tuple, subjects: tuple) -> tuple[int, ...]:
    sample = sample_pilot(pool, size, categories=categories or None, subjects=subjects or None, seed=seed)
    return tuple(sample.item_ids)
