"""`manage.py import_course PATH`: create or update a course from its content folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from courses.services.content_specs import ContentError
from home.services.content_import import course_import


class Command(BaseCommand):
    help = "Create or update a course from a content folder (course.toml + lesson files)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "path", type=Path, help="The course folder, e.g. content/gpus-tpus-ai-hardware"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = course_import(folder=options["path"])
        except ContentError as exc:
            raise CommandError(f"Import failed, nothing was written. {exc}", returncode=2) from exc
        course = report.course
        for line in report.kept:
            self.stderr.write(self.style.WARNING(line))
        if not report.changed:
            self.stdout.write(f"No changes: course '{course.slug}' is up to date.")
            return
        verb = "Created" if report.created else "Updated"
        self.stdout.write(
            self.style.SUCCESS(f"{verb} course '{course.slug}': {len(report.changes)} change(s).")
        )
        if options["verbosity"] >= 2 or not report.created:
            for line in report.changes:
                self.stdout.write(f"  {line}")
