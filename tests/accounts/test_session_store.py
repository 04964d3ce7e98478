"""A session the database fails to save (a connection killed mid-request) is the server-error
page, not Django's 400 "session was deleted"; a session deleted meanwhile still is that 400."""

from __future__ import annotations

import pytest
from django.contrib.sessions.backends.base import UpdateError
from django.db import OperationalError, connection

from accounts.session_store import SessionStore
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_a_failed_session_save_is_a_server_error(client, learner) -> None:  # type: ignore[no-untyped-def]
    """Logging in saves the new session at the end of the request; the database drops that
    statement: the answer is the 500 page."""

    def drop_session_writes(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        if sql.startswith('UPDATE "django_session"'):
            raise OperationalError("terminating connection due to administrator command")
        return execute(sql, params, many, context)

    client.raise_request_exception = False
    assert client.get("/accounts/login/").status_code == 200
    with connection.execute_wrapper(drop_session_writes):
        response = client.post("/accounts/login/", {"login": learner.email, "password": PASSWORD})
    assert response.status_code == 500
    assert b"session was deleted" not in response.content


def test_a_session_deleted_meanwhile_is_still_an_update_error() -> None:
    session = SessionStore()
    session["seen"] = 1
    session.create()
    SessionStore(session_key=session.session_key).delete()
    session["seen"] = 2
    with pytest.raises(UpdateError):
        session.save()
