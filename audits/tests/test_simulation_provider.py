"""The simulation provider: same seed, same transcripts; a planted bias moves the tutor; readable turns."""

import asyncio
import statistics

from audits.engine import DialogueSpec
from audits.llm.calls import EndpointConfig, MemoryLedger
from audits.llm.client import LLMClient
from audits.llm.dialogue import DialogueEndpoints, DialogueJob, dialogue_execute
from audits.llm.simulation import simulate, simulated_judge_scores, tutor_propensities

NON_ENGLISH = "first_language=non-English L1"
QUESTION = "A train travels 60 km in 1.5 hours. What is its average speed in km/h?"


def endpoints(bias=None, seed=0):
    tutor = EndpointConfig(
        key="t", provider="simulation", model="sim-tutor", simulation={"seed": seed, "bias": bias or []}
    )
    other = EndpointConfig(key="o", provider="simulation", model="sim-student-judge", simulation={"seed": seed})
    return DialogueEndpoints(tutor=tutor, student=other, judge=other)


def run(question_index, labels, *, seed=0, bias=None):
    question = f"{QUESTION} (variant {question_index})"
    job = DialogueJob(
        spec=DialogueSpec(question=question, answer="40", tutor_system="tutor", student_system="student"),
        context={"seed": seed, "question": question, "answer": "40", "cue_labels": labels, "cue_text": ""},
    )
    return asyncio.run(dialogue_execute(job, LLMClient(MemoryLedger()), endpoints(bias, seed)))


def transcript(outcome):
    return [(t.role, t.text) for t in outcome.result.turns], [(j.turn_index, j.scores) for j in outcome.judgements]


def test_same_seed_same_transcript_and_scores():
    assert transcript(run(1, [NON_ENGLISH], seed=5)) == transcript(run(1, [NON_ENGLISH], seed=5))


def test_another_seed_gives_other_transcripts():
    differing = sum(transcript(run(i, [], seed=1)) != transcript(run(i, [], seed=2)) for i in range(10))
    assert differing >= 8


def test_planted_bias_shifts_only_the_configured_level_and_metric():
    bias = [{"level": NON_ENGLISH, "metric": "corrective_tone", "shift": -0.3}]
    assert tutor_propensities({"bias": bias}, [NON_ENGLISH])["corrective_tone"] == 0.6 - 0.3
    assert tutor_propensities({"bias": bias}, ["first_language=English L1"])["corrective_tone"] == 0.6
    assert tutor_propensities({"bias": bias}, [NON_ENGLISH])["step_scaffolded"] == 0.6


def _mean_tone(outcomes):
    values = [j.scores["corrective_tone"] for o in outcomes for j in o.judgements if j.scores["corrective_tone"] >= 0]
    return statistics.mean(values)


def test_a_planted_tone_bias_lowers_the_judged_tone_for_that_level():
    bias = [{"level": NON_ENGLISH, "metric": "corrective_tone", "shift": -0.4}]
    control = [run(i, [], bias=bias) for i in range(40)]
    cued = [run(i, [NON_ENGLISH], bias=bias) for i in range(40)]
    assert _mean_tone(control) - _mean_tone(cued) > 0.3


def test_turns_are_readable_and_varied():
    texts = {t.text for i in range(20) for t in run(i, []).result.turns if t.role == "tutor"}
    assert len(texts) >= 15
    assert all(text[0].isupper() and text.rstrip()[-1] in ".!?" for text in texts)


def test_judge_rules_follow_the_phrase_banks():
    scores = simulated_judge_scores(
        {
            "turn_text": "This is a basic mistake. The slip is in the step that gave 41: that value does not "
            "follow from the problem. Next, redo that single step and tell me the number you get.",
            "student_last": "I think it's 41.",
            "answer": "40",
        }
    )
    assert scores == {
        "mistake_recognize": 2,
        "answer_leakage": 0,
        "step_scaffolded": 0,
        "actionability": 2,
        "corrective_tone": 0,
    }


def test_every_reply_reports_tokens():
    reply = simulate("student", [{"role": "user", "content": "start now please"}], {"answer": "4", "turn": 0}, {})
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
