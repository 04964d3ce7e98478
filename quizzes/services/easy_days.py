"""A learner's week as the scheduler sees it: their easy days (normal, reduced, minimum per
weekday, in their own time zone and day start), their break, and their reviews already due, as
the `LearnerWeek` the load balancer weighs."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timedelta

from accounts.models import EASY_DAYS_NORMAL, User
from quizzes.selectors.due_days import due_per_day, learner_today
from quizzes.services.load_balancer import LOAD_BALANCE_DAYS, LearnerWeek

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
LEVELS = {"normal": "n", "reduced": "r", "minimum": "m"}
LEVEL_NAMES = {letter: name for name, letter in LEVELS.items()}


class EasyDaysError(ValueError):
    """An --easy-days value that is not `weekday=level[,weekday=level…]`."""


def easy_days_parse(text: str) -> str:
    """'sat=reduced,sun=minimum' → 'nnnnnrm' (Monday first). Raises EasyDaysError."""
    if len(text) > 200:
        raise EasyDaysError("--easy-days: at most 200 characters")
    letters = list(EASY_DAYS_NORMAL)
    for part in filter(None, (p.strip() for p in text.lower().split(","))):
        day, sep, level = part.partition("=")
        if not sep or day.strip() not in WEEKDAYS or level.strip() not in LEVELS:
            raise EasyDaysError(
                f"--easy-days: {part!r} is not weekday=level (mon…sun = normal|reduced|minimum)"
            )
        letters[WEEKDAYS.index(day.strip())] = LEVELS[level.strip()]
    return "".join(letters)


def easy_day_level(*, easy_days: str, day: date) -> str:
    """The learner's setting ("n", "r" or "m") for the learning day dated `day`."""
    letters = easy_days if len(easy_days) == 7 else EASY_DAYS_NORMAL
    return letters[day.weekday()]


def on_break(*, learner: User, day: date) -> bool:
    """Whether the learning day dated `day` falls within the learner's break (inclusive)."""
    if learner.break_from is None or learner.break_to is None:
        return False
    return learner.break_from <= day <= learner.break_to


def learner_week(*, learner: User | int, now: datetime) -> LearnerWeek:
    """The learner's week from `now`'s learning day: read only when a review has a fuzz range
    (the learner, when given by id, one query; the due counts, one grouped query per fuzz
    window, kept for the other ratings of a preview)."""
    found_learner: list[User] = [learner] if isinstance(learner, User) else []
    learner_id = learner.pk if isinstance(learner, User) else learner
    read: dict[tuple[int, int], Mapping[int, int]] = {}

    def who() -> User:
        if not found_learner:
            found_learner.append(User.objects.get(pk=learner_id))
        return found_learner[0]

    def today() -> date:
        return learner_today(learner=who(), now=now)

    def counts(first: int, last: int) -> Mapping[int, int]:
        for (low, high), found in read.items():
            if low <= first and last <= high:
                return found
        # One read for every rating of a preview: the whole window Anki's balancer caches.
        low, high = min(first, 1), max(last, LOAD_BALANCE_DAYS)
        found = due_per_day(learner=who(), today=today(), first=low, last=high)
        read[(low, high)] = found
        return found

    def level(offset: int) -> str:
        return easy_day_level(easy_days=who().easy_days, day=today() + timedelta(days=offset))

    def away(offset: int) -> bool:
        return on_break(learner=who(), day=today() + timedelta(days=offset))

    def balance() -> bool:
        return who().load_balancer_enabled

    return LearnerWeek(counts=counts, level=level, away=away, balance=balance)
