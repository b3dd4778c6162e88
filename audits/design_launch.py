"""Launching a design: its cost at the call bound, what stands in its way, and its selection in words.

The cost is assumed tokens per call × each endpoint's price; `launch_check` gives blocking reasons and ones the
researcher confirms. Pure: no Django.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .design import DesignPreview, all_insufficient_warning

# Tokens one call is assumed to carry (input, output), per role, for the cost estimate. Rough figures for
# a tutoring turn with its history; the estimate multiplies them by the call bound, so it is an upper bound
# in calls and an assumption in tokens — the page says both.
TOKENS_PER_CALL: dict[str, tuple[int, int]] = {
    "tutor": (1500, 150),
    "student": (1000, 100),
    "judge": (2000, 200),
    "reveal_check": (800, 20),
}


@dataclass(frozen=True)
class Price:
    """An endpoint's price per million input and output tokens."""

    endpoint: str
    input_per_million: float = 0.0
    output_per_million: float = 0.0


@dataclass(frozen=True)
class CostLine:
    role: str
    endpoint: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost: float


@dataclass(frozen=True)
class CostEstimate:
    lines: tuple[CostLine, ...]
    tokens_per_call: Mapping[str, tuple[int, int]]

    @property
    def total(self) -> float:
        return sum(line.cost for line in self.lines)


def cost_estimate(
    preview: DesignPreview,
    *,
    tutors: Mapping[str, Price],
    student: Price,
    judge: Price,
    check: Price,
    tokens_per_call: Mapping[str, tuple[int, int]] = TOKENS_PER_CALL,
) -> CostEstimate:
    """The design's cost at its call bound: per role (and tutor), calls × assumed tokens × the endpoint's price.

    `tutors` maps each tutor row's label (`preview.tutors`) to its endpoint's price."""
    budget = preview.budget
    turns = {row.label: row.dialogues * budget.t_max for row in preview.tutors}
    all_turns = sum(turns.values())
    wanted = [(("tutor", tutors[label]), calls) for label, calls in turns.items()]
    wanted += [
        (("student", student), all_turns),
        (("judge", judge), all_turns * budget.judge_attempts),
        (("reveal_check", check), all_turns * budget.reveal_checks),
    ]
    lines = []
    for (role, price), calls in wanted:
        per_in, per_out = tokens_per_call[role]
        tokens_in, tokens_out = calls * per_in, calls * per_out
        cost = (tokens_in * price.input_per_million + tokens_out * price.output_per_million) / 1_000_000
        lines.append(CostLine(role, price.endpoint, calls, tokens_in, tokens_out, cost))
    return CostEstimate(tuple(lines), dict(tokens_per_call))


@dataclass(frozen=True)
class LaunchCheck:
    """What stands between a design and its launch: `blocking` reasons refuse it, `confirm` ones need the
    researcher's explicit "launch anyway"."""

    blocking: tuple[str, ...] = ()
    confirm: tuple[str, ...] = ()

    def refusal(self, *, confirmed: bool) -> str | None:
        """Why this launch may not go ahead (None: it may)."""
        if self.blocking:
            return "This design cannot be launched: " + "; ".join(self.blocking) + "."
        if self.confirm and not confirmed:
            return "Tick “launch anyway” to launch despite: " + "; ".join(self.confirm) + "."
        return None


def launch_check(preview: DesignPreview, *, failed_endpoints: Sequence[str] = ()) -> LaunchCheck:
    """Blocking: nothing would run, or nothing could be compared. Confirm: it would run, but every contrast
    is insufficient (the analysis could flag nothing), or an endpoint failed its last connection test."""
    blocking, confirm = [], []
    if not preview.tutors:
        blocking.append("no tutor chosen")
    if not sum(preview.selected.values()):
        blocking.append("the selection holds no questions")
    if not preview.conditions:
        blocking.append("no condition chosen")
    elif not preview.contrast_list:
        blocking.append(
            "nothing to compare: the chosen conditions support no contrast (a control-only design, or a single "
            "level) — add a dimension, names or the opposite design"
        )
    if not blocking and preview.contrasts and all(row.insufficient for row in preview.contrasts):
        confirm.append(all_insufficient_warning(preview.contrasts[0].min_pairs))
    for name in failed_endpoints:
        confirm.append(f"{name} failed its last connection test")
    return LaunchCheck(tuple(blocking), tuple(confirm))


def selection_text(selection: Mapping) -> str:
    """A stored question selection ({"domains": [...], "count": 5, "seed": 0, ...}) in words."""
    if not selection:
        return "the questions chosen by hand"
    domains = list(selection.get("domains") or ())
    where = ", ".join(domains) if domains else "every domain"
    if selection.get("count") is not None:
        how = f"at most {selection['count']} questions per domain"
    elif selection.get("fraction") is not None:
        how = f"{float(selection['fraction']):.0%} of the questions per domain"
    else:
        how = "all questions"
    overrides = selection.get("per_domain") or {}
    extra = [
        f"{domain}: {f'{value:.0%}' if isinstance(value, float) and value <= 1 else f'{value} questions'}"
        for domain, value in sorted(overrides.items())
    ]
    text = f"{how} in {where}, drawn with seed {selection.get('seed', 0)}"
    return f"{text} ({'; '.join(extra)})" if extra else text
