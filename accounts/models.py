"""The platform's user: one account per person, signing in by email."""

from __future__ import annotations

import zoneinfo

from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

# A learner's easy days, Monday first: one letter a weekday, n(ormal), r(educed) or m(inimum),
# as Anki 24.11's easy-days setting (ankitects/anki rslib/src/scheduler/states/load_balancer.rs).
EASY_DAY_LETTERS = "nrm"
EASY_DAYS_NORMAL = "nnnnnnn"


def validate_easy_days(value: str) -> None:
    if len(value) != 7 or any(letter not in EASY_DAY_LETTERS for letter in value):
        raise ValidationError(
            _("Easy days are seven letters, Monday first, each n, r or m."), code="easy_days"
        )


def validate_time_zone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(
            _("%(value)s is not an IANA time zone, e.g. Europe/Berlin."), params={"value": value}
        )


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def _create_user(self, email: str, password: str | None, **extra: object) -> User:
        if not email:
            raise ValueError("An email address is required.")
        user = self.model(email=self.normalize_email(email), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email: str, password: str | None = None, **extra: object) -> User:
        extra.setdefault("is_staff", False)
        extra.setdefault("is_superuser", False)
        return self._create_user(email, password, **extra)

    def create_superuser(self, email: str, password: str | None = None, **extra: object) -> User:
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self._create_user(email, password, **extra)


class User(AbstractUser):
    """A person on the platform. Learner by default; instructor through the Instructors group."""

    username = None  # type: ignore[assignment]
    email = models.EmailField(_("email address"), unique=True)
    display_name = models.CharField(_("display name"), max_length=80, blank=True)
    time_zone = models.CharField(
        _("time zone"), max_length=64, default="UTC", validators=[validate_time_zone]
    )
    # The learner's day starts at this local hour: "today", daily limits and streaks use it.
    day_start_hour = models.PositiveSmallIntegerField(
        _("day starts at (hour)"), default=4, validators=[MaxValueValidator(23)]
    )
    reminders_enabled = models.BooleanField(_("send recall reminders"), default=True)
    reminder_hour = models.PositiveSmallIntegerField(
        _("reminder hour"), default=8, validators=[MinValueValidator(0), MaxValueValidator(23)]
    )
    reminders_paused_until = models.DateField(_("reminders paused until"), null=True, blank=True)
    review_shortcuts_enabled = models.BooleanField(_("keyboard shortcuts in reviews"), default=True)
    # Within a review's fuzz range, pick the day with fewer reviews due (Anki's load balancer).
    load_balancer_enabled = models.BooleanField(
        _("spread my reviews evenly"), default=True, db_default=True
    )
    easy_days = models.CharField(
        _("easy days"),
        max_length=7,
        default=EASY_DAYS_NORMAL,
        db_default=EASY_DAYS_NORMAL,
        validators=[validate_easy_days],
    )
    # Time away (both local dates, inclusive): reviews due in it are moved out, no digest is sent.
    break_from = models.DateField(_("away from"), null=True, blank=True)
    break_to = models.DateField(_("away until"), null=True, blank=True)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS = []  # type: ignore[misc]

    objects = UserManager()  # type: ignore[assignment,misc]

    class Meta:
        ordering = ["email"]

    def __str__(self) -> str:
        return self.display_name or self.email

    @property
    def name(self) -> str:
        return self.display_name or self.email.split("@")[0]

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.time_zone)

    @property
    def is_instructor(self) -> bool:
        from accounts.services import INSTRUCTORS_GROUP

        return self.groups.filter(name=INSTRUCTORS_GROUP).exists()
