"""Small excerpts written in the published schemas of MRBench V1 (Maurya et al., NAACL 2025;
kaushal0494/UnifyingAITutorEvaluation, README "File Structure") and of the BEA 2025 shared-task files
(``tutor_responses``, four dimensions), with the published files' quirks: a conversation id in two records
(same history, other responses, another Split), Novice in only some dialogues, the placeholder
"Not Available", a worked solution ending on its answer line, the V1 spelling ``humanlikeness``, a
"Yes (but the answer is incorrect)" label and a "Turor:" typo in a history line.

Not a test module; the texts are written here, not copied from the files.
"""

from __future__ import annotations

import json


def _mrbench(mi, ml, reveal, guidance, action, tone, coherence="Yes", human="Yes") -> dict:
    return {
        "Mistake_Identification": mi,
        "Mistake_Location": ml,
        "Revealing_of_the_Answer": reveal,
        "Providing_Guidance": guidance,
        "Actionability": action,
        "Coherence": coherence,
        "Tutor_Tone": tone,
        "humanlikeness": human,
    }


CORRECT, INCORRECT = "Yes (and the answer is correct)", "Yes (but the answer is incorrect)"
HISTORY_EGGS = (
    "Tutor: Hi, could you please walk me through your solution?\n"
    "Student: Janet has 16 eggs, eats 3 and bakes 4, so 16 - 3 - 4 = 9 eggs, and 9 * 2 = 16 dollars.\n"
    "Tutor: Let's check the last step together.\n"
    "Student: 9 times 2 is 16."
)
SOLUTION_EGGS = "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day at the market.\n18"

MRBENCH_V1 = [
    {
        "conversation_id": "291616268",
        "conversation_history": HISTORY_EGGS,
        "Data": "MathDial",
        "Split": "test",
        "Topic": "Not Available",
        "Ground_Truth_Solution": SOLUTION_EGGS,
        "anno_llm_responses": {
            "Expert": {
                "response": "Look again at 9 times 2: how much is two groups of nine?",
                "annotation": _mrbench("Yes", "Yes", "No", "Yes", "Yes", "Encouraging"),
            },
            "Novice": {
                "response": "That's wrong, it is 18.",
                "annotation": _mrbench("Yes", "No", CORRECT, "No", "No", "Offensive", human="No"),
            },
            "GPT4": {
                "response": "Close! Nine times two is eighteen, so Janet makes $18 a day.",
                "annotation": _mrbench("Yes", "Yes", CORRECT, "To some extent", "No", "Encouraging"),
            },
        },
    },
    {
        # The same conversation id again: same history, other responses and labels, another Split.
        "conversation_id": "291616268",
        "conversation_history": HISTORY_EGGS,
        "Data": "MathDial",
        "Split": "train",
        "Topic": "Not Available",
        "Ground_Truth_Solution": SOLUTION_EGGS,
        "anno_llm_responses": {
            "Expert": {
                "response": "You multiplied correctly before. What is 9 + 9?",
                "annotation": _mrbench("Yes", "To some extent", "No", "Yes", "Yes", "Neutral"),
            },
            "Sonnet": {
                "response": "Your subtraction is right; now double-check 9 * 2 by adding 9 twice.",
                "annotation": _mrbench("Yes", "Yes", "No", "Yes", "Yes", "Encouraging"),
            },
        },
    },
    {
        # A Novice-less Bridge dialogue; the placeholder solution; an incorrect answer revealed.
        "conversation_id": "2895106109",
        "conversation_history": "Tutor: What is the name of a 5-sided polygon? \nStudent: a octogon",
        "Data": "Bridge",
        "Split": "train",
        "Topic": "4.5A.Geometric Lines",
        "Ground_Truth_Solution": "Not Available",
        "anno_llm_responses": {
            "Mistral": {
                "response": "Remember, an octagon has 8 sides; a 5-sided polygon is called a hexagon.",
                "annotation": _mrbench("Yes", "Yes", INCORRECT, "To some extent", "No", "Neutral"),
            },
            "Expert": {
                "response": "Great try! An octagon has 8 sides, like an octopus. The prefix for 5 is pent.",
                "annotation": _mrbench("Yes", "Yes", "No", "Yes", "To some extent", "Encouraging"),
            },
            "Phi3": {
                "response": "That was a good try! A five-sided polygon is called a pentagon.",
                "annotation": _mrbench("Yes", "Yes", CORRECT, "To some extent", "No", "Encouraging", "To some extent"),
            },
        },
    },
]


