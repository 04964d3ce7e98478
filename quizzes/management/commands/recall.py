"""`recall simulate`: a course's items run through the platform's scheduler for simulated
learners (in memory, nothing written), to measure what the load balancer and easy days do."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

from courses.models import Course
from quizzes.models import QuizItem
from quizzes.services.easy_days import EasyDaysError, easy_days_parse
from quizzes.services.simulation import SimulationSettings, simulate

# Each bound keeps a run within minutes on a small machine (200 learners × 60 days is the
# issue's check; a learner-day costs about a millisecond).
LEARNERS = (1, 2_000)
DAYS = (1, 365)
SEED = (0, 2**63 - 1)
MAX_ARGUMENT_CHARS = 24


def _whole(raw: str, *, flag: str, bounds: tuple[int, int]) -> int:
    low, high = bounds
    text = raw.strip()
    if len(text) > MAX_ARGUMENT_CHARS or not text.lstrip("-").isdigit():
        raise CommandError(f"{flag}: a whole number from {low} to {high:,}", returncode=2)
    value = int(text)
    if not low <= value <= high:
        raise CommandError(f"{flag}: a whole number from {low} to {high:,}", returncode=2)
    return value


class Command(BaseCommand):
    help = (
        "recall simulate --learners N --days D [--easy-days sat=reduced,sun=minimum] "
        "[--no-load-balance] [--course SLUG] --seed S [--json]"
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)

        def one_line_error(message: str) -> NoReturn:
            # argparse's own error prints the whole usage; the contract is one line, exit 2.
            if parser.called_from_command_line:
                sys.stderr.write(f"recall: {message}\n")
                sys.exit(2)
            raise CommandError(message, returncode=2)

        parser.error = one_line_error  # type: ignore[method-assign]
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["simulate"])
        parser.add_argument("--learners", required=True)
        parser.add_argument("--days", required=True)
        parser.add_argument("--seed", required=True)
        parser.add_argument("--easy-days", default="")
        parser.add_argument("--no-load-balance", action="store_true")
        parser.add_argument("--course", default="", help="the course's slug (default: the first)")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        learners = _whole(options["learners"], flag="--learners", bounds=LEARNERS)
        days = _whole(options["days"], flag="--days", bounds=DAYS)
        seed = _whole(options["seed"], flag="--seed", bounds=SEED)
        try:
            easy_days = easy_days_parse(options["easy_days"])
        except EasyDaysError as error:
            raise CommandError(str(error), returncode=2) from None
        slug = options["course"].strip()
        if len(slug) > 50:
            raise CommandError("--course: a course slug of at most 50 characters", returncode=2)
        courses = Course.objects.order_by("pk")
        course = (courses.filter(slug=slug) if slug else courses).first()
        if course is None:
            raise CommandError(
                f"--course: no course {slug!r}" if slug else "no course: import one first",
                returncode=2,
            )
        item_ids = list(
            QuizItem.objects.filter(lesson__module__course=course)
            .order_by("lesson__module__position", "lesson__position", "position", "pk")
            .values_list("pk", flat=True)
        )
        if not item_ids:
            raise CommandError(f"--course: {course.slug} has no quiz items", returncode=2)
        settings = SimulationSettings(
            learners=learners,
            days=days,
            seed=seed,
            easy_days=easy_days,
            load_balance=not options["no_load_balance"],
        )
        result = simulate(course=course, item_ids=item_ids, settings=settings)
        if options["json"]:
            self.stdout.write(json.dumps(result.as_json(settings)))
            return
        self.stdout.write(
            f"{learners} learners × {days} days of {course.slug} ({len(item_ids)} items): "
            f"mean {result.mean_reviews:.1f} reviews a day, cv {result.cv:.3f}, "
            f"retention {result.retention:.1%}"
        )
