"""Any model from its Hugging Face config.json: the architecture, parameter counts and weight bytes
an estimate needs, read as hostile input (planner.capacity.hf.json_text bounds and types every key).

The parameters are counted tensor by tensor from the architecture (planner.capacity.hf.tensors),
so total and active parameters, and the checkpoint's bytes at its stored precision, follow from
the same list. A `model.safetensors.index.json` gives the exact bytes instead (`metadata.total_size`).
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from planner.capacity.catalogue_rows import ModelSpec
from planner.capacity.hf.json_text import (
    FIELD,
    INDEX_AGREEMENT,
    INDEX_FIELD,
    MAX_CONFIG_BYTES,
    MAX_DEPTH,
    MAX_DIGITS,
    MAX_INDEX_BYTES,
    MAX_PARAMS,
    ConfigReader,
    kind_of,
    load_json,
)
from planner.capacity.hf.parts import (
    dtype_part,
    mla_part,
    moe_part,
    quantization_part,
    sliding_part,
    vision_part,
)
from planner.capacity.hf.tensors import Architecture, count_tensors
from planner.capacity.units import CapacityInputError

__all__ = [
    "FIELD",
    "INDEX_FIELD",
    "MAX_CONFIG_BYTES",
    "MAX_DEPTH",
    "MAX_DIGITS",
    "MAX_INDEX_BYTES",
    "load_json",
    "model_from_config",
]


# Hugging Face transformers' defaults for keys an official config.json leaves out
# (transformers/models/<type>/configuration_<type>.py): Gemma 3's 27B config omits its vocabulary,
# positions and layer pattern; Gemma ties its embeddings by default.
MODEL_TYPE_DEFAULTS: Final[dict[str, dict[str, Any]]] = {
    "gemma3_text": {
        "vocab_size": 262208,
        "max_position_embeddings": 131072,
        "sliding_window_pattern": 6,
        "tie_word_embeddings": True,
        "head_dim": 256,
    },
    "gemma2": {"tie_word_embeddings": True},
    "gemma": {"tie_word_embeddings": True},
}
# Qwen2's attention: q, k and v with bias, o without (Qwen2Attention), in every Qwen2 variant.
QKV_BIAS_TYPES: Final = frozenset({"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl"})
ENCODER_TYPES: Final = frozenset({"bert", "roberta", "xlm-roberta", "distilbert", "electra"})
# Layer norms with q_norm and k_norm over one head (Qwen3, Gemma 3, OLMo 2 apply RMSNorm to Q and K).
QK_NORM_TYPES: Final = frozenset({"qwen3", "qwen3_moe", "gemma3_text", "olmo2"})
# Gemma 2 and 3 normalise before and after both the attention and the MLP: four norms a layer.
FOUR_NORM_TYPES: Final = frozenset({"gemma2", "gemma3_text"})


def model_from_config(
    text: str | bytes, *, index_json: str | bytes | None = None, name: str | None = None
) -> ModelSpec:
    """The ModelSpec of a Hugging Face config.json (and optionally its safetensors index).

    Raises CapacityInputError("config", "<json key>: why") for anything unreadable or out of range,
    and CapacityInputError("index_json", ...) for a bad index.
    """
    data = load_json(text, FIELD, MAX_CONFIG_BYTES)
    reader = _text_reader(data)
    arch = _architecture(reader, data)
    counted = count_tensors(arch)
    if not 0 < counted.params <= MAX_PARAMS:
        raise CapacityInputError(
            FIELD, f"num_hidden_layers: the architecture counts {counted.params:,} parameters"
        )
    weight_bytes = math.ceil(counted.weight_bytes)
    if index_json is not None:
        weight_bytes = _index_total(index_json, weight_bytes)
    label = name or _label(data, reader)
    notes = counted.notes
    if data.get("vision_config") is not None and arch.vision is None:
        notes += " Its vision tower is not counted (only SigLIP-style towers are read)."
    moe = arch.moe
    return ModelSpec(
        id=_slug(label),
        name=label,
        params_b=counted.params / 10**9,
        layers=arch.layers,
        hidden_size=arch.hidden,
        attention_heads=arch.heads,
        kv_heads=arch.kv_heads,
        head_dim=arch.head_dim,
        intermediate_size=arch.intermediate or 0,
        max_context_tokens=arch.max_positions,
        release_precision=(arch.quantization or {}).get("method") or arch.precision,
        source="config.json" + (" and model.safetensors.index.json" if index_json else ""),
        notes=notes,
        vocab_size=arch.vocab,
        tie_word_embeddings=arch.tied,
        family="encoder" if arch.encoder else ("moe" if moe is not None else "dense"),
        active_params_b=counted.active / 10**9 if moe is not None else None,
        sliding_window=arch.sliding_window,
        sliding_window_layers=arch.sliding_layers,
        kv_lora_rank=arch.mla.kv_lora_rank if arch.mla else None,
        qk_rope_head_dim=arch.mla.rope_dim if arch.mla else None,
        weight_bytes=weight_bytes,
        experts=moe.experts if moe else None,
        experts_per_token=moe.per_token if moe else None,
        routed_params_b=counted.routed / 10**9 if moe else None,
    )


def _text_reader(data: dict[str, Any]) -> ConfigReader:
    """The language model's keys: a multimodal config nests them under text_config."""
    nested = data.get("text_config")
    if nested is not None and not isinstance(nested, dict):
        raise CapacityInputError(FIELD, f"text_config: must be an object, not {kind_of(nested)}")
    if nested:
        merged = {k: v for k, v in data.items() if k not in ("text_config", "vision_config")}
        merged.update({k: v for k, v in nested.items() if v is not None})
        model_type = _model_type(nested, "text_config.")
        defaults = MODEL_TYPE_DEFAULTS.get(model_type, {})
        return ConfigReader(merged, "text_config.", defaults, frozenset(nested))
    return ConfigReader(data, "", MODEL_TYPE_DEFAULTS.get(_model_type(data, ""), {}))


