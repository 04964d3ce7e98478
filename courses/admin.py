"""Admin: courses with their modules, modules with their lessons in order, lessons on their own."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.forms import ModelForm
from django.http import HttpRequest

from core.forms import BoundedModelForm
from core.ranges import (
    DAILY_NEW_LIMIT,
    DAILY_REVIEW_LIMIT,
    DESIRED_RETENTION,
    ESTIMATED_MINUTES,
    MAXIMUM_INTERVAL_DAYS,
    POSITION,
)
from courses.models import Course, Enrollment, Lesson, LessonProgress, Module
from courses.services.lessons import lesson_save, module_save

# A lesson's editable fields, the same on its own page and inline on its module.
LESSON_FIELDS = ["title", "slug", "objective", "decision", "estimated_minutes", "body_markdown"]


class CourseAdminForm(BoundedModelForm):
    """The schedule settings within the ranges the importer and the instructor's form use."""

    bounds = {
        "desired_retention": DESIRED_RETENTION,
        "maximum_interval_days": MAXIMUM_INTERVAL_DAYS,
        "daily_new_limit": DAILY_NEW_LIMIT,
        "daily_review_limit": DAILY_REVIEW_LIMIT,
    }

    class Meta:
        model = Course
        fields = "__all__"


class ModuleAdminForm(BoundedModelForm):
    bounds = {"position": POSITION}

    class Meta:
        model = Module
        fields = "__all__"


class LessonAdminForm(BoundedModelForm):
    bounds = {"position": POSITION, "estimated_minutes": ESTIMATED_MINUTES}

    class Meta:
        model = Lesson
        fields = "__all__"


class ModuleInline(admin.TabularInline):
    model = Module
    form = ModuleAdminForm
    fields = ["position", "title", "slug"]
    ordering = ["position"]
    extra = 0
    show_change_link = True


class LessonInline(admin.StackedInline):
    model = Lesson
    form = LessonAdminForm
    fields = ["position", *LESSON_FIELDS]
    ordering = ["position"]
    extra = 0
    show_change_link = True


@admin.register(Course)
class CourseAdmin(admin.ModelAdmin):
    form = CourseAdminForm
    list_display = ["title", "slug", "is_published", "desired_retention", "updated_at"]
    list_filter = ["is_published"]
    search_fields = ["title", "slug"]
    readonly_fields = ["content_hash", "created_at", "updated_at"]
    inlines = [ModuleInline]


@admin.register(Module)
class ModuleAdmin(admin.ModelAdmin):
    form = ModuleAdminForm
    list_display = ["title", "course", "position"]
    list_editable = ["position"]
    list_filter = ["course"]
    ordering = ["course", "position"]
    inlines = [LessonInline]

    def get_changelist_form(self, request: HttpRequest, **kwargs: Any) -> type[ModelForm]:
        # The list's editable positions are bounded as on the change page.
        return super().get_changelist_form(request, form=ModuleAdminForm, **kwargs)

    def save_model(self, request: HttpRequest, obj: Module, form: ModelForm, change: bool) -> None:
        module_save(module=obj)

    def save_formset(
        self, request: HttpRequest, form: ModelForm, formset: Any, change: bool
    ) -> None:
        # Lessons edited inline are re-rendered through the same service as the lesson page.
        if formset.model is not Lesson:
            super().save_formset(request, form, formset, change)
            return
        for lesson in formset.save(commit=False):
            lesson_save(lesson=lesson)
        for gone in formset.deleted_objects:
            gone.delete()
        formset.save_m2m()


@admin.register(Lesson)
class LessonAdmin(admin.ModelAdmin):
    form = LessonAdminForm
    list_display = ["title", "module", "position", "estimated_minutes"]
    list_editable = ["position"]
    list_filter = ["module__course", "module"]
    search_fields = ["title", "slug", "objective"]
    ordering = ["module__course", "module__position", "position"]
    readonly_fields = ["body_html"]
    fields = ["module", "position", *LESSON_FIELDS, "body_html"]

    def get_changelist_form(self, request: HttpRequest, **kwargs: Any) -> type[ModelForm]:
        return super().get_changelist_form(request, form=LessonAdminForm, **kwargs)

    def save_model(self, request: HttpRequest, obj: Lesson, form: ModelForm, change: bool) -> None:
        lesson_save(lesson=obj)


@admin.register(Enrollment)
class EnrollmentAdmin(admin.ModelAdmin):
    list_display = ["user", "course", "role", "enrolled_at", "last_lesson"]
    list_filter = ["course", "role"]
    search_fields = ["user__email"]
    raw_id_fields = ["user", "last_lesson"]


@admin.register(LessonProgress)
class LessonProgressAdmin(admin.ModelAdmin):
    list_display = ["learner", "lesson", "started_at", "completed_at"]
    list_filter = ["lesson__module__course"]
    raw_id_fields = ["learner", "lesson"]
