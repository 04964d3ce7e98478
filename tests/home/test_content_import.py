"""import_course: the shipped folder, idempotence, precise failures, and learner data kept."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.apps import apps
from django.core import serializers
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from courses.models import Course, Enrollment, Lesson, LessonProgress, Module
from home.services.content_import import course_import
from planner.capstone.rubric import criterion_save, rubric_ensure
from planner.models import Criterion, Level, Rubric
from quizzes.models import Choice, QuizItem, RecallSchedule
from tests.courses.conftest import SHIPPED
from tests.factories import (
    CourseFactory,
    EnrollmentFactory,
    LessonProgressFactory,
    RecallScheduleFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

CONTENT_MODELS = [Course, Module, Lesson, QuizItem, Choice, Rubric, Criterion, Level]


def run_import(path: Path) -> str:
    out = io.StringIO()
    call_command("import_course", str(path), stdout=out, stderr=io.StringIO())
    return out.getvalue()


def database_snapshot() -> str:
    """Every row of every courses, quizzes and planner table, serialised: equal means unchanged."""
    rows = []
    for label in ("courses", "quizzes", "planner"):
        for model in apps.get_app_config(label).get_models():
            rows.append(serializers.serialize("json", model.objects.order_by("pk")))
    return "\n".join(rows)


def test_shipped_folder_yields_one_course_with_modules_lessons_tables_and_code() -> None:
    """The shipped folder imports as 1 course, 3 modules, 8 lessons, with tables and highlighted code."""
    output = run_import(SHIPPED)

    assert "Created course 'gpus-tpus-ai-hardware'" in output
    course = Course.objects.get()
    assert course.title == "GPUs, TPUs, and AI Hardware"
    assert course.desired_retention == 0.9
    assert course.learning_steps_minutes == [1, 10]
    assert course.maximum_interval_days == 365
    assert [m.slug for m in course.modules.order_by("position")] == [
        "workloads",
        "memory-and-hardware-paths",
        "planning-and-recall",
    ]
    lessons = list(
        Lesson.objects.filter(module__course=course).order_by("module__position", "position")
    )
    assert [lesson.slug for lesson in lessons] == [
        "workload-types",
        "memory-consumers",
        "hardware-paths",
        "practical-estimate",
        "speed-from-the-spec-sheet",
        "cost-per-useful-result",
        "three-cards-sized",
        "recall-capstone",
    ]
    assert lessons[0].objective == "Separate training, batch inference, and interactive serving."
    assert lessons[2].decision.startswith("Choose the right level of rigor")
    tables = [lesson.slug for lesson in lessons if "<table>" in lesson.body_html]
    assert tables == [
        "memory-consumers",
        "hardware-paths",
        "speed-from-the-spec-sheet",
        "three-cards-sized",
    ]
    assert '<div class="table-wrap" tabindex="0" role="region"' in lessons[1].body_html
    assert "<th>Likely limiter</th>" in lessons[1].body_html
    assert "<th>Watch out</th>" in lessons[2].body_html
    estimate = lessons[3].body_html
    assert '<pre class="highlight" tabindex="0"><code class="language-python">' in estimate
    assert '<span class="n">kv_cache_per_user_gb</span>' in estimate
    assert (
        'href="/planner/?estimate=serving&amp;gpu_memory_gb=24&amp;model_gb=14'
        '&amp;overhead_gb=3&amp;kv_per_user_gb=0.6"'
    ) in estimate


# What the source teaches, lesson by lesson (issue 3's list, and issue 27's for the lessons it
# added), as words each lesson must contain.
SOURCE_FACTS = {
    "workload-types": [
        "training", "batch inference", "interactive serving", "which gpu should we buy",
        "latency", "batch size", "utilization", "cpu", "gpu", "tpu", "managed api",
        "live chat", "7b instruct model", "under two seconds", "8k context", "20 users",
        "stream", "kv cache", "nightly embeddings", "50,000 chunks", "two hours", "retried",
        "fine-tuning", "checkpointed", "rented accelerators", "plateau", "magical thinking",
        "cpu workers", "spot or scheduled gpu jobs", "memory bandwidth",
    ],
    "memory-consumers": [
        "the model fits", "data arrives on time", "model weights", "runtime overhead",
        "kv cache", "context length", "activations", "gradients", "optimizer state",
        "batch size", "quantization", "tested the quality", "kernels", "preprocessing, disk or network",
        "35 % gpu utilization", "p95 latency is above five seconds", "buy a bigger gpu",
        "document-summary jobs", "context windows", "cap the context length", "measure again",
        "hardware choice follows workload isolation", "share of the last sample period",
        "nvml", "not *how much*", "dcgm",
    ],
    "hardware-paths": [
        "software stack", "pytorch", "cuda", "serving engines", "tpu", "cloud platform",
        "easiest to operate", "capacity planning moves to the provider", "low-level control",
        "multi-instance gpu (mig)", "isolated instances", "does **not** lift the memory limit",
        "a30, a100, h100, h200 and b200", "t4, l4, a10g, l40s", "a worked fit", "v5e and v6e",
        "not the same as many full gpus", "drop-in replacement", "baseline",
        "production design", "advanced optimization",
    ],
    "practical-estimate": [
        "model size, memory headroom, concurrency, batch behaviour and cost per useful task",
        "model_gb = 14", "gpu_memory_gb = 24", "runtime_overhead_gb = 3",
        "kv_cache_per_user_gb = 0.6", 'assert max_active_users > 0, "model fits weights but '
        'leaves no room for serving"', "'rough_max_active_users': 11", "peak concurrency",
        "use an a100", "switch to tpu", "framework", "precision", "context length",
        "concurrency", "latency target", "data pipeline", "autoscaling", "budget",
    ],
    "speed-from-the-spec-sheet": [
        "prefill", "decode", "memory bandwidth", "weights once", "kv cache", "roofline bound",
        "60–85 % of peak", "fixed cost", "prediction", "compute-bound", "2 × parameters flops",
        "time to first token = queueing + fixed cost", "continuous batching", "inter-token latency",
        "tensor parallelism (tp)", "all-reduce", "nvlink", "pcie", "nvidia l4", "nvidia a10g",
        "nvidia h100 sxm",
    ],
    "cost-per-useful-result": [
        "cost per useful result", "dollars per million output tokens", "utilization",
        "plan capacity for the **peak**", "break-even traffic", "http 429 too many requests",
        "scale-to-zero", "cold start", "spot", "retryable batch work", "retry margin",
        "tpu v5e", "tpu v6e", "for serving",
    ],
    "three-cards-sized": [
        "card 1: live chat", "card 2: nightly embeddings", "card 3: occasional fine-tuning",
        "memory.", "speed.", "cost.", "path.", "does it need a gpu at all?", "full fine-tuning",
        "lora", "qlora", "zero-3", "50,000 chunks", "20 million tokens",
    ],
    "recall-capstone": [
        "workload, memory, latency, utilization and operations", "without notes",
        "classify the workload", "run a capacity check", "operate honestly",
        "which chip is best", "input size", "output size", "batch window", "data source",
        "retry plan", "observability fields", "cost per useful result", "first load test",
        "memory-bound", "next rung", "cost and latency optimization", "a finished plan, scored",
        "isolated (3 of 3)", "checked (3 of 3)", "reasoned (2 of 2)", "compared (2 of 2)",
        "bounded (3 of 3)", "operable (2 of 2)",
    ],
}  # fmt: skip


def test_each_lesson_teaches_what_the_source_teaches(course: Course) -> None:
    """Every fact issue 3 lists from the source is in its lesson, and every quiz item explains
    itself: an explanation on each item, a reason on each wrong choice."""
    for slug, facts in SOURCE_FACTS.items():
        body = " ".join(Lesson.objects.get(slug=slug).body_markdown.lower().split())
        missing = [fact for fact in facts if fact not in body]
        assert not missing, (slug, missing)
    for item in QuizItem.objects.filter(lesson__module__course=course):
        assert len(item.explanation) > 40, item.key
        for choice in item.choices.all():
            assert choice.is_correct or len(choice.reason) > 20, (item.key, choice.key)


def test_quiz_items_and_rubric_are_imported_with_their_lessons(course: Course) -> None:
    """Every lesson has at least three items; the source's questions are there; the rubric too."""
    for lesson in Lesson.objects.filter(module__course=course):
        assert lesson.quiz_items.count() >= 3, lesson.slug
    numeric = QuizItem.objects.get(key="planning-function-max-users")
    assert (numeric.kind, numeric.expected_value, numeric.unit, numeric.tolerance) == (
        "numeric",
        11,
        "users",
        0,
    )
    for key in [
        "chatbot-two-second-workload",
        "seventy-b-on-eighty-gb",
        "spiky-traffic-cost",
        "incomplete-advice",
        "weights-fit-so-it-serves",
    ]:
        item = QuizItem.objects.get(key=key)
        assert item.kind == "multiple_choice" and item.explanation
        assert item.choices.filter(is_correct=True).exists()
        wrong = item.choices.filter(is_correct=False)
        assert wrong.count() >= 2 and all(c.reason for c in wrong)
    for key in [
        "capacity-during-spikes",
        "answer-without-notes",
        "reconstruct-fit-loop",
        "return-to-module-one",
    ]:
        assert QuizItem.objects.get(key=key).kind == "free_recall"
    rubric = Rubric.objects.get(course=course)
    assert [c.key for c in rubric.criteria.order_by("position")] == [
        "workload-classification",
        "memory-and-kv-estimate",
        "latency-and-throughput",
        "cost-per-useful-result",
        "failure-case-and-load-test",
        "operability",
    ]
    for criterion in rubric.criteria.all():
        points = [level.points for level in criterion.levels.order_by("position")]
        assert 3 <= len(points) <= 4 and points == sorted(points)


