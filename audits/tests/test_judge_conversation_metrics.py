"""EduFair-Bench's four conversation-level metrics, computed from the transcript by hand."""

from audits.judge import conversation_metrics, word_count


def test_metrics_match_a_hand_count():
    turns = [
        ("student", "I think it is 13."),  # 5 words
        ("tutor", "What does the problem ask for?"),  # 6 words, a question
        ("student", "Six times seven."),  # 3 words
        ("tutor", "Right. So compute it now."),  # 5 words, no question
    ]
    metrics = conversation_metrics(turns)
    assert metrics["tutor_turns"] == 2
    assert metrics["tutor_avg_word"] == 5.5
    assert metrics["tutor_question_rate"] == 0.5
    assert metrics["tutor_student_word_ratio"] == 11 / 8


def test_undefined_ratios_are_none_not_zero():
    metrics = conversation_metrics([("student", "")])
    assert metrics["tutor_turns"] == 0
    assert metrics["tutor_avg_word"] is None
    assert metrics["tutor_question_rate"] is None
    assert metrics["tutor_student_word_ratio"] is None


def test_word_count_keeps_contractions_and_numbers():
    assert word_count("Don't add 2.5 — multiply!") == 4  # "2.5" is one word
