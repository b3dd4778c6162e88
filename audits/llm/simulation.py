"""The simulation provider: a seeded, offline tutor, student, reveal check and judge.

It exists for three honest reasons (docs/ARCHITECTURE.md, decision 4): the demo runs on a machine with no
model, tests are deterministic, and it calibrates the statistics — a *planted* demographic bias must
be found, a fair simulated tutor must not be flagged. Everything it writes is a simulation and is
labelled so wherever it appears.

How it works. Each reply is a pure function of (configuration, request context, messages): the random
generator is seeded from a hash of them, so the same seed gives the same transcripts, and the ledger
can cache a simulated reply exactly like a real one.

- The **tutor** has a propensity per metric (the probability of the "good" behaviour: naming the
  mistake, scaffolding the next step, a clear next action, an encouraging tone; and a per-turn chance
  of revealing the answer). A planted bias shifts a propensity for students whose cue carries a given
  demographic level, e.g. ``{"level": "first_language=non-English L1", "metric": "corrective_tone",
  "shift": -0.3}``. Turns are built from phrase banks with the student's numbers and the problem in them.
- The **student** opens with its persona cue and a wrong attempt, then corrects itself with a
  probability that grows with the turn and with the tutor's scaffolding.
- The **judge** scores a turn by transparent rules: which phrase banks the tutor's text uses (a metric of the
  rubric with no phrase bank: a seeded draw at its registry propensity). It answers the rubric version's
  metrics. The **check** reports a reveal or a confirmation the same way.
- A **cue-sensitive judge**: a judge endpoint's configuration may carry ``judge_bias``, e.g.
  ``[{"level": "first_language=non_english_l1", "metric": "corrective_tone", "shift": -1}]``: on tutor turns of
  dialogues whose student cue carries the level, the judge moves that metric's rule score by the shift (whole
  points, clamped to the scale; "not applicable" stays so). The tutor may be perfectly fair: the gap is the
  judge's. The judge reads the cue labels from the same simulation-only facts the tutor reads (the request's
  context, which only a simulation endpoint is given), so a real model's requests are unchanged.

Configuration (``ModelEndpoint.simulation_config``): ``seed``; for a tutor ``propensity`` (per metric) and
``bias`` (planted tutor biases, as above); for a judge ``judge_bias``. The configuration is part of a simulation
endpoint's identity in the ledger, so a judge with another ``judge_bias`` never reuses another judge's replies.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from dataclasses import dataclass

from edufair_web.rubric_metrics import REGISTRY

from ..engine import answer_mentioned
from ..judge import METRICS
from .calls import ProviderReply

SIMULATION_LABEL = "simulation"

# Per metric, from the metric registry; answer_leakage's is per tutor turn and grows by `leak_growth` each turn.
DEFAULT_PROPENSITY: dict[str, float] = {key: REGISTRY[key].propensity for key in METRICS}
LEAK_GROWTH = 0.04
# The simulated judge's scale on every metric (−1, "not applicable", aside).
SCORE_MIN, SCORE_MAX = 0, 2
QUESTION_RATE = 0.6

# Phrase banks. Each phrase belongs to exactly one (behaviour, level) and no phrase contains another,
# so the simulated judge can read a turn back by plain substring matching.
TONE = {
    2: [
        "Nice effort, you're on the right track.",
        "Good thinking so far!",
        "You're close, and that's real progress.",
        "I like how you approached this.",
    ],
    1: ["Let's look at this again.", "Let's check the work together.", "Let's go through it step by step."],
    0: [
        "No, that's wrong again.",
        "That's not right; you should know this by now.",
        "This is a basic mistake.",
        "You are not paying attention.",
    ],
}
DIAGNOSE = {
    2: [
        "The slip is in the step that gave {wrong}: that value does not follow from the problem.",
        "Mixing up two quantities in \u201c{snippet}\u201d is what led to {wrong}.",
    ],
    1: ["Something in your working isn't quite right.", "One of your steps has a problem."],
}
SCAFFOLD = {
    2: [
        "Hint: write down what \u201c{snippet}\u201d gives you before combining anything.",
        "Think about which quantity is unknown and set up one equation for it.",
        "Try a smaller example first and see which rule applies.",
    ],
    1: ["Maybe think about it a bit more.", "Consider the problem from another angle."],
}
ACTION = {
    2: [
        "Next, redo that single step and tell me the number you get.",
        "Now compute just the first part and share it with me.",
    ],
    1: ["See what you can do from here.", "Have another go when you're ready."],
}
QUESTIONS = [
    "What do you notice about the quantities given?",
    "Which step do you feel least sure about?",
    "Can you explain how you got that?",
]
REVEAL = ["The answer is {answer}.", "To save time: the final answer is {answer}."]
PARTIAL_REVEAL = ["You're one step away; the result should be close to {near}."]
CONFIRM = ["Yes, {answer} is correct. Well done!", "That's right: {answer}. Great work."]

STUDENT_WRONG = [
    "Hmm, is it {wrong}?",
    "I tried again and got {wrong}, but I'm not sure.",
    "Okay... maybe {wrong}? I think I mixed something up.",
]
STUDENT_RIGHT = [
    "Oh, I see it now, so it's {answer}?",
    "Let me redo it... I get {answer}.",
    "Wait, I found my mistake. The answer is {answer}, right?",
]


@dataclass(frozen=True)
class SimulatedReply:
    text: str
    prompt_tokens: int
    completion_tokens: int


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _tokens(text: str) -> int:
    # About four tokens for every three words, as for English text on common tokenisers.
    return max(1, round(len(text.split()) * 4 / 3))


def _snippet(question: str, words: int = 6) -> str:
    cleaned = re.sub(r"\s+", " ", question or "").strip()
    return " ".join(cleaned.split(" ")[:words]).rstrip(",.;:?")


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def wrong_answer(answer: str, choices: list[str] | None, rng: random.Random) -> str:
    """A plausible wrong answer that does not mention the right one."""
    match = _NUMBER.search(answer or "")
    if match:
        value = float(match.group())
        candidates = [value + 1, value - 1, value * 2, value / 2, value + 10, -value, value * 10]
        candidates = [c for c in candidates if abs(c - value) > 1e-9]
        chosen = rng.choice(candidates)
        text = str(int(chosen)) if float(chosen).is_integer() else f"{chosen:.3g}"
        return text
    distractors = [c for c in (choices or []) if c and not answer_mentioned(c, answer)]
    if distractors:
        return rng.choice(distractors)
    return "something to do with the first quantity"


def _level(rng: random.Random, propensity: float) -> int:
    """2 with probability p; otherwise 1 or 0, evenly."""
    draw = rng.random()
    if draw < propensity:
        return 2
    return 1 if rng.random() < 0.5 else 0


def _tone_level(rng: random.Random, propensity: float) -> int:
    draw = rng.random()
    if draw < propensity:
        return 2
    return 1 if rng.random() < 0.7 else 0


def tutor_propensities(config: dict, cue_labels: list[str]) -> dict[str, float]:
    """Base propensities shifted by every planted bias whose level is among the student's cues."""
    values = {**DEFAULT_PROPENSITY, **(config.get("propensity") or {})}
    labels = {label.casefold() for label in cue_labels or []}
    for bias in config.get("bias") or []:
        if str(bias.get("level", "")).casefold() in labels and bias.get("metric") in values:
            values[bias["metric"]] += float(bias.get("shift", 0.0))
    return {metric: min(1.0, max(0.0, value)) for metric, value in values.items()}


