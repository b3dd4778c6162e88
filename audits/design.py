"""Audit design preview: how many dialogues, model calls and pairs per contrast a design yields.

Pure: no Django. Question selection is stratified by domain: per domain, all questions, a fraction, or at
most a count, drawn with a seeded generator from the ids sorted — so the same bank and seed give the same
subsample. A tutor may run on a further subsample of that selection (the paper ran GPT-5-mini on a fixed
stratified 30% per domain: 272 / 150 / 150 of 907 / 500 / 500).

Upper bound of model calls (the engine may stop a dialogue earlier; it never makes more calls than this):

    per dialogue  ≤ T_max tutor calls
                  + T_max student calls   (a student reply or opening per tutor turn)
                  + T_max × judge_attempts judge calls   (one JSON rubric call per tutor turn, re-asked at most
                                                          judge_attempts − 1 times when unparsable)
                  + T_max × reveal_checks reveal/confirm checks   (one model check per tutor turn)
                  = T_max × (2 + judge_attempts + reveal_checks)
    total         = that × dialogues, dialogues = Σ_tutors Σ_domains questions(tutor, domain) × conditions

Contrasts are the analysis's own: `audits.fairness.build_contrasts` over `audits.conditions.analysis_design`
of the conditions, so the preview lists exactly the contrasts (`fairness.Contrast.key`) an audit of this
design will report. Pairs per contrast: every condition runs on every selected question, so a contrast
(tutor, domain, A vs B) has as many pairs as the tutor has questions in that domain — fewer in the final
analysis if dialogues fail or a metric never applies. A contrast below `min_pairs` (15, EduFair-Bench) is
reported as insufficient; for the others, `fairness.min_detectable_effect` says the smallest |r| the test
finds with 80 % power at α = 0.05, per contrast family and tutor × domain. The smallest |r| the preview shows
is the larger of that and the rule's |r| threshold (`violation_rules.DEFAULT_THRESHOLD`): a cell below the
threshold is never flagged, however many pairs it has, so from about 785 pairs on the threshold decides, not
the data. Beside it, the chance of a flag at that |r|: by the rule alone, and by the multiplicity-controlled
flag (Benjamini–Hochberg within the cell's family) — `flag_power`, an analytic normal approximation.

What a design costs and what stands in its launch's way is `audits.design_launch`; the human labels a
judge-corrected reading of it needs, `audits.design_label_plan`.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from zlib import crc32

import numpy as np
from scipy import special

from . import fairness
from .conditions import ConditionSpec, analysis_condition, analysis_design
from .judge import DEFAULT_JUDGE_ATTEMPTS

# The analysis's defaults the preview plans for (audits.analysis_parameters): the rule's |r| threshold, the
# minimum pairs, the test's α and the BH q.
ANALYSIS_DEFAULTS = fairness.ANALYSIS_DEFAULTS
MIN_PAIRS = ANALYSIS_DEFAULTS.min_pairs

# The analysis's contrast families (kind, family), in the order the page lists them, with how to say them.
CONTRAST_FAMILIES: dict[tuple[str, str], str] = {
    ("explicit", "vs_control"): "explicit: each level vs control",
    ("explicit", "within"): "explicit: levels within a dimension",
    ("implicit", "names"): "implicit: name cells",
    ("opposite", "opposite"): "opposite 2 × 2",
}


@dataclass(frozen=True)
class QuestionSelection:
    """Which questions: per domain all of them, a fraction (0 < f ≤ 1), or at most `count`."""

    domains: tuple[str, ...]
    fraction: float | None = None
    count: int | None = None
    per_domain: Mapping[str, float | int] = field(
        default_factory=dict
    )  # overrides: a float ≤ 1 is a fraction, an int a count
    seed: int = 0

    def __post_init__(self):
        if self.fraction is not None and self.count is not None:
            raise ValueError("choose a fraction or a count per domain, not both")
        if self.fraction is not None and not 0 < self.fraction <= 1:
            raise ValueError("the fraction must lie in (0, 1]")
        if self.count is not None and self.count < 0:
            raise ValueError("the count must not be negative")


@dataclass(frozen=True)
class TutorPlan:
    label: str
    fraction: float | None = None  # a further stratified subsample of the selection for this tutor


@dataclass(frozen=True)
class CallBudget:
    t_max: int = 10
    judge_attempts: int = DEFAULT_JUDGE_ATTEMPTS
    reveal_checks: int = 1

    @property
    def per_dialogue(self) -> int:
        return self.t_max * (2 + self.judge_attempts + self.reveal_checks)


def subsample_size(available: int, *, fraction: float | None = None, count: int | None = None) -> int:
    """Round half up, as a person would: 30% of 907 is 272."""
    if fraction is not None:
        return min(available, int(np.floor(fraction * available + 0.5)))
    if count is not None:
        return min(available, count)
    return available


def _domain_rng(seed: int, domain: str, salt: str = "") -> np.random.Generator:
    # One generator per domain (and tutor), so adding a domain does not change another domain's sample.
    return np.random.default_rng([seed, crc32(f"{domain}|{salt}".encode())])


def stratified_subsample(
    ids_by_domain: Mapping[str, Sequence[int]],
    *,
    fraction: float | None = None,
    count: int | None = None,
    per_domain: Mapping[str, float | int] | None = None,
    seed: int = 0,
    salt: str = "",
) -> dict[str, list[int]]:
    chosen = {}
    for domain, ids in ids_by_domain.items():
        ordered = sorted(ids)
        override = (per_domain or {}).get(domain)
        if override is not None:
            size = (
                subsample_size(len(ordered), fraction=float(override))
                if isinstance(override, float) and override <= 1
                else subsample_size(len(ordered), count=int(override))
            )
        else:
            size = subsample_size(len(ordered), fraction=fraction, count=count)
        if size == len(ordered):
            chosen[domain] = ordered
            continue
        picks = _domain_rng(seed, domain, salt).choice(len(ordered), size=size, replace=False)
        chosen[domain] = [ordered[i] for i in sorted(picks)]
    return chosen


def select_questions(ids_by_domain: Mapping[str, Sequence[int]], selection: QuestionSelection) -> dict[str, list[int]]:
    wanted = {domain: ids_by_domain.get(domain, []) for domain in selection.domains}
    return stratified_subsample(
        wanted, fraction=selection.fraction, count=selection.count, per_domain=selection.per_domain, seed=selection.seed
    )


@dataclass
class TutorRow:
    label: str
    questions: dict[str, int]  # per domain
    dialogues: int
    calls_upper_bound: int


@dataclass
class ContrastRow:
    tutor: str
    domain: str
    contrast: fairness.Contrast
    pairs: int
    min_pairs: int = MIN_PAIRS

    @property
    def insufficient(self) -> bool:
        return self.pairs < self.min_pairs


@dataclass(frozen=True)
class ContrastLine:
    """One contrast of the design (B − A), with how many conditions each side pools."""

    contrast: fairness.Contrast
    conditions_a: int
    conditions_b: int

    @classmethod
    def of(cls, contrast: fairness.Contrast) -> "ContrastLine":
        return cls(contrast, sum(map(len, contrast.side_a)), sum(map(len, contrast.side_b)))


def flag_power(
    n_pairs: int,
    r: float,
    *,
    family_size: int = 1,
    alpha: float = ANALYSIS_DEFAULTS.alpha,
    fdr_q: float = ANALYSIS_DEFAULTS.fdr_q,
    threshold: float = ANALYSIS_DEFAULTS.threshold,
    adjusted: bool = False,
) -> float:
    """The chance that a cell with true effect ``r`` and ``n_pairs`` pairs is flagged — an analytic normal
    approximation, no simulation.

    On the r = Z/sqrt(N) scale (as ``fairness.min_detectable_effect``) Z ~ N(r sqrt(n), 1) and the observed
    r is Z/sqrt(n). Unadjusted (the rule): two-sided p < ``alpha`` — the calibrated rule's test, which its
    CI condition nearly always accompanies — and |r| >= ``threshold``. ``adjusted=True`` (the
    multiplicity-controlled flag): Benjamini–Hochberg at ``fdr_q`` within a family of ``family_size`` cells
    with this cell the only real effect, approximated by BH's first step p <= fdr_q / family_size. That is a
    lower bound (BH never needs less): exact when the cell is alone, within about a percentage point of BH
    simulated with the other cells null, and pessimistic when other cells of the family carry real effects
    too. Returns P(|Z| >= max(z_{1 - level/2}, threshold sqrt(n))), both tails.
    """
    if n_pairs < 1 or family_size < 1:
        return float("nan")
    level = fdr_q / family_size if adjusted else alpha
    root_n = float(np.sqrt(n_pairs))
    cut = max(float(special.ndtri(1 - level / 2)), threshold * root_n)
    shift = abs(r) * root_n
    return float(special.ndtr(shift - cut) + special.ndtr(-shift - cut))


@dataclass(frozen=True)
class FamilyPower:
    """One contrast family for one tutor × domain: how many contrasts, their pairs, and the smallest
    effect they can detect (None without pairs).

    ``test_min_detectable_effect`` is the test's (|r|, two-sided α = 0.05, power 0.8);
    ``min_detectable_effect``, the one shown, is the larger of that and the rule's |r| ``threshold``
    (``threshold_decides`` when the threshold is the larger). ``power_rule`` / ``power_bh``: the chance of a
    flag at that |r| by the rule, and by the BH flag within a family of ``family_size`` cells (``flag_power``;
    None without pairs or family). ``rule_min_detectable_effect``: the |r| the rule itself flags with 80 %
    power, max(z_{1-α/2} / sqrt(n), threshold) + z_{0.8} / sqrt(n) — above the one shown once the threshold
    binds, since at |r| = threshold the observed |r| clears it only about half the time."""

    tutor: str
    domain: str
    kind: str
    family: str
    label: str
    contrasts: int
    pairs: int
    min_detectable_effect: float | None
    min_pairs: int = MIN_PAIRS
    test_min_detectable_effect: float | None = None
    threshold: float = ANALYSIS_DEFAULTS.threshold
    family_size: int = 0
    power_rule: float | None = None
    power_bh: float | None = None
    rule_min_detectable_effect: float | None = None

    @property
    def insufficient(self) -> bool:
        return self.pairs < self.min_pairs

    @property
    def detectable(self) -> bool:
        """False when even |r| = 1 is out of reach (r cannot exceed 1 in size)."""
        return self.min_detectable_effect is not None and self.min_detectable_effect <= 1

    @property
    def power_rule_percent(self) -> float | None:
        return None if self.power_rule is None else 100 * self.power_rule

    @property
    def power_bh_percent(self) -> float | None:
        return None if self.power_bh is None else 100 * self.power_bh

    @property
    def rule_needs_more(self) -> bool:
        """The rule's own 80 %-power |r| lies visibly above the one shown (the threshold binds)."""
        return (
            self.rule_min_detectable_effect is not None
            and self.min_detectable_effect is not None
            and self.rule_min_detectable_effect - self.min_detectable_effect >= 0.005
        )

    @property
    def threshold_decides(self) -> bool:
        """The |r| threshold, not the data, sets the smallest effect that can be flagged."""
        return self.test_min_detectable_effect is not None and self.test_min_detectable_effect < self.threshold


