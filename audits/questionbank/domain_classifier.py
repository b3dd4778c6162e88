"""EduFair-Bench's keyword-seeded TF-IDF domain classifier for SciQ (physics / chemistry / other).

SciQ has no subject field. Seed keyword lists label an initial set of items (an item is labelled when one
domain's keywords clearly outnumber the others'); a TF-IDF + logistic-regression classifier (scikit-learn)
is trained on that set and then predicts a probability per domain for every item. The keyword lists are
also added as one short training document per domain, so a small file still yields a usable model.
Pure: no Django; plain lists in, numpy arrays out.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline

PHYSICS = "physics"
CHEMISTRY = "chemistry"
OTHER = "other"
KEPT_DOMAINS = (PHYSICS, CHEMISTRY)

# Word stems, matched at the start of a word, case-insensitive (stems of up to three letters match whole
# words only). Written for this project.
DEFAULT_SEED_KEYWORDS: dict[str, tuple[str, ...]] = {
    PHYSICS: (
        "force",
        "velocit",
        "acceler",
        "momentum",
        "kinetic",
        "gravit",
        "friction",
        "newton",
        "joule",
        "watt",
        "volt",
        "circuit",
        "resistor",
        "resistance",
        "magnet",
        "electromagnet",
        "wave",
        "frequenc",
        "wavelength",
        "amplitude",
        "lens",
        "refract",
        "reflect",
        "optic",
        "sound",
        "speed",
        "inertia",
        "torque",
        "motion",
        "projectile",
        "pendulum",
        "electric current",
        "electric field",
        "ohm",
        "displacement",
        "lever",
        "pulley",
        "work done",
        "power",
        "light",
        "thermal energy",
        "heat transfer",
        "conduction",
        "convection",
        "buoyan",
    ),
    CHEMISTRY: (
        "atom",
        "molecul",
        "ion",
        "ionic",
        "covalent",
        "chemical bond",
        "compound",
        "reaction",
        "reactant",
        "acid",
        "alkal",
        "ph",
        "mole",
        "molar",
        "solute",
        "solvent",
        "oxid",
        "reduc",
        "catalyst",
        "isotope",
        "periodic table",
        "valence",
        "hydrocarbon",
        "polymer",
        "alkane",
        "alkene",
        "titration",
        "precipitat",
        "enthalpy",
        "stoichiometr",
        "chemical",
        "salt",
        "noble gas",
        "metalloid",
        "electron configuration",
        "concentration",
        "dissolv",
        "combustion",
        "element",
        "halogen",
        "ester",
        "carbon dioxide",
        "gas law",
    ),
    OTHER: (
        "cell",
        "organism",
        "species",
        "gene",
        "dna",
        "rna",
        "protein",
        "evolution",
        "photosynthes",
        "plant",
        "animal",
        "tissue",
        "organs",
        "bacteri",
        "virus",
        "ecosystem",
        "predator",
        "prey",
        "mitosis",
        "meiosis",
        "chromosom",
        "blood",
        "muscle",
        "nerve",
        "hormone",
        "reproduc",
        "fung",
        "earthquake",
        "volcano",
        "rock",
        "tectonic",
        "weather",
        "climate",
        "fossil",
        "soil",
        "mammal",
        "insect",
        "digest",
        "immune",
        "heart",
        "leaf",
        "leaves",
        "root",
        "habitat",
        "population",
        "inherit",
        "enzyme",
        "vertebrate",
        "glacier",
        "erosion",
    ),
}


@dataclass(frozen=True)
class ClassifierParams:
    threshold: float = 0.65  # keep an item for a domain when its predicted probability reaches this
    min_keyword_hits: int = 2  # an item is seed-labelled when its best domain has at least this many hits …
    min_keyword_margin: int = 1  # … and beats the runner-up by at least this many
    regularisation_c: float = 10.0  # inverse regularisation of the logistic regression
    include_keyword_documents: bool = True
    keywords: Mapping[str, Sequence[str]] = field(default_factory=lambda: DEFAULT_SEED_KEYWORDS)

    def as_dict(self) -> dict:
        return {
            "threshold": self.threshold,
            "min_keyword_hits": self.min_keyword_hits,
            "min_keyword_margin": self.min_keyword_margin,
            "regularisation_c": self.regularisation_c,
            "include_keyword_documents": self.include_keyword_documents,
            "keywords": "default"
            if self.keywords is DEFAULT_SEED_KEYWORDS
            else {k: list(v) for k, v in self.keywords.items()},
        }


@dataclass
class Classification:
    classes: list[str]
    seed_labels: list[str | None]  # keyword label per item, or None when the keywords did not decide
    probabilities: np.ndarray  # shape (items, classes)

    @property
    def predicted(self) -> list[str]:
        return [self.classes[i] for i in self.probabilities.argmax(axis=1)]

    @property
    def confidence(self) -> np.ndarray:
        return self.probabilities.max(axis=1)

    def seed_counts(self) -> dict[str, int]:
        counts = {name: 0 for name in self.classes}
        for label in self.seed_labels:
            if label is not None:
                counts[label] += 1
        return counts


def _keyword_patterns(keywords: Mapping[str, Sequence[str]]) -> dict[str, re.Pattern]:
    return {
        domain: re.compile(r"\b(?:" + "|".join(_stem_pattern(stem) for stem in stems) + r")", re.IGNORECASE)
        for domain, stems in keywords.items()
    }


def _stem_pattern(stem: str) -> str:
    # Short stems ("ph", "ion", "dna") would match the start of unrelated words; they match whole words only.
    return re.escape(stem) + (r"s?\b" if len(stem) <= 3 else "")


def seed_label(hits: Mapping[str, int], params: ClassifierParams) -> str | None:
    ranked = sorted(hits.items(), key=lambda item: item[1], reverse=True)
    best_domain, best = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0
    if best >= params.min_keyword_hits and best - runner_up >= params.min_keyword_margin:
        return best_domain
    return None


def build_model(params: ClassifierParams) -> Pipeline:
    return make_pipeline(
        TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), stop_words="english", strip_accents="unicode"),
        LogisticRegression(C=params.regularisation_c, max_iter=2000, class_weight="balanced"),
    )


def classify_domains(texts: Sequence[str], params: ClassifierParams | None = None) -> Classification:
    """Seed-label with keywords, train TF-IDF + logistic regression on the seeds, predict every item."""
    params = params or ClassifierParams()
    patterns = _keyword_patterns(params.keywords)
    seed_labels = []
    for text in texts:
        hits = {domain: len(pattern.findall(text)) for domain, pattern in patterns.items()}
        seed_labels.append(seed_label(hits, params))

    train_texts = [text for text, label in zip(texts, seed_labels, strict=True) if label is not None]
    train_labels = [label for label in seed_labels if label is not None]
    if params.include_keyword_documents:
        for domain, stems in params.keywords.items():
            train_texts.append(" ".join(stems))
            train_labels.append(domain)
    missing = sorted(set(params.keywords) - set(train_labels))
    if missing:
        raise ValueError(
            f"no seed-labelled items for {', '.join(missing)}: the keywords label too few items to train on"
        )
    model = build_model(params)
    model.fit(train_texts, train_labels)
    classes = [str(name) for name in model.classes_]
    probabilities = model.predict_proba(list(texts)) if texts else np.zeros((0, len(classes)))
    return Classification(classes=classes, seed_labels=seed_labels, probabilities=probabilities)
