"""Reads for courses: the catalogue, a course outline with progress, a lesson page, teaching views.

Every page-level selector runs a fixed number of queries, however many modules, lessons or
learners a course has: lessons are read in one query, progress in another, and counted in Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404

from accounts.models import User
from courses.models import Course, Enrollment, Lesson, LessonProgress, Module


def enrollments_for_dashboard(*, user: User) -> QuerySet[Enrollment]:
    return (
        Enrollment.objects.filter(user=user)
        .select_related("course", "last_lesson", "last_lesson__module__course")
        .order_by("-enrolled_at")
    )


def courses_for_catalogue(*, user: User) -> QuerySet[Course]:
    """Published courses (all courses for staff), each with lesson_count and is_enrolled."""
    courses = Course.objects.all() if user.is_staff else Course.objects.filter(is_published=True)
    return courses.annotate(
        lesson_count=Count("modules__lessons", distinct=True),
        is_enrolled=Exists(Enrollment.objects.filter(course=OuterRef("pk"), user=user)),
    ).order_by("title")


def course_for_learner(*, slug: str, user: User) -> Course:
    """The course, if the user may see it (published, or staff); else 404."""
    courses = Course.objects.all() if user.is_staff else Course.objects.filter(is_published=True)
    course = courses.filter(slug=slug).first()
    if course is None:
        raise Http404("No such course.")
    return course


def enrollment_for(*, course: Course, user: User) -> Enrollment | None:
    return Enrollment.objects.filter(course=course, user=user).first()


@dataclass
class LessonEntry:
    lesson: Lesson
    number: int
    completed: bool
    started: bool


class _LessonTally:
    """Counts for anything holding lesson entries: a module, or the whole course."""

    lessons: list[LessonEntry]

    @property
    def total(self) -> int:
        return len(self.lessons)

    @property
    def done(self) -> int:
        return sum(1 for entry in self.lessons if entry.completed)


@dataclass
class ModuleEntry(_LessonTally):
    module: Module
    number: int
    lessons: list[LessonEntry] = field(default_factory=list)


@dataclass
class CourseProgress(_LessonTally):
    """A course's modules and lessons in order, with one learner's progress on each."""

    course: Course
    modules: list[ModuleEntry]
    lessons: list[LessonEntry]

    def index_of(self, lesson_id: int) -> int:
        for index, entry in enumerate(self.lessons):
            if entry.lesson.pk == lesson_id:
                return index
        raise Http404("No such lesson.")

    def next_after(self, lesson_id: int) -> Lesson | None:
        index = self.index_of(lesson_id)
        return self.lessons[index + 1].lesson if index + 1 < len(self.lessons) else None

    def previous_before(self, lesson_id: int) -> Lesson | None:
        index = self.index_of(lesson_id)
        return self.lessons[index - 1].lesson if index > 0 else None

    def module_of(self, lesson_id: int) -> ModuleEntry:
        for module in self.modules:
            if any(entry.lesson.pk == lesson_id for entry in module.lessons):
                return module
        raise Http404("No such lesson.")

    def resume_lesson(self, last_lesson_id: int | None) -> Lesson | None:
        """The last lesson visited if it is unfinished; else the next unfinished one after it
        (wrapping to the first unfinished); else the last lesson visited, or the first."""
        if not self.lessons:
            return None
        start = 0
        if last_lesson_id is not None and any(e.lesson.pk == last_lesson_id for e in self.lessons):
            start = self.index_of(last_lesson_id)
            if not self.lessons[start].completed:
                return self.lessons[start].lesson
        ordered = self.lessons[start:] + self.lessons[:start]
        for entry in ordered:
            if not entry.completed:
                return entry.lesson
        return self.lessons[start].lesson


def course_progress_for(*, course: Course, user: User) -> CourseProgress:
    """Three queries: the modules, their lessons, and the user's progress rows."""
    module_entries = [
        ModuleEntry(module=module, number=number)
        for number, module in enumerate(course.modules.order_by("position", "id"), start=1)
    ]
    by_id = {entry.module.pk: entry for entry in module_entries}
    lessons = Lesson.objects.filter(module__course=course).order_by("position", "id")
    progress = dict(
        LessonProgress.objects.filter(learner=user, lesson__module__course=course).values_list(
            "lesson_id", "completed_at"
        )
    )
    for lesson in lessons:
        module_entry = by_id[lesson.module_id]
        module_entry.module.course = course  # spares a query per lesson in get_absolute_url
        lesson.module = module_entry.module
        module_entry.lessons.append(
            LessonEntry(
                lesson=lesson,
                number=0,
                completed=progress.get(lesson.pk) is not None,
                started=lesson.pk in progress,
            )
        )
    entries = [entry for module in module_entries for entry in module.lessons]
    for number, entry in enumerate(entries, start=1):
        entry.number = number
    return CourseProgress(course=course, modules=module_entries, lessons=entries)


