"""Aggregation by annotator quality: majority vote, Dawid–Skene, GLAD and MACE from crowd-kit — pure.

Crowd researchers do not only take the majority: they estimate each annotator's reliability and weigh the labels by it.
This module fits crowd-kit's models (Ustalov et al., *Learning from Crowds with Crowd-Kit*, JOSS 2024) to one stage's
labels of one question — rows of (item, annotator, value) — and returns, per model, the aggregated label of each item
with its posterior, the item's soft label (the posterior over every value) and each annotator's estimated competence.
No model is re-implemented here; what each competence number is, read from crowd-kit's fitted attributes:

- majority vote (``MajorityVote``): ``skills_``, the share of the annotator's labels that agree with the item's
  majority; the soft label is the share of votes per value;
- Dawid–Skene (Dawid and Skene 1979; ``DawidSkene``): the annotator's accuracy under the fitted model,
  Σ_c prior(c) · P(answer c | true c) — the diagonal of their confusion matrix (``errors_``) weighted by the class
  priors (``priors_``); a uniform guesser on K values scores about 1/K;
- GLAD (Whitehill et al. 2009; ``GLAD``): the ability α (``alphas_``), on the log-odds scale: 0 is guessing, larger is
  more reliable, below 0 is worse than guessing;
- MACE (Hovy et al. 2013; ``MACE``): the posterior probability that the annotator is not spamming, θ_j in the paper —
  the second column of ``spamming_`` (its first is the probability of spamming).

Conventions: the values are the question's choices in order, then any other value seen (sorted); a tie in the
posterior goes to the value listed first. Each model is fitted with crowd-kit's defaults, except MACE with one restart:
crowd-kit 1.4.2 seeds every restart with the same ``random_state``, so further restarts repeat the first exactly.
crowd-kit (and pandas) are imported inside `aggregate`, as the import costs seconds; the reads keep each fit in the
cache (`annotation.selectors.crowd_aggregation`), so a report, its API and its exports fit each question once.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from annotation.agreement import cohen_kappa

# crowd-kit 1.4.2 uses pandas keywords (inplace=, copy=) that pandas 3 deprecates, hundreds of times per fit: silenced
# for crowd-kit's own modules only, once per process (a filter set around each fit would not be thread-safe).
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"crowdkit\.")
warnings.filterwarnings("ignore", category=FutureWarning, module=r"crowdkit\.")


@dataclass(frozen=True)
class Method:
    """One way to aggregate an item's labels: its key (in the API, exports and report), its title, the crowd-kit class
    that fits it (with its options) and what its competence number is."""

    key: str
    title: str
    model: str
    competence: str
    options: tuple[tuple[str, object], ...] = ()


METHODS: tuple[Method, ...] = (
    Method(
        "majority_vote",
        "Majority vote",
        "MajorityVote",
        "share of the annotator's labels that agree with the item's majority (crowd-kit's skills_)",
    ),
    Method(
        "dawid_skene",
        "Dawid–Skene",
        "DawidSkene",
        "accuracy under the model: the confusion matrix's diagonal (errors_) weighted by the class priors (priors_); "
        "a uniform guesser on K values scores about 1/K",
    ),
    Method(
        "glad",
        "GLAD",
        "GLAD",
        "ability α (alphas_), log-odds scale: 0 is guessing, larger is more reliable, negative is worse than guessing",
    ),
    Method(
        "mace",
        "MACE",
        "MACE",
        "probability the annotator is not spamming (θ, the second column of spamming_)",
        # One restart: crowd-kit 1.4.2 seeds every restart alike, so the default ten repeat the first exactly.
        options=(("n_restarts", 1),),
    ),
)
METHOD_KEYS: tuple[str, ...] = tuple(method.key for method in METHODS)
QUALITY_METHOD_KEYS: tuple[str, ...] = tuple(key for key in METHOD_KEYS if key != "majority_vote")
"""The models that weigh annotators by their estimated quality (every method but the majority)."""

REASON_NO_LABELS = "no item has a label"
REASON_ONE_VALUE = "only one value was given, so there is nothing to weigh"

Row = tuple[Hashable, Hashable, str]
"""(item, annotator, value): one annotator's answer to one item. Leave Unsure answers out beforehand."""


@dataclass(frozen=True)
class ItemAggregate:
    item: Hashable
    label: str
    posterior: float
    """The posterior probability of ``label``."""
    soft: tuple[float, ...]
    """The posterior of every value, in the order of `Aggregation.values`; sums to 1."""
    n_labels: int


@dataclass(frozen=True)
class AnnotatorCompetence:
    annotator: Hashable
    competence: float | None
    """None when the model's estimate is not a finite number."""
    n_labels: int


@dataclass(frozen=True)
class Aggregation:
    """One method's aggregate of one question's labels, or the reason there is none."""

    method: str
    values: tuple[str, ...]
    items: tuple[ItemAggregate, ...] = ()
    annotators: tuple[AnnotatorCompetence, ...] = ()
    undefined_reason: str | None = None

    def labels(self) -> dict[Hashable, str]:
        return {row.item: row.label for row in self.items}


