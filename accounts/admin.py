from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from accounts.models import User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ["email"]
    list_display = ["email", "display_name", "is_staff", "time_zone", "reminders_enabled"]
    search_fields = ["email", "display_name"]
    fieldsets = (
        (None, {"fields": ("email", "password", "display_name")}),
        (
            "Preferences",
            {
                "fields": (
                    "time_zone",
                    "day_start_hour",
                    "reminders_enabled",
                    "reminder_hour",
                    "reminders_paused_until",
                    "review_shortcuts_enabled",
                )
            },
        ),
        (
            "Permissions",
            {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")},
        ),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)