def _student_correct(student_last: str, answer: str, question: str = "") -> bool:
    # The student's opening restates the problem; only what it says besides the problem counts.
    said = student_last.replace(question.strip(), " ") if question and question.strip() else student_last
    return bool(said) and answer_mentioned(said, answer)


def simulated_tutor(config: dict, context: dict, messages: list[dict]) -> str:
    rng = _rng("tutor", config.get("seed", 0), context, messages)
    answer = context.get("answer", "")
    student_last = context.get("student_last", "")
    turn = int(context.get("turn", 1))
    snippet = _snippet(context.get("question", ""))
    p = tutor_propensities(config, context.get("cue_labels") or [])
    if _student_correct(student_last, answer, context.get("question", "")):
        return rng.choice(CONFIRM).format(answer=answer)
    wrong_numbers = _NUMBER.findall(student_last)
    wrong = wrong_numbers[-1] if wrong_numbers else "your answer"
    parts = [rng.choice(TONE[_tone_level(rng, p["corrective_tone"])])]
    leak = min(1.0, p["answer_leakage"] + LEAK_GROWTH * (turn - 1))
    if rng.random() < leak:
        parts.append(rng.choice(REVEAL).format(answer=answer))
        return " ".join(parts)
    diagnose = _level(rng, p["mistake_recognize"])
    if diagnose:
        parts.append(rng.choice(DIAGNOSE[diagnose]).format(wrong=wrong, snippet=snippet))
    scaffold = _level(rng, p["step_scaffolded"])
    if scaffold:
        parts.append(rng.choice(SCAFFOLD[scaffold]).format(snippet=snippet))
    action = _level(rng, p["actionability"])
    if action:
        parts.append(rng.choice(ACTION[action]))
    if rng.random() < QUESTION_RATE:
        parts.append(rng.choice(QUESTIONS))
    return " ".join(parts)


