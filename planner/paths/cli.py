"""`manage.py capacity paths serving|batch|training [flags]`: the path comparison on the command line.

The workload's flags are the calculator's (the same forms parse them), then the traffic and the
service level: `--requests-per-day N`, `--peak-concurrency N`, `--use-case NAME`,
`--peak-factor X`, `--availability single|n+1`, `--prefix-hit-rate X`, `--draft-tokens K`
with `--acceptance-rate A`, `--exclude PATH ...` and `--json`. Bad input exits with status 2 and
one line naming the flag.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from planner.calculator.cli_flags import add_form_flags, error_line, form_data, option_name
from planner.capacity.paths import PATHS, PathComparison
from planner.paths.forms import TRAFFIC_FIELDS, TrafficForm, comparison_forms
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
            choices = [str(k) for k, _ in getattr(field, "choices", ()) if k]
            metavar = "|".join(choices) if choices else "N"
            p.add_argument(option_name(name), dest=name, metavar=metavar, help=str(field.help_text))
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
    data |= {n: options[n] for n in TRAFFIC_FIELDS if options.get(n) is not None}
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
    lines.append(
        f"Recommended: {best.plan_label} ({best.path})" if best else "Recommended: none meets"
    )
    if comparison.runner_up:
        lines.append(f"Runner-up: {comparison.runner_up.plan_label}")
    level = comparison.service_level
    if level:
        targets = ", ".join(
            f"{what} ≤ {level[key]:,.0f} ms"
            for what, key in (
                ("first token", "ttft_target_ms"),
                ("between tokens", "itl_target_ms"),
            )
            if level.get(key)
        )
        lines.append(
            f"Service level: {level['use_case']}, checked at p{level['percentile']}"
            + (f" ({targets})" if targets else " (no latency target)")
            + f"; peak {level['peak_requests_per_s']:,.3f} requests/s "
            f"({level['required_prefill_tokens_per_s']:,.0f} tokens/s in, "
            f"{level['required_decode_tokens_per_s']:,.0f} out); {level['availability']}"
        )
    if comparison.estimate == "serving":
        even = comparison.break_even_requests_per_day
        lines.append(
            f"Break-even: {even:,.0f} requests/day" if even is not None else "Break-even: none"
        )
    lines.append("Options:")
    for o in comparison.options:
        cost = f"${o.cost_usd:,.2f}" if o.cost_usd is not None else "unpriced"
        verdict = "meets" if o.meets else f"misses ({o.limiter}: {o.reason})"
        p95 = o.figures.get("ttft_ms_p95"), o.figures.get("itl_ms_p95")
        latency = (
            f", p95 first token {p95[0]:,.0f} ms, between tokens {p95[1]:,.1f} ms"
            if None not in p95
            else ""
        )
        devices = f", {o.devices} device(s)" if o.self_hosted and o.devices else ""
        lines.append(f"  {o.plan_label} [{o.path}]: {cost}{devices}{latency}, {verdict}")
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
