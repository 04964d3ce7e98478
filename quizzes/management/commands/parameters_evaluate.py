"""Score FSRS-6's defaults and a course's parameter sets in force on its latest reviews."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from courses.models import Course
from quizzes import fsrs_optimizer as opt
from quizzes.models import FsrsParameters
from quizzes.selectors.parameters import review_histories
from quizzes.services.parameters import TRAIN_FRACTION


class Command(BaseCommand):
    help = (
        "Log loss, RMSE (bins) and calibration of the defaults, the pooled set and each personal "
        "set in force, on the course's reviews after the time split."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("course", help="the course's slug")

    def handle(self, *args: Any, **options: Any) -> None:
        course = Course.objects.filter(slug=options["course"]).first()
        if course is None:
            raise CommandError(f"course: no course with slug {options['course']!r}")
        rows: list[tuple[str, int | None, tuple[float, ...]]] = [
            ("defaults", None, opt.DEFAULT_WEIGHTS)
        ]
        active = FsrsParameters.objects.filter(
            course=course, status=FsrsParameters.Status.ACTIVE
        ).order_by("learner_id")
        for p in active:
            scope = f"learner {p.learner_id}" if p.learner_id else "pooled"
            rows.append((f"{scope} v{p.version}", p.learner_id, tuple(p.weights)))
        self.stdout.write(
            f"{'set':<24} {'scored on':<22} {'log loss':>9} {'RMSE':>7} {'calibration':>12}"
        )
        for name, learner_id, weights in rows:
            heldout = self._heldout(course, learner_id)
            # A personal set is scored on its learner's reviews; the others on the course's.
            scores = opt.score(weights, heldout)
            where = f"learner {learner_id}" if learner_id else "course"
            if scores is None:
                self.stdout.write(f"{name:<24} {where:<22} no held-out reviews")
                continue
            self.stdout.write(
                f"{name:<24} {f'{where} ({scores.count})':<22} {scores.log_loss:>9.4f} "
                f"{scores.rmse_bins:>7.2%} {scores.calibration:>+12.3f}"
            )

    def _heldout(self, course: Course, learner_id: int | None) -> list[opt.Sample]:
        histories = review_histories(course=course, learner_id=learner_id)
        times = sorted(r.at for h in histories.values() for r in h)
        if not times:
            raise CommandError(f"course {course.slug}: no reviews")
        cutoff = opt.cutoff_at_fraction(times, TRAIN_FRACTION)
        return opt.time_split(opt.samples_from_histories(histories.values()), cutoff).heldout
