"""`python manage.py capacity serving|training|batch [options]`: the calculator on the command line.

Inputs are parsed by the same Django forms as the page and the API and run by the same
calculation_run, so the three agree to the byte. Bad input exits with status 2 and one line naming the option.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

from planner.calculator.cli_flags import add_form_flags, error_line, form_data, option_name
from planner.calculator.forms import FORMS, CalculatorForm
from planner.calculator.parsing import form_estimate
from planner.calculator.runs import Estimate
from planner.capacity import FormulaLine
from planner.measured import cli as measured_cli
from planner.paths import cli as paths_cli

SUMMARY_KEYS: dict[str, list[tuple[str, str]]] = {
    "serving": [
        ("tensor_parallel", "GPUs (tensor parallelism)"),
        ("gpu_memory_gb", "GPU memory (GB)"),
        ("weights_gb", "Weights (GB)"),
        ("overhead_gb", "Runtime overhead (GB)"),
        ("gpu_memory_utilization", "GPU memory utilization"),
        ("kv_bytes_per_token", "KV bytes per token"),
        ("kv_cache_per_user_gb", "KV cache per user (GB)"),
        ("available_for_cache_gb", "Available for cache (GB)"),
        ("kv_cache_tokens", "KV cache tokens"),
        ("max_active_users", "Max active users"),
        ("users", "Target users"),
        ("fits", "Fits"),
        ("headroom_gb", "Headroom (GB)"),
        ("max_context_tokens_for_users", "Largest context for the target users (tokens)"),
        ("decode_batch", "Decode batch (streams)"),
        ("decode_tokens_per_s", "Decode per stream, predicted (tokens/s)"),
        ("decode_tokens_per_s_upper_bound", "Decode per stream, roofline upper bound (tokens/s)"),
        ("aggregate_tokens_per_s", "Aggregate decode (tokens/s)"),
        ("compute_bound_batch", "Batch at which decode turns compute-bound"),
        ("time_to_first_token_ms", "Time to first token (ms)"),
        ("required_decode_tokens_per_s", "Decode speed needed (tokens/s)"),
        ("cost_per_million_output_tokens_usd", "Cost per million output tokens (USD)"),
        ("precision_that_fits", "Precision that would fit"),
    ],
    "training": [
        ("method", "Method"),
        ("trainable_params", "Trainable parameters"),
        ("weights_gb", "Weights (GB)"),
        ("gradients_gb", "Gradients (GB)"),
        ("optimizer_state_gb", "Optimizer state (GB)"),
        ("activations_gb", "Activations (GB)"),
        ("cuda_context_gb", "CUDA context (GB)"),
        ("total_gb", "Total (GB)"),
        ("fits", "Fits"),
        ("steps_per_s", "Steps per second"),
        ("hours_per_run", "Hours per run"),
        ("cost_per_run_usd", "Cost per run (USD)"),
    ],
    "batch": [
        ("items_per_s_per_worker", "Rate per worker (items/s)"),
        ("work_items", "Work incl. retries (items)"),
        ("required_items_per_s", "Required rate (items/s)"),
        ("workers_needed", "Workers needed"),
        ("hours_needed", "Hours needed"),
        ("fits_window", "Fits the window"),
        ("cost_usd", "Cost (USD)"),
        ("api_cost_usd", "Cost on the managed API (USD)"),
    ],
}


def one_line_usage_error(message: str) -> str:
    """argparse's message, as one line that names the option (argparse prints usage + message)."""
    if message.startswith("unrecognized arguments:"):
        words = message.removeprefix("unrecognized arguments:").split()
        options = [w.split("=", 1)[0] for w in words if w.startswith("-")]
        if options:
            return f"{options[0]}: unknown option; see `manage.py capacity <estimate> --help`"
        return f"unexpected argument {words[0]!r}; options start with --"
    if "invalid choice" in message and "serving|training|batch|paths" in message:
        return "unknown estimate: use serving, training, batch or paths"
    if message.startswith("the following arguments are required: serving|training|batch|paths"):
        return "give the estimate: serving, training, batch or paths"
    return message.removeprefix("argument ")