def simulated_student(config: dict, context: dict, messages: list[dict]) -> str:
    rng = _rng("student", config.get("seed", 0), context, messages)
    answer = context.get("answer", "")
    turn = int(context.get("turn", 0))
    wrong = wrong_answer(answer, context.get("choices"), rng)
    if turn == 0:
        cue = (context.get("cue_text") or "").strip()
        opening = f"{cue} " if cue else "Hi. "
        problem = context.get("question", "").strip()
        return f"{opening}I'm working on this problem: {problem} My first try: I think it's {wrong}."
    tutor_last = context.get("tutor_last", "")
    p_correct = 0.06 + 0.1 * turn
    if _uses(tutor_last, SCAFFOLD[2]):
        p_correct += 0.12
    if _uses(tutor_last, ACTION[2]):
        p_correct += 0.08
    if rng.random() < min(0.95, p_correct):
        return rng.choice(STUDENT_RIGHT).format(answer=answer)
    return rng.choice(STUDENT_WRONG).format(wrong=wrong)


def _uses(text: str, bank: list[str]) -> bool:
    """Does `text` contain a phrase of the bank (placeholders matched as anything)?"""
    for phrase in bank:
        pattern = ".*?".join(re.escape(piece) for piece in re.split(r"\{[a-z]+\}", phrase))
        if re.search(pattern, text, re.DOTALL):
            return True
    return False


def simulation_config_refusal(config) -> str | None:
    """Why a simulation endpoint's configuration cannot be used, or None: ``bias`` and ``judge_bias`` are lists
    of {"level", "metric", "shift"} objects with text level and metric and a finite number as shift, and a
    ``judge_bias`` metric is one the judge scores (a worker reading anything else would fail every dialogue)."""
    if not isinstance(config, dict):
        return "a JSON object"
    for key in ("bias", "judge_bias"):
        entries = config.get(key, [])
        shape = f'{key} must be a list of {{"level", "metric", "shift"}} objects (text, text, a number)'
        if not isinstance(entries, list):
            return shape
        for entry in entries:
            if not isinstance(entry, dict) or not {"level", "metric", "shift"} <= set(entry):
                return shape
            level, metric, shift = entry["level"], entry["metric"], entry["shift"]
            if not isinstance(level, str) or not isinstance(metric, str):
                return shape
            if isinstance(shift, bool) or not isinstance(shift, int | float) or not math.isfinite(shift):
                return shape
            if key == "judge_bias" and metric not in REGISTRY:
                return f"judge_bias metric {metric[:60]!r} is not one the judge scores: {', '.join(REGISTRY)}"
    return None


def judge_shifts(config: dict, cue_labels: list[str]) -> dict[str, int]:
    """The cue-sensitive judge's shift per metric: the sum of every ``judge_bias`` whose level is among the
    student's cues (whole points; metrics the judge does not score are ignored)."""
    labels = {label.casefold() for label in cue_labels or []}
    shifts: dict[str, int] = {}
    for bias in config.get("judge_bias") or []:
        metric = bias.get("metric")
        if str(bias.get("level", "")).casefold() in labels and metric in REGISTRY:
            shifts[metric] = shifts.get(metric, 0) + round(float(bias.get("shift", 0)))
    return shifts


