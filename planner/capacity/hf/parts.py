"""The optional parts of a config.json's architecture: multi-head latent attention, mixture of
experts, sliding-window layers, the stored dtype, quantisation and a vision tower."""

from __future__ import annotations

from typing import Any, Final

from planner.capacity.hf.json_text import FIELD, ConfigReader, kind_of
from planner.capacity.hf.tensors import Mla, Moe
from planner.capacity.units import CapacityInputError

DTYPES: Final[dict[str, str]] = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float32": "fp32",
    "float": "fp32",
}


def mla_part(r: ConfigReader, heads: int) -> Mla | None:
    if not r.has("kv_lora_rank"):
        return None
    return Mla(
        kv_lora_rank=r.whole("kv_lora_rank", 1, 65536),
        q_lora_rank=r.opt_whole("q_lora_rank", 1, 65536),
        rope_dim=r.whole("qk_rope_head_dim", 1, 4096),
        nope_dim=r.whole("qk_nope_head_dim", 0, 4096),
        v_dim=r.whole("v_head_dim", 1, 4096),
    )


def moe_part(r: ConfigReader, layers: int) -> Moe | None:
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


def sliding_part(r: ConfigReader, model_type: str, layers: int) -> tuple[int | None, int | None]:
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


def dtype_part(r: ConfigReader) -> str:
    key = "torch_dtype" if r.has("torch_dtype") else "dtype"
    value = r.text(key, "bfloat16")
    if value not in DTYPES:
        raise r.error(key, f"{value!r} is not a dtype the estimate reads ({', '.join(DTYPES)})")
    return DTYPES[value]


def quantization_part(r: ConfigReader) -> dict[str, Any] | None:
    value = r.raw("quantization_config")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise r.error("quantization_config", f"must be an object, not {kind_of(value)}")
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


def vision_part(data: dict[str, Any]) -> tuple[int, int, int, int, int] | None:
    """A ViT tower (SigLIP in Gemma 3): layers, hidden, intermediate, patch and image size; None
    (not counted, and said so) for a tower described otherwise (Qwen2-VL's depth and embed_dim)."""
    vision = data.get("vision_config")
    if vision is None:
        return None
    if not isinstance(vision, dict):
        raise CapacityInputError(FIELD, f"vision_config: must be an object, not {kind_of(vision)}")
    v = ConfigReader(vision, "vision_config.", {})
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
