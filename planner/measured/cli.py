"""`manage.py capacity measured --result FILE [the serving estimate's flags] [--json]`: a load
test's result beside the engine's prediction for the same run. Bad input exits with status 2 and
one line naming the flag (a broken file: `--result:` and what is wrong in it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from planner.calculator.cli_flags import add_switch, error_line, is_switch, option_name
from planner.calculator.config_input import CONFIG_FIELD, ConfigError, file_text
from planner.capacity.measured import MAX_RESULT_BYTES, MeasuredComparison
from planner.measured.forms import RESULT_FIELD, MeasuredForm, too_big
from planner.measured.runs import form_measured_comparison


def add_arguments(parser: CommandParser) -> None:
    """`--result FILE`, `--benchmark N`, and a flag for each of the serving estimate's inputs."""
    for name, field in MeasuredForm.base_fields.items():
        help_text = str(field.label or name)
        if field.help_text:
            help_text += f". {field.help_text}"
        if name == RESULT_FIELD:
            parser.add_argument(
                "--result",
                dest=name,
                metavar="FILE",
                help="the JSON file `vllm bench serve --save-result` or `guidellm benchmark` wrote "
                f"(at most {MAX_RESULT_BYTES // (1024 * 1024)} MiB)",
            )
        elif is_switch(field):
            add_switch(parser, name, help_text)
        elif name == CONFIG_FIELD:
            parser.add_argument("--config", dest=name, metavar="PATH", help="a config.json")
        else:
            parser.add_argument(option_name(name), dest=name, metavar="VALUE", help=help_text)
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")


def result_text(path: str) -> str:
    """The result file's text, read no further than the limit; errors name --result."""
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(MAX_RESULT_BYTES + 1)
    except FileNotFoundError:
        raise CommandError(f"--result: no such file {path!r}", returncode=2) from None
    except IsADirectoryError:
        raise CommandError(f"--result: {path!r} is a directory", returncode=2) from None
    except OSError as err:
        raise CommandError(
            f"--result: cannot read {path!r}: {err.strerror}", returncode=2
        ) from None
    if len(data) > MAX_RESULT_BYTES:
        raise CommandError(f"--result: {too_big(Path(path).stat().st_size)}", returncode=2)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CommandError(
            "--result: is not UTF-8 text; give the JSON file", returncode=2
        ) from None


def handle(options: dict[str, Any]) -> str:
    """The comparison as text or JSON; bad input raises CommandError(returncode=2)."""
    if not options.get(RESULT_FIELD):
        raise CommandError("--result: give the load test's JSON file", returncode=2)
    data = {
        name: options[name] for name in MeasuredForm.base_fields if options.get(name) is not None
    }
    data[RESULT_FIELD] = result_text(options[RESULT_FIELD])
    if data.get(CONFIG_FIELD) is not None:
        try:
            data[CONFIG_FIELD] = file_text(data[CONFIG_FIELD])
        except ConfigError as err:
            raise CommandError(f"--config: {err}", returncode=2) from None
    form = MeasuredForm(data)
    comparison = form_measured_comparison(form)
    if comparison is None:
        raise CommandError(error_line(form.field_errors()), returncode=2)
    if options.get("json"):
        return json.dumps(comparison.to_dict(), indent=2, ensure_ascii=False)
    return human(comparison)


TARGET_LABELS = {
    "ttft_target_ms": "time to first token (ms)",
    "time_per_output_token_ms": "time per output token (ms)",
}


def _figure(value: float | None, places: int = 1) -> str:
    return "—" if value is None else f"{value:,.{places}f}"


def human(comparison: MeasuredComparison) -> str:
    run, p = comparison.run, comparison.predicted
    load = f"{p.concurrency} in flight" + (
        f", {run.request_rate:g} requests/s" if run.request_rate else ""
    )
    lines = [
        f"Measured ({run.tool}, {run.completed} requests) beside predicted "
        f"({p.estimate.model_id or 'model'} on {p.estimate.tensor_parallel} × "
        f"{p.estimate.accelerator_id or 'GPU'})",
        f"Run: {p.prompt_tokens} prompt tokens, {p.output_tokens} output tokens, {load}",
        f"  {'metric':<34}{'measured':>12}{'predicted':>12}{'ratio':>8}",
    ]
    for gap in comparison.gaps:
        label = gap.to_dict()["label"]
        lines.append(
            f"  {label:<34}{_figure(gap.measured):>12}{_figure(gap.predicted):>12}{gap.ratio:>8.2f}"
        )
    lines.append(
        f"  p50 / p99 first token (ms): {_figure(run.ttft_ms.p50)} / {_figure(run.ttft_ms.p99)}; "
        f"between tokens: {_figure(run.itl_ms.p50)} / {_figure(run.itl_ms.p99)}"
    )
    largest = comparison.largest_gap
    if largest is not None:
        gap = largest
        side = "optimistic" if gap.optimistic else "pessimistic"
        lines.append(
            f"Largest gap: {gap.to_dict()['label']}, × {gap.ratio:.2f} (the engine was {side})"
        )
        lines += [f"  likely: {cause}" for cause in gap.likely_causes]
    for t in comparison.targets:
        verdict = "meets" if t.meets else "MISSES"
        lines.append(
            f"Target: {TARGET_LABELS.get(t.target, t.target)} ≤ {t.limit:,.1f}; measured "
            f"{t.statistic} {t.measured:,.1f}: {verdict}"
        )
    lines += [f"Note: {n}" for n in run.notes]
    return "\n".join(lines)
