"""The accelerator and model catalogues, read from the versioned TOML files in `data/`.

Hourly prices are indicative on-demand list prices. A deployment overrides them without touching
the data files: set `PLANNER_PRICES_FILE` to a TOML file with a `[prices]` table mapping accelerator
ids to USD per hour (e.g. `h100-sxm = 2.49`). Overrides for unknown ids are an error, so a typo
never passes silently.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from planner.capacity.catalogue_rows import Accelerator, MigProfile, ModelSpec
from planner.capacity.units import CapacityInputError

__all__ = [
    "Accelerator",
    "Catalogue",
    "MigProfile",
    "ModelSpec",
    "default_catalogue",
    "load_catalogue",
    "mig_slices",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
PRICES_FILE_ENV = "PLANNER_PRICES_FILE"


@dataclass(frozen=True, slots=True)
class Catalogue:
    version: str
    accelerators: tuple[Accelerator, ...]
    models: tuple[ModelSpec, ...]

    def accelerator(self, name: str, field: str = "gpu") -> Accelerator:
        """An accelerator by id or MIG slice id (`a100-80gb:3g.40gb`), case-insensitive."""
        key = name.strip().lower()
        for acc in self.accelerators:
            if acc.id == key:
                return acc
            for slice_ in mig_slices(acc):
                if slice_.id == key:
                    return slice_
        known = ", ".join(a.id for a in self.accelerators)
        raise CapacityInputError(field, f"unknown accelerator {name!r}; known: {known}")

    def model(self, name: str, field: str = "model") -> ModelSpec:
        key = name.strip().lower()
        for spec in self.models:
            if spec.id == key:
                return spec
        known = ", ".join(m.id for m in self.models)
        raise CapacityInputError(field, f"unknown model {name!r}; known: {known}")

    def managed_api(self) -> Accelerator | None:
        """The first managed-API row (the smallest dense class), if the catalogue has one: the
        price of a job that names no model. A model's own row: planner.capacity.api_prices."""
        return next((a for a in self.accelerators if a.kind == "managed_api"), None)

    def memory_devices(self) -> list[Accelerator]:
        """Accelerators and MIG slices that have memory to plan into (not the managed API)."""
        out: list[Accelerator] = []
        for acc in self.accelerators:
            if acc.is_memory_device:
                out.append(acc)
                out.extend(mig_slices(acc))
        return out


def mig_slices(acc: Accelerator) -> list[Accelerator]:
    """Each MIG profile as a device of its own (NVIDIA MIG user guide: isolated memory and SMs).
    Its memory is what `nvidia-smi mig -lgip` lists for the profile (an H200 1g.35gb lists 32.25
    GiB, not the 34.74 a pro-rata share of the parent's 139.97 would give); its compute is its SMs
    of the GPU's where the listing gives them (a B200's 1g.23gb has 18 of 148, not a seventh),
    else its compute slices of 7. A profile with no published listing prorates, and says so."""
    out = []
    for profile in acc.mig_profiles:
        share, compute = _compute_share(profile, acc)
        memory_share = _memory_slices(profile, acc) / 8
        usable, usable_source = _slice_memory(profile, acc)
        out.append(
            replace(
                acc,
                id=f"{acc.id}:{profile.name}",
                name=f"{acc.name} MIG {profile.name}",
                memory_gb=profile.memory_gb,
                memory_bandwidth_gb_s=(
                    round(acc.memory_bandwidth_gb_s * memory_share, 1)
                    if acc.memory_bandwidth_gb_s
                    else None
                ),
                usable_memory_gib=usable,
                usable_memory_source=usable_source,
                dense_fp8_tflops=(
                    round(acc.dense_fp8_tflops * share, 1) if acc.dense_fp8_tflops else None
                ),
                dense_int8_tops=(
                    round(acc.dense_int8_tops * share, 1) if acc.dense_int8_tops else None
                ),
                dense_bf16_tflops=(
                    round(acc.dense_bf16_tflops * share, 1) if acc.dense_bf16_tflops else None
                ),
                price_per_hour_usd=(
                    round(acc.price_per_hour_usd * share, 4) if acc.price_per_hour_usd else None
                ),
                mig_profiles=(),
                mig_of=acc.id,
                notes=(
                    f"A MIG slice: {compute} of the compute (TFLOPS and price "
                    f"prorated) and {_memory_slices(profile, acc)}/8 of the memory slices "
                    "(bandwidth prorated): an approximation."
                ),
            )
        )
    return out


