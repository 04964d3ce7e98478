"""The digest email: its absolute links, its text and HTML parts, and the header policy that keeps
RFC 8058's List-Unsubscribe on one line.

Digests with the same item and count share one rendering: rendering every digest whole halved the
send (154-235 against 293-408 digests/s, docs/benchmarks.md)."""

from __future__ import annotations

import email.policy
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import get_template
from django.urls import NoReverseMatch, reverse
from django.utils.html import conditional_escape
from django.utils.translation import get_language

from accounts.models import User
from reminders.links import PROMPT_MAX_AGE, prompt_token_make, unsubscribe_token_make
from reminders.models import ReminderDigest
from reminders.selectors import DigestContent


def absolute_url(path: str) -> str:
    return f"{settings.SITE_URL}{path}"


def review_session_url() -> str:
    try:
        return absolute_url(reverse("quizzes:session"))
    except NoReverseMatch:
        return absolute_url("/review/")


class _UnfoldedLinkHeaders(email.policy.EmailPolicy):
    """The caller's email policy, except that List-Unsubscribe is written on one line.

    The standard policies fold a header longer than 78 characters, and a URL has no space to fold
    at, so they turn it into an RFC 2047 encoded word, which RFC 8058 readers do not decode. One
    line of up to 998 characters is what RFC 5322 allows.
    """

    UNFOLDED = frozenset({"list-unsubscribe"})

    def one_line(self, name: str, value: str) -> str | None:
        """The header on one line if it is one this policy keeps unfolded, else None."""
        text = str(value)
        if name.lower() in self.UNFOLDED and text.isascii() and len(name) + len(text) < 990:
            return f"{name}: {text}{self.linesep}"
        return None

    def fold(self, name: str, value: str) -> str:
        return self.one_line(name, value) or super().fold(name, value)

    def fold_binary(self, name: str, value: str) -> bytes:
        line = self.one_line(name, value)
        return line.encode("ascii") if line else super().fold_binary(name, value)


_POLICY_FIELDS = (
    "linesep",
    "utf8",
    "cte_type",
    "max_line_length",
    "raise_on_defect",
    "mangle_from_",
    "refold_source",
)


def digest_policy(policy: Any = None) -> _UnfoldedLinkHeaders:
    """`policy` (the default policy if none) with List-Unsubscribe kept on one line."""
    policy = policy or email.policy.default
    return _UnfoldedLinkHeaders().clone(
        **{field: getattr(policy, field) for field in _POLICY_FIELDS if hasattr(policy, field)}
    )


class DigestEmail(EmailMultiAlternatives):
    def message(self, *, policy: Any = None) -> Any:
        return super().message(policy=digest_policy(policy))


@dataclass(frozen=True)
class DigestParts:
    """What a learner receives, before it is written as MIME."""

    subject: str
    text: str
    html: str
    to: str
    headers: dict[str, str]


def digest_email(parts: DigestParts) -> DigestEmail:
    """The parts as a Django email, for any mail backend."""
    message = DigestEmail(
        subject=parts.subject, body=parts.text, to=[parts.to], headers=dict(parts.headers)
    )
    message.attach_alternative(parts.html, "text/html")
    return message


# A per-process marker no content can predict: the rendered shape keeps `<mark>name<mark>` where
# a digest's own value goes. Letters and digits only, so escaping and the templates leave it as is.
_MARK = f"slot{secrets.token_hex(8)}"
_SLOTS = ("name", "prompt_url", "unsubscribe_url")
_SLOT_RE = re.compile(f"{_MARK}({'|'.join(_SLOTS)}){_MARK}")
# What signing and reverse() write for a token, so prefix + token + suffix is reverse()'s URL.
_TOKEN_RE = re.compile(r"[A-Za-z0-9_:\-]+")


@dataclass(frozen=True)
class _Shape:
    """One (item, due count, counts per course, language)'s rendering, split at the slots: even places literal text,
    odd places slot names. `subject_fixed` is the subject when it has no slot."""

    subject: list[str]
    text: list[str]
    html: list[str]
    subject_fixed: str | None


def _filled(pieces: list[str], values: dict[str, str]) -> str:
    if len(pieces) == 1:
        return pieces[0]
    filled = pieces.copy()
    for index in range(1, len(filled), 2):
        filled[index] = values[filled[index]]
    return "".join(filled)


def _one_line(subject: str) -> str:
    return " ".join(subject.split())


