"""Test files for the question bank: generated SocraTeach, SciQ and generic files of any size, with known funnels."""

import json
import random
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

# The sample SocraTeach file's funnel, dialogue by dialogue (see samples/README.md):
# 14 dialogues in 12 problems; 3 have < 4 exchanges, 2 have < 2 errors, 1 has no correct reply after its
# last error, 2 disclose the answer; 6 dialogues pass, in 5 problems.
SOCRATEACH_SAMPLE_FUNNEL = [14, 11, 9, 8, 6, 5]


def _dialogue(kind: str, answer: str) -> list[dict]:
    """One dialogue that fails rule `kind` ("1".."4") or passes ("pass"), labelled through the tutor's feedback."""
    opening = {"system": "What is the first step?", "user": "I multiply first."}
    wrong = {"system": "Not quite. Think about the order again.", "user": "Then I add first."}
    right = {"system": "Correct. What comes next?", "user": "I divide by two."}
    neutral = {"system": "Tell me more about your idea.", "user": "I am not sure yet."}
    end_ok = {"system": "Well done. END", "user": ""}
    end_plain = {"system": "Let us stop here. END", "user": ""}
    if kind == "1":
        return [opening, wrong, end_ok]
    if kind == "2":
        return [opening, right, right, right, end_ok]
    if kind == "3":
        return [opening, wrong, right, wrong, neutral, end_plain]
    if kind == "4":
        return [opening, wrong, right, {"system": f"Careful. The answer is {answer}.", "user": "Oh."}, end_ok]
    return [opening, wrong, right, wrong, {"system": "Yes, that's it.", "user": f"So it is {answer}."}, end_ok]


def write_socrateach(path: Path, counts: dict[str, int], *, padding: int = 0) -> list[int]:
    """Problems with one dialogue each: `counts` maps "pass"/"1"/"2"/"3"/"4" to how many. Returns the funnel.

    `padding` adds that many characters of analysis text per problem, to make large files.
    """
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("{")
        first = True
        number = 0
        for kind, count in counts.items():
            for _ in range(count):
                number += 1
                answer = str(1000 + number)
                problem = {
                    "question": f"Generated problem {number}: what is {number} + 1000?",
                    "analysis": "Add the numbers. " + "x" * padding,
                    "answer": answer,
                    "steps": ["Add."],
                    "dialogues": {f"d{number}": _dialogue(kind, answer)},
                }
                handle.write(("" if first else ",") + json.dumps(f"gen-{number:06d}") + ":" + json.dumps(problem))
                first = False
        handle.write("}")
    total = sum(counts.values())
    after1 = total - counts.get("1", 0)
    after2 = after1 - counts.get("2", 0)
    after3 = after2 - counts.get("3", 0)
    after4 = after3 - counts.get("4", 0)
    return [total, after1, after2, after3, after4, after4]


PHYSICS_WORDS = [
    "force",
    "velocity",
    "acceleration",
    "momentum",
    "friction",
    "newtons",
    "joules",
    "circuit",
    "voltage",
    "wavelength",
    "frequency",
    "lens",
    "refraction",
    "inertia",
    "kinetic energy",
    "gravity",
]
CHEMISTRY_WORDS = [
    "atoms",
    "molecules",
    "covalent bond",
    "ionic compound",
    "acid",
    "base",
    "catalyst",
    "isotope",
    "oxidation",
    "moles",
    "solvent",
    "solute",
    "reactants",
    "precipitate",
    "periodic table",
    "valence",
]
BIOLOGY_WORDS = [
    "cells",
    "organisms",
    "species",
    "genes",
    "DNA",
    "photosynthesis",
    "plants",
    "predators",
    "tissue",
    "bacteria",
    "ecosystem",
    "mitosis",
    "chromosomes",
    "evolution",
    "hormones",
    "fungi",
]


def sciq_items(per_domain: int, *, seed: int = 1) -> list[dict]:
    """Generated SciQ-shaped items, `per_domain` each for physics, chemistry and biology, interleaved."""
    rng = random.Random(seed)
    items = []
    for number in range(per_domain):
        for words in (PHYSICS_WORDS, CHEMISTRY_WORDS, BIOLOGY_WORDS):
            chosen = rng.sample(words, 4)
            items.append(
                {
                    "question": f"Item {number}: how are {chosen[0]} and {chosen[1]} related?",
                    "distractor1": chosen[2],
                    "distractor2": chosen[3],
                    "distractor3": "none of these",
                    "correct_answer": f"through {chosen[2]} ({number})",
                    "support": f"Students learn that {chosen[0]}, {chosen[1]}, {chosen[2]} and {chosen[3]} are linked.",
                }
            )
    return items


def generic_record(number: int, *, padding: int = 0) -> dict:
    domain = ("mathematics", "physics", "chemistry")[number % 3]
    return {
        "id": f"g-{number:07d}",
        "domain": domain,
        "text": f"Generated question {number}",
        "answer": str(number),
        "solution": "y" * padding,
    }


def write_generic_jsonl(path: Path, count: int, *, padding: int = 0) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for number in range(count):
            handle.write(json.dumps(generic_record(number, padding=padding)) + "\n")
