"""`seed_demo` (run by `make run`) gives a newcomer two working logins and recall that is due."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from courses.models import Enrollment
from home.management.commands.seed_demo import DEMO_INSTRUCTOR, DEMO_LEARNER, DEMO_PASSWORD
from quizzes.models import RecallSchedule

pytestmark = pytest.mark.django_db
CONTENT = Path(__file__).resolve().parents[2] / "content" / "gpus-tpus-ai-hardware"


def test_seed_demo_is_idempotent_and_leaves_recall_due() -> None:
    call_command("import_course", str(CONTENT), stdout=StringIO())
    out = StringIO()
    call_command("seed_demo", stdout=out)
    call_command("seed_demo", stdout=StringIO())

    learner = User.objects.get(email=DEMO_LEARNER)
    instructor = User.objects.get(email=DEMO_INSTRUCTOR)
    assert DEMO_LEARNER in out.getvalue() and DEMO_PASSWORD in out.getvalue()
    assert instructor.is_instructor and not learner.is_instructor
    assert Enrollment.objects.get(user=instructor).role == Enrollment.Role.INSTRUCTOR
    assert RecallSchedule.objects.filter(learner=learner).count() == 3
    assert RecallSchedule.objects.filter(learner=learner, due__lte=timezone.now()).count() == 3

    client = Client()
    assert client.login(email=DEMO_LEARNER, password=DEMO_PASSWORD)
    page = client.get(reverse("dashboard")).content.decode()
    assert "3</strong> items due" in page
