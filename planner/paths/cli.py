"""`manage.py capacity paths serving|batch|training [flags]`: the path comparison on the command line.

The workload's flags are the calculator's (the same forms parse them), then the traffic:
`--requests-per-day N`, `--peak-concurrency N`, `--exclude PATH ...` and `--json`. Bad input
exits with status 2 and one line naming the flag.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from planner.calculator.cli_flags import add_form_flags, error_line, form_data, option_name
from planner.capacity.paths import PATHS, PathComparison
from planner.paths.forms import TrafficForm, comparison_forms
from planner.paths.runs import form_comparison

ESTIMATE_DEST = "paths_estimate"


def add_arguments(parser: CommandParser) -> None:
    """The `paths` sub-command's own arguments (the estimate kind, its flags, the traffic)."""
    sub = parser.add_subparsers(
        dest=ESTIMATE_DEST,
        required=True,
        metavar="serving|batch|training",
        parser_class=type(parser),
    )
    for kind in ("serving", "batch", "training"):
        p = sub.add_parser(kind, help=f"compare the paths for a {kind} workload")
        add_form_flags(p, kind)
        for name, field in TrafficForm.base_fields.items():
            if name == "exclude":
                continue
            p.add_argument(option_name(name), dest=name, metavar="N", help=str(field.help_text))
        p.add_argument(
            "--exclude",
            dest="exclude",
            nargs="+",
            metavar="PATH",
            help=f"paths a constraint rules out: {', '.join(PATHS)}",
        )
        p.add_argument("--json", action="store_true", help="print the comparison as JSON")


def _data(kind: str, options: dict[str, Any]) -> dict[str, Any]:
    data = form_data(kind, options)
    traffic = ("requests_per_day", "peak_concurrency")
    data |= {n: options[n] for n in traffic if options.get(n) is not None}
    if options.get("exclude"):
        data["exclude"] = [str(p).replace("-", "_") for p in options["exclude"]]
    return data


def handle(options: dict[str, Any]) -> str:
    """The comparison as text or JSON; bad input raises CommandError(returncode=2) naming the flag."""
    kind = options.get(ESTIMATE_DEST) or "serving"
    forms = comparison_forms(kind, _data(kind, options))
    comparison = form_comparison(forms)
    if comparison is None:
        raise CommandError(error_line(forms.field_errors()), returncode=2)
    if options.get("json"):
        return json.dumps(comparison.to_dict(), indent=2, ensure_ascii=False)
    return human(comparison)


def human(comparison: PathComparison) -> str:
    unit = "a day" if comparison.estimate == "serving" else "a run"
    lines = [f"Paths for a {comparison.estimate} workload (cost {unit}, USD)"]
    best = comparison.recommended
    lines.append(f"Recommended: {best.label} ({best.path})" if best else "Recommended: none meets")
    if comparison.runner_up:
        lines.append(f"Runner-up: {comparison.runner_up.label}")
    if comparison.estimate == "serving":
        even = comparison.break_even_requests_per_day
        lines.append(
            f"Break-even: {even:,.0f} requests/day" if even is not None else "Break-even: none"
        )
    lines.append("Options:")
    for o in comparison.options:
        cost = f"${o.cost_usd:,.2f}" if o.cost_usd is not None else "unpriced"
        verdict = "meets" if o.meets else f"misses ({o.limiter}: {o.reason})"
        lines.append(f"  {o.label} [{o.path}]: {cost}, {verdict}")
    if comparison.load_test:
        lines.append(f"First load test ({comparison.load_test.tool}):")
        lines.append(f"  {comparison.load_test.command}")
        lines += [f"  pass: {c}" for c in comparison.load_test.pass_criteria]
    if comparison.deploy_command:
        lines.append(f"Deploy: {comparison.deploy_command}")
    if comparison.assumptions:
        lines.append("Missing assumptions (the comparison assumed):")
        lines += [f"  {option_name(a.field)}: {a.assumed}" for a in comparison.assumptions]
    return "\n".join(lines)
