from django.apps import AppConfig


class QuizzesConfig(AppConfig):
    name = "quizzes"
    verbose_name = "Quizzes and recall"

    def ready(self) -> None:
        from courses.course_moves import lessons_moved_register
        from courses.lesson_panels import lesson_panel_register
        from courses.services.content_specs import calculated_check_register
        from quizzes.lesson_panel import check_yourself_panel
        from quizzes.services.content_sync import calculated_spec_check
        from quizzes.services.schedule_courses import schedules_follow_lessons

        lesson_panel_register(check_yourself_panel)
        lessons_moved_register(schedules_follow_lessons)
        calculated_check_register(calculated_spec_check)