def test_second_import_reports_no_changes_and_writes_nothing(course: Course) -> None:
    """Importing the same folder again prints "No changes" and issues no INSERT/UPDATE/DELETE."""
    before = database_snapshot()
    with CaptureQueriesContext(connection) as queries:
        output = run_import(SHIPPED)

    assert "No changes" in output
    writes = [q["sql"] for q in queries if re.match(r"\s*(INSERT|UPDATE|DELETE)", q["sql"], re.I)]
    assert writes == []
    assert database_snapshot() == before


@pytest.mark.parametrize(
    ("file", "old", "new", "line", "reason"),
    [
        (
            "course.toml",
            "desired_retention = 0.9",
            "desired_retention = 1.5",
            16,
            "'scheduling.desired_retention' must be between 0.7 and 0.97 (got 1.5)",
        ),
        (
            "course.toml",
            'slug = "hardware-paths"',
            'slug = "memory-consumers"',
            48,
            "duplicate lesson slug 'memory-consumers'",
        ),
        (
            "course.toml",
            'title = "Workloads before hardware"',
            'title = "Workloads before hardware',
            25,
            "invalid TOML",
        ),
        (
            "course.toml",
            'file = "lessons/03-hardware-paths.md"',
            'file = "lessons/03-missing.md"',
            50,
            "file not found: lessons/03-missing.md",
        ),
        (
            "course.toml",
            'slug = "planning-and-recall"',
            'slug = "planning-and-recall"\ncolour = "blue"',
            58,
            "unknown key 'modules[2].colour'",
        ),
        (
            "lessons/04-practical-estimate.quiz.toml",
            'kind = "numeric"',
            'kind = "number"',
            5,
            "'items[0].kind' must be one of multiple_choice, numeric, free_recall",
        ),
        (
            "lessons/02-memory-consumers.quiz.toml",
            'key = "b"\ntext = "Gradients"',
            'key = "a"\ntext = "Gradients"',
            55,
            "duplicate choice key 'a'",
        ),
    ],
)
def test_broken_content_fails_with_file_line_and_reason_and_changes_nothing(
    course: Course,
    course_folder: Path,
    file: str,
    old: str,
    new: str,
    line: int,
    reason: str,
) -> None:
    """A malformed file is rejected naming file:line and why; the database is exactly as before."""
    # An edit that would be valid on its own proves a rejected import writes nothing at all.
    lesson_md = course_folder / "lessons" / "01-workload-types.md"
    lesson_md.write_text(lesson_md.read_text() + "\nAn edit that must not land.\n")
    target = course_folder / file
    text = target.read_text()
    assert old in text
    target.write_text(text.replace(old, new, 1))
    before = database_snapshot()

    with pytest.raises(CommandError) as failure:
        run_import(course_folder)

    message = str(failure.value)
    assert f"{target}:{line}: " in message
    assert reason in message
    assert database_snapshot() == before


