"""The digest a learner receives over SMTP is the one Django's email would write: a real SMTP
server in the test receives a chunk, and each message is compared with its digest's Django email
(every template rendered with the full context, serialised under `email.policy.SMTP`): the same
bytes but for the random MIME boundary, whatever the prompt's characters and the learner's name."""

from __future__ import annotations

import email
import email.policy
import re
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.core.mail import mailers
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from quizzes.models import QuizItem
from reminders.emails import DigestEmail, DigestParts, absolute_url, review_session_url
from reminders.links import PROMPT_MAX_AGE, prompt_token_make, unsubscribe_token_make
from reminders.mailer import DigestWire, body_encoded
from reminders.models import ReminderDigest
from reminders.scan import digests_scan
from reminders.selectors import digests_content_for
from reminders.sending import digests_send
from tests.factories import ChoiceFactory, QuizItemFactory, RecallScheduleFactory
from tests.reminders.factories import learner_due
from tests.reminders.worker import SMTPRecorder, SMTPServer

pytestmark = pytest.mark.django_db

LONG = "How does the memory hierarchy of a modern accelerator feed its streaming multiprocessors"
PROMPTS = {
    "plain": "What is HBM?",
    "long lines (quoted-printable)": f"{LONG} {LONG}?",
    "html specials": 'What\'s "HBM" & why <does> it matter?',
    "accents (8bit)": "Qu'est-ce que la mémoire à large bande passante ?",
    "cyrillic (base64)": "Что такое память с высокой пропускной способностью? " * 3,
    "cjk": "高帯域幅メモリとは何ですか？" * 6,
    "encoded-word lookalike": "=?utf-8?q?hello?= and =?x?",
    "dots and From": "line one\n.leading dot\nFrom the start\n..two dots",
    "carriage returns": "first\r\nsecond\rthird\n\n\ttabbed   spaced  ",
}
NAMES = ["Ada Lovelace", "Zoë <b>Ø</b> & 'co'", "%(name)s {{ name }}", "李小龍", "x" * 80]


def old_digest_message(*, digest: ReminderDigest, learner: User) -> DigestEmail:
    """The digest email as it was built before the chunk renderer: every template rendered with
    the full context, per digest (the oracle)."""
    content = digests_content_for(learner_ids=[learner.pk], now=timezone.now())[learner.pk]
    schedule = content.first_schedule
    assert schedule is not None
    unsubscribe_url = absolute_url(
        reverse("reminders:unsubscribe", args=[unsubscribe_token_make(learner=learner)])
    )
    token = prompt_token_make(digest_id=digest.pk, schedule_id=schedule.pk)
    context = {
        "learner": learner,
        "name": learner.name,
        "due_count": content.due_count,
        "courses": content.courses,
        "schedule": schedule,
        "item": schedule.item,
        "prompt_url": absolute_url(reverse("reminders:prompt", args=[token])),
        "prompt_days": PROMPT_MAX_AGE.days,
        "review_url": review_session_url(),
        "preferences_url": absolute_url(reverse("preferences")),
        "unsubscribe_url": unsubscribe_url,
        "local_date": digest.local_date,
    }
    subject = render_to_string("reminders/email/digest_subject.txt", context).strip()
    message = DigestEmail(
        subject=" ".join(subject.split()),
        body=render_to_string("reminders/email/digest.txt", context),
        to=[learner.email],
        headers={
            "Message-ID": digest.message_id,
            "List-Unsubscribe": f"<{unsubscribe_url}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            "Auto-Submitted": "auto-generated",
            "X-Recall-Digest": str(digest.pk),
        },
    )
    message.attach_alternative(
        render_to_string("reminders/email/digest.html", context), "text/html"
    )
    return message


def without_boundary(raw: bytes) -> bytes:
    boundary = re.search(rb'boundary="([^"]+)"', raw)
    assert boundary is not None
    return raw.replace(boundary.group(1), b"BOUNDARY")


def learner_with(item: QuizItem, *, name: str, email_address: str | None = None) -> User:
    extra = {"email": email_address} if email_address else {}
    user = learner_due(
        due=timezone.now() - timedelta(hours=2),
        items=2,
        display_name=name,
        reminder_hour=0,
        day_start_hour=0,
        **extra,
    )
    # The item asked: due before the two others.
    RecallScheduleFactory(
        learner=user, item=item, due=timezone.now() - timedelta(days=1), state=2, reps=2
    )
    return user


