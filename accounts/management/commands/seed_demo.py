"""Create the demo learner and demo instructor and enrol them; print their logins."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from accounts.services import user_create_verified
from courses.models import Course, Enrollment

DEMO_PASSWORD = "demo-password-123"
DEMO_LEARNER = "learner@demo.local"
DEMO_INSTRUCTOR = "instructor@demo.local"


class Command(BaseCommand):
    help = "Create (or reset) the demo learner and instructor and enrol them in every course."

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        learner = user_create_verified(
            email=DEMO_LEARNER, password=DEMO_PASSWORD, display_name="Demo Learner"
        )
        instructor = user_create_verified(
            email=DEMO_INSTRUCTOR,
            password=DEMO_PASSWORD,
            display_name="Demo Instructor",
            instructor=True,
        )
        for course in Course.objects.all():
            Enrollment.objects.get_or_create(
                course=course, user=learner, defaults={"role": Enrollment.Role.LEARNER}
            )
            Enrollment.objects.update_or_create(
                course=course, user=instructor, defaults={"role": Enrollment.Role.INSTRUCTOR}
            )
        self.stdout.write(self.style.SUCCESS(f"Demo logins (password for both: {DEMO_PASSWORD})"))
        self.stdout.write(f"  learner:    {DEMO_LEARNER}")
        self.stdout.write(f"  instructor: {DEMO_INSTRUCTOR}")
