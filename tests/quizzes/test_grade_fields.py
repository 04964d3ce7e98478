"""The grade view cleans its POST with the grade form's fields alone (GradeForm.clean_fields_of),
not a bound form: whatever a client posts, it must accept and refuse exactly what the form
does, with the same values and the same first message."""

from __future__ import annotations

import uuid

from django.http import QueryDict
from hypothesis import given, settings
from hypothesis import strategies as st

from quizzes.forms import GradeForm

FIELDS = list(GradeForm.base_fields)
TEXT = st.one_of(
    st.sampled_from(["", " ", "0", "1", "4", "5", "-1", "3.0", " 7 ", "1e3", "x", "\x00"]),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.uuids().map(str),
    st.uuids().map(lambda u: u.hex),
    st.text(max_size=30),
    st.integers(min_value=1990, max_value=4100).map(lambda n: "a" * n),
)


def _as_bound_form(data: QueryDict) -> tuple[dict[str, object], tuple[str, str] | None]:
    form = GradeForm(data)
    if form.is_valid():
        return form.cleaned_data, None
    field, errors = next(iter(form.errors.items()))
    return {}, (field, str(errors[0]))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(FIELDS), TEXT))
def test_the_grade_fields_clean_as_the_bound_form_does(posted: dict[str, str]) -> None:
    data = QueryDict(mutable=True)
    data.update(posted)
    cleaned, error = GradeForm.clean_fields_of(data)
    expected, expected_error = _as_bound_form(data)
    assert error == expected_error
    if error is None:
        assert cleaned == expected


def test_a_valid_grade_is_cleaned_to_typed_values() -> None:
    token = uuid.uuid4()
    data = QueryDict(mutable=True)
    data.update({"rating": "3", "card_token": str(token), "schedule_id": "12", "shown_at": "5"})
    cleaned, error = GradeForm.clean_fields_of(data)
    assert error is None
    assert cleaned["rating"] == 3
    assert cleaned["card_token"] == token
    assert (cleaned["schedule_id"], cleaned["item_id"], cleaned["shown_at"]) == (12, None, 5)
    assert cleaned["counts"] == ""


def test_the_first_bad_field_in_the_forms_order_is_named() -> None:
    data = QueryDict(mutable=True)
    data.update({"rating": "3", "card_token": "not-a-token", "shown_at": "-4"})
    assert GradeForm.clean_fields_of(data)[1] == ("card_token", "Enter a valid UUID.")
