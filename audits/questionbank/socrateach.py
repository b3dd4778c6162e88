"""SocraTeach importer (SocraticLM, Liu et al. 2024) with EduFair-Bench's four filter rules.

Input (`SocraTeach_multi.json` shape): an object keyed by problem id; each value has `question`, `answer`,
optional `analysis` and `steps`, and `dialogues`: dialogue id → list of rounds `{"system": tutor text,
"user": student text}` (optionally a `user_type` label for the student's reply). In a round the tutor
speaks and the student answers, so the tutor's reaction to a student reply is in the next round.

The unit of the funnel is a dialogue (35,151 in the paper). A dialogue passes when, in order:
  1. it has ≥ `min_exchanges` student–tutor exchanges (rounds with a student reply);
  2. ≥ `min_student_errors` student replies are errors;
  3. ≥ `min_correct_after_last_error` correct or partially correct replies follow the last error;
  4. the tutor never states the ground-truth answer before the student has said it.
How a reply is read as an error or as correct is a parameter (`reply_labels`): from `user_type` labels,
from the tutor's feedback in the next round (marker phrases), or `auto` (the label when present, otherwise
the feedback). A problem is kept when one of its dialogues passes; the first passing dialogue (file order)
becomes the question's reference dialogue. The reader streams the file (ijson): only kept problems stay
in memory. Pure: no Django.
"""

import re
from dataclasses import asdict, dataclass

from .reading import FileFacts, Opener, iter_json_object
from .records import (
    FunnelStep,
    ImportFileError,
    ImportScan,
    ProgressCallback,
    QuestionData,
    no_progress,
    optional_text,
    reject_nul,
    require_answer,
    require_object,
    require_text,
    type_name,
)

SOURCE = "socrateach"
DOMAIN = "mathematics"

ERROR = "error"
CORRECT = "correct"
NEUTRAL = "neutral"


@dataclass(frozen=True)
class SocraTeachFilter:
    min_exchanges: int = 4
    min_student_errors: int = 2
    min_correct_after_last_error: int = 1
    forbid_disclosure: bool = True
    reply_labels: str = "auto"  # "user_type" | "tutor_feedback" | "auto"
    error_user_types: tuple[str, ...] = ("incorrect", "wrong", "error", "mistake", "misconception")
    correct_user_types: tuple[str, ...] = ("correct", "partially_correct", "partially correct", "partial", "right")
    # Checked before the "correct" markers, because "not correct" contains "correct".
    tutor_error_markers: tuple[str, ...] = (
        "not quite",
        "not correct",
        "incorrect",
        "not right",
        "a mistake",
        "mistake",
        "wrong",
        "not exactly",
        "check again",
        "double-check",
        "let's revisit",
        "let's look again",
        "close, but",
        "almost",
        "careful",
        "that's not",
        "isn't right",
        "is not right",
    )
    tutor_correct_markers: tuple[str, ...] = (
        "correct",
        "right",
        "exactly",
        "well done",
        "good job",
        "great job",
        "great",
        "excellent",
        "that's it",
        "perfect",
        "good thinking",
        "nice work",
        "you got it",
        "partially",
        "on the right track",
        "good start",
    )

    def as_dict(self) -> dict:
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}


@dataclass(frozen=True)
class Round:
    tutor: str
    student: str
    user_type: str | None