def test_an_integer_too_long_to_read_is_refused_naming_the_file(
    course: Course, course_folder: Path
) -> None:
    """Past Python's 4,300-digit limit tomllib raises a bare ValueError: the import still exits
    with one line naming the file, and writes nothing."""
    manifest = course_folder / "course.toml"
    manifest.write_text(
        manifest.read_text().replace("daily_new_limit = 20", "daily_new_limit = " + "9" * 4301)
    )
    before = database_snapshot()

    with pytest.raises(CommandError) as failure:
        run_import(course_folder)

    assert f"{manifest}: a number too long to read" in str(failure.value)
    assert database_snapshot() == before


def test_reimport_after_edit_updates_lesson_and_keeps_learner_data(
    course: Course, course_folder: Path
) -> None:
    """Editing a lesson and re-importing updates it; enrolments, progress and schedules stay."""
    learner = UserFactory()
    lesson = Lesson.objects.get(slug="workload-types")
    item = lesson.quiz_items.get(key="chatbot-two-second-workload")
    enrollment = EnrollmentFactory(course=course, user=learner, last_lesson=lesson)
    progress = LessonProgressFactory(lesson=lesson, learner=learner, completed_at=timezone.now())
    schedule = RecallScheduleFactory(learner=learner, item=item, stability=3.2, reps=2)
    md = course_folder / "lessons" / "01-workload-types.md"
    md.write_text(
        md.read_text().replace("## The wrong first question", "## The first question, revised")
    )
    quiz = course_folder / "lessons" / "01-workload-types.quiz.toml"
    quiz.write_text(
        quiz.read_text().replace("You're launching a chatbot", "You are launching a chatbot")
    )

    output = run_import(course_folder)

    assert "updated lesson workload-types: body_markdown, body_html" in output
    assert "updated quiz item workload-types/chatbot-two-second-workload: prompt" in output
    lesson.refresh_from_db()
    assert "<h2>The first question, revised</h2>" in lesson.body_html
    assert Enrollment.objects.get(pk=enrollment.pk).last_lesson_id == lesson.pk
    assert LessonProgress.objects.get(pk=progress.pk).completed_at == progress.completed_at
    kept = RecallSchedule.objects.get(pk=schedule.pk)
    assert (kept.item_id, kept.stability, kept.reps) == (item.pk, 3.2, 2)
    assert QuizItem.objects.get(pk=item.pk).prompt.startswith("You are launching")


