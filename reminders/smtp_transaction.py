"""One message over an open SMTP session, as `smtplib.SMTP.sendmail(from, [to], raw)` sends it
(the same commands, options and errors), taken step by step so that the sender can work while
the server reads the message, the longest wait of the exchange."""

from __future__ import annotations

import contextlib
import smtplib
from collections.abc import Callable

_CRLF = b"\r\n"


def transaction_send(
    session: smtplib.SMTP,
    envelope_from: str,
    to: str,
    raw: bytes,
    *,
    meanwhile: Callable[[], None] | None = None,
) -> None:
    """MAIL, RCPT and DATA for `raw` to `to`; `meanwhile` (which must neither raise nor use the
    session) runs once the message is written, before the server's reply is read."""
    session.ehlo_or_helo_if_needed()
    options = [f"size={len(raw)}"] if session.does_esmtp and session.has_extn("size") else []
    code, reply = session.mail(envelope_from, options)
    if code != 250:
        _abandon(session, code)
        raise smtplib.SMTPSenderRefused(code, reply, envelope_from)
    code, reply = session.rcpt(to)
    if code not in (250, 251):
        _abandon(session, code)
        raise smtplib.SMTPRecipientsRefused({to: (code, reply)})
    code, reply = session.docmd("data")
    if code != 354:
        raise smtplib.SMTPDataError(code, reply)
    session.send(_data(raw))
    if meanwhile is not None:
        meanwhile()
    code, reply = session.getreply()
    if code != 250:
        _abandon(session, code)
        raise smtplib.SMTPDataError(code, reply)


def _data(raw: bytes) -> bytes:
    """What smtplib writes after DATA: every line's leading dot doubled, then the lone dot."""
    stuffed = raw.replace(b"\n.", b"\n..")
    if stuffed.startswith(b"."):
        stuffed = b"." + stuffed
    if not stuffed.endswith(_CRLF):
        stuffed += _CRLF
    return stuffed + b"." + _CRLF


def _abandon(session: smtplib.SMTP, code: int) -> None:
    """After a refusal, as sendmail does: a server closing (421) is left, else the transaction
    is reset for the next message."""
    if code == 421:
        session.close()
        return
    with contextlib.suppress(smtplib.SMTPServerDisconnected):
        session.rset()
