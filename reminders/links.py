"""The signed links a digest carries: one-click unsubscribe and the recall prompt."""

from __future__ import annotations

from datetime import timedelta

from django.core import signing

from accounts.models import User
from quizzes.models import RecallSchedule
from reminders.models import ReminderDigest

# The salts keep the names they had in the quizzes app, so links already in inboxes still work.
UNSUBSCRIBE_SALT = "quizzes.reminders.unsubscribe"
UNSUBSCRIBE_MAX_AGE = timedelta(days=90)
PROMPT_SALT = "quizzes.reminders.prompt"
PROMPT_MAX_AGE = timedelta(days=3)


class LinkInvalid(Exception):
    """A signed link that was tampered with, has expired, or points at nothing."""


def unsubscribe_token_make(*, learner: User) -> str:
    return signing.dumps({"u": learner.pk}, salt=UNSUBSCRIBE_SALT)


def unsubscribe_token_learner(*, token: str) -> User:
    """The learner a one-click unsubscribe token names; LinkInvalid if tampered or expired."""
    try:
        data = signing.loads(token, salt=UNSUBSCRIBE_SALT, max_age=UNSUBSCRIBE_MAX_AGE)
        return User.objects.get(pk=int(data["u"]))
    except (signing.BadSignature, User.DoesNotExist, KeyError, TypeError, ValueError) as exc:
        raise LinkInvalid(str(exc)) from exc


def prompt_token_make(*, digest_id: int, schedule_id: int) -> str:
    return signing.dumps({"d": digest_id, "s": schedule_id}, salt=PROMPT_SALT)


def prompt_token_schedule(*, token: str) -> RecallSchedule:
    """The recall schedule a digest's prompt link points at; LinkInvalid if tampered, expired,
    or no longer the digest learner's."""
    try:
        data = signing.loads(token, salt=PROMPT_SALT, max_age=PROMPT_MAX_AGE)
        digest = ReminderDigest.objects.get(pk=int(data["d"]))
        return (
            RecallSchedule.objects.select_related("item", "learner")
            .prefetch_related("item__choices")
            .get(pk=int(data["s"]), learner_id=digest.learner_id)
        )
    except (
        signing.BadSignature,
        ReminderDigest.DoesNotExist,
        RecallSchedule.DoesNotExist,
        KeyError,
        TypeError,
        ValueError,
    ) as exc:
        raise LinkInvalid(str(exc)) from exc
