"""Any model from its Hugging Face config.json: the architecture, parameter counts and weight bytes
an estimate needs, read as hostile input (bounded size and depth, typed keys, physical ranges).

The parameters are counted tensor by tensor from the architecture (planner.capacity.hf_tensors),
so total and active parameters, and the checkpoint's bytes at its stored precision, follow from
the same list. A `model.safetensors.index.json` gives the exact bytes instead (`metadata.total_size`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from planner.capacity.catalogue_rows import ModelSpec
from planner.capacity.hf_tensors import Architecture, Mla, Moe, count_tensors
from planner.capacity.units import CapacityInputError

FIELD: Final = "config"
INDEX_FIELD: Final = "index_json"
MAX_CONFIG_BYTES: Final = (
    1 << 20
)  # 1 MiB: DeepSeek-V3's config.json is 1.7 kB, with layer lists < 10 kB
MAX_INDEX_BYTES: Final = 16 << 20  # DeepSeek-V3's index (91,000+ tensors) is about 9 MB
MAX_DEPTH: Final = 16  # config.json nests three levels (text_config.rope_scaling)
MAX_DIGITS: Final = 20  # no count in a config needs more (10^20 bytes is 100 EB)
MAX_PARAMS: Final = 10**13  # 10 T parameters: 15x the largest open checkpoint (DeepSeek-V3, 671 B)
# An index whose total is outside these bounds of the architecture's count is another model's.
INDEX_AGREEMENT: Final = (0.5, 2.0)

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
DTYPES: Final[dict[str, str]] = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float32": "fp32",
    "float": "fp32",
}


class _Invalid:
    """A JSON value the reader refuses (NaN, Infinity, a number too long): the walk after parsing
    reports it with its key."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def _constant(name: str) -> _Invalid:
    return _Invalid(f"{name} is not a number (JSON has no NaN or Infinity)")


def _int(text: str) -> int | _Invalid:
    if len(text.lstrip("-")) > MAX_DIGITS:
        return _Invalid(f"a {len(text)}-digit number is out of any physical range")
    return int(text)


