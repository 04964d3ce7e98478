"""`manage.py capacity paths serving|batch|training [flags]`: the path comparison on the command line."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser


def add_arguments(parser: CommandParser) -> None:
    """The `paths` sub-command's own arguments (the estimate kind, its flags, the traffic)."""


def handle(options: dict[str, Any]) -> str:
    """The comparison as text or JSON; bad input raises CommandError(returncode=2) naming the flag."""
    raise CommandError("paths: not built yet", returncode=2)
