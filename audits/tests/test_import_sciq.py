"""SciQ importer: the keyword-seeded TF-IDF classifier, the 0.65 threshold, seeded sampling, stored confidence."""

import json

import pytest

from audits.models import Question, QuestionImport
from audits.questionbank.domain_classifier import ClassifierParams, classify_domains
from audits.questionbank.sciq import classifier_text, parse_item
from audits.services.questionbank import question_import_from_path
from audits.tests.questionbank_files import SAMPLES, sciq_items

pytestmark = pytest.mark.django_db


def sample_texts() -> list[str]:
    items = json.loads((SAMPLES / "sciq_sample.json").read_text())
    return [classifier_text(parse_item(f"record {i}", item)) for i, item in enumerate(items, 1)]


# Hand-written for this test (not in the sample file): question, answer and support, as the importer reads them.
HELD_OUT = {
    "physics": [
        "A skateboarder speeds up down a ramp. What causes her acceleration? gravity. The force of gravity "
        "pulls her down the slope while friction with the ramp slows her motion a little.",
        "What is the speed of a wave with frequency 5 Hz and wavelength 2 m? 10 m/s. Wave speed equals "
        "frequency times wavelength for sound and light waves alike.",
        "Why does a heavier truck need a larger force to stop than a bicycle at the same velocity? It has more "
        "momentum. Momentum is mass times velocity, and inertia resists changes in motion.",
    ],
    "chemistry": [
        "What forms when sodium atoms give electrons to chlorine atoms? an ionic compound. The sodium ions and "
        "chloride ions are held by ionic bonds in the salt crystal.",
        "What does a catalyst change in a chemical reaction? the reaction rate. Catalysts speed up reactions "
        "between reactants without being used up, and enzymes are biological catalysts.",
        "How many moles of solute are in 2 litres of a 0.5 molar solution? 1 mole. Molar concentration is "
        "moles of solute per litre of solution; the solvent here is water.",
    ],
    "other": [
        "Which organelle carries out photosynthesis in plant cells? the chloroplast. Chloroplasts in leaf cells "
        "capture light for photosynthesis, producing glucose for the plant.",
        "What do predators and prey form in an ecosystem? a food web. Populations of predators and prey in a "
        "habitat depend on each other, and species evolve together.",
        "What carries inherited traits from parents to offspring? genes. Genes are sections of DNA on "
        "chromosomes, passed on through reproduction.",
    ],
}


def test_classifier_puts_hand_written_items_in_their_domain():
    """Classified along with the sample file, as an import would: physics and chemistry items reach 0.65 in
    their own domain, biology items go to "other" (which is never kept)."""
    texts = sample_texts()
    held_out = [text for texts_ in HELD_OUT.values() for text in texts_]
    expected = [domain for domain, texts_ in HELD_OUT.items() for _ in texts_]
    classification = classify_domains(texts + held_out)
    predicted = classification.predicted[len(texts) :]
    confidence = classification.confidence[len(texts) :]
    for text, domain, guess, probability in zip(held_out, expected, predicted, confidence, strict=True):
        assert guess == domain, text
        if domain in ("physics", "chemistry"):
            assert probability >= 0.65, (text, probability)


def test_sample_funnel_and_stored_confidence():
    question_import = question_import_from_path(source="sciq", path=SAMPLES / "sciq_sample.json")
    assert question_import.status == QuestionImport.Status.DONE, question_import.error
    steps = {step["step"]: step for step in question_import.funnel}
    # 42 items: 14 physics, 14 chemistry, 12 biology and 2 written to sit between physics and chemistry.
    assert steps["items in"]["count"] == 42
    assert steps["predicted physics or chemistry"]["count"] == 30
    assert steps["probability ≥ 0.65"]["detail"] == {"physics": 14, "chemistry": 14}
    assert question_import.questions_created == 28
    questions = Question.objects.filter(source="sciq")
    assert not questions.filter(text__icontains="photosynthesis").exists()
    assert not questions.filter(text__icontains="negative electric charge").exists()
    assert all(0.65 <= q.classifier_confidence <= 1 for q in questions)
    friction = questions.get(text__startswith="Which force opposes the motion")
    assert friction.domain == "physics"
    assert friction.choices == ["buoyancy", "friction", "gravity", "tension"]


def test_per_domain_cap_samples_with_a_fixed_seed(tmp_path):
    path = tmp_path / "sciq_generated.json"
    path.write_text(json.dumps(sciq_items(60)))
    first = question_import_from_path(source="sciq", path=path, parameters={"per_domain_max": 25, "seed": 7})
    steps = {step["step"]: step for step in first.funnel}
    assert steps["items in"]["count"] == 180
    assert steps["probability ≥ 0.65"]["detail"] == {"physics": 60, "chemistry": 60}
    assert steps["sampled (≤ 25 per domain, seed 7)"]["detail"] == {"physics": 25, "chemistry": 25}
    chosen = set(Question.objects.values_list("source_id", flat=True))
    assert len(chosen) == 50

    # The same seed on a fresh bank picks the same items; another seed picks others.
    Question.objects.all().delete()
    question_import_from_path(source="sciq", path=path, parameters={"per_domain_max": 25, "seed": 7})
    assert set(Question.objects.values_list("source_id", flat=True)) == chosen
    Question.objects.all().delete()
    question_import_from_path(source="sciq", path=path, parameters={"per_domain_max": 25, "seed": 8})
    assert set(Question.objects.values_list("source_id", flat=True)) != chosen


def test_threshold_is_a_parameter():
    strict = question_import_from_path(source="sciq", path=SAMPLES / "sciq_sample.json", parameters={"threshold": 0.99})
    steps = {step["step"]: step["count"] for step in strict.funnel}
    assert steps["probability ≥ 0.99"] == 0
    assert strict.parameters["applied"]["classifier"]["threshold"] == 0.99


def test_jsonl_input_is_accepted(tmp_path):
    path = tmp_path / "sciq.jsonl"
    items = json.loads((SAMPLES / "sciq_sample.json").read_text())
    path.write_text("\n".join(json.dumps(item) for item in items) + "\n")
    question_import = question_import_from_path(source="sciq", path=path)
    assert question_import.questions_created == 28


def test_keywords_train_even_a_tiny_file():
    params = ClassifierParams()
    classification = classify_domains(["What unit measures force? newton.", "What is an isotope? an atom."], params)
    assert classification.predicted == ["physics", "chemistry"]
