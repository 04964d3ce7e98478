"""Per-template figures of a course's calculated items, for its instructors: how often learners
fail them, how far off their numbers are, and which known mistake the wrong numbers match."""

from __future__ import annotations

import statistics
from array import array
from dataclasses import dataclass, field

from courses.models import Course
from quizzes.calculated import TemplateInputError, problem_for, relative_error, within_tolerance
from quizzes.models import QuizItem, ReviewLog

GIB_PER_GB = 2**30 / 10**9  # 1.073741824: a figure in GiB read as GB, or the reverse
# Known mistakes, as the factor a wrong number is off by (either way): the course names them.
KNOWN_MISTAKES: tuple[tuple[str, float], ...] = (
    ("GB and GiB mixed up (× 1.0737)", GIB_PER_GB),
    ("the factor 2 for K and V forgotten or doubled (× 2)", 2.0),
    ("bits and bytes mixed up (× 8)", 8.0),
)
# How close a wrong number's ratio must come to a mistake's factor to be counted as it.
MISTAKE_MATCH = 0.01
# Logs fetched per round trip from the server-side cursor.
CHUNK = 20_000


@dataclass(frozen=True)
class TemplateStats:
    item: QuizItem
    reviews: int
    again: int
    answered: int  # reviews with a typed number
    wrong: int  # typed numbers outside the item's tolerance
    median_relative_error: float | None
    mistake: str | None  # the known mistake most wrong numbers match
    mistake_count: int

    @property
    def again_rate(self) -> float | None:
        return self.again / self.reviews if self.reviews else None


def known_mistake(*, answer: float, expected: float) -> str | None:
    """The known mistake that turns `expected` into `answer`, if any."""
    if not expected or not answer:
        return None
    ratio = abs(answer / expected)
    for name, factor in KNOWN_MISTAKES:
        for off_by in (factor, 1 / factor):
            if abs(ratio / off_by - 1) <= MISTAKE_MATCH:
                return name
    return None


def drawn_mistake(
    *, item: QuizItem, answer: float, expected: float, learner_id: int, review: int
) -> str | None:
    """The known mistake of this exercise (the CUDA context left out, full fine-tuning priced for
    LoRA) that turns the learner's own draw into `answer`; None when the draw cannot be redrawn
    (it is not the one graded) or no mistake matches."""
    try:
        problem = problem_for(item, learner_id=learner_id, review=review)
    except (TemplateInputError, KeyError):
        return None
    if not within_tolerance(problem.solution.answer, expected, 1e-6):
        return None
    for name, value in problem.solution.mistakes.items():
        if value and abs(answer / value - 1) <= MISTAKE_MATCH:
            return name
    return None


@dataclass
class _Tally:
    """One template's figures as its logs stream past: counts, the relative errors (a compact
    array: a cohort has millions) and the mistakes matched."""

    item: QuizItem
    reviews: int = 0
    again: int = 0
    wrong: int = 0
    errors: array[float] = field(default_factory=lambda: array("d"))
    mistakes: dict[str, int] = field(default_factory=dict)

    def add(self, rating: int, answer: float | None, expected: float | None, learner_id: int,
            reps: object) -> None:  # fmt: skip
        self.reviews += 1
        self.again += rating == ReviewLog.Rating.AGAIN
        if answer is None or expected is None:
            return
        self.errors.append(relative_error(answer, expected))
        if within_tolerance(answer, expected, self.item.calculation.get("relative_tolerance", 0.0)):
            return
        self.wrong += 1
        review = reps if isinstance(reps, int) else 0  # the draw graded: reps before the grade
        name = drawn_mistake(
            item=self.item, answer=answer, expected=expected, learner_id=learner_id, review=review
        ) or known_mistake(answer=answer, expected=expected)
        if name is not None:
            self.mistakes[name] = self.mistakes.get(name, 0) + 1

    def stats(self) -> TemplateStats:
        top = max(self.mistakes.items(), key=lambda kv: (kv[1], kv[0]), default=None)
        return TemplateStats(
            item=self.item,
            reviews=self.reviews,
            again=self.again,
            answered=len(self.errors),
            wrong=self.wrong,
            median_relative_error=statistics.median(self.errors) if self.errors else None,
            mistake=top[0] if top else None,
            mistake_count=top[1] if top else 0,
        )


def calculated_stats_for(*, course: Course) -> list[TemplateStats]:
    """Each calculated item of the course in course order with its figures, over every grade
    not undone (two queries; the logs stream from a server-side cursor)."""
    items = list(
        QuizItem.objects.filter(lesson__module__course=course, kind=QuizItem.Kind.CALCULATED)
        .select_related("lesson")
        .order_by("lesson__module__position", "lesson__position", "position", "id")
    )
    tallies = {item.pk: _Tally(item) for item in items}
    rows = ReviewLog.objects.filter(item_id__in=list(tallies), undo__isnull=True).values_list(
        "item_id", "rating", "answer_value", "expected_value", "learner_id", "state_before__reps"
    )
    for item_id, *row in rows.iterator(chunk_size=CHUNK):
        tallies[item_id].add(*row)
    return [tallies[item.pk].stats() for item in items]
