"""The command line's flags for a calculator form, shared by `capacity serving|training|batch` and
`capacity paths`: one flag per field, on/off switches, `--config PATH`, and errors naming the flag."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.forms import Field

from planner.calculator.config_input import CONFIG_FIELD, CONFIG_MAX_BYTES, ConfigError, file_text
from planner.calculator.fields import SwitchField
from planner.calculator.forms import FORMS


def option_name(field: str) -> str:
    return "--" + field.replace("_", "-")


def is_switch(field: Field) -> bool:
    """An on/off input: a SwitchField, or a choice of true and false (checkpointing)."""
    if isinstance(field, SwitchField):
        return True
    choices = getattr(field, "choices", None)
    return choices is not None and {str(k) for k, _ in choices} == {"", "true", "false"}


def add_switch(parser: CommandParser, name: str, help_text: str) -> None:
    """`--name` (or `--name=true|false`, as a shared link writes it) and `--no-name`; any other
    value reaches the form, which refuses it naming the option."""
    option = option_name(name)
    parser.add_argument(
        option, dest=name, nargs="?", const="true", metavar="true|false", help=help_text
    )
    parser.add_argument(
        "--no-" + option.removeprefix("--"),
        dest=name,
        action="store_const",
        const="false",
        help=f"not: {help_text}",
    )


def add_form_flags(parser: CommandParser, kind: str) -> None:
    """A flag for each of the estimate's form fields; `--config` takes a file's path."""
    for name, field in FORMS[kind].base_fields.items():
        help_text = str(field.label or name)
        if field.help_text:
            help_text += f". {field.help_text}"
        if is_switch(field):
            add_switch(parser, name, help_text)
        elif name == CONFIG_FIELD:
            parser.add_argument(
                "--config",
                dest=name,
                metavar="PATH",
                help=f"a Hugging Face config.json (at most {CONFIG_MAX_BYTES // 1024} KiB):"
                " it replaces --model; the other options still override it",
            )
        else:
            parser.add_argument(option_name(name), dest=name, metavar="VALUE", help=help_text)


def form_data(kind: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options given for the estimate's form, the config file read (exit 2 naming --config)."""
    data = {
        name: options[name] for name in FORMS[kind].base_fields if options.get(name) is not None
    }
    if data.get(CONFIG_FIELD) is not None:
        try:
            data[CONFIG_FIELD] = file_text(data[CONFIG_FIELD])
        except ConfigError as err:
            raise CommandError(f"--config: {err}", returncode=2) from None
    return data


def error_line(field_errors: dict[str, list[str]]) -> str:
    """A form's errors as one line, each naming its flag."""
    parts = []
    for field, messages in field_errors.items():
        where = option_name(field) if field != "__all__" else "input"
        parts.append(f"{where}: {' '.join(messages)}")
    return "; ".join(parts)