def _bea(mi, ml, guidance, action) -> dict:
    return {
        "Mistake_Identification": mi,
        "Mistake_Location": ml,
        "Providing_Guidance": guidance,
        "Actionability": action,
    }


BEA_DEV = [
    {
        "conversation_id": "1430-abc",
        "conversation_history": (
            "Tutor: What do you get when you add 3/4 and 1/8?\n"
            "Student: 4/12\n"
            "Turor: How did you get 12?\n"
            "Student: I added the bottoms."
        ),
        "tutor_responses": {
            "Sonnet": {
                "response": "Adding the denominators is the slip: what common denominator could 4 and 8 share?",
                "annotation": _bea("Yes", "Yes", "Yes", "Yes"),
            },
            "Llama318B": {
                "response": "The answer is 7/8.",
                "annotation": _bea("Yes", "No", "No", "No"),
            },
            "Gemini": {
                "response": "Hmm, are you sure about that?",
                "annotation": _bea("To some extent", "No", "To some extent", "To some extent"),
            },
        },
    },
    {
        "conversation_id": "2211-def",
        "conversation_history": "Tutor: How many legs do 3 spiders have?\nStudent: 3 times 8 is 24.",
        "tutor_responses": {
            "Expert": {
                "response": "Yes, 24 legs. Well done!",
                "annotation": _bea("No", "No", "No", "To some extent"),
            },
            "Novice": {
                "response": "Check again.",
                "annotation": _bea("No", "No", "No", "No"),
            },
        },
    },
]


def mrbench_v1_text() -> str:
    return json.dumps(MRBENCH_V1)


def bea_dev_text() -> str:
    return json.dumps(BEA_DEV)


def responses_of(records: list[dict]) -> list[tuple[str, str, dict]]:
    """(conversation id, tutor, annotation) per response of a file, counted straight from the JSON."""
    key = "anno_llm_responses" if "anno_llm_responses" in records[0] else "tutor_responses"
    return [
        (r["conversation_id"], tutor, body.get("annotation", {})) for r in records for tutor, body in r[key].items()
    ]


BEA_TUTORS = ("Sonnet", "Llama318B", "Llama31405B", "GPT4", "Mistral", "Gemini", "Phi3", "Expert", "Novice")
BEA_LABELS = ("Yes", "To some extent", "No")


def bea_at_scale(dialogues: int = 300, responses: int = 2476, history_lines: int = 24) -> list[dict]:
    """A file in the BEA 2025 layout at the size of the published dev set (300 dialogues, 2,476 responses;
    long MathDial-like histories, so a few MB): eight tutors per dialogue, Novice as a ninth in some, labels
    cycling through the published values. Written here, not copied."""
    extra = responses - 8 * dialogues  # dialogues that also have a Novice response
    records = []
    n = 0
    for d in range(dialogues):
        lines = []
        for k in range(history_lines):
            speaker = "Tutor" if k % 2 == 0 else ("Student" if k % 7 else "Turor")
            lines.append(f"{speaker}: step {k} of problem {d}: " + "we add the tens, then the ones, and check. " * 5)
        tutors = BEA_TUTORS[: 9 if d < extra else 8]
        body = {}
        for tutor in tutors:
            n += 1
            body[tutor] = {
                "response": f"Response {n} by {tutor}: what do you get when you add the ones first?",
                "annotation": _bea(*(BEA_LABELS[(n * p) % 3] for p in (1, 2, 5, 7))),
            }
        records.append(
            {
                "conversation_id": f"{1000 + d}-{d * 7919 % 10007}",
                "conversation_history": "\n".join(lines),
                "tutor_responses": body,
            }
        )
    return records
