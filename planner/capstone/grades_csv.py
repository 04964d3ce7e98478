"""The grades CSV of a course: a row per learner (their latest graded version, else latest), a
column per criterion, and who graded (the instructor, or the peers)."""

from __future__ import annotations

from collections.abc import Iterator

from courses.models import Course
from planner.models import CapstoneSubmission, Criterion, Grade

CSV_CHUNK = 2000


def grades_csv_header(*, course: Course) -> tuple[list[str], list[Criterion]]:
    """The export's columns: the learner, the version, a column per criterion, the totals, and
    who graded (last, so a sheet reading the earlier columns by position reads them still)."""
    criteria = list(Criterion.objects.filter(rubric__course=course).order_by("position", "pk"))
    header = [
        "learner_email",
        "learner_name",
        "version",
        "submitted_at",
        "late",
        *[c.key for c in criteria],
        "total",
        "max",
        "released",
        "released_at",
        "graded_by",
    ]
    return header, criteria


def _csv_row(submission: CapstoneSubmission, criteria: list[Criterion]) -> list[str]:
    grade: Grade | None = getattr(submission, "grade", None)
    levels = {score.criterion_id: score for score in (grade.scores.all() if grade else [])}
    released = grade is not None and grade.status == Grade.Status.RELEASED
    return [
        _csv_safe(submission.learner.email),
        _csv_safe(submission.learner.name),
        str(submission.version),
        submission.submitted_at.isoformat(),
        "yes" if submission.is_late else "no",
        *[
            (str(levels[c.pk].points) if c.pk in levels and levels[c.pk].level else "")
            for c in criteria
        ],
        str(grade.total_points) if grade else "",
        str(grade.max_points) if grade else "",
        "yes" if released else "no",
        grade.released_at.isoformat() if grade and grade.released_at else "",
        grade.origin if grade else "",  # "instructor" or "peers"; empty: ungraded
    ]


def grades_csv_rows(*, course: Course, criteria: list[Criterion]) -> Iterator[list[str]]:
    """One row per learner: their latest graded version (else latest version). Read through a
    server-side cursor in chunks of CSV_CHUNK, a learner's versions together, so memory stays
    the same whatever the course's size."""
    submissions = (
        CapstoneSubmission.objects.filter(course=course)
        .select_related("learner", "grade")
        .prefetch_related("grade__scores__level")
        .order_by("learner__email", "learner_id", "version")
    )
    chosen: CapstoneSubmission | None = None
    for submission in submissions.iterator(chunk_size=CSV_CHUNK):
        if chosen is not None and chosen.learner_id != submission.learner_id:
            yield _csv_row(chosen, criteria)
            chosen = None
        if chosen is None or hasattr(submission, "grade") or not hasattr(chosen, "grade"):
            chosen = submission
    if chosen is not None:
        yield _csv_row(chosen, criteria)


def _csv_safe(text: str) -> str:
    """Spreadsheets run a cell starting with = + - @ as a formula: make learner text inert."""
    return "'" + text if text[:1] in {"=", "+", "-", "@", "\t", "\r"} else text
