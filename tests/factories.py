"""Factories shared by every app's tests. App-specific ones live in tests/<app>/factories.py."""

from __future__ import annotations

from typing import Any

import factory
from allauth.account.models import EmailAddress
from django.utils import timezone
from factory.django import DjangoModelFactory

from accounts.models import User
from accounts.services import user_make_instructor
from courses.models import Course, Enrollment, Lesson, LessonProgress, Module
from quizzes.models import Choice, QuizItem, RecallSchedule

PASSWORD = "correct horse battery"


class UserFactory(DjangoModelFactory[User]):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    display_name = factory.Faker("name")
    password = factory.django.Password(PASSWORD)

    @factory.post_generation
    def verified(obj: User, create: bool, extracted: Any, **kwargs: Any) -> None:
        if create and extracted is not False:
            EmailAddress.objects.create(user=obj, email=obj.email, verified=True, primary=True)


class InstructorFactory(UserFactory):
    @factory.post_generation
    def instructor(obj: User, create: bool, extracted: Any, **kwargs: Any) -> None:
        if create:
            user_make_instructor(user=obj)


class CourseFactory(DjangoModelFactory[Course]):
    class Meta:
        model = Course

    slug = factory.Sequence(lambda n: f"course-{n}")
    title = factory.Sequence(lambda n: f"Course {n}")
    summary = "A course."
    # No (re)learning steps unless a test asks: a first Good goes straight to Review. The model's
    # defaults are the importer's (1 and 10 minutes; 10 to relearn).
    learning_steps_minutes = factory.LazyFunction(list)
    relearning_steps_minutes = factory.LazyFunction(list)


class ModuleFactory(DjangoModelFactory[Module]):
    class Meta:
        model = Module

    course = factory.SubFactory(CourseFactory)
    slug = factory.Sequence(lambda n: f"module-{n}")
    title = factory.Sequence(lambda n: f"Module {n}")
    position = factory.Sequence(lambda n: n)


class LessonFactory(DjangoModelFactory[Lesson]):
    class Meta:
        model = Lesson

    module = factory.SubFactory(ModuleFactory)
    slug = factory.Sequence(lambda n: f"lesson-{n}")
    title = factory.Sequence(lambda n: f"Lesson {n}")
    position = factory.Sequence(lambda n: n)
    objective = "Know why this matters."
    body_markdown = "Some *text*."
    body_html = "<p>Some <em>text</em>.</p>"


class EnrollmentFactory(DjangoModelFactory[Enrollment]):
    class Meta:
        model = Enrollment

    course = factory.SubFactory(CourseFactory)
    user = factory.SubFactory(UserFactory)
    role = Enrollment.Role.LEARNER


class LessonProgressFactory(DjangoModelFactory[LessonProgress]):
    class Meta:
        model = LessonProgress

    lesson = factory.SubFactory(LessonFactory)
    learner = factory.SubFactory(UserFactory)


class QuizItemFactory(DjangoModelFactory[QuizItem]):
    class Meta:
        model = QuizItem

    lesson = factory.SubFactory(LessonFactory)
    key = factory.Sequence(lambda n: f"item-{n}")
    kind = QuizItem.Kind.FREE_RECALL
    position = factory.Sequence(lambda n: n)
    prompt = factory.Sequence(lambda n: f"Recall prompt {n}?")
    model_answer = "The model answer."
    explanation = "Why."


class ChoiceFactory(DjangoModelFactory[Choice]):
    class Meta:
        model = Choice

    item = factory.SubFactory(QuizItemFactory, kind=QuizItem.Kind.MULTIPLE_CHOICE)
    key = factory.Sequence(lambda n: f"c{n}")
    text = factory.Sequence(lambda n: f"Choice {n}")
    is_correct = False
    reason = "Because."


class RecallScheduleFactory(DjangoModelFactory[RecallSchedule]):
    class Meta:
        model = RecallSchedule

    learner = factory.SubFactory(UserFactory)
    item = factory.SubFactory(QuizItemFactory)
    course = factory.SelfAttribute("item.lesson.module.course")
    due = factory.LazyFunction(timezone.now)
