"""The digest email: its absolute links, its text and HTML parts, and the header policy that keeps
RFC 8058's List-Unsubscribe on one line."""

from __future__ import annotations

import email.policy
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import get_template
from django.urls import NoReverseMatch, reverse

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


class DigestRenderer:
    """Renders digests, each one whole: the templates are looked up once per chunk. Nothing
    rendered is shared between learners (a calculated item draws its numbers per learner)."""

    def __init__(self) -> None:
        self.subject = get_template("reminders/email/digest_subject.txt")
        self.text = get_template("reminders/email/digest.txt")
        self.html = get_template("reminders/email/digest.html")
        self.review_url = review_session_url()
        self.preferences_url = absolute_url(reverse("preferences"))

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
        """The digest's subject, text, HTML, recipient and headers, rendered for this learner."""
        schedule = content.first_schedule
        assert schedule is not None
        # The learner whose digest this is, for anything drawn per learner.
        schedule.learner = learner
        unsubscribe_url = absolute_url(
            reverse("reminders:unsubscribe", args=[unsubscribe_token_make(learner=learner)])
        )
        context = {
            "name": learner.name,
            "due_count": content.due_count,
            "schedule": schedule,
            "item": schedule.item,
            "prompt_url": absolute_url(
                reverse(
                    "reminders:prompt",
                    args=[prompt_token_make(digest_id=digest_id, schedule_id=schedule.pk)],
                )
            ),
            "prompt_days": PROMPT_MAX_AGE.days,
            "review_url": self.review_url,
            "preferences_url": self.preferences_url,
            "unsubscribe_url": unsubscribe_url,
        }
        return DigestParts(
            subject=" ".join(self.subject.render(context).split()),
            text=self.text.render(context),
            html=self.html.render(context),
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
