"""Sending promised email: Django's SMTP backend, told whether a message's data reached the server,
and the rule each outbox (digests, grade emails) applies to a failed send: retry, give up, or
never send again because the server may already have it."""

from __future__ import annotations

import enum
import random
import smtplib
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail.backends.base import BaseEmailBackend
from django.core.mail.backends.smtp import EmailBackend as DjangoSMTPBackend


class _DataTracking:
    """Records, per transaction, whether the whole message (up to the final dot) was written."""

    data_sent = False
    _in_data = False

    def mail(self, sender: str, options: Any = ()) -> tuple[int, bytes]:
        self.data_sent = False
        return super().mail(sender, options)  # type: ignore[misc]

    def data(self, msg: Any) -> tuple[int, bytes]:
        self._in_data = True
        try:
            return super().data(msg)  # type: ignore[misc]
        finally:
            self._in_data = False

    def send(self, s: Any) -> None:
        super().send(s)  # type: ignore[misc]
        # In DATA, the command goes as text, the message as bytes (ending in the lone dot).
        if self._in_data and isinstance(s, bytes):
            self.data_sent = True


class TrackingSMTP(_DataTracking, smtplib.SMTP):
    pass


class TrackingSMTPSSL(_DataTracking, smtplib.SMTP_SSL):
    pass


class EmailBackend(DjangoSMTPBackend):
    """Django's SMTP backend whose connection says whether the last message's data was sent."""

    data_sent = False

    @property
    def connection_class(self) -> type[smtplib.SMTP]:
        return TrackingSMTPSSL if self.use_ssl else TrackingSMTP

    def _send(self, email_message: Any) -> bool:
        self.data_sent = False
        try:
            return bool(super()._send(email_message))  # type: ignore[misc]
        finally:
            # Kept on the backend: send_messages may close the connection on the way out.
            self.data_sent = bool(getattr(self.connection, "data_sent", False))


def data_sent_forget(backend: BaseEmailBackend) -> None:
    """Before a send: nothing of it has gone yet."""
    backend.data_sent = False  # type: ignore[attr-defined]
    session = getattr(backend, "connection", None)
    if session is not None:
        session.data_sent = False


def data_was_sent(backend: BaseEmailBackend) -> bool:
    """Whether the message the backend was sending had all its data written to the server."""
    session = getattr(backend, "connection", None)
    return bool(getattr(backend, "data_sent", False) or getattr(session, "data_sent", False))


class SendFailure(enum.StrEnum):
    TEMPORARY = "temporary"  # 4xx, timeouts, refused or dropped connections: try again later
    PERMANENT = "permanent"  # 5xx, an address the server or Django refuses: never again
    # The data went out and the server's final answer was lost: it may have delivered it.
    AMBIGUOUS = "ambiguous"


# Refusals of the session, not of a message (connecting, greeting, logging in): whatever their
# code, every message waits for the server or its operator.
_SESSION_ERRORS = (
    smtplib.SMTPConnectError,
    smtplib.SMTPHeloError,
    smtplib.SMTPAuthenticationError,
    smtplib.SMTPNotSupportedError,
)


def _reply_code(exc: BaseException) -> int | None:
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in exc.recipients.values()]
        return max(codes) if codes else None
    if isinstance(exc, smtplib.SMTPResponseException):
        return int(exc.smtp_code)
    return None


def send_failure(exc: BaseException, *, data_sent: bool) -> SendFailure:
    """What a failed send means: any 4xx reply (or a lost connection before the data went) is
    temporary, a 5xx reply permanent, a lost answer after the data ambiguous."""
    if isinstance(exc, _SESSION_ERRORS):
        return SendFailure.TEMPORARY
    code = _reply_code(exc)
    if code is not None:
        return SendFailure.TEMPORARY if 400 <= code < 500 or code < 200 else SendFailure.PERMANENT
    if isinstance(exc, (smtplib.SMTPServerDisconnected, OSError)):
        return SendFailure.AMBIGUOUS if data_sent else SendFailure.TEMPORARY
    return SendFailure.PERMANENT


def failure_reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


def closes_connection(exc: BaseException) -> bool:
    """After this failure the session cannot carry another message (a reply refusing one
    message or recipient leaves it usable; smtplib has reset the transaction)."""
    code = _reply_code(exc)
    return isinstance(exc, _SESSION_ERRORS) or code is None or code == 421


def retry_at(*, failures: int, now: datetime) -> datetime:
    """When to try again after the `failures`-th temporary failure in a row: exponential backoff
    (OUTBOX_RETRY_BASE_SECONDS doubling up to OUTBOX_RETRY_MAX_SECONDS) with jitter, each wait
    between half and all of its step: a short outage is followed by a try soon after it ends."""
    step = min(
        settings.OUTBOX_RETRY_MAX_SECONDS,
        settings.OUTBOX_RETRY_BASE_SECONDS * 2 ** max(0, failures - 1),
    )
    return now + timedelta(seconds=step * random.uniform(0.5, 1.0))


def retry_gives_up(*, failing_since: datetime | None, now: datetime) -> bool:
    """Temporary failures are retried for OUTBOX_RETRY_WINDOW_SECONDS (at least an hour in
    production) from the first one; then the row is failed for good."""
    window = timedelta(seconds=settings.OUTBOX_RETRY_WINDOW_SECONDS)
    return failing_since is not None and now - failing_since >= window