def send_over_smtp(settings: Any, learners: list[User]) -> dict[str, bytes]:
    """Scan, then send the one chunk to a real SMTP server; the raw messages it received."""
    with SMTPServer(SMTPRecorder()) as server:
        settings.MAILERS = {
            "default": {
                "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
                "OPTIONS": {"host": "127.0.0.1", "port": server.port, "timeout": 30},
            }
        }
        ids = digests_scan(now=timezone.now()).enqueued_ids
        result = digests_send(digest_ids=ids, now=timezone.now())
        assert set(result.statuses.values()) == {"sent"}
        received = {r.to[0]: r.raw for r in server.recorder.received}
    assert len(received) == len(learners)
    return received


@pytest.mark.parametrize("prompt", PROMPTS.values(), ids=PROMPTS.keys())
def test_received_digests_are_the_django_emails(  # type: ignore[no-untyped-def]
    settings, django_capture_on_commit_callbacks, prompt: str
) -> None:
    """Learners with different names share an item, one more has a multiple-choice item, and one
    an internationalised domain: every message the server got is, byte for byte but the
    boundary, its digest's Django email."""
    item = QuizItemFactory(prompt=prompt)
    choice_item = QuizItemFactory(kind="multiple_choice", prompt=prompt[:40] + " (choose)")
    ChoiceFactory(item=choice_item, text="HBM & <friends>", position=0)
    ChoiceFactory(item=choice_item, text=LONG, position=1)
    learners = [learner_with(item, name=name) for name in NAMES]
    learners.append(learner_with(choice_item, name="Grace"))
    learners.append(learner_with(item, name="Ines", email_address="ines@bücher.example"))
    traveller = time_machine.travel(timezone.now(), tick=False)
    with traveller, django_capture_on_commit_callbacks(execute=False):
        received = send_over_smtp(settings, learners)
        for learner in learners:
            digest = ReminderDigest.objects.get(learner=learner)
            assert digest.status == ReminderDigest.Status.SENT
            old = old_digest_message(digest=digest, learner=learner)
            expected = old.message(policy=email.policy.SMTP).as_bytes()
            to = "ines@xn--bcher-kva.example" if "bücher" in learner.email else learner.email
            got = received[to]
            assert without_boundary(got) == without_boundary(expected)
            # What a mail client shows: the headers and both bodies, decoded.
            parsed = email.message_from_bytes(got, policy=email.policy.default)
            reference = email.message_from_bytes(expected, policy=email.policy.default)
            assert parsed["Message-ID"] == digest.message_id
            assert [(k, v) for k, v in parsed.items() if k not in {"Content-Type", "Date"}] == [
                (k, v) for k, v in reference.items() if k not in {"Content-Type", "Date"}
            ]
            assert [p.get_content() for p in parsed.iter_parts()] == [
                p.get_content() for p in reference.iter_parts()
            ]


@pytest.mark.parametrize(
    "text",
    ["", "short\n", "é\n", "x" * 79, "é" * 60, ("é" * 30 + "\n") * 12, ("a" * 90 + "\n") * 12],
)
def test_body_encoding_is_the_email_packages(text: str) -> None:
    """7bit, 8bit, quoted-printable and base64 chosen and written as `set_content` does, also
    from the quoted-printable lines a chunk has already encoded."""
    message = email.message.EmailMessage(policy=email.policy.SMTP)
    message.set_content(text, charset="utf-8")
    head, _, payload = message.as_bytes().partition(b"\r\n\r\n")
    cte, encoded = body_encoded(text)
    assert f"Content-Transfer-Encoding: {cte}".encode() in head
    assert encoded == payload
    encoded_lines: dict[bytes, str] = {}
    assert body_encoded(text, encoded_lines) == body_encoded(text, encoded_lines) == (cte, payload)


def test_an_address_it_does_not_compose_goes_through_django(settings) -> None:  # type: ignore[no-untyped-def]
    """A quoted local part or a non-ASCII domain is left to Django's email."""
    settings.MAILERS = {
        "default": {
            "BACKEND": "config.mail.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": 25},
        }
    }
    wire = DigestWire.for_connection(mailers.default)
    assert wire is not None

    def parts(to: str) -> DigestParts:
        return DigestParts(subject="s", text="t", html="h", to=to, headers={})

    assert wire.message_bytes(parts("a.b@example.com")) is not None
    for to in ('"a b"@example.com', "a@bücher.example", "a..b@example.com", "Ada <a@x.org>"):
        assert wire.message_bytes(parts(to)) is None
