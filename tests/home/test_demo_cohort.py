"""`seed_demo`'s simulated cohort: labelled, unable to log in or be emailed, with months of
history in every course, written once however often the command runs."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.models import Max, Min

from accounts.models import User
from courses.models import Course
from home.management.commands.seed_demo import DEMO_LEARNER
from home.services.demo_cohort import COHORT_SIZE, EMAIL_DOMAIN
from planner.models import CapstoneSubmission
from quizzes.models import ItemAnalysis, RecallSchedule, ReviewLog

pytestmark = pytest.mark.django_db
CONTENT = Path(__file__).resolve().parents[2] / "content"


def test_the_cohort_is_seeded_once_with_months_of_history() -> None:
    for course in ("gpus-tpus-ai-hardware", "serving-on-a-budget"):
        call_command("import_course", str(CONTENT / course), stdout=StringIO())
    out = StringIO()
    call_command("seed_demo", stdout=out)
    simulated = User.objects.filter(email__endswith=f"@{EMAIL_DOMAIN}")
    assert simulated.count() == COHORT_SIZE
    assert f"simulated cohort: {COHORT_SIZE} learners" in out.getvalue()
    for user in simulated:
        assert user.display_name.startswith("Simulated learner")
        assert not user.has_usable_password() and not user.reminders_enabled
    logs = ReviewLog.objects.filter(learner__in=simulated)
    span = logs.aggregate(first=Min("reviewed_at"), last=Max("reviewed_at"))
    assert (span["last"] - span["first"]).days >= 60
    assert set(logs.values_list("rating", flat=True)) == {1, 2, 3, 4}
    for each in Course.objects.all():
        analysis = ItemAnalysis.objects.get(course=each)
        assert analysis.learners > COHORT_SIZE // 2
    # Capstone plans at three levels, awaiting grading (the course with a rubric).
    plans = CapstoneSubmission.objects.filter(learner__in=simulated)
    assert plans.count() == 3
    claims = sorted(p.content["claimed_max_users"] for p in plans)
    assert claims == [11, 20, 40]
    counts = (logs.count(), RecallSchedule.objects.count(), User.objects.count(), plans.count())

    again = StringIO()
    call_command("seed_demo", stdout=again)
    assert (
        logs.count(),
        RecallSchedule.objects.count(),
        User.objects.count(),
        plans.count(),
    ) == counts
    assert "0 review logs and 0 capstone plans added this run" in again.getvalue()
    # The real demo learner keeps their own three items per course.
    demo = User.objects.get(email=DEMO_LEARNER)
    assert RecallSchedule.objects.filter(learner=demo).count() == 3 * Course.objects.count()