def test_reimport_never_overwrites_the_instructors_scheduling_settings(
    course: Course, course_folder: Path
) -> None:
    """Scheduling settings come from the content once, at creation; then they are the
    instructors', even when the content's own values change."""
    Course.objects.filter(pk=course.pk).update(
        desired_retention=0.85, learning_steps_minutes=[5], daily_new_limit=7
    )
    manifest = course_folder / "course.toml"
    manifest.write_text(
        manifest.read_text().replace("desired_retention = 0.9", "desired_retention = 0.95")
    )

    run_import(course_folder)

    course.refresh_from_db()
    assert (course.desired_retention, course.learning_steps_minutes, course.daily_new_limit) == (
        0.85,
        [5],
        7,
    )


def test_item_removed_from_content_is_kept_while_a_learner_remembers_it(
    course: Course, course_folder: Path
) -> None:
    """A removed item with a recall schedule stays (and is reported); one without goes."""
    remembered = QuizItem.objects.get(key="better-first-question")
    RecallScheduleFactory(item=remembered)
    quiz = course_folder / "lessons" / "01-workload-types.quiz.toml"
    text = quiz.read_text()
    start = text.index('[[items]]\nkey = "better-first-question"')
    end = text.index('[[items]]\nkey = "embeddings-retryable-capacity"')
    text = text[:start] + text[end:]
    start = text.index('[[items]]\nkey = "one-team-many-paths"')
    quiz.write_text(text[:start])

    err = io.StringIO()
    call_command("import_course", str(course_folder), stdout=io.StringIO(), stderr=err)

    assert "kept quiz item workload-types/better-first-question" in err.getvalue()
    assert QuizItem.objects.filter(pk=remembered.pk).exists()
    assert not QuizItem.objects.filter(key="one-team-many-paths").exists()


def test_import_service_validates_before_touching_the_database(course_folder: Path) -> None:
    """Nothing exists after a failed first import: validation runs before any write."""
    (course_folder / "lessons" / "05-recall-capstone.quiz.toml").write_text(
        "[[items]]\nkey = 'x'\n"
    )
    with pytest.raises(
        Exception, match=r"05-recall-capstone.quiz.toml:1: missing required key 'kind'"
    ):
        course_import(folder=course_folder)
    assert not Course.objects.exists() and not Lesson.objects.exists()


