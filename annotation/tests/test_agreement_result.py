"""The one result type every agreement function returns."""

import pytest

from annotation.agreement import AgreementResult


def test_a_result_has_a_value_or_a_reason_never_both_nor_neither():
    with pytest.raises(ValueError):
        AgreementResult(statistic="fleiss_kappa", value=0.5, n_units=3, undefined_reason="because")
    with pytest.raises(ValueError):
        AgreementResult(statistic="fleiss_kappa", value=None, n_units=3)


def test_as_dict_is_plain_data_for_json_reports():
    result = AgreementResult(statistic="gold_agreement_exclude", value=0.75, n_units=4, coverage=0.8)

    assert result.as_dict() == {
        "statistic": "gold_agreement_exclude",
        "value": 0.75,
        "n_units": 4,
        "undefined_reason": None,
        "coverage": 0.8,
    }
    assert result.is_defined
