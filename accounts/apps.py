from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _instructor_group_sync(sender: AppConfig, **kwargs: Any) -> None:
    from accounts.services import instructor_group_ensure

    instructor_group_ensure()


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Model permissions exist only once every app has migrated, so the group follows migrate.
        post_migrate.connect(_instructor_group_sync, dispatch_uid="accounts.instructor_group_sync")
