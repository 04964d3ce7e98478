"""`manage.py item_analysis COURSE [--json]`: compute a course's item analysis, store it (as the
nightly job does, so the instructor page shows the same figures) and print it."""

from __future__ import annotations

import json
import re
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from courses.models import Course
from quizzes.services.item_analysis import item_analysis_refresh

SLUG_MAX = 50
SLUG_RE = re.compile(r"^[-a-zA-Z0-9_]+$")


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}"


class Command(BaseCommand):
    help = "Compute, store and print a course's item analysis (facility, discrimination, flags)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("course", help="The course's slug, e.g. gpus-tpus-ai-hardware")
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        slug = options["course"]
        if len(slug) > SLUG_MAX or not SLUG_RE.match(slug):
            raise CommandError(
                f"course: a slug of at most {SLUG_MAX} letters, digits, - and _", returncode=2
            )
        course = Course.objects.filter(slug=slug).first()
        if course is None:
            raise CommandError(f"course: no course '{slug}'", returncode=2)
        report = item_analysis_refresh(course=course, now=timezone.now()).report
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self.stdout.write(
            f"{report['course']}: {report['learners']} learners, "
            f"{report['responses']} first answers, computed {report['computed_at']}"
        )
        for row in report["items"]:
            flags = ", ".join(row["flags"]) or "-"
            self.stdout.write(
                f"  {row['key'][:40]:40} n={row['responses']:<6} facility {_pct(row['facility']):>4}"
                f"  D {_num(row['discrimination']):>5}  r_pb {_num(row['point_biserial']):>5}"
                f"  {flags}"
            )
            if row["choice_responses"]:
                picks = "  ".join(
                    f"{c['key']}{'*' if c['correct'] else ''} {_pct(c['share'])}"
                    for c in row["choice_shares"]
                )
                self.stdout.write(f"  {'':40} picked: {picks}  (* the key)")
