"""Learner and teaching pages: enrol, outline, lesson, complete (htmx), resume, access, queries."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from courses.models import Course, Enrollment, Lesson, LessonProgress
from tests.factories import (
    ChoiceFactory,
    EnrollmentFactory,
    InstructorFactory,
    LessonFactory,
    LessonProgressFactory,
    ModuleFactory,
    QuizItemFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def lesson_url(course: Course, slug: str) -> str:
    return reverse("courses:lesson", kwargs={"course_slug": course.slug, "lesson_slug": slug})


def complete_url(course: Course, slug: str) -> str:
    return reverse("courses:complete", kwargs={"course_slug": course.slug, "lesson_slug": slug})


def visit_url(course: Course, slug: str) -> str:
    return reverse("courses:visit", kwargs={"course_slug": course.slug, "lesson_slug": slug})


@pytest.fixture
def learner_client(client: Client, learner: User) -> Client:
    client.force_login(learner)
    return client


def test_catalogue_lists_course_and_enrol_posts_then_resumes_at_lesson_one(
    learner_client: Client, learner: User, course: Course
) -> None:
    """The catalogue offers enrolment; POSTing it enrols the learner and opens lesson 1."""
    page = learner_client.get(reverse("courses:catalogue"))
    assert page.status_code == 200
    assert "GPUs, TPUs, and AI Hardware" in page.text
    assert "Enroll in GPUs, TPUs, and AI Hardware" in page.text

    response = learner_client.post(reverse("courses:enroll", args=[course.slug]), follow=True)

    assert Enrollment.objects.filter(course=course, user=learner, role="learner").count() == 1
    assert response.redirect_chain[-1][0] == lesson_url(course, "workload-types")
    assert learner_client.get(reverse("courses:enroll", args=[course.slug])).status_code == 405


def test_lesson_page_shows_objective_body_items_then_next_lesson(
    learner_client: Client, learner: User, course: Course
) -> None:
    """Objective first, then the body, then check-yourself items, then the next lesson."""
    EnrollmentFactory(course=course, user=learner)
    page = learner_client.get(lesson_url(course, "hardware-paths")).text

    order = [
        page.index("Why this matters:"),
        page.index("Decision this forces:"),
        page.index("Every hardware path comes with"),
        page.index("<table>"),
        page.index("Check yourself"),
        page.index("Mark lesson complete"),
        page.index("Next lesson: A practical capacity estimate"),
    ]
    assert order == sorted(order)
    # The page records the visit with an htmx POST as it loads (a GET writes nothing).
    assert reverse("courses:visit", args=[course.slug, "hardware-paths"]) in page
    assert Enrollment.objects.get(user=learner).last_lesson is None
    assert learner_client.post(visit_url(course, "hardware-paths")).status_code == 204
    enrollment = Enrollment.objects.get(user=learner)
    assert enrollment.last_lesson == Lesson.objects.get(slug="hardware-paths")


def test_lesson_needs_enrolment(learner_client: Client, course: Course) -> None:
    """A learner who has not enrolled is sent to the outline, where the enrol button is."""
    response = learner_client.get(lesson_url(course, "workload-types"))
    assert response.status_code == 302
    assert response["Location"] == course.get_absolute_url()


def test_mark_complete_with_htmx_returns_the_partial_and_moves_progress(
    learner_client: Client, learner: User, course: Course
) -> None:
    """The htmx POST answers with the completion fragment only, showing 1 of the lessons done."""
    EnrollmentFactory(course=course, user=learner)
    lessons = Lesson.objects.filter(module__course=course).count()
    response = learner_client.post(
        complete_url(course, "workload-types"), headers={"HX-Request": "true"}
    )

    assert response.status_code == 200
    assert "<html" not in response.text
    assert 'id="completion"' in response.text
    assert f"1 of {lessons} lessons complete" in response.text
    assert "You have completed this lesson." in response.text
    assert "Mark lesson complete" not in response.text
    progress = LessonProgress.objects.get(learner=learner, lesson__slug="workload-types")
    assert progress.completed_at is not None

    outline = learner_client.get(course.get_absolute_url()).text
    assert f"1 of {lessons} lessons complete" in outline
    assert "1 of 1 complete" in outline  # module 1 holds one lesson


def test_mark_complete_without_htmx_redirects_and_is_idempotent(
    learner_client: Client, learner: User, course: Course
) -> None:
    """A plain form POST redirects back; completing twice keeps the first completion time."""
    EnrollmentFactory(course=course, user=learner)
    url = complete_url(course, "workload-types")
    assert learner_client.post(url)["Location"] == lesson_url(course, "workload-types")
    first = LessonProgress.objects.get(learner=learner).completed_at
    learner_client.post(url)
    assert LessonProgress.objects.get(learner=learner).completed_at == first
    assert learner_client.get(url).status_code == 405


def test_resume_goes_to_last_unfinished_lesson_or_the_next_unfinished_one(
    learner_client: Client, learner: User, course: Course
) -> None:
    """Resume opens the last lesson visited unless it is done; then the next unfinished one."""
    EnrollmentFactory(course=course, user=learner)
    resume = reverse("courses:resume", args=[course.slug])
    assert learner_client.get(resume)["Location"] == lesson_url(course, "workload-types")

    learner_client.post(visit_url(course, "hardware-paths"))
    assert learner_client.get(resume)["Location"] == lesson_url(course, "hardware-paths")

    learner_client.post(complete_url(course, "hardware-paths"))
    assert learner_client.get(resume)["Location"] == lesson_url(course, "practical-estimate")


def test_resume_without_enrolment_goes_to_outline(learner_client: Client, course: Course) -> None:
    """Not enrolled yet: resume shows the outline with its enrol button."""
    response = learner_client.get(reverse("courses:resume", args=[course.slug]))
    assert response["Location"] == course.get_absolute_url()


def test_unknown_course_and_lesson_are_404(
    learner_client: Client, learner: User, course: Course
) -> None:
    """A slug that does not exist (or an unpublished course) is a 404."""
    EnrollmentFactory(course=course, user=learner)
    assert learner_client.get(reverse("courses:outline", args=["nope"])).status_code == 404
    assert learner_client.get(lesson_url(course, "nope")).status_code == 404
    Course.objects.filter(pk=course.pk).update(is_published=False)
    assert learner_client.get(course.get_absolute_url()).status_code == 404


def test_learner_pages_need_login(client: Client, course: Course) -> None:
    """Anonymous visitors are sent to the login page."""
    for url in [
        reverse("courses:catalogue"),
        course.get_absolute_url(),
        lesson_url(course, "workload-types"),
        reverse("courses:resume", args=[course.slug]),
    ]:
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url


def test_teaching_pages_access(client: Client, learner: User, course: Course) -> None:
    """Learner → 403; anonymous → login; another course's instructor → 404; own course → 200."""
    teaching = reverse("courses:teaching")
    per_course = reverse("courses:teaching_course", args=[course.slug])

    anonymous = client.get(per_course)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]

    client.force_login(learner)
    assert client.get(teaching).status_code == 403
    assert client.get(per_course).status_code == 403

    other = InstructorFactory()
    EnrollmentFactory(course=ModuleFactory().course, user=other, role=Enrollment.Role.INSTRUCTOR)
    client.force_login(other)
    assert client.get(per_course).status_code == 404
    assert course.title not in client.get(teaching).text

    mine = InstructorFactory()
    EnrollmentFactory(course=course, user=mine, role=Enrollment.Role.INSTRUCTOR)
    client.force_login(mine)
    assert course.title in client.get(teaching).text
    assert client.get(per_course).status_code == 200


