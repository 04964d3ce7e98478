"""The worksheet's fields: the numbers the automatic check recomputes, and the sections in order."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

# The numbers the automatic check recomputes with the capacity engine.
WORKSHEET_NUMBER_FIELDS = (
    "gpu_memory_gb",
    "model_gb",
    "params_billion",
    "overhead_gb",
    "kv_per_user_gb",
    "context_tokens",
    "kv_per_token_mb",
    "batch_size",
    "concurrency",
    "claimed_max_users",
)
# The worksheet's sections and their fields, in the order the form and a submitted version show
# them. A submitted version stores these fields as JSON, so it stays readable if the form changes.
WORKSHEET_SECTIONS = (
    (
        _("The feature and its workload"),
        ("feature", "user_problem", "workload_kind", "model_name", "framework", "realistic_input"),
    ),
    (
        _("Sizes, precision and targets"),
        ("input_size", "output_size", "precision", "latency_target", "batch_window", "budget"),
    ),
    (
        _("Memory numbers"),
        (*WORKSHEET_NUMBER_FIELDS, "memory_estimate"),
    ),
    (
        _("Design and operations"),
        (
            "data_source",
            "mechanism",
            "design_choice",
            "retry_plan",
            "observability",
            "autoscaling",
            "metric",
            "cost_per_useful_result",
            "failure_case",
            "plan_owner",
        ),
    ),
    (
        _("Recommendation"),
        (
            "recommendation",
            "recommendation_reasons",
            "paths_query",
            "first_load_test",
            "next_rung",
        ),
    ),
)
WORKSHEET_FIELDS = tuple(name for _title, names in WORKSHEET_SECTIONS for name in names)
WORKSHEET_TEXT_FIELDS = tuple(
    name for name in WORKSHEET_FIELDS if name not in WORKSHEET_NUMBER_FIELDS
)