def _edit_content_rubric(folder: Path) -> None:
    manifest = folder / "course.toml"
    text = manifest.read_text()
    old = 'description = "No owner, retries or observability."'
    assert old in text
    manifest.write_text(text.replace(old, 'description = "Nobody owns it, nothing retries."'))


def test_reimport_keeps_a_rubric_edited_by_instructors(course: Course, course_folder: Path) -> None:
    """An instructor's rubric edit survives a re-import, even when the content's rubric changed."""
    rubric = Rubric.objects.get(course=course)
    criterion = rubric.criteria.get(key="operability")
    criterion_save(rubric=rubric, criterion=criterion, data={"title": "Running it honestly"})
    _edit_content_rubric(course_folder)

    report = course_import(folder=course_folder)

    assert "kept rubric: edited by instructors" in " ".join(report.kept)
    assert not [c for c in report.changes if "rubric" in c]
    criterion.refresh_from_db()
    assert criterion.title == "Running it honestly"
    level = criterion.levels.get(key="missing")
    assert level.description == "No owner, retries or observability."
    # The command says so too, on stderr, and a second run still keeps the edit.
    err = io.StringIO()
    call_command("import_course", str(course_folder), stdout=io.StringIO(), stderr=err)
    assert "kept rubric: edited by instructors" in err.getvalue()
    assert Criterion.objects.get(pk=criterion.pk).title == "Running it honestly"


def test_unedited_rubric_follows_the_content_on_reimport(
    course: Course, course_folder: Path
) -> None:
    """A rubric nobody edited is updated from the content; importing again changes nothing."""
    _edit_content_rubric(course_folder)

    report = course_import(folder=course_folder)

    assert "updated rubric level operability/missing: description" in report.changes
    assert not report.kept
    level = Level.objects.get(
        criterion__rubric__course=course, criterion__key="operability", key="missing"
    )
    assert level.description == "Nobody owns it, nothing retries."
    again = course_import(folder=course_folder)
    assert (again.changes, again.kept) == ([], [])


def test_empty_rubric_opened_before_the_import_gets_the_default() -> None:
    """A rubric with no criteria (an instructor opened the rubric page first) is filled in."""
    existing = CourseFactory(slug="gpus-tpus-ai-hardware")
    rubric_ensure(course=existing)

    report = course_import(folder=SHIPPED)

    assert not report.kept
    rubric = Rubric.objects.get(course=existing)
    assert rubric.title == "Hardware selection worksheet"
    assert rubric.criteria.count() == 6


LORA_HAND = 'hand = "params_b * 2 + trainable_params * 16 / 1e9 + cuda_context_gb"'


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        # Leaving the CUDA context out of the hand working: a correct answer to a prompt without
        # it would be marked wrong, so the template is refused until prompt and answer agree.
        (
            LORA_HAND,
            'hand = "params_b * 2 + trainable_params * 16 / 1e9"',
            "a hand working from the prompt's numbers gives",
        ),
        (
            "CUDA context ({cuda_context_gb} GB). How much memory is that",
            "CUDA context. How much memory is that",
            "uses cuda_context_gb, which the prompt never states",
        ),
        ("({trainable_params} trainable", "({adapter_count} trainable", "{adapter_count}"),
        (LORA_HAND, "hand = \"__import__('os')\"", "may call only"),
        (LORA_HAND, 'hand = "params_b *"', "is not a formula"),
    ],
)
def test_a_template_whose_hand_working_misses_is_refused(
    course_folder: Path, old: str, new: str, reason: str
) -> None:
    """The importer works each template's hand formula from the prompt's own numbers on every
    draw: a prompt that leaves out a quantity its answer counts, a fact no exercise gives, or a
    formula that is not plain arithmetic is refused naming the file and why."""
    quiz = course_folder / "lessons" / "08-three-cards-sized.quiz.toml"
    text = quiz.read_text()
    assert old in text
    quiz.write_text(text.replace(old, new, 1))
    with pytest.raises(CommandError) as failure:
        run_import(course_folder)
    message = str(failure.value)
    assert f"{quiz}:" in message and reason in message, message