class OneLineErrorParser(CommandParser):
    """Usage errors (unknown option, missing value) as one line naming the option, exit status 2."""

    def error(self, message: str) -> NoReturn:
        line = one_line_usage_error(message)
        if self.called_from_command_line:
            self.exit(2, f"CommandError: {line}\n")
        raise CommandError(line, returncode=2)


class Command(BaseCommand):
    help = "Capacity estimates (serving, training, batch) from the planner's engine."
    requires_system_checks: list[str] = []  # pure arithmetic: no database, start fast

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        # Django builds a plain CommandParser; unknown options are reported by this top-level one.
        parser.__class__ = OneLineErrorParser
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(
            dest="estimate",
            required=True,
            metavar="serving|training|batch|paths",
            parser_class=OneLineErrorParser,
        )
        for kind in FORMS:
            p = sub.add_parser(kind, help=f"{kind} estimate")
            add_form_flags(p, kind)
            p.add_argument("--json", action="store_true", help="print the result as JSON")
        paths_cli.add_arguments(
            sub.add_parser("paths", help="compare CPU, GPUs, TPUs and a managed API")
        )
        measured_cli.add_arguments(
            sub.add_parser("measured", help="a load test's result beside the prediction")
        )

    def handle(self, *args: Any, **options: Any) -> None:
        kind: str = options["estimate"]
        if kind == "paths":
            self.stdout.write(paths_cli.handle(options))
            return
        if kind == "measured":
            self.stdout.write(measured_cli.handle(options))
            return
        form = FORMS[kind](form_data(kind, options))
        estimate = form_estimate(form)
        if estimate is None:
            raise CommandError(self._error_line(form), returncode=2)
        if options["json"]:
            self.stdout.write(json.dumps(estimate.to_dict(), indent=2, ensure_ascii=False))
        else:
            self.stdout.write(self._human(kind, estimate))

    @staticmethod
    def _error_line(form: CalculatorForm) -> str:
        return error_line(form.field_errors())

    @staticmethod
    def _human(kind: str, estimate: Estimate) -> str:
        data = estimate.to_dict()
        lines = [
            f"{kind.capitalize()} estimate" + (" (GB = 10^9 bytes)" if kind != "batch" else "")
        ]
        for key, label in SUMMARY_KEYS[kind]:
            value = data.get(key)
            if value is None:
                continue
            if isinstance(value, bool):
                value = "yes" if value else "no"
            lines.append(f"  {label}: {value}")
            if key == "overhead_gb" and data.get("overhead_parts_gb"):
                lines += [f"    {part}: {gb}" for part, gb in data["overhead_parts_gb"].items()]
        curve = data.get("speed_curve") or []
        if curve:
            lines.append(
                "Decode speed against batch (tokens/s: per stream predicted, roofline; all):"
            )
            lines += [
                f"  batch {p['batch']}: {p['decode_tokens_per_s']}, "
                f"{p['decode_tokens_per_s_upper_bound']}; {p['aggregate_tokens_per_s']}"
                for p in curve
            ]
        if estimate.warnings:
            lines.append("Warnings:")
            lines += [f"  [{w.code}] {w.message}" for w in estimate.warnings]
        if estimate.assumptions:
            lines.append("Missing assumptions (the estimate assumed):")
            lines += [f"  {option_name(a.field)}: {a.assumed}" for a in estimate.assumptions]
        formulas: list[FormulaLine] = estimate.formulas
        if formulas:
            lines.append("Formulas:")
            lines += [f"  {f.label}: {f.formula}\n      {f.substituted}" for f in formulas]
        if data.get("not_modelled"):
            lines.append("Not modelled:")
            lines += [f"  {note}" for note in data["not_modelled"]]
        return "\n".join(lines)
