"""Factories for quizzes tests: a course a learner is enrolled in, with items of every kind."""

from __future__ import annotations

from dataclasses import dataclass

from accounts.models import User
from courses.models import Course, Lesson
from quizzes.models import QuizItem
from tests.factories import (
    ChoiceFactory,
    CourseFactory,
    EnrollmentFactory,
    LessonFactory,
    ModuleFactory,
    QuizItemFactory,
)


@dataclass
class CourseWithItems:
    course: Course
    lesson: Lesson
    mc: QuizItem
    numeric: QuizItem
    recall: QuizItem


def course_with_items(*, learner: User | None = None, **course_fields: object) -> CourseWithItems:
    """A course with one lesson holding a multiple-choice, a numeric and a free-recall item."""
    course = CourseFactory(**course_fields)
    module = ModuleFactory(course=course)
    lesson = LessonFactory(module=module)
    mc = QuizItemFactory(
        lesson=lesson,
        kind=QuizItem.Kind.MULTIPLE_CHOICE,
        position=1,
        prompt="Which are memory?",
        explanation="HBM and GDDR are memory.",
    )
    ChoiceFactory(item=mc, key="hbm", position=1, text="HBM", is_correct=True, reason="HBM is.")
    ChoiceFactory(item=mc, key="gddr", position=2, text="GDDR", is_correct=True, reason="It is.")
    ChoiceFactory(item=mc, key="tflops", position=3, text="TFLOPS", reason="A rate, not memory.")
    numeric = QuizItemFactory(
        lesson=lesson,
        kind=QuizItem.Kind.NUMERIC,
        position=2,
        prompt="How many active users fit?",
        expected_value=11,
        unit="users",
        tolerance=0.5,
        explanation="7.0 GB / 0.6 GB = 11.",
    )
    recall = QuizItemFactory(lesson=lesson, kind=QuizItem.Kind.FREE_RECALL, position=3)
    if learner is not None:
        EnrollmentFactory(course=course, user=learner)
    return CourseWithItems(course=course, lesson=lesson, mc=mc, numeric=numeric, recall=recall)