def courses_taught_only(*, user: User) -> QuerySet[Course]:
    """Courses the user teaches (an instructor enrolment), or every course for staff, by title;
    no counts (a learner's statistics page asks this of every visitor)."""
    courses = Course.objects.all()
    if not user.is_staff:
        # A subquery, not a join: a join on enrollments here would also narrow the counts below.
        taught = Enrollment.objects.filter(user=user, role=Enrollment.Role.INSTRUCTOR)
        courses = courses.filter(pk__in=taught.values("course_id"))
    return courses.order_by("title")


def courses_taught_by(*, user: User) -> QuerySet[Course]:
    """Courses the user teaches, with their learner and lesson counts."""
    return (
        courses_taught_only(user=user)
        .annotate(
            learner_count=Count(
                "enrollments",
                filter=Q(enrollments__role=Enrollment.Role.LEARNER),
                distinct=True,
            ),
            lesson_count=Count("modules__lessons", distinct=True),
        )
        .order_by("title")
    )


def course_taught_by(*, slug: str, user: User) -> Course:
    """A course the user teaches; another instructor's course is a 404."""
    course = courses_taught_by(user=user).filter(slug=slug).first()
    if course is None:
        raise Http404("No such course among those you teach.")
    return course


def learner_progress_for_course(*, course: Course) -> QuerySet[Enrollment]:
    """The course's learners, each annotated with completed lessons and last completion.

    Correlated subqueries rather than a join and GROUP BY, so a page of 50 learners costs 50
    index lookups on (learner, lesson), not an aggregate over every learner's progress.
    """
    done = LessonProgress.objects.filter(
        learner=OuterRef("user"), lesson__module__course=course, completed_at__isnull=False
    )
    return (
        Enrollment.objects.filter(course=course, role=Enrollment.Role.LEARNER)
        .select_related("user", "last_lesson")
        .annotate(
            completed=Coalesce(
                Subquery(
                    done.values("learner").annotate(n=Count("pk")).values("n")[:1],
                    output_field=IntegerField(),
                ),
                0,
            ),
            last_completed_at=Subquery(done.order_by("-completed_at").values("completed_at")[:1]),
        )
        .order_by("user__email")
    )


@dataclass
class LessonPage:
    """Everything the lesson page shows around the lesson body, from the course progress."""

    progress: CourseProgress
    entry: LessonEntry
    module_entry: ModuleEntry
    next_lesson: Lesson | None
    previous_lesson: Lesson | None

    @property
    def lesson(self) -> Lesson:
        return self.entry.lesson


def lesson_page_for(*, course: Course, user: User, lesson_slug: str) -> LessonPage:
    """The lesson by slug within the course (404 otherwise), placed in the user's progress."""
    progress = course_progress_for(course=course, user=user)
    entry = next((e for e in progress.lessons if e.lesson.slug == lesson_slug), None)
    if entry is None:
        raise Http404("No such lesson in this course.")
    return LessonPage(
        progress=progress,
        entry=entry,
        module_entry=progress.module_of(entry.lesson.pk),
        next_lesson=progress.next_after(entry.lesson.pk),
        previous_lesson=progress.previous_before(entry.lesson.pk),
    )