def parse_problem(location: str, problem_id: str, raw) -> tuple[dict, dict[str, list[Round]]]:
    """Validate one problem; returns its fields and its dialogues (id → rounds)."""
    record = require_object(raw, location=location)
    reject_nul({"id": problem_id, **record}, location=location)
    fields = {
        "question": require_text(record, "question", location=location),
        "answer": require_answer(record, "answer", location=location),
        "analysis": optional_text(record, "analysis", location=location),
        "steps": _steps(record, location),
    }
    dialogues_raw = record.get("dialogues")
    if dialogues_raw is None:
        raise ImportFileError("missing", location=location, field_name="dialogues")
    if not isinstance(dialogues_raw, dict):
        raise ImportFileError(
            f"expected an object of dialogue id → rounds, found {type_name(dialogues_raw)}",
            location=location,
            field_name="dialogues",
        )
    dialogues = {}
    for dialogue_id, rounds_raw in dialogues_raw.items():
        where = f"{location}, dialogue '{dialogue_id}'"
        if not isinstance(rounds_raw, list):
            raise ImportFileError(
                f"expected a list of rounds, found {type_name(rounds_raw)}", location=where, field_name="dialogues"
            )
        rounds = []
        for number, round_raw in enumerate(rounds_raw, start=1):
            round_where = f"{where}, round {number}"
            round_record = require_object(round_raw, location=round_where)
            user_type = round_record.get("user_type")
            if user_type is not None and not isinstance(user_type, str):
                raise ImportFileError(
                    f"expected text, found {type_name(user_type)}", location=round_where, field_name="user_type"
                )
            rounds.append(
                Round(
                    tutor=require_text(round_record, "system", location=round_where, allow_empty=True),
                    student=optional_text(round_record, "user", location=round_where),
                    user_type=user_type,
                )
            )
        dialogues[str(dialogue_id)] = rounds
    return fields, dialogues


def _steps(record: dict, location: str) -> list[str]:
    steps = record.get("steps")
    if steps is None:
        return []
    if not isinstance(steps, list) or not all(isinstance(step, str) for step in steps):
        raise ImportFileError("expected a list of texts", location=location, field_name="steps")
    return steps