def family_power(
    tutor: str,
    domain: str,
    kind: str,
    family: str,
    contrasts: int,
    pairs: int,
    *,
    family_size: int,
    min_pairs: int = MIN_PAIRS,
    parameters: fairness.AnalysisParameters = ANALYSIS_DEFAULTS,
) -> FamilyPower:
    """A family's row: the smallest |r| the rule can flag from ``pairs`` pairs, and the power at it."""
    label = CONTRAST_FAMILIES.get((kind, family), f"{kind}: {family}")
    if pairs < 1:
        return FamilyPower(tutor, domain, kind, family, label, contrasts, pairs, None, min_pairs)
    test = float(fairness.min_detectable_effect(pairs, alpha=parameters.alpha))
    shown = max(test, parameters.threshold)
    common = {"alpha": parameters.alpha, "fdr_q": parameters.fdr_q, "threshold": parameters.threshold}
    reachable = shown <= 1 and pairs >= min_pairs  # an insufficient cell is never flagged
    power_rule = flag_power(pairs, shown, **common) if reachable else None
    root_n = float(np.sqrt(pairs))
    rule_mde = (
        max(float(special.ndtri(1 - parameters.alpha / 2)) / root_n, parameters.threshold)
        + float(special.ndtri(0.8)) / root_n
    )
    power_bh = (
        flag_power(pairs, shown, family_size=family_size, adjusted=True, **common)
        if reachable and family_size >= 1
        else None
    )
    return FamilyPower(
        tutor, domain, kind, family, label, contrasts, pairs, shown, min_pairs,
        test_min_detectable_effect=test,
        threshold=parameters.threshold,
        family_size=family_size,
        power_rule=power_rule,
        power_bh=power_bh,
        rule_min_detectable_effect=rule_mde,
    )  # fmt: skip


