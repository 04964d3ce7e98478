"""Database sessions, except that a save the database failed is that error (the server-error
page), and only a session deleted meanwhile is Django's "session was deleted" (400)."""

from __future__ import annotations

from django.contrib.sessions.backends.base import CreateError, UpdateError
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import IntegrityError, router, transaction


class SessionStore(DatabaseSessionStore):
    def save(self, must_create: bool = False) -> None:
        if self.session_key is None:
            return self.create()
        data = self._get_session(no_load=must_create)  # type: ignore[attr-defined]
        obj = self.create_model_instance(data)
        using = router.db_for_write(self.model, instance=obj)
        try:
            with transaction.atomic(using=using):
                obj.save(force_insert=must_create, force_update=not must_create, using=using)
        except IntegrityError:
            if must_create:
                raise CreateError from None
            raise
        except self.model.NotUpdated:
            raise UpdateError from None
        return None