def _slice_memory(profile: MigProfile, acc: Accelerator) -> tuple[float | None, str]:
    """The slice's runtime total (GiB) and its source: the listed figure, else a pro-rata share."""
    if profile.memory_gib is not None:
        return profile.memory_gib, (
            f"nvidia-smi mig -lgip lists {profile.memory_gib} GiB for {profile.name} "
            f"({acc.mig_listing_source or acc.source})"
        )
    if acc.usable_memory_gib and acc.memory_gb:
        usable = round(acc.usable_memory_gib * profile.memory_gb / acc.memory_gb, 2)
        return usable, (
            f"no published listing for {profile.name}: the parent's "
            f"{acc.usable_memory_gib} GiB prorated by memory"
        )
    return None, ""


def _compute_share(profile: MigProfile, acc: Accelerator) -> tuple[float, str]:
    if profile.sms and acc.sms:
        return profile.sms / acc.sms, f"{profile.sms} of {acc.sms} SMs"
    return profile.compute_slices / 7, f"{profile.compute_slices}/7"


def _memory_slices(profile: MigProfile, acc: Accelerator) -> int:
    """Memory slices of 8 a profile holds: 1g.10gb on an 80 GB part is 1, 3g.40gb is 4."""
    if not acc.memory_gb:
        return profile.compute_slices
    eighths = profile.memory_gb / acc.memory_gb * 8
    return max(1, min(8, 2 ** round(math.log2(eighths)) if eighths >= 1 else 1))


def _opt_float(row: dict[str, Any], key: str) -> float | None:
    return None if row.get(key) is None else float(row[key])


def _opt_int(row: dict[str, Any], key: str) -> int | None:
    return None if row.get(key) is None else int(row[key])


def _load_accelerators(data: dict[str, Any], prices: dict[str, float]) -> tuple[Accelerator, ...]:
    rows = []
    for row in data["accelerator"]:
        profiles = tuple(
            MigProfile(
                name=str(p["name"]),
                memory_gb=float(p["memory_gb"]),
                compute_slices=int(p["compute_slices"]),
                sms=_opt_int(p, "sms"),
                memory_gib=_opt_float(p, "memory_gib"),
            )
            for p in row.get("mig_profiles", [])
        )
        acc = Accelerator(
            id=str(row["id"]),
            name=str(row["name"]),
            kind=str(row["kind"]),
            memory_gb=_opt_float(row, "memory_gb"),
            memory_bandwidth_gb_s=_opt_float(row, "memory_bandwidth_gb_s"),
            dense_bf16_tflops=_opt_float(row, "dense_bf16_tflops"),
            price_per_hour_usd=_opt_float(row, "price_per_hour_usd"),
            price_per_million_input_tokens_usd=_opt_float(
                row, "price_per_million_input_tokens_usd"
            ),
            price_per_million_output_tokens_usd=_opt_float(
                row, "price_per_million_output_tokens_usd"
            ),
            source=str(row["source"]),
            notes=str(row.get("notes", "")),
            mig_profiles=profiles,
            usable_memory_gib=_opt_float(row, "usable_memory_gib"),
            usable_memory_source=str(row.get("usable_memory_source", "")),
            dense_fp8_tflops=_opt_float(row, "dense_fp8_tflops"),
            dense_int8_tops=_opt_float(row, "dense_int8_tops"),
            precisions=tuple(str(p) for p in row.get("precisions", ())),
            price_per_million_embedding_tokens_usd=_opt_float(
                row, "price_per_million_embedding_tokens_usd"
            ),
            interconnect=str(row.get("interconnect", "")),
            interconnect_gb_s=_opt_float(row, "interconnect_gb_s"),
            sms=_opt_int(row, "sms"),
            mig_listing_source=str(row.get("mig_listing_source", "")),
            speed_class=str(row.get("speed_class", "")),
            api_models=tuple(str(m) for m in row.get("api_models", ())),
            api_family=str(row.get("api_family", "")),
            api_max_params_b=_opt_float(row, "api_max_params_b"),
            api_ttft_ms=_opt_float(row, "api_ttft_ms"),
            api_decode_tokens_per_s=_opt_float(row, "api_decode_tokens_per_s"),
            api_speed_source=str(row.get("api_speed_source", "")),
        )
        if acc.id in prices:
            acc = replace(acc, price_per_hour_usd=prices[acc.id])
        rows.append(acc)
    unknown = set(prices) - {a.id for a in rows}
    if unknown:
        raise ValueError(f"{PRICES_FILE_ENV}: unknown accelerator ids {sorted(unknown)}")
    return tuple(rows)


