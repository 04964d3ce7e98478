"""A digest's MIME bytes, written as Django's email writes them under `email.policy.SMTP` (the same
headers, parts and transfer encodings) without parsing every header of every message again.

Kept because Django's own composition costs more than the rest of a digest's send together (2-7 ms
against 0.04-0.15 ms a message, docs/benchmarks.md). Any other backend, or an address
this module does not compose, gets the Django email itself.
"""

from __future__ import annotations

import binascii
import email.policy
import random
import re
import smtplib
import sys
from datetime import UTC, datetime
from email import quoprimime
from email.utils import format_datetime

from django.conf import settings
from django.core.mail.backends.base import BaseEmailBackend
from django.core.mail.backends.smtp import EmailBackend as SMTPBackend
from django.utils.timezone import get_current_timezone

from reminders.emails import DigestParts, digest_policy

_POLICY = digest_policy(email.policy.SMTP)
_MAX_LINE = _POLICY.max_line_length or 78
_CRLF = b"\r\n"
# What the header parser writes back exactly as given: dot-atom addresses and message ids, and
# unstructured text of printable ASCII words with single spaces, on a line of at most 78.
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_DOT_ATOM = rf"{_ATOM}(?:\.{_ATOM})*"
_ADDRESS_RE = re.compile(rf"{_DOT_ATOM}@{_DOT_ATOM}")
_MESSAGE_ID_RE = re.compile(rf"<{_DOT_ATOM}@{_DOT_ATOM}>")
_TEXT_RE = re.compile(r"[!-~]+(?: [!-~]+)*")
_WORD_RE = re.compile(r"[!-~]+")


def header_line(name: str, value: str, plain: re.Pattern[str] = _TEXT_RE) -> bytes:
    """`name: value` folded as the digest's policy folds it, without the header parser when
    the parser would give `value` back unchanged."""
    if "=?" not in value and plain.fullmatch(value):
        if len(name) + len(value) <= _MAX_LINE - 2:
            return f"{name}: {value}\r\n".encode("ascii")
        line = _POLICY.one_line(name, value)
        if line is not None:
            return line.encode("ascii")
    return _POLICY.fold_binary(*_POLICY.header_store_parse(name, value))


def _base64(data: bytes) -> bytes:
    step = _MAX_LINE // 4 * 3
    lines = (binascii.b2a_base64(data[at : at + step]) for at in range(0, len(data), step))
    return b"".join(lines).replace(b"\n", _CRLF)


def _qp_line(line: bytes, cache: dict[bytes, str]) -> str:
    encoded = cache.get(line)
    if encoded is None:
        encoded = cache[line] = quoprimime.body_encode(line.decode("latin-1"), _MAX_LINE)
    return encoded


def body_encoded(text: str, qp_lines: dict[bytes, str] | None = None) -> tuple[str, bytes]:
    """The transfer encoding and CRLF payload that `set_content(text, charset="utf-8")` picks
    and the bytes generator writes under `email.policy.SMTP` (the heuristic of CPython's
    `email.contentmanager._encode_text`: 7bit or 8bit when every line fits, else quoted-printable
    unless base64 is shorter over the first ten lines).

    Quoted-printable encodes each line on its own, so a line is encoded once and kept in
    `qp_lines`: a chunk's digests share most of their lines, and the first ten lines that decide
    the encoding are not encoded again for the body."""
    lines = text.encode("utf-8").splitlines()
    body = _CRLF.join(lines) + _CRLF
    if max(map(len, lines), default=0) <= _MAX_LINE:
        return ("7bit" if body.isascii() else "8bit"), body
    cache = {} if qp_lines is None else qp_lines
    sniff = [_qp_line(line, cache) for line in lines[:10]]
    # The email package's sniff: the first ten lines' QP text, a newline after each, against
    # their base64.
    sniff_qp = sum(map(len, sniff)) + len(sniff)
    if sniff_qp > len(binascii.b2a_base64(_CRLF.join(lines[:10]) + _CRLF)):
        return "base64", _base64(body)
    encoded = sniff + [_qp_line(line, cache) for line in lines[10:]]
    return "quoted-printable", ("\n".join(encoded) + "\n").encode("ascii").replace(b"\n", _CRLF)


def _boundary(payloads: list[bytes]) -> str:
    """A random boundary in the email generator's form that no part contains."""
    while True:
        boundary = "=" * 15 + f"{random.randrange(sys.maxsize):019d}=="
        if not any(f"--{boundary}".encode() in payload for payload in payloads):
            return boundary


class DigestWire:
    """A chunk's digests as bytes for one SMTP session; `message_bytes` gives None for what it
    does not compose (the caller sends the Django email instead)."""

    def __init__(self, backend: SMTPBackend) -> None:
        self.backend = backend
        from_email = settings.DEFAULT_FROM_EMAIL
        self.envelope_from = backend.prep_address(from_email)
        self.from_line = header_line("From", from_email, plain=_WORD_RE)
        self.subjects: dict[str, bytes] = {}
        self.qp_lines: dict[bytes, str] = {}
        self.zone = get_current_timezone() if settings.EMAIL_USE_LOCALTIME else UTC

    @classmethod
    def for_connection(cls, connection: BaseEmailBackend) -> DigestWire | None:
        # Django IDNA-encodes a non-ASCII From domain, and a fail_silently backend swallows
        # SMTP errors: those keep the Django email.
        if (
            not isinstance(connection, SMTPBackend)
            or connection.fail_silently
            or not settings.DEFAULT_FROM_EMAIL.isascii()
        ):
            return None
        return cls(connection)

    def _subject(self, subject: str) -> bytes:
        line = self.subjects.get(subject)
        if line is None:
            line = self.subjects[subject] = header_line("Subject", subject)
        return line

    def message_bytes(self, parts: DigestParts) -> bytes | None:
        if not _ADDRESS_RE.fullmatch(parts.to) or len(parts.to) > 70:
            return None
        text_cte, text = body_encoded(parts.text, self.qp_lines)
        html_cte, html = body_encoded(parts.html, self.qp_lines)
        boundary = _boundary([text, html])
        head = [
            b"MIME-Version: 1.0\r\n",
            f'Content-Type: multipart/alternative;\r\n boundary="{boundary}"\r\n'.encode(),
            self._subject(parts.subject),
            self.from_line,
            header_line("To", parts.to, plain=_ADDRESS_RE),
            header_line("Date", format_datetime(datetime.now(self.zone))),
        ]
        for name, value in parts.headers.items():
            plain = _MESSAGE_ID_RE if name == "Message-ID" else _TEXT_RE
            head.append(header_line(name, value, plain=plain))
        delimiter = f"--{boundary}\r\n".encode()
        return b"".join(
            [
                *head,
                _CRLF,
                delimiter,
                b'Content-Type: text/plain; charset="utf-8"\r\n',
                f"Content-Transfer-Encoding: {text_cte}\r\n\r\n".encode(),
                text,
                _CRLF,
                delimiter,
                b'Content-Type: text/html; charset="utf-8"\r\n',
                f"Content-Transfer-Encoding: {html_cte}\r\n".encode(),
                b"MIME-Version: 1.0\r\n\r\n",
                html,
                f"\r\n--{boundary}--\r\n".encode(),
            ]
        )

    def send(self, to: str, raw: bytes) -> None:
        """Send composed bytes over the backend's open session with smtplib's `sendmail`."""
        session: smtplib.SMTP = self.backend.connection  # type: ignore[assignment]
        session.sendmail(self.envelope_from, [to], raw)