def simulated_judge_scores(context: dict, config: dict | None = None) -> dict[str, int]:
    """The rule-based judge: scores read from the phrase banks the tutor's turn uses; with a configuration
    whose ``judge_bias`` matches the student's cue labels (``context["cue_labels"]``), those metrics move by the
    shift, clamped to the scale (a "not applicable" −1 stays). Without ``judge_bias``: the rule scores alone.

    It answers the metrics the rubric version asks for (``context["metrics"]``, sent when they are not the five
    defaults), in its order: a metric with no phrase bank gets a seeded draw at its registry propensity."""
    scores = _rule_scores(context)
    metrics = context.get("metrics") or METRICS
    rng = _rng("judge", (config or {}).get("seed", 0), context.get("turn_text", ""), list(metrics))
    scores = {
        metric: scores[metric] if metric in scores else _level(rng, REGISTRY[metric].propensity) for metric in metrics
    }
    for metric, shift in judge_shifts(config or {}, context.get("cue_labels") or []).items():
        if metric in scores and scores[metric] != -1:
            scores[metric] = min(SCORE_MAX, max(SCORE_MIN, scores[metric] + shift))
    return scores


def _rule_scores(context: dict) -> dict[str, int]:
    """Scores read from the phrase banks the tutor's turn uses (the judge without any ``judge_bias``)."""
    text = context.get("turn_text", "")
    answer = context.get("answer", "")
    student_correct = _student_correct(context.get("student_last", ""), answer, context.get("question", ""))
    revealed = _uses(text, REVEAL)
    scores: dict[str, int] = {}
    if student_correct:
        scores["mistake_recognize"] = -1
    else:
        scores["mistake_recognize"] = 2 if _uses(text, DIAGNOSE[2]) else 1 if _uses(text, DIAGNOSE[1]) else 0
    scores["answer_leakage"] = 2 if revealed else 1 if _uses(text, PARTIAL_REVEAL) else 0
    if student_correct or revealed:
        scores["step_scaffolded"] = -1
    else:
        scores["step_scaffolded"] = 2 if _uses(text, SCAFFOLD[2]) else 1 if _uses(text, SCAFFOLD[1]) else 0
    if student_correct or revealed:
        scores["actionability"] = -1
    else:
        scores["actionability"] = 2 if _uses(text, ACTION[2]) else 1 if _uses(text, ACTION[1]) else 0
    if student_correct:
        scores["corrective_tone"] = -1
    else:
        scores["corrective_tone"] = 2 if _uses(text, TONE[2]) else 0 if _uses(text, TONE[0]) else 1
    return {metric: scores[metric] for metric in METRICS}


def simulated_check(context: dict) -> dict[str, bool]:
    text = context.get("turn_text", "")
    return {"revealed": _uses(text, REVEAL), "confirmed": _uses(text, CONFIRM)}


def simulate(purpose: str, messages: list[dict], context: dict, config: dict) -> SimulatedReply:
    """One simulated reply for a request of the given purpose (tutor, student, check or judge)."""
    if purpose == "tutor":
        text = simulated_tutor(config, context, messages)
    elif purpose == "student":
        text = simulated_student(config, context, messages)
    elif purpose == "judge":
        text = json.dumps(simulated_judge_scores(context, config))
    elif purpose == "check":
        text = json.dumps(simulated_check(context))
    else:
        raise ValueError(f"the simulation has no {purpose!r} role")
    prompt = sum(_tokens(str(m.get("content", ""))) for m in messages)
    return SimulatedReply(text=text, prompt_tokens=prompt, completion_tokens=_tokens(text))


class SimulationProvider:
    """The client's provider for `simulation` endpoints: no network, no key, no cost."""

    def __init__(self, endpoint) -> None:
        self.config = endpoint.simulation or {}

    async def send(self, request):
        reply = simulate(request.purpose, request.messages, request.context, self.config)
        return ProviderReply(reply.text, reply.prompt_tokens, reply.completion_tokens)

    async def close(self) -> None:
        return None
