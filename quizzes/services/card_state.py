"""The card as the reveal showed it, carried by the grade form: the schedule's FSRS state, the
course's scheduling settings and the parameters in force, signed, so the grade need not read
them again and schedules with exactly what the grade buttons previewed.

Safe to trust once the signature holds: the grade writes only if the schedule's row still holds
the card token in the state, and every write of a schedule's FSRS state (a grade, an undo, an
unsuspend) rotates that token. A state that is missing, tampered with, older than a day or for
another learner, schedule or token is ignored, and the grade reads the schedule as before.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from django.core import signing
from django.db import connection, models

from core.moments import epoch_micros, from_epoch_micros
from courses.models import Course
from quizzes.models import RecallSchedule
from quizzes.selectors.cards import GRADED_COURSE_FIELDS
from quizzes.services.fsrs_adapter import DEFAULT_WEIGHTS, Scheduling, scheduling_from

_SALT = "quizzes.card-state"
MAX_AGE = timedelta(days=1)
# The form field's bound: a state is about 0.4 KB, 1 KB with a personal parameter set.
MAX_LENGTH = 4000
_VERSION = 1  # bump when the payload changes shape: older states are then read as bad ones
_SCHEDULE_FIELDS = ("id", "learner_id", "item_id", "course_id", "state", "step", "stability",
                    "difficulty", "reps", "lapses", "suspended")  # fmt: skip

Shown = tuple[RecallSchedule, Course, Scheduling]


def _micros(moment: datetime | None) -> int | None:
    return None if moment is None else epoch_micros(moment)


def _moment(micros: int | None) -> datetime | None:
    return None if micros is None else from_epoch_micros(micros)


def _from_db[M: models.Model](model: type[M], values: dict[str, Any]) -> M:
    """An instance as the database would give it, with only these fields loaded (from_db takes
    the values in the model's field order)."""
    names = [f.attname for f in model._meta.concrete_fields if f.attname in values]
    return model.from_db(connection.alias, names, [values[name] for name in names])


def card_state_dumps(*, schedule: RecallSchedule, course: Course, scheduling: Scheduling) -> str:
    """The signed state of a scheduled card as shown, for the grade form."""
    weights = None if scheduling.weights == DEFAULT_WEIGHTS else list(scheduling.weights)
    payload = [
        _VERSION,
        [getattr(schedule, name) for name in _SCHEDULE_FIELDS],
        [_micros(schedule.due), _micros(schedule.last_review), schedule.card_token.hex],
        [getattr(course, name) for name in GRADED_COURSE_FIELDS],
        [scheduling.parameters_id, weights, scheduling.desired_retention],
    ]
    return signing.dumps(payload, salt=_SALT, compress=True)


def card_state_loads(
    value: str, *, learner_id: int, schedule_id: int, card_token: uuid.UUID
) -> Shown | None:
    """The schedule, its course's settings and its scheduling as the reveal showed them; None
    unless `value` is a valid state of this learner's schedule under this token."""
    if not value or len(value) > MAX_LENGTH:
        return None
    try:
        version, fields, (due, last_review, token), settings, scheduled = signing.loads(
            value, salt=_SALT, max_age=MAX_AGE
        )
        values = dict(zip(_SCHEDULE_FIELDS, fields, strict=True))
        parameters_id, weights, retention = scheduled
        if weights is not None and len(weights) != len(DEFAULT_WEIGHTS):
            return None
    except (signing.BadSignature, ValueError, TypeError):
        return None  # a state from an older release reads as a bad one
    if (
        version != _VERSION
        or values["id"] != schedule_id
        or values["learner_id"] != learner_id
        or token != card_token.hex
    ):
        return None
    values.update(due=_moment(due), last_review=_moment(last_review), card_token=uuid.UUID(token))
    schedule = _from_db(RecallSchedule, values)
    course = _from_db(Course, dict(zip(GRADED_COURSE_FIELDS, settings, strict=True)))
    # The retention as resolved at the reveal: it stands as the learner's own.
    scheduling = scheduling_from(course=course, row=(parameters_id, weights, float(retention)))
    return schedule, course, scheduling
