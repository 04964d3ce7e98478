"""A model's Hugging Face config.json as a calculator input: pasted, uploaded, in a link or a file.

A link carries the config compactly (deflated, base64url, after "z."), so a shared calculation with
its config stays far below a web server's request-line limit (gunicorn's 4,094 bytes); the page and
the API's POST take the text as it is.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile

from planner.capacity import CapacityInputError, ModelSpec
from planner.capacity.hf.config import model_from_config

# Far above any language model's config.json (Qwen3-32B's is 0.7 kB, DeepSeek-V3's 1.7 kB, a
# multimodal one's a few kB) and far below what would slow a request to read.
CONFIG_MAX_BYTES = 256 * 1024
# A config in a GET query (the API, a shared link): what fits a request line with the other inputs.
CONFIG_QUERY_MAX_CHARS = 3500
COMPACT_PREFIX = "z."
CONFIG_FIELD = "config"


class ConfigError(ValueError):
    """A config the calculator cannot read; the message says why in one line."""


def compact(text: str) -> str:
    """The config as a link carries it: minified JSON, deflated, base64url, after "z."."""
    minified = json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    packed = base64.urlsafe_b64encode(zlib.compress(minified.encode(), 9)).decode()
    return COMPACT_PREFIX + packed.rstrip("=")


def expand(value: str) -> str:
    """The config's JSON text from what a form, a link or a file gave (compact or as it is)."""
    text = value.strip()
    if not text.startswith(COMPACT_PREFIX):
        return text
    packed = text.removeprefix(COMPACT_PREFIX)
    try:
        raw = base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4))
        inflater = zlib.decompressobj()
        # A small link must not inflate into gigabytes: stop one byte past the limit.
        data = inflater.decompress(raw, CONFIG_MAX_BYTES + 1)
    except (binascii.Error, ValueError, zlib.error):
        raise ConfigError("the link's config is damaged; paste the config.json again.") from None
    if len(data) > CONFIG_MAX_BYTES or inflater.unconsumed_tail:
        raise ConfigError(too_big())
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise ConfigError("the link's config is damaged; paste the config.json again.") from None


def too_big() -> str:
    return f"is larger than {CONFIG_MAX_BYTES // 1024} KiB; a config.json is a few kB."


@lru_cache(maxsize=64)
def config_model(text: str) -> ModelSpec:
    """The model a config describes (kept: the form checks it, then the calculation reads it)."""
    return model_from_config(expand(text))


def config_spec_or_none(value: object) -> ModelSpec | None:
    """The config's model when `value` is a readable config, else None (for placeholders)."""
    if not isinstance(value, str) or not value.strip() or len(value) > CONFIG_MAX_BYTES:
        return None
    try:
        return config_model(value.strip())
    except (CapacityInputError, ConfigError):
        return None


def upload_text(upload: UploadedFile) -> str:
    """An uploaded config.json's text, read no further than the size limit."""
    if upload.size is not None and upload.size > CONFIG_MAX_BYTES:
        raise ConfigError(too_big())
    data = upload.read(CONFIG_MAX_BYTES + 1)
    if len(data) > CONFIG_MAX_BYTES:
        raise ConfigError(too_big())
    return utf8(data)


def file_text(path: str) -> str:
    """A config.json file's text for the CLI: missing, unreadable, oversized or not text refused."""
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(CONFIG_MAX_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"no such file {path!r}.") from None
    except IsADirectoryError:
        raise ConfigError(f"{path!r} is a directory; give the config.json file.") from None
    except OSError as err:
        raise ConfigError(f"cannot read {path!r}: {err.strerror or err}.") from None
    if len(data) > CONFIG_MAX_BYTES:
        raise ConfigError(too_big())
    return utf8(data)


def utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError("is not UTF-8 text; give the config.json file itself.") from None


class JsonObject(dict[str, Any]):
    """A JSON object as json.loads' object_pairs_hook reads it, keeping every pair in order, so a
    key given twice is seen (a plain dict keeps the last value silently)."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs

    @property
    def duplicates(self) -> list[str]:
        return [key for key, count in Counter(k for k, _ in self.pairs).items() if count > 1]


# A config.json nests three levels; a body's config object deeper than this is not one.
_MAX_OBJECT_DEPTH = 32


def _json_text(value: Any, depth: int = 0) -> str:
    """JSON text of a parsed value with every pair kept, duplicates included, for the reader."""
    if depth > _MAX_OBJECT_DEPTH:
        raise ConfigError(f"nests deeper than {_MAX_OBJECT_DEPTH} levels; a config.json nests 3.")
    if isinstance(value, JsonObject):
        items = (f"{json.dumps(k)}:{_json_text(v, depth + 1)}" for k, v in value.pairs)
        return "{" + ",".join(items) + "}"
    if isinstance(value, dict):
        return _json_text(JsonObject(list(value.items())), depth)
    if isinstance(value, list):
        return "[" + ",".join(_json_text(v, depth + 1) for v in value) + "]"
    return json.dumps(value)


def body_config(value: Any) -> str:
    """A JSON body's `config`: the config's text, or the config itself as an object (written back
    with every pair, so the reader refuses a duplicate key as it does in pasted text)."""
    if isinstance(value, dict):
        return _json_text(value)
    if isinstance(value, str):
        return value
    raise ConfigError("give the config.json's text, or its object.")


class ConfigField(forms.CharField):
    """A config.json's text: bounded, read by the engine's reader, kept compact for links."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}))
        super().__init__(required=False, strip=True, **kwargs)

    def to_python(self, value: Any) -> str:
        if isinstance(value, str) and len(value) > CONFIG_MAX_BYTES:
            raise ValidationError(too_big(), code="too_long")
        text = super().to_python(value) or ""
        if not text:
            return ""
        try:
            config_model(text)
            return text if text.startswith(COMPACT_PREFIX) else compact(text)
        except ConfigError as err:
            raise ValidationError(str(err), code="invalid") from None
        except CapacityInputError as err:
            raise ValidationError(err.message, code="invalid") from None
        except (ValueError, RecursionError):
            # The reader accepted what json cannot re-read: keep the text as it is.
            return text