def test_teaching_pages_link_each_course_to_its_struggle_view_and_grading_queue(
    client: Client, course: Course
) -> None:
    """Both teaching pages link the course's recall statistics and its filtered grading queue."""
    teacher = InstructorFactory()
    EnrollmentFactory(course=course, user=teacher, role=Enrollment.Role.INSTRUCTOR)
    client.force_login(teacher)
    stats = reverse("quizzes:course_stats", args=[course.slug])
    queue = f"{reverse('capstone:grading_queue')}?course={course.slug}"

    for page in ["courses:teaching", "courses:teaching_course"]:
        args = [course.slug] if page == "courses:teaching_course" else []
        html = client.get(reverse(page, args=args)).text
        assert f'href="{stats}"' in html, page
        assert f'href="{queue}"' in html, page

    assert client.get(stats).status_code == 200
    filtered = client.get(queue)
    assert filtered.status_code == 200
    assert filtered.context["selected_course"] == course


def test_teaching_course_shows_each_learner_progress(client: Client, course: Course) -> None:
    """Each enrolled learner appears with completed lessons out of the course's total."""
    teacher = InstructorFactory()
    EnrollmentFactory(course=course, user=teacher, role=Enrollment.Role.INSTRUCTOR)
    busy = UserFactory(email="busy@example.com")
    idle = UserFactory(email="idle@example.com")
    EnrollmentFactory(course=course, user=busy)
    EnrollmentFactory(course=course, user=idle)
    for slug in ["workload-types", "memory-consumers"]:
        lesson = Lesson.objects.get(slug=slug)
        LessonProgressFactory(
            lesson=lesson, learner=busy, completed_at=lesson.module.course.created_at
        )
    LessonProgressFactory(
        lesson=Lesson.objects.get(slug="hardware-paths"), learner=busy
    )  # started only

    client.force_login(teacher)
    page = client.get(reverse("courses:teaching_course", args=[course.slug])).text

    lessons = Lesson.objects.filter(module__course=course).count()
    assert f"2 learners · {lessons} lessons" in page
    busy_row = page[page.index("busy@example.com") : page.index("busy@example.com") + 800]
    idle_row = page[page.index("idle@example.com") : page.index("idle@example.com") + 800]
    assert f"2 of {lessons}" in busy_row
    assert f"0 of {lessons}" in idle_row
    assert teacher.email not in page.split("<tbody>")[1]  # instructors are not listed as learners