class DigestRenderer:
    """Renders digests: one instance per chunk. Digests with the same item and count share one
    rendering, filled per digest with the learner's name and signed links (escaped where the HTML
    escaped them); a calculated item's is the learner's own (its numbers are drawn per learner)."""

    def __init__(self) -> None:
        self.subject = get_template("reminders/email/digest_subject.txt")
        self.text = get_template("reminders/email/digest.txt")
        self.html = get_template("reminders/email/digest.html")
        self.review_url = review_session_url()
        self.preferences_url = absolute_url(reverse("preferences"))
        self.shapes: dict[tuple[object, int, tuple[tuple[str, int], ...], str | None], _Shape] = {}
        self.prompt_link = self._link("reminders:prompt")
        self.unsubscribe_link = self._link("reminders:unsubscribe")

    @staticmethod
    def _link(name: str) -> Callable[[str], str]:
        prefix, suffix = absolute_url(reverse(name, args=[_MARK])).split(_MARK)

        def url(token: str) -> str:
            if _TOKEN_RE.fullmatch(token):
                return f"{prefix}{token}{suffix}"
            return absolute_url(reverse(name, args=[token]))

        return url

    def _shape(self, content: DigestContent) -> _Shape:
        schedule = content.first_schedule
        assert schedule is not None
        calculated = getattr(schedule.item, "kind", "") == "calculated"
        owner: object = ("schedule", schedule.pk) if calculated else schedule.item_id
        key = (owner, content.due_count, content.courses, get_language())
        shape = self.shapes.get(key)
        if shape is None:
            context = {
                "name": f"{_MARK}name{_MARK}",
                "due_count": content.due_count,
                "courses": content.courses,
                "schedule": schedule,
                "item": schedule.item,
                "prompt_url": f"{_MARK}prompt_url{_MARK}",
                "prompt_days": PROMPT_MAX_AGE.days,
                "review_url": self.review_url,
                "preferences_url": self.preferences_url,
                "unsubscribe_url": f"{_MARK}unsubscribe_url{_MARK}",
            }
            subject = _SLOT_RE.split(self.subject.render(context))
            shape = self.shapes[key] = _Shape(
                subject=subject,
                text=_SLOT_RE.split(self.text.render(context)),
                html=_SLOT_RE.split(self.html.render(context)),
                subject_fixed=_one_line(subject[0]) if len(subject) == 1 else None,
            )
        return shape

    def message(
        self, *, digest_id: int, message_id: str, learner: User, content: DigestContent
    ) -> DigestEmail:
        """The digest email: plain text and HTML, the first due prompt as a recall question, the
        review link, the signed prompt link, and RFC 8058 one-click unsubscribe headers."""
        return digest_email(
            self.parts(digest_id=digest_id, message_id=message_id, learner=learner, content=content)
        )

    def parts(
        self, *, digest_id: int, message_id: str, learner: User, content: DigestContent
    ) -> DigestParts:
        """The digest's subject, text, HTML, recipient and headers (Message-ID, RFC 8058)."""
        schedule = content.first_schedule
        assert schedule is not None
        # The learner whose digest this is, for anything drawn per learner.
        schedule.learner = learner
        shape = self._shape(content)
        unsubscribe_url = self.unsubscribe_link(unsubscribe_token_make(learner=learner))
        values = {
            "name": learner.name,
            "prompt_url": self.prompt_link(
                prompt_token_make(digest_id=digest_id, schedule_id=schedule.pk)
            ),
            "unsubscribe_url": unsubscribe_url,
        }
        escaped = {slot: str(conditional_escape(value)) for slot, value in values.items()}
        return DigestParts(
            subject=shape.subject_fixed or _one_line(_filled(shape.subject, values)),
            text=_filled(shape.text, values),
            html=_filled(shape.html, escaped),
            to=learner.email,
            headers={
                "Message-ID": message_id,
                "List-Unsubscribe": f"<{unsubscribe_url}>",
                "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
                "Auto-Submitted": "auto-generated",
                "X-Recall-Digest": str(digest_id),
            },
        )


def digest_message_build(
    *, digest: ReminderDigest, learner: User, content: DigestContent, now: datetime
) -> EmailMultiAlternatives:
    """One digest's email, rendered on its own."""
    return DigestRenderer().message(
        digest_id=digest.pk, message_id=digest.message_id, learner=learner, content=content
    )