def value_order(rows: Iterable[Row], values: Sequence[str]) -> tuple[str, ...]:
    """The question's values in order, then any other value the rows use (sorted)."""
    seen = {value for _, _, value in rows}
    return tuple(values) + tuple(sorted(seen - set(values)))


def aggregate(rows: Iterable[Row], values: Sequence[str], method: str) -> Aggregation:
    """``method``'s aggregate of ``rows`` (see `METHODS`); ``values`` are the question's choices in order."""
    if method not in METHOD_KEYS:
        raise ValueError(f"method is one of {', '.join(METHOD_KEYS)}, got {method!r}")
    rows = tuple(sorted((tuple(row) for row in rows), key=lambda row: (_order(row[0]), _order(row[1]), row[2])))
    return _fit(rows, value_order(rows, values), method)


def aggregate_all(rows: Iterable[Row], values: Sequence[str]) -> dict[str, Aggregation]:
    """Every method's aggregate of ``rows``, in the order of `METHODS`."""
    rows = list(rows)
    return {key: aggregate(rows, values, key) for key in METHOD_KEYS}


def _fit(rows: tuple[Row, ...], values: tuple[str, ...], method: str) -> Aggregation:
    if not rows:
        return Aggregation(method, values, undefined_reason=REASON_NO_LABELS)
    if len({value for _, _, value in rows}) < 2:
        return Aggregation(method, values, undefined_reason=REASON_ONE_VALUE)
    # Imported here: crowd-kit (with pandas) takes seconds to import, and no page that never aggregates should pay it.
    import crowdkit.aggregation
    import pandas as pd

    data = pd.DataFrame(list(rows), columns=["task", "worker", "label"], dtype=object)
    spec = next(m for m in METHODS if m.key == method)
    model = getattr(crowdkit.aggregation, spec.model)(**dict(spec.options))
    model.fit(data)
    probas = model.probas_.reindex(columns=list(values), fill_value=0.0).fillna(0.0)
    competence = _competence(method, model, data)
    per_item = data.groupby("task").size()
    per_worker = data.groupby("worker").size()
    items = []
    for item, soft in zip(probas.index, probas.to_numpy(dtype=float), strict=True):
        total = soft.sum()
        soft = soft / total if total > 0 else soft
        best = int(soft.argmax())  # the first of equal posteriors: the value listed first
        items.append(
            ItemAggregate(item, values[best], float(soft[best]), tuple(float(p) for p in soft), int(per_item[item]))
        )
    annotators = tuple(
        AnnotatorCompetence(worker, _finite(competence[worker]), int(per_worker[worker]))
        for worker in sorted(competence, key=_order)
    )
    return Aggregation(method, values, tuple(sorted(items, key=lambda row: _order(row.item))), annotators)


def _finite(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _order(key: Hashable) -> tuple:
    """A deterministic order of item or annotator keys: numbers by value, anything else by its text."""
    return (0, key, "") if isinstance(key, int) else (1, 0, str(key))


def _competence(method: str, model, data) -> dict[Hashable, float]:
    """Each annotator's competence from the fitted model (what each number is: `METHODS`)."""
    if method == "majority_vote":
        return dict(model.skills_.items())
    if method == "dawid_skene":
        errors, priors = model.errors_, model.priors_
        return {
            worker: sum(
                float(priors[c]) * float(errors.loc[(worker, c), c])
                for c in priors.index
                if (worker, c) in errors.index
            )
            for worker in errors.index.get_level_values("worker").unique()
        }
    if method == "glad":
        return dict(model.alphas_.items())
    # MACE: rows of spamming_ follow pandas.factorize of the workers, i.e. their order of first appearance.
    import pandas as pd

    _, workers = pd.factorize(data["worker"])
    return {worker: float(model.spamming_[i, 1]) for i, worker in enumerate(workers)}


# --- agreement of an aggregate with a reference -----------------------------------------------------


def agreement_with(labels: Mapping[Hashable, str], reference: Mapping[Hashable, str], values: Sequence[str]) -> dict:
    """Accuracy and Cohen's κ (scikit-learn, via `annotation.agreement.cohen_kappa`) of aggregated ``labels`` against
    ``reference`` values (the adjudicated finals, or gold), over the items that have both."""
    shared = [item for item in labels if item in reference]
    if not shared:
        return {"n_items": 0, "accuracy": None, "cohen_kappa": None, "undefined_reason": "no item has both"}
    ours = [labels[item] for item in shared]
    theirs = [reference[item] for item in shared]
    accuracy = sum(a == b for a, b in zip(ours, theirs, strict=True)) / len(shared)
    kappa = cohen_kappa(ours, theirs, labels=list(value_order([(None, None, v) for v in ours + theirs], values)))
    value = kappa.value if kappa.value is None or math.isfinite(kappa.value) else None
    return {
        "n_items": len(shared),
        "accuracy": accuracy,
        "cohen_kappa": value,
        "undefined_reason": kappa.undefined_reason,
    }
