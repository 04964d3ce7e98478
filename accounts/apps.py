from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_migrate
from django.http import HttpRequest


def _instructor_group_sync(sender: AppConfig, **kwargs: Any) -> None:
    from accounts.services import instructor_group_ensure

    instructor_group_ensure()


def _role_on_sign_in(sender: type, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    from accounts.context_processors import role_remember

    if request is not None:
        role_remember(request=request, user=user)


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Model permissions exist only once every app has migrated, so the group follows migrate.
        post_migrate.connect(_instructor_group_sync, dispatch_uid="accounts.instructor_group_sync")
        user_logged_in.connect(_role_on_sign_in, dispatch_uid="accounts.role_on_sign_in")