def _model_type(data: dict[str, Any], prefix: str) -> str:
    value = data.get("model_type", "")
    if not isinstance(value, str) or len(value) > 100:
        raise CapacityInputError(FIELD, f"{prefix}model_type: must be a short string")
    return value


def _architecture(r: ConfigReader, data: dict[str, Any]) -> Architecture:
    model_type = r.text("model_type")
    layers = r.whole("num_hidden_layers", 1, 1024)
    hidden = r.whole("hidden_size", 1, 131072)
    heads = r.whole("num_attention_heads", 1, 1024)
    kv_heads = r.whole("num_key_value_heads", 1, heads, default=heads)
    if heads % kv_heads:
        raise r.error("num_key_value_heads", f"{kv_heads} does not divide {heads} attention heads")
    mla = mla_part(r, heads)
    if mla is not None:
        head_dim = mla.nope_dim + mla.rope_dim
    elif r.has("head_dim"):
        head_dim = r.whole("head_dim", 1, 4096)
    else:
        if hidden % heads:
            raise r.error(
                "head_dim", f"missing, and hidden_size {hidden} does not split over {heads} heads"
            )
        head_dim = hidden // heads
    encoder = model_type in ENCODER_TYPES
    moe = moe_part(r, layers)
    intermediate = r.opt_whole("intermediate_size", 1, 1 << 20)
    if intermediate is None and (moe is None or moe.dense_layers):
        raise r.error("intermediate_size", "missing: config.json must give the MLP width")
    sliding_window, sliding_layers = sliding_part(r, model_type, layers)
    return Architecture(
        model_type=model_type,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate=intermediate,
        vocab=r.whole("vocab_size", 1, 1 << 22),
        max_positions=r.whole("max_position_embeddings", 1, 1 << 24),
        tied=r.flag("tie_word_embeddings", False),
        encoder=encoder,
        attention_bias=r.flag("attention_bias", encoder or model_type in QKV_BIAS_TYPES),
        o_bias=model_type not in QKV_BIAS_TYPES,
        qk_norm=model_type in QK_NORM_TYPES,
        four_norms=model_type in FOUR_NORM_TYPES,
        sinks=model_type == "gpt_oss",
        mla=mla,
        moe=moe,
        sliding_window=sliding_window,
        sliding_layers=sliding_layers,
        type_vocab=r.whole("type_vocab_size", 0, 1024, default=0) if encoder else 0,
        precision=dtype_part(r),
        quantization=quantization_part(r),
        vision=vision_part(data),
    )


def _index_total(index_json: str | bytes, computed: int) -> int:
    data = load_json(index_json, INDEX_FIELD, MAX_INDEX_BYTES)
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        raise CapacityInputError(INDEX_FIELD, "metadata: missing; the index must give total_size")
    total = meta.get("total_size")
    if isinstance(total, float) and total.is_integer():
        total = int(total)
    if isinstance(total, bool) or not isinstance(total, int) or not 0 < total <= MAX_PARAMS * 4:
        raise CapacityInputError(INDEX_FIELD, "metadata.total_size: must be a positive byte count")
    low, high = INDEX_AGREEMENT
    if not low * computed <= total <= high * computed:
        raise CapacityInputError(
            INDEX_FIELD,
            f"metadata.total_size: {total:,} bytes is not this config's model "
            f"({computed:,} bytes from its architecture)",
        )
    return total


def _label(data: dict[str, Any], r: ConfigReader) -> str:
    archs = data.get("architectures")
    if isinstance(archs, list) and archs and isinstance(archs[0], str) and len(archs[0]) <= 100:
        return f"{archs[0]} (config.json)"
    return f"{r.text('model_type') or 'model'} (config.json)"


def _slug(label: str) -> str:
    """config:qwen3forcausallm for "Qwen3ForCausalLM (config.json)"."""
    stem = label.removesuffix(" (config.json)").lower()
    return "config:" + (re.sub(r"[^a-z0-9.]+", "-", stem).strip("-")[:80] or "model")
