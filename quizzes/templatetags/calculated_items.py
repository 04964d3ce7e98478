"""A recall prompt as the learner sees it: a calculated item's with the numbers drawn for them."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django import template

from quizzes.calculated import PLACEHOLDER_RE, TemplateInputError, problem_for, schedule_problem
from quizzes.models import QuizItem, RecallSchedule

register = template.Library()


@register.filter
def item_prompt(schedule: RecallSchedule) -> str:
    """The schedule's item's prompt; a calculated item's drawn for the schedule's learner at its
    reps, the problem its prompt page grades. Reads the loaded item: no query."""
    item = schedule.item
    if item.kind != QuizItem.Kind.CALCULATED:
        return item.prompt
    return schedule_problem(schedule).prompt


@register.filter
def prompt_outline(prompt: str) -> str:
    """A calculated item's template as a list shows it, with its variables named, not drawn:
    "A [gpu] holds [model] at [precision]" (a plain prompt is returned as it is)."""
    return PLACEHOLDER_RE.sub(lambda m: "[" + m.group(1).replace("_", " ") + "]", prompt)


@register.filter
def item_outline(item: QuizItem) -> str:
    """An item as a list shows it: a calculated item's prompt with one draw's numbers (the
    first draw of no learner), so an instructor reads a question, not "[model]" placeholders;
    its template outline when that draw cannot be worked. No query."""
    if item.kind != QuizItem.Kind.CALCULATED:
        return item.prompt
    try:
        return problem_for(item, learner_id=0, review=0).prompt
    except (TemplateInputError, RuntimeError, KeyError, TypeError, ValueError):
        return prompt_outline(item.prompt)


# The engine's exercises by what they ask for; an exercise added later falls back to its words.
EXERCISE_NAMES = {
    "api_break_even_requests_per_day": "API break-even (requests a day)",
    "batch_job_hours": "Batch job hours",
    "cost_per_million_output_tokens": "Cost per million output tokens",
    "decode_tokens_per_s": "Decode speed (tokens/s per user)",
    "kv_bytes_per_token": "KV cache bytes per token",
    "max_users": "Users that fit in memory",
    "memory_fit": "Memory left for the KV cache",
    "mig_slice_fit": "Users on a MIG slice",
    "time_to_first_token_ms": "Time to first token (ms)",
    "training_memory_gb": "Training memory (GB)",
}
_UNITS = {"gb": "(GB)", "ms": "(ms)", "s": "(s)", "usd": "($)"}
_WORDS = {
    "kv": "KV",
    "gpu": "GPU",
    "tpu": "TPU",
    "cpu": "CPU",
    "mig": "MIG",
    "api": "API",
    "moe": "MoE",
    "lora": "LoRA",
    "qlora": "QLoRA",
    "fp8": "FP8",
    "int4": "INT4",
}


@register.filter
def exercise_name(exercise: str) -> str:
    """An exercise's name for people: "training_memory_gb" is "Training memory (GB)"."""
    if exercise in EXERCISE_NAMES:
        return EXERCISE_NAMES[exercise]
    words = [w for w in str(exercise).split("_") if w]
    unit = _UNITS.get(words[-1]) if len(words) > 1 else None
    if unit:
        words = words[:-1]
    shown = [_WORDS.get(w, w) for w in words]
    text = " ".join(shown)
    text = text[:1].upper() + text[1:]
    return f"{text} {unit}" if unit else text


@register.filter
def as_percent(fraction: float | None) -> str:
    """A fraction as a percentage for people: 3.299 is "330 %", 0.042 is "4.2 %"."""
    if fraction is None:
        return "—"
    percent = float(fraction) * 100
    return f"{percent:,.0f} %" if abs(percent) >= 10 else f"{percent:.1f} %"


@register.filter
def as_answered(value: object) -> str:
    """The number a learner typed, as they would write it: 79.8 stays "79.8" (not "79.800"),
    1234.5 is "1,234.5"; anything that is not a finite number is shown as it came."""
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return str(value)
    if not number.is_finite():
        return str(value)
    text = f"{number.normalize():,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
