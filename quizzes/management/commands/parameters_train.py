"""Train, score and decide FSRS parameter candidates for a course now, with progress output."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from courses.models import Course
from quizzes import fsrs_optimizer as opt
from quizzes.services.parameters import parameters_refresh, parameters_train


class Command(BaseCommand):
    help = (
        "Train FSRS parameters for a course: the pooled set, or --learner ID's personal set, or "
        "with --grown every scope whose reviews have grown (what the nightly job does)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("course", help="the course's slug")
        parser.add_argument("--learner", type=int, help="a learner's id: their personal set")
        parser.add_argument("--grown", action="store_true", help="every grown scope")

    def handle(self, *args: Any, **options: Any) -> None:
        course = Course.objects.filter(slug=options["course"]).first()
        if course is None:
            raise CommandError(f"course: no course with slug {options['course']!r}")
        now = timezone.now()
        if options["grown"]:
            trained = parameters_refresh(course=course, now=now, progress=self.stdout.write)
            self.stdout.write(f"{len(trained)} candidate(s) trained")
            return
        try:
            parameters_train(
                course=course,
                learner_id=options["learner"],
                now=now,
                progress=self.stdout.write,
            )
        except opt.NotEnoughReviews as exc:
            raise CommandError(f"course {course.slug}: {exc}") from exc