def _contains_marker(text: str, markers: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(re.search(r"(?<!\w)" + re.escape(marker) + r"(?!\w)", lowered) for marker in markers)


def reply_labels(rounds: list[Round], rules: SocraTeachFilter) -> list[str]:
    """ERROR / CORRECT / NEUTRAL for each round that has a student reply, in order."""
    labels = []
    for index, current in enumerate(rounds):
        if not current.student.strip():
            continue
        label = None
        if rules.reply_labels in ("user_type", "auto") and current.user_type:
            kind = current.user_type.strip().lower()
            label = (
                ERROR if kind in rules.error_user_types else CORRECT if kind in rules.correct_user_types else NEUTRAL
            )
        if label is None and rules.reply_labels in ("tutor_feedback", "auto"):
            feedback = rounds[index + 1].tutor if index + 1 < len(rounds) else ""
            if _contains_marker(feedback, rules.tutor_error_markers):
                label = ERROR
            elif _contains_marker(feedback, rules.tutor_correct_markers):
                label = CORRECT
        labels.append(label or NEUTRAL)
    return labels


def answer_pattern(answer: str) -> re.Pattern | None:
    """A pattern that finds the answer in free text: a number as a number (12 = 12.0), else the phrase."""
    cleaned = answer.strip().strip("$").rstrip(".").strip()
    if not cleaned:
        return None
    number = re.fullmatch(r"-?\d+(?:\.\d+)?", cleaned.replace(",", ""))
    if number:
        value = cleaned.replace(",", "")
        if "." in value:
            value = value.rstrip("0").rstrip(".")
        return re.compile(r"(?<![\w.])" + re.escape(value) + r"(?:\.0+)?(?![\w]|\.\d)")
    return re.compile(r"(?<!\w)" + re.escape(cleaned.lower()) + r"(?!\w)", re.IGNORECASE)


def discloses_answer(rounds: list[Round], question: str, answer: str) -> bool:
    """True when a tutor turn states the answer before any student reply contains it.

    When the answer also appears in the problem text (a number the problem mentions), only an explicit
    "the answer is …" / "= …" statement counts, or every restatement of the problem would count.
    """
    pattern = answer_pattern(answer)
    if pattern is None:
        return False
    if pattern.search(question):
        explicit = re.compile(
            r"(?:answer|result|solution)\s+(?:is|=|would be|will be)\s*:?\s*\$?(?:"
            + pattern.pattern
            + r")|=\s*\$?(?:"
            + pattern.pattern
            + ")",
            re.IGNORECASE,
        )
        pattern = explicit
    student_said_it = False
    for current in rounds:
        if not student_said_it and pattern.search(current.tutor):
            return True
        if pattern.search(current.student):
            student_said_it = True
    return False


@dataclass(frozen=True)
class DialogueVerdict:
    exchanges: int
    errors: int
    correct_after_last_error: int
    discloses: bool
    failed_rule: int | None  # 1..4, or None when the dialogue passes every rule


def judge_dialogue(rounds: list[Round], question: str, answer: str, rules: SocraTeachFilter) -> DialogueVerdict:
    labels = reply_labels(rounds, rules)
    exchanges = len(labels)
    errors = labels.count(ERROR)
    last_error = max((i for i, label in enumerate(labels) if label == ERROR), default=None)
    correct_after = 0 if last_error is None else labels[last_error + 1 :].count(CORRECT)
    discloses = discloses_answer(rounds, question, answer)
    if exchanges < rules.min_exchanges:
        failed = 1
    elif errors < rules.min_student_errors:
        failed = 2
    elif correct_after < rules.min_correct_after_last_error:
        failed = 3
    elif rules.forbid_disclosure and discloses:
        failed = 4
    else:
        failed = None
    return DialogueVerdict(exchanges, errors, correct_after, discloses, failed)


def reference_dialogue(rounds: list[Round], rules: SocraTeachFilter) -> list[dict]:
    labels = iter(reply_labels(rounds, rules))
    turns = []
    for current in rounds:
        if current.tutor.strip():
            turns.append({"role": "tutor", "text": current.tutor})
        if current.student.strip():
            turn = {"role": "student", "text": current.student, "label": next(labels)}
            if current.user_type:
                turn["user_type"] = current.user_type
            turns.append(turn)
    return turns


def socrateach_scan(
    opener: Opener,
    facts: FileFacts,
    rules: SocraTeachFilter | None = None,
    progress: ProgressCallback = no_progress,
    *,
    record_limit: int,
) -> ImportScan:
    rules = rules or SocraTeachFilter()
    if facts.first_char != "{":
        raise ImportFileError(
            f"expected a JSON object keyed by problem id (SocraTeach_multi.json), found '{facts.first_char}' first"
        )
    problems_in = 0
    dialogues_in = 0
    passed_rule = [0, 0, 0, 0]
    kept: list[QuestionData] = []
    for location, problem_id, raw in iter_json_object(opener, progress, record_limit=record_limit):
        problems_in += 1
        fields, dialogues = parse_problem(location, problem_id, raw)
        reference_id, reference_verdict, passing = None, None, 0
        for dialogue_id, rounds in dialogues.items():
            dialogues_in += 1
            verdict = judge_dialogue(rounds, fields["question"], fields["answer"], rules)
            survived = 4 if verdict.failed_rule is None else verdict.failed_rule - 1
            for rule in range(survived):
                passed_rule[rule] += 1
            if verdict.failed_rule is None:
                passing += 1
                if reference_id is None:
                    reference_id, reference_verdict = dialogue_id, verdict
        if reference_id is None:
            continue
        rounds = dialogues[reference_id]
        kept.append(
            QuestionData(
                domain=DOMAIN,
                source=SOURCE,
                source_id=str(problem_id),
                text=fields["question"],
                answer=fields["answer"],
                solution=fields["analysis"],
                reference_dialogue=reference_dialogue(rounds, rules),
                metadata={
                    "steps": fields["steps"],
                    "reference_dialogue_id": reference_id,
                    "dialogues_in_file": len(dialogues),
                    "dialogues_passing": passing,
                    "exchanges": reference_verdict.exchanges,
                    "student_errors": reference_verdict.errors,
                    "complete": bool(rounds) and "END" in (rounds[-1].tutor + rounds[-1].student),
                },
            )
        )
    if not problems_in:
        raise ImportFileError("the file contains no problems")
    funnel = [
        FunnelStep("dialogues in", dialogues_in, {"problems": problems_in}),
        FunnelStep(f"≥ {rules.min_exchanges} exchanges", passed_rule[0]),
        FunnelStep(f"≥ {rules.min_student_errors} student errors", passed_rule[1]),
        FunnelStep(f"≥ {rules.min_correct_after_last_error} correct reply after the last error", passed_rule[2]),
        FunnelStep(
            "no ground-truth disclosure" if rules.forbid_disclosure else "disclosure not checked", passed_rule[3]
        ),
        FunnelStep("questions kept (problems with a passing dialogue)", len(kept)),
    ]
    return ImportScan(funnel=funnel, kept_count=len(kept), questions=lambda: iter(kept), parameters=rules.as_dict())
