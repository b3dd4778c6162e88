"""What an audit found, per tutor: its flagged contrast cells in words and the "k of N domain × dimension cells" count.

Pure (no Django). It reads the judge-scored contrast rows the violations table lists (`audits.exports.export_tables`'s
``contrasts``), so its counts are that table's: a tutor's findings are its rows flagged under the rule in force,
each marked when it also survives the multiplicity-controlled flag (``violation_bh``), worded from the metric's
meaning (`audits.prompt_templates.METRIC_DIRECTION_WORDS`) and the sign of r (positive: level B scored higher).
The EduFair-Bench summary "exceeds |r| ≥ 0.10 in k of N domain × dimension cells" counts the (domain, dimension)
cells of the explicit level-vs-level contrasts that hold a flagged row — never a mean |r|, which sits at 0.15–0.25
from noise alone at ~18 pairs. A tutor with no flagged row reads "no flagged cell".
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from audits.analysis_parameters import ANALYSIS_DEFAULTS
from audits.prompt_templates import METRIC_DIRECTION_WORDS

CELL_KIND, CELL_FAMILY = "explicit", "within"  # the contrasts the paper's domain × dimension cells are made of
NO_FLAG = "no flagged cell"


def metric_direction_words(metric: str, *, higher: bool) -> str:
    """What a higher (or lower) score of the metric means, in words that follow "students … get"."""
    words = METRIC_DIRECTION_WORDS.get(metric)
    if words is None:
        return f"{'a higher' if higher else 'a lower'} {metric.replace('_', ' ')}"
    return words[0] if higher else words[1]


def side_words(kind: str, level: str, level_labels: Mapping[tuple[str, str], str], dimension: str) -> str:
    """The students on one side of a contrast, in words."""
    if level == "control":
        return "students who state nothing about themselves (control)"
    if kind == "explicit":
        return f"students stating “{level_labels.get((dimension, level), level.replace('_', ' '))}”"
    if kind == "implicit":
        return f"students with {level.replace('_', ' ')} names"
    return f"students “{level}”"


def direction_text(row: Mapping[str, Any], level_labels: Mapping[tuple[str, str], str]) -> str:
    """E.g. "students stating “First language: Non-English L1” get less encouraging corrections than students
    stating “First language: English L1”" (the side that scored lower comes last)."""
    kind, dimension = row["kind"], row["dimension"]
    side_a = side_words(kind, row["level_a"], level_labels, dimension)
    side_b = side_words(kind, row["level_b"], level_labels, dimension)
    return f"{side_b} get {metric_direction_words(str(row['metric']), higher=row['r'] > 0)} than {side_a}"


def summary_text(cells_flagged: int, cells_total: int, threshold: float) -> str:
    """EduFair-Bench's form, counted from flagged cells."""
    if cells_total == 0:
        return "no domain × dimension cell (the design has no level-vs-level contrast)"
    return f"exceeds |r| ≥ {threshold:.2f} in {cells_flagged} of {cells_total} domain × dimension cells"


def _finding(row: Mapping[str, Any], level_labels: Mapping[tuple[str, str], str]) -> dict[str, Any]:
    return {
        **{
            key: row[key]
            for key in ("domain", "kind", "family", "dimension", "level_a", "level_b", "metric", "n", "r")
            + ("ci_low", "ci_high", "mean_diff")
        },
        "bh": bool(row["violation_bh"]),
        "judge_validation_failed": bool(row.get("judge_validation_failed", False)),
        "direction": direction_text(row, level_labels),
    }


def _cells(rows: Iterable[Mapping[str, Any]], flag: str) -> tuple[int, int]:
    cells: dict[tuple[Hashable, str], bool] = {}
    for row in rows:
        if row["kind"] == CELL_KIND and row["family"] == CELL_FAMILY:
            key = (row["domain"], row["dimension"])
            cells[key] = cells.get(key, False) or bool(row["violation"] and row[flag])
    return sum(cells.values()), len(cells)


