"""The one way a recommendation is written ("4 × NVIDIA T4"): the comparison, the capstone
worksheet, the submission's automatic check and the grading page all call `recommendation_label`,
so the device count (replicas included) is never dropped on the way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

# The paths in a learner's words (the comparison's badges, the check's findings).
PATH_WORDS: Final[dict[str, str]] = {
    "cpu": "CPU",
    "gpu": "GPU",
    "tpu": "TPU",
    "managed_api": "Managed API",
}


class _Option(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def count(self) -> int: ...


def path_words(path: str) -> str:
    """ "managed_api" → "Managed API"; an unknown path keeps its own name, spaced."""
    return PATH_WORDS.get(path, path.replace("_", " "))


def option_devices(option: _Option | Mapping[str, Any]) -> int:
    """Every device the option runs on: its `devices` (devices per replica × replicas) where the
    comparison gives it, else the devices of one replica (`count`), else 1."""
    get = option.get if isinstance(option, Mapping) else lambda key: getattr(option, key, None)
    for key in ("devices", "count"):
        value = get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    return 1


def devices_label(name: str, devices: int) -> str:
    return name if devices <= 1 else f"{devices:,} × {name}"


def recommendation_label(option: _Option | Mapping[str, Any] | None) -> str:
    """ "4 × NVIDIA T4" for a PathOption or its JSON (a stored comparison's `recommended`);
    "" for none."""
    if option is None:
        return ""
    name = option.get("name") if isinstance(option, Mapping) else option.name
    if not name:
        return ""
    return devices_label(str(name), option_devices(option))
