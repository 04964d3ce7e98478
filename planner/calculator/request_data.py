"""The calculator's inputs from a request: a query string, a form (with an uploaded config.json),
or a JSON object; what cannot be read comes back as an error naming its field.

GET carries a config.json in `config` up to CONFIG_QUERY_MAX_CHARS (a link's compact form is a few
hundred); POST takes it as text, as an uploaded file (`config` or the page's `config_file`) or, in
a JSON body, as text or as the object itself, up to CONFIG_MAX_BYTES.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, QueryDict

from planner.calculator.config_input import (
    CONFIG_FIELD,
    CONFIG_MAX_BYTES,
    CONFIG_QUERY_MAX_CHARS,
    ConfigError,
    JsonObject,
    body_config,
    too_big,
    upload_text,
)

CONFIG_FILE_FIELD = "config_file"  # the page's upload, beside its paste box
# A JSON body holds the config and a few dozen short figures.
BODY_MAX_BYTES = CONFIG_MAX_BYTES + 64 * 1024


@dataclass
class RequestInputs:
    data: QueryDict
    errors: dict[str, str] = field(default_factory=dict)

    def refuse(self, name: str, message: str) -> None:
        """Record why `name` cannot be read, and drop its value so nothing else reads it."""
        self.errors.setdefault(name, message)
        if name in self.data:
            self.data[name] = ""


def request_inputs(request: HttpRequest) -> RequestInputs:
    """The request's inputs as form data, with what could not be read."""
    if request.method != "POST":
        inputs = RequestInputs(request.GET.copy())
        config = inputs.data.get(CONFIG_FIELD, "")
        if len(config) > CONFIG_QUERY_MAX_CHARS:
            inputs.refuse(
                CONFIG_FIELD,
                f"is too long for a link ({len(config):,} characters; at most "
                f"{CONFIG_QUERY_MAX_CHARS:,}): send it in a POST body, or paste it on the page.",
            )
        return inputs
    if request.content_type == "application/json":
        return _json_inputs(request)
    try:
        inputs = RequestInputs(request.POST.copy())
        files = request.FILES
    except RequestDataTooBig:
        # Django refuses a form body over DATA_UPLOAD_MAX_MEMORY_SIZE before any field is read;
        # the only field that can be that long is a pasted config.json.
        inputs = RequestInputs(QueryDict(mutable=True))
        inputs.refuse(CONFIG_FIELD, too_big())
        return inputs
    except TooManyFieldsSent:
        inputs = RequestInputs(QueryDict(mutable=True))
        inputs.refuse("body", "has more fields than the calculator has.")
        return inputs
    for name in (CONFIG_FILE_FIELD, CONFIG_FIELD):
        upload = files.get(name)
        if upload is None or not upload.name:
            continue
        try:
            inputs.data[CONFIG_FIELD] = upload_text(upload)
        except ConfigError as err:
            inputs.refuse(CONFIG_FIELD, str(err))
        break
    return inputs


def _json_inputs(request: HttpRequest) -> RequestInputs:
    inputs = RequestInputs(QueryDict(mutable=True))
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > BODY_MAX_BYTES:
        inputs.refuse("body", f"is larger than {BODY_MAX_BYTES // 1024} KiB.")
        return inputs
    try:
        body = json.loads(request.read(BODY_MAX_BYTES + 1), object_pairs_hook=JsonObject)
    except (ValueError, RecursionError):
        inputs.refuse("body", "is not JSON: send an object of the form's fields.")
        return inputs
    if not isinstance(body, JsonObject):
        inputs.refuse("body", "must be a JSON object of the form's fields.")
        return inputs
    for name in body.duplicates:
        # As a pasted config's duplicate is refused: which value is meant is ambiguous.
        inputs.refuse(
            str(name)[:100], "appears twice in the body; which one is meant is ambiguous."
        )
    for name, value in body.items():
        key = str(name)[:100]
        if key in inputs.errors:
            continue
        if key == CONFIG_FIELD:
            try:
                inputs.data[key] = body_config(value)
            except ConfigError as err:
                inputs.refuse(key, str(err))
        elif value is None:
            continue
        elif isinstance(value, bool):
            inputs.data[key] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            inputs.data[key] = str(value)
        else:
            inputs.refuse(key, "must be a number or a text, not a list or an object.")
    return inputs