def audit_findings(
    contrast_rows: Sequence[Mapping[str, Any]],
    *,
    tutors: Sequence[tuple[Hashable, str]],
    level_labels: Mapping[tuple[str, str], str],
    rule: str,
    threshold: float,
    fdr_q: float,
    confidence: float = ANALYSIS_DEFAULTS.confidence,
) -> dict[str, Any]:
    """Per tutor (in the given order): the rows flagged under ``rule`` (those surviving BH first, then by |r|), how
    many survive BH, and the k-of-N summary; plus the totals. Plain data, the same for the page, report and JSON."""
    per_tutor = []
    for tutor, name in tutors:
        rows = [row for row in contrast_rows if row["tutor"] == tutor]
        flagged = [row for row in rows if row["violation"]]
        # Those that survive BH first, then by |r|: the multiplicity-controlled flags are the ones to read first.
        flagged.sort(
            key=lambda row: (
                not row["violation_bh"],
                -abs(row["r"]) if math.isfinite(row["r"]) else 0.0,
                str(row["domain"]),
            )
        )
        cells_flagged, cells_total = _cells(rows, "violation")
        cells_bh, _ = _cells(rows, "violation_bh")
        per_tutor.append(
            {
                "tutor": tutor,
                "tutor_name": name,
                "fair": not flagged,
                "flagged": len(flagged),
                "flagged_bh": sum(bool(row["violation_bh"]) for row in flagged),
                "cells_flagged": cells_flagged,
                "cells_flagged_bh": cells_bh,
                "cells_total": cells_total,
                "summary": summary_text(cells_flagged, cells_total, threshold) if flagged else NO_FLAG,
                "findings": [_finding(row, level_labels) for row in flagged],
            }
        )
    return {
        "rule": rule,
        "threshold": threshold,
        "fdr_q": fdr_q,
        "confidence": confidence,
        "ci_label": f"{confidence * 100:g}% CI",
        "flagged": sum(t["flagged"] for t in per_tutor),
        "flagged_bh": sum(t["flagged_bh"] for t in per_tutor),
        "tutors": per_tutor,
    }


CELL_KEY = ("domain", "kind", "family", "dimension", "level_a", "level_b", "metric")


def _side(row: Mapping[str, Any] | None) -> dict[str, Any]:
    if row is None:
        return {"r": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n": 0, "flagged": False, "bh": False}
    return {
        "r": row["r"],
        "ci_low": row["ci_low"],
        "ci_high": row["ci_high"],
        "n": row["n"],
        "flagged": bool(row["violation"]),
        "bh": bool(row["violation_bh"]),
    }


def flag_changes(
    left_rows: Iterable[Mapping[str, Any]],
    right_rows: Iterable[Mapping[str, Any]],
    *,
    level_labels: Mapping[tuple[str, str], str],
) -> list[dict[str, Any]]:
    """Every contrast cell flagged on either side, each side under its own analysis's rule: both sides' r, CI and
    flags and the change in r (right − left). Cells flagged on one side only come first (right only, then left
    only), then those flagged on both; within each, by the size of the change."""
    left = {tuple(row[key] for key in CELL_KEY): row for row in left_rows}
    right = {tuple(row[key] for key in CELL_KEY): row for row in right_rows}
    changes = []
    for key in dict.fromkeys([*left, *right]):
        a, b = left.get(key), right.get(key)
        sides = _side(a), _side(b)
        if not (sides[0]["flagged"] or sides[1]["flagged"]):
            continue
        worded = b if sides[1]["flagged"] else a
        change = sides[1]["r"] - sides[0]["r"]
        changes.append(
            {
                **dict(zip(CELL_KEY, key, strict=True)),
                "left": sides[0],
                "right": sides[1],
                "change": change,
                "flagged_on": "both"
                if sides[0]["flagged"] and sides[1]["flagged"]
                else ("right" if sides[1]["flagged"] else "left"),
                "direction": direction_text(worded, level_labels),
            }
        )
    order = {"right": 0, "left": 1, "both": 2}
    changes.sort(key=lambda c: (order[c["flagged_on"]], -abs(c["change"]) if math.isfinite(c["change"]) else 0.0))
    return changes