def _float(text: str) -> float | _Invalid:
    value = float(text)
    if not math.isfinite(value):
        return _Invalid(f"{text} overflows a number")
    return value


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            out[key] = _Invalid(f"appears twice; which one is meant is ambiguous ({key!r})")
        else:
            out[key] = value
    return out


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def load_json(text: str | bytes, field: str, limit: int) -> dict[str, Any]:
    """A JSON object from untrusted text: size, UTF-8, nesting depth, NaN, huge numbers and
    duplicate keys checked before any value is used."""
    if not isinstance(text, str | bytes | bytearray):
        raise CapacityInputError(field, "must be the text of a JSON file")
    raw = text.encode("utf-8", "replace") if isinstance(text, str) else bytes(text)
    if len(raw) > limit:
        raise CapacityInputError(field, f"is {len(raw):,} bytes; at most {limit:,} are read")
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CapacityInputError(field, "is not UTF-8 text") from None
    depth = 0
    for bracket in _BRACKET.findall(_STRING.sub("", source)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_DEPTH:
            raise CapacityInputError(field, f"nests deeper than {MAX_DEPTH} levels")
    try:
        data = json.loads(
            source,
            parse_constant=_constant,
            parse_int=_int,
            parse_float=_float,
            object_pairs_hook=_pairs,
        )
    except json.JSONDecodeError as exc:
        raise CapacityInputError(
            field, f"is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:  # pragma: no cover - the depth check stops it first
        raise CapacityInputError(field, f"nests deeper than {MAX_DEPTH} levels") from None
    if not isinstance(data, dict):
        raise CapacityInputError(field, "must be a JSON object ({...})")
    _refuse_invalid(data, field, "")
    return data


def _refuse_invalid(value: Any, field: str, path: str) -> None:
    if isinstance(value, _Invalid):
        raise CapacityInputError(field, f"{path or '(top level)'}: {value.why}")
    if isinstance(value, dict):
        for key, item in value.items():
            _refuse_invalid(item, field, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _refuse_invalid(item, field, f"{path}[{i}]")


_MISSING: Final = object()


class _Reader:
    """Typed, range-checked reads of one config, naming the JSON key in every error."""

    def __init__(
        self,
        data: dict[str, Any],
        prefix: str,
        defaults: dict[str, Any],
        nested: frozenset[str] | None = None,
    ) -> None:
        self.data = data
        self.prefix = prefix
        self.defaults = defaults
        self.nested = nested  # the keys that came from under `prefix` (None: all of them)

    def key(self, name: str) -> str:
        root = name.split(".")[0].split("[")[0]
        nested = self.nested is None or root in self.nested
        return f"{self.prefix}{name}" if nested else name

    def raw(self, name: str) -> Any:
        value = self.data.get(name)
        return self.defaults.get(name) if value is None else value

    def has(self, name: str) -> bool:
        return self.raw(name) is not None

    def error(self, name: str, why: str) -> CapacityInputError:
        return CapacityInputError(FIELD, f"{self.key(name)}: {why}")

    def whole(self, name: str, low: int, high: int, default: Any = _MISSING) -> int:
        value = self.raw(name)
        if value is None:
            if default is _MISSING:
                raise self.error(name, "missing: config.json must give it")
            return int(default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(name, f"must be a whole number, not {_kind(value)}")
        if not low <= value <= high:
            raise self.error(name, f"{value:,} is outside {low:,}-{high:,}")
        return value

    def opt_whole(self, name: str, low: int, high: int) -> int | None:
        return self.whole(name, low, high) if self.has(name) else None

    def flag(self, name: str, default: bool) -> bool:
        value = self.raw(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(name, f"must be true or false, not {_kind(value)}")
        return value

    def text(self, name: str, default: str = "") -> str:
        value = self.raw(name)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.error(name, f"must be a string, not {_kind(value)}")
        if len(value) > 200:
            raise self.error(name, "is longer than 200 characters")
        return value

    def items(self, name: str, max_items: int) -> list[Any]:
        value = self.raw(name)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(name, f"must be a list, not {_kind(value)}")
        if len(value) > max_items:
            raise self.error(name, f"has {len(value):,} items; at most {max_items:,}")
        return value


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, float):
        return f"{value!r}"
    return type(value).__name__


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


def _text_reader(data: dict[str, Any]) -> _Reader:
    """The language model's keys: a multimodal config nests them under text_config."""
    nested = data.get("text_config")
    if nested is not None and not isinstance(nested, dict):
        raise CapacityInputError(FIELD, f"text_config: must be an object, not {_kind(nested)}")
    if nested:
        merged = {k: v for k, v in data.items() if k not in ("text_config", "vision_config")}
        merged.update({k: v for k, v in nested.items() if v is not None})
        model_type = _model_type(nested, "text_config.")
        defaults = MODEL_TYPE_DEFAULTS.get(model_type, {})
        return _Reader(merged, "text_config.", defaults, frozenset(nested))
    return _Reader(data, "", MODEL_TYPE_DEFAULTS.get(_model_type(data, ""), {}))


def _model_type(data: dict[str, Any], prefix: str) -> str:
    value = data.get("model_type", "")
    if not isinstance(value, str) or len(value) > 100:
        raise CapacityInputError(FIELD, f"{prefix}model_type: must be a short string")
    return value


def _architecture(r: _Reader, data: dict[str, Any]) -> Architecture:
    model_type = r.text("model_type")
    layers = r.whole("num_hidden_layers", 1, 1024)
    hidden = r.whole("hidden_size", 1, 131072)
    heads = r.whole("num_attention_heads", 1, 1024)
    kv_heads = r.whole("num_key_value_heads", 1, heads, default=heads)
    if heads % kv_heads:
        raise r.error("num_key_value_heads", f"{kv_heads} does not divide {heads} attention heads")
    mla = _mla(r, heads)
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
    moe = _moe(r, layers)
    intermediate = r.opt_whole("intermediate_size", 1, 1 << 20)
    if intermediate is None and (moe is None or moe.dense_layers):
        raise r.error("intermediate_size", "missing: config.json must give the MLP width")
    sliding_window, sliding_layers = _sliding(r, model_type, layers)
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
        precision=_dtype(r),
        quantization=_quantization(r),
        vision=_vision(data),
    )


def _mla(r: _Reader, heads: int) -> Mla | None:
    if not r.has("kv_lora_rank"):
        return None
    return Mla(
        kv_lora_rank=r.whole("kv_lora_rank", 1, 65536),
        q_lora_rank=r.opt_whole("q_lora_rank", 1, 65536),
        rope_dim=r.whole("qk_rope_head_dim", 1, 4096),
        nope_dim=r.whole("qk_nope_head_dim", 0, 4096),
        v_dim=r.whole("v_head_dim", 1, 4096),
    )


def _moe(r: _Reader, layers: int) -> Moe | None:
    experts_key = next(
        (k for k in ("n_routed_experts", "num_experts", "num_local_experts") if r.has(k)), None
    )
    if experts_key is None:
        return None
    experts = r.whole(experts_key, 0, 4096)
    if experts <= 1:
        return None
    per_token_key = "num_experts_per_tok" if r.has("num_experts_per_tok") else "experts_per_token"
    per_token = r.whole(per_token_key, 1, experts)
    width_key = "moe_intermediate_size" if r.has("moe_intermediate_size") else "intermediate_size"
    width = r.whole(width_key, 1, 1 << 20)
    first_dense = r.whole("first_k_dense_replace", 0, layers, default=0)
    freq = r.whole("moe_layer_freq", 1, layers, default=1)
    step = r.whole("decoder_sparse_step", 1, layers, default=1)
    only_dense = set()
    for i, item in enumerate(r.items("mlp_only_layers", layers)):
        if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < layers:
            raise r.error(f"mlp_only_layers[{i}]", f"must be a layer number below {layers}")
        only_dense.add(item)
    moe_layers = [
        i
        for i in range(layers)
        if i >= first_dense and i % freq == 0 and (i + 1) % step == 0 and i not in only_dense
    ]
    shared_width = r.whole("n_shared_experts", 0, 64, default=0) * width
    shared_width += r.whole("shared_expert_intermediate_size", 0, 1 << 20, default=0)
    return Moe(
        experts=experts,
        per_token=per_token,
        width=width,
        moe_layers=len(moe_layers),
        dense_layers=layers - len(moe_layers),
        shared_width=shared_width,
        shared_gate=r.has("shared_expert_intermediate_size"),
        router_bias=r.text("model_type") == "gpt_oss",
        score_bias=r.text("topk_method") == "noaux_tc",  # DeepSeek-V3's e_score_correction_bias
        expert_bias=r.text("model_type") == "gpt_oss",
    )


def _sliding(r: _Reader, model_type: str, layers: int) -> tuple[int | None, int | None]:
    """The window and how many layers keep only it: layer_types, else Gemma 3's pattern (every
    n-th layer global), Gemma 2's alternation, else every layer (Mistral 7B v0.1)."""
    if not r.has("sliding_window") or not r.flag("use_sliding_window", True):
        return None, None
    window = r.whole("sliding_window", 1, 1 << 24)
    types = r.items("layer_types", layers)
    if types:
        if len(types) != layers or not all(isinstance(t, str) for t in types):
            raise r.error("layer_types", f"must name each of the {layers} layers")
        windowed = sum(t == "sliding_attention" for t in types)
    elif r.has("sliding_window_pattern"):
        pattern = r.whole("sliding_window_pattern", 1, layers)
        windowed = layers - layers // pattern
    elif model_type == "gemma2":
        windowed = layers // 2
    else:
        windowed = layers
    return (window, windowed) if windowed else (None, None)


def _dtype(r: _Reader) -> str:
    key = "torch_dtype" if r.has("torch_dtype") else "dtype"
    value = r.text(key, "bfloat16")
    if value not in DTYPES:
        raise r.error(key, f"{value!r} is not a dtype the estimate reads ({', '.join(DTYPES)})")
    return DTYPES[value]


def _quantization(r: _Reader) -> dict[str, Any] | None:
    value = r.raw("quantization_config")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise r.error("quantization_config", f"must be an object, not {_kind(value)}")
    method = value.get("quant_method")
    key = r.key("quantization_config.quant_method")
    if method in ("mxfp4", "fp8"):
        block = value.get("weight_block_size")
        if block is not None and not (
            isinstance(block, list)
            and len(block) == 2
            and all(
                isinstance(b, int) and not isinstance(b, bool) and 1 <= b <= 65536 for b in block
            )
        ):
            raise CapacityInputError(
                FIELD,
                f"{r.key('quantization_config.weight_block_size')}: must be two whole numbers",
            )
        return {"method": method, "block": tuple(block) if block else None}
    if method in ("awq", "gptq"):
        bits = value.get("bits")
        if bits != 4:
            raise CapacityInputError(
                FIELD, f"{r.key('quantization_config.bits')}: only 4-bit AWQ/GPTQ is read"
            )
        return {"method": "int4", "block": None}
    raise CapacityInputError(
        FIELD,
        f"{key}: {method!r} is not read (mxfp4, fp8, awq and gptq are); give the weights "
        "in GB and the precision instead",
    )


def _vision(data: dict[str, Any]) -> tuple[int, int, int, int, int] | None:
    """A ViT tower (SigLIP in Gemma 3): layers, hidden, intermediate, patch and image size; None
    (not counted, and said so) for a tower described otherwise (Qwen2-VL's depth and embed_dim)."""
    vision = data.get("vision_config")
    if vision is None:
        return None
    if not isinstance(vision, dict):
        raise CapacityInputError(FIELD, f"vision_config: must be an object, not {_kind(vision)}")
    v = _Reader(vision, "vision_config.", {})
    keys = ("num_hidden_layers", "hidden_size", "intermediate_size", "patch_size", "image_size")
    if not all(v.has(k) for k in keys):
        return None
    return (
        v.whole("num_hidden_layers", 1, 256),
        v.whole("hidden_size", 1, 65536),
        v.whole("intermediate_size", 1, 1 << 18),
        v.whole("patch_size", 1, 1024),
        v.whole("image_size", 1, 1 << 14),
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


def _label(data: dict[str, Any], r: _Reader) -> str:
    archs = data.get("architectures")
    if isinstance(archs, list) and archs and isinstance(archs[0], str) and len(archs[0]) <= 100:
        return f"{archs[0]} (config.json)"
    return f"{r.text('model_type') or 'model'} (config.json)"


def _slug(label: str) -> str:
    """config:qwen3forcausallm for "Qwen3ForCausalLM (config.json)"."""
    stem = label.removesuffix(" (config.json)").lower()
    return "config:" + (re.sub(r"[^a-z0-9.]+", "-", stem).strip("-")[:80] or "model")