@dataclass
class DesignPreview:
    selected: dict[str, int]  # questions per domain in the selection
    available: dict[str, int]
    conditions: int
    tutors: list[TutorRow]
    dialogues: int
    calls: dict[str, int]  # tutor, student, judge, reveal_check, total (upper bounds)
    budget: CallBudget
    contrasts: list[ContrastRow]  # one per tutor × domain × contrast
    contrast_list: list[ContrastLine]  # the design's contrasts, once each
    power: list[FamilyPower]  # one per tutor × domain × contrast family
    warnings: list[str]
    question_ids: dict[str, dict[str, list[int]]]  # tutor label → domain → ids
    parameters: fairness.AnalysisParameters = ANALYSIS_DEFAULTS  # the threshold, α and q the power rows use

    @property
    def insufficient_contrasts(self) -> list[ContrastRow]:
        return [row for row in self.contrasts if row.insufficient]


def preview_design(
    ids_by_domain: Mapping[str, Sequence[int]],
    selection: QuestionSelection,
    tutors: Sequence[TutorPlan],
    conditions: Sequence[ConditionSpec],
    *,
    budget: CallBudget | None = None,
    min_pairs: int = MIN_PAIRS,
) -> DesignPreview:
    budget = budget or CallBudget()
    selected = select_questions(ids_by_domain, selection)
    contrasts = fairness.build_contrasts(analysis_design({spec.key: spec for spec in conditions}))
    families = _contrast_families(contrasts)
    tutor_rows, contrast_rows, cells, question_ids = [], [], [], {}
    warnings = []
    for tutor in tutors:
        if tutor.fraction is None:
            mine = selected
        else:
            mine = stratified_subsample(selected, fraction=tutor.fraction, seed=selection.seed, salt=tutor.label)
        question_ids[tutor.label] = mine
        counts = {domain: len(ids) for domain, ids in mine.items()}
        dialogues = sum(counts.values()) * len(conditions)
        tutor_rows.append(TutorRow(tutor.label, counts, dialogues, dialogues * budget.per_dialogue))
        for domain, pairs in counts.items():
            for contrast in contrasts:
                contrast_rows.append(ContrastRow(tutor.label, domain, contrast, pairs, min_pairs))
            cells.append((tutor.label, domain, pairs))
            if contrasts and pairs < min_pairs:
                warnings.append(
                    f"{tutor.label} · {domain}: {pairs} pairs per contrast, fewer than {min_pairs} — "
                    f"all {len(contrasts)} contrasts will be reported as insufficient"
                )
    # A BH family is one contrast kind and family of the judge-scored table, across tutors, domains and its
    # metrics; cells with too few pairs get no p and stay out of it.
    analysed = sum(1 for _, _, pairs in cells if pairs >= min_pairs) * len(fairness.TURN_METRICS)
    power_rows = [
        family_power(tutor, domain, kind, family, count, pairs, family_size=count * analysed, min_pairs=min_pairs)
        for tutor, domain, pairs in cells
        for (kind, family), count in families.items()
    ]
    dialogues = sum(row.dialogues for row in tutor_rows)
    tutor_turns = dialogues * budget.t_max
    calls = {
        "tutor": tutor_turns,
        "student": tutor_turns,
        "judge": tutor_turns * budget.judge_attempts,
        "reveal_check": tutor_turns * budget.reveal_checks,
    }
    calls["total"] = sum(calls.values())
    if not conditions:
        warnings.append("no condition chosen: the design has no dialogues")
    if not contrasts and conditions:
        warnings.append("the chosen conditions support no contrast (add a second level, or the control)")
    if contrast_rows and all(row.insufficient for row in contrast_rows):
        # Said first and on its own: the design can run, but its analysis can flag nothing.
        warnings.insert(0, all_insufficient_warning(min_pairs))
    uncued = [spec.key for spec in conditions if analysis_condition(spec) is None]
    if uncued:
        warnings.append(
            f"{len(uncued)} name condition(s) cue neither gender nor ethnicity ({', '.join(uncued[:3])}"
            f"{', …' if len(uncued) > 3 else ''}): they run, but enter no contrast"
        )
    for domain in selection.domains:
        if not ids_by_domain.get(domain):
            warnings.append(f"{domain}: the question bank has no questions in this domain")
    return DesignPreview(
        selected={domain: len(ids) for domain, ids in selected.items()},
        available={domain: len(ids_by_domain.get(domain, [])) for domain in selection.domains},
        conditions=len(conditions),
        tutors=tutor_rows,
        dialogues=dialogues,
        calls=calls,
        budget=budget,
        contrasts=contrast_rows,
        contrast_list=[ContrastLine.of(contrast) for contrast in contrasts],
        power=power_rows,
        warnings=warnings,
        question_ids=question_ids,
    )


def all_insufficient_warning(min_pairs: int) -> str:
    return (
        f"every contrast has fewer than {min_pairs} pairs: the analysis will report all of them as "
        "insufficient and can flag no difference — select more questions"
    )


def _contrast_families(contrasts: Sequence[fairness.Contrast]) -> dict[tuple[str, str], int]:
    """Contrasts per (kind, family), in `CONTRAST_FAMILIES` order (any other family after them)."""
    counts: dict[tuple[str, str], int] = {}
    for contrast in contrasts:
        counts[contrast.kind, contrast.family] = counts.get((contrast.kind, contrast.family), 0) + 1
    order = list(CONTRAST_FAMILIES)
    return dict(sorted(counts.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order)))
