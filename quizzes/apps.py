from django.apps import AppConfig


class QuizzesConfig(AppConfig):
    name = "quizzes"
    verbose_name = "Quizzes and recall"

    def ready(self) -> None:
        from courses.lesson_panels import lesson_panel_register
        from quizzes.lesson_panel import check_yourself_panel

        lesson_panel_register(check_yourself_panel)