def _load_models(data: dict[str, Any]) -> tuple[ModelSpec, ...]:
    return tuple(
        ModelSpec(
            id=str(row["id"]),
            name=str(row["name"]),
            params_b=float(row["params_b"]),
            layers=int(row["layers"]),
            hidden_size=int(row["hidden_size"]),
            attention_heads=int(row["attention_heads"]),
            kv_heads=int(row["kv_heads"]),
            head_dim=int(row["head_dim"]),
            intermediate_size=int(row["intermediate_size"]),
            max_context_tokens=int(row["max_context_tokens"]),
            release_precision=str(row["release_precision"]),
            source=str(row["source"]),
            notes=str(row.get("notes", "")),
            vocab_size=int(row["vocab_size"]) if "vocab_size" in row else None,
            tie_word_embeddings=bool(row.get("tie_word_embeddings", False)),
            family=str(row.get("family", "dense")),
            active_params_b=_opt_float(row, "active_params_b"),
            sliding_window=_opt_int(row, "sliding_window"),
            sliding_window_layers=_opt_int(row, "sliding_window_layers"),
            kv_lora_rank=_opt_int(row, "kv_lora_rank"),
            qk_rope_head_dim=_opt_int(row, "qk_rope_head_dim"),
            weight_bytes=_opt_int(row, "weight_bytes"),
            experts=_opt_int(row, "experts"),
            experts_per_token=_opt_int(row, "experts_per_token"),
            routed_params_b=_opt_float(row, "routed_params_b"),
        )
        for row in data["model"]
    )


def read_price_overrides(path: str | os.PathLike[str] | None) -> dict[str, float]:
    if not path:
        return {}
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    return {str(k).lower(): float(v) for k, v in data.get("prices", {}).items()}


def load_catalogue(
    data_dir: Path = DATA_DIR, prices_file: str | os.PathLike[str] | None = None
) -> Catalogue:
    with open(data_dir / "accelerators.toml", "rb") as fh:
        acc_data = tomllib.load(fh)
    with open(data_dir / "models.toml", "rb") as fh:
        model_data = tomllib.load(fh)
    prices = read_price_overrides(prices_file)
    return Catalogue(
        version=f"accelerators {acc_data['version']}, models {model_data['version']}",
        accelerators=_load_accelerators(acc_data, prices),
        models=_load_models(model_data),
    )


@cache
def _default_catalogue(prices_file: str | None) -> Catalogue:
    return load_catalogue(prices_file=prices_file)


def default_catalogue() -> Catalogue:
    """The shipped catalogue with the deployment's price overrides (PLANNER_PRICES_FILE)."""
    return _default_catalogue(os.environ.get(PRICES_FILE_ENV) or None)
