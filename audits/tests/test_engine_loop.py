"""The dialogue loop: who speaks when, and why a dialogue ends (docs/DOMAIN.md "Dialogue loop")."""

import asyncio
import json

from audits.engine import (
    END_CONFIRMED,
    END_ERROR,
    END_REVEALED,
    END_T_MAX,
    CallOutcome,
    DialogueSpec,
    answer_mentioned,
    run_dialogue,
)


def spec(**overrides):
    values = {"question": "What is 6 x 7?", "answer": "42", "tutor_system": "TUTOR", "student_system": "STUDENT"}
    return DialogueSpec(**{**values, **overrides})


class Script:
    """A scripted set of models: the check reveals on `reveal_on` and confirms on `confirm_on`."""

    def __init__(self, reveal_on=None, confirm_on=None, check_reply=None, fail=None):
        self.calls = []
        self.reveal_on, self.confirm_on, self.check_reply, self.fail = reveal_on, confirm_on, check_reply, fail

    async def __call__(self, purpose, messages, hints):
        self.calls.append((purpose, messages, hints))
        if self.fail == purpose:
            return CallOutcome(None, call_id=len(self.calls), error="HTTP 500")
        turn = hints.get("turn")
        if purpose == "student":
            return CallOutcome(f"student says {turn}", call_id=len(self.calls))
        if purpose == "tutor":
            return CallOutcome(f"tutor says {turn}", call_id=len(self.calls))
        if self.check_reply is not None:
            return CallOutcome(self.check_reply, call_id=len(self.calls))
        verdict = {"revealed": turn == self.reveal_on, "confirmed": turn == self.confirm_on}
        return CallOutcome(json.dumps(verdict), call_id=len(self.calls))


def test_student_opens_then_turns_alternate_until_t_max():
    script = Script()
    result = asyncio.run(run_dialogue(spec(t_max=3), script))
    assert result.end_reason == END_T_MAX
    assert [t.role for t in result.turns] == ["student", "tutor", "student", "tutor", "student", "tutor"]
    assert sum(t.role == "tutor" for t in result.turns) == 3
    # Every tutor turn was checked, and the ledger ids of the checks are kept with the dialogue.
    assert [p for p, _, _ in script.calls].count("check") == 3
    assert len(result.call_ids) == len(script.calls)


def test_default_t_max_is_ten_tutor_turns():
    result = asyncio.run(run_dialogue(spec(), Script()))
    assert sum(t.role == "tutor" for t in result.turns) == 10


def test_reveal_ends_the_dialogue_on_that_turn():
    result = asyncio.run(run_dialogue(spec(), Script(reveal_on=2)))
    assert result.end_reason == END_REVEALED
    assert result.turns[-1].text == "tutor says 2"


def test_confirmation_ends_the_dialogue():
    result = asyncio.run(run_dialogue(spec(), Script(confirm_on=4)))
    assert result.end_reason == END_CONFIRMED and result.turns[-1].role == "tutor"


def test_messages_are_seen_from_each_speakers_side():
    script = Script()
    asyncio.run(run_dialogue(spec(t_max=2), script))
    tutor_second = [m for p, m, _ in script.calls if p == "tutor"][1]
    assert [m["role"] for m in tutor_second] == ["system", "user", "assistant", "user"]
    assert tutor_second[0]["content"] == "TUTOR"
    student_second = [m for p, m, _ in script.calls if p == "student"][1]
    assert [m["role"] for m in student_second] == ["system", "user", "assistant", "user"]
    assert student_second[2]["content"] == "student says 0"


def test_precheck_skips_the_model_check_when_the_answer_is_nowhere():
    script = Script()
    asyncio.run(run_dialogue(spec(t_max=3, answer_precheck=True), script))
    assert [p for p, _, _ in script.calls].count("check") == 0


def test_precheck_still_calls_the_model_when_the_answer_appears():
    async def call(purpose, messages, hints):
        if purpose == "tutor":
            return CallOutcome("The answer is 42.")
        if purpose == "check":
            return CallOutcome('{"revealed": true, "confirmed": false}')
        return CallOutcome("hmm")

    result = asyncio.run(run_dialogue(spec(answer_precheck=True), call))
    assert result.end_reason == END_REVEALED


def test_an_unparsable_check_ends_the_dialogue_as_an_error_not_as_not_revealed():
    script = Script(check_reply="I believe the tutor did not reveal it.")
    result = asyncio.run(run_dialogue(spec(max_check_reasks=2), script))
    assert result.end_reason == END_ERROR and "unparsable" in result.error
    assert [p for p, _, _ in script.calls].count("check") == 3


def test_a_failed_tutor_call_ends_the_dialogue_with_its_error():
    result = asyncio.run(run_dialogue(spec(), Script(fail="tutor")))
    assert result.end_reason == END_ERROR and "HTTP 500" in result.error


def test_answer_match_normalises_strings_and_numbers():
    assert answer_mentioned("so it is 42!", "42")
    assert answer_mentioned("that gives 42.0 in total", "42")
    assert not answer_mentioned("that gives 420", "42")
    # The negative of the answer is another number (a simulated student's wrong try of -49 for 49).
    assert not answer_mentioned("Hmm, is it -49?", "49")
    assert answer_mentioned("is it -49?", "-49") and answer_mentioned("a well-known 49", "49")
    assert answer_mentioned("The Mitochondria, clearly", "mitochondria")
    assert not answer_mentioned("anything", "")