def build_course(
    modules: int, lessons_per_module: int, learners: int
) -> tuple[Course, User, Lesson]:
    """A course of the given size with learners who have progress, and one learner to measure."""
    first = ModuleFactory()
    course = first.course
    all_lessons = []
    for m in range(modules):
        module = first if m == 0 else ModuleFactory(course=course, position=m)
        for p in range(lessons_per_module):
            all_lessons.append(LessonFactory(module=module, position=p))
    measured = all_lessons[len(all_lessons) // 2]
    for _ in range(lessons_per_module):
        ChoiceFactory.create_batch(3, item=QuizItemFactory(lesson=measured, kind="multiple_choice"))
    for _ in range(learners):
        other = UserFactory()
        EnrollmentFactory(course=course, user=other)
        for lesson in all_lessons[:3]:
            LessonProgressFactory(lesson=lesson, learner=other)
    me = UserFactory()
    EnrollmentFactory(course=course, user=me)
    for lesson in all_lessons[:2]:
        LessonProgressFactory(lesson=lesson, learner=me, completed_at=timezone.now())
    return course, me, measured


# Session, user and the instructor check are part of any page; the rest is ours and the quiz tag's.
QUERY_BUDGET = 14


def count_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_outline_and_lesson_pages_run_a_constant_number_of_queries(
    client: Client, django_assert_max_num_queries
) -> None:  # type: ignore[no-untyped-def]
    """The same number of queries for 1 module × 2 lessons × 1 learner and 8 × 6 × 12."""
    counts = []
    for modules, lessons, learners in [(1, 2, 1), (8, 6, 12)]:
        course, me, lesson = build_course(modules, lessons, learners)
        client.force_login(me)
        client.get(
            lesson_url(course, lesson.slug)
        )  # the first visit starts progress; measure a repeat
        with django_assert_max_num_queries(QUERY_BUDGET):
            outline = count_queries(client, course.get_absolute_url())
        with django_assert_max_num_queries(QUERY_BUDGET):
            page = count_queries(client, lesson_url(course, lesson.slug))
        counts.append((outline, page))
    assert counts[0] == counts[1], counts


def test_teaching_course_pages_learners_fifty_at_a_time(client: Client, course: Course) -> None:
    """With 60 learners the first page lists 50 and the second the other 10."""
    teacher = InstructorFactory()
    EnrollmentFactory(course=course, user=teacher, role=Enrollment.Role.INSTRUCTOR)
    for learner in UserFactory.create_batch(60):
        EnrollmentFactory(course=course, user=learner)
    client.force_login(teacher)
    url = reverse("courses:teaching_course", args=[course.slug])

    first = client.get(url).text
    second = client.get(url, {"page": 2}).text

    assert first.split("<tbody>")[1].count("<tr>") == 50
    assert second.split("<tbody>")[1].count("<tr>") == 10
    assert "Page 2 of 2" in second


@pytest.mark.django_db
def test_empty_catalogue_tells_learners_to_come_back_and_staff_how_to_import(
    client: Client, learner: User
) -> None:
    """With no published course, a learner is told so plainly; only staff see the import command."""
    client.force_login(learner)
    page = client.get(reverse("courses:catalogue")).text
    assert "No course is published yet" in page
    assert "import_course" not in page

    client.force_login(UserFactory(is_staff=True))
    assert "import_course" in client.get(reverse("courses:catalogue")).text
