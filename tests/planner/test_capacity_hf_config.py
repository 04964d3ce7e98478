"""Any model from its config.json: real files give their published parameter counts, weights and
KV bytes; the catalogue rows counted from them agree; hostile files are refused naming the key."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from planner.capacity import CapacityInputError, ServingInputs, default_catalogue, estimate_serving
from planner.capacity.hf.config import MAX_CONFIG_BYTES, MAX_DEPTH, model_from_config
from planner.capacity.overhead import derived_intermediate_size, engine_model
from planner.capacity.results import Trail

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
CAT = default_catalogue()
H100 = CAT.accelerator("h100-sxm")


def config(name: str) -> str:
    return (CONFIGS / f"{name}.json").read_text()


def spec(name: str) -> Any:
    return model_from_config(config(name))


def serve(model: Any, **kw: Any) -> Any:
    return estimate_serving(
        ServingInputs(accelerator=H100, model=model, context_tokens=16000, users=1, **kw)
    )


# --- real files, published counts -----------------------------------------------------------------


def test_qwen3_32b_weights_kv_and_the_catalogue_rows_vllm_pool() -> None:
    """32,762,123,264 parameters (Hugging Face: 32.8 B) at bf16; 2 x 64 layers x 8 KV heads x 128
    x 2 bytes a token; on one H100 the same vLLM pool, to the token, as the catalogue row."""
    qwen = spec("qwen3-32b")
    assert round(qwen.params_b * 1e9) == 32_762_123_264
    assert qwen.weight_bytes == 2 * 32_762_123_264
    from_config, from_row = serve(qwen), serve(CAT.model("qwen3-32b"))
    assert from_config.weights_bytes == 65_524_246_528
    assert from_config.kv_bytes_per_token == 262_144
    assert from_config.available_for_cache_bytes == from_row.available_for_cache_bytes
    assert from_config.kv_cache_tokens == from_row.kv_cache_tokens
    assert from_config.max_active_users == from_row.max_active_users


def test_qwen3_30b_a3b_total_and_active_parameters() -> None:
    """30.5 B total (model card); 3.04 B read per token: 8 of 128 experts of 768 on 48 layers.
    The card's 3.3 B counts the 0.31 B embedding table, which a token reads one row of."""
    moe = spec("qwen3-30b-a3b")
    assert round(moe.params_b * 1e9) == 30_532_122_624
    assert round(moe.active_params_b * 1e9) == 3_041_867_776
    embedding = 151936 * 2048
    assert int((moe.active_params_b * 1e9 + embedding) / 1e8) == 33  # the card's 3.3 B, cut short
    assert (moe.family, moe.experts, moe.experts_per_token) == ("moe", 128, 8)
    assert round(moe.routed_params_b * 1e9) == 48 * 128 * 3 * 2048 * 768
    assert serve(moe).kv_bytes_per_token == 2 * 48 * 4 * 128 * 2
    assert serve(moe).weights_bytes == 2 * 30_532_122_624


def test_deepseek_v2_lite_caches_the_latent_and_reads_2_4_b() -> None:
    """15.7 B total, 2.4 B activated (DeepSeek-V2 paper); MLA caches 512 + 64 elements a layer:
    27 x 576 x 2 = 31,104 bytes a token, not 2 x 16 heads x 192 per layer."""
    lite = spec("deepseek-v2-lite")
    assert round(lite.params_b * 1e9) == 15_706_484_224
    assert round(lite.active_params_b * 1e9) == 2_451_435_008
    assert int(lite.params_b * 10) == 157 and int(lite.active_params_b * 10) == 24  # cut short
    assert (lite.kv_lora_rank, lite.qk_rope_head_dim, lite.head_dim) == (512, 64, 192)
    assert serve(lite).kv_bytes_per_token == 27 * 576 * 2


def test_deepseek_v3_fp8_weights_and_active_parameters() -> None:
    """671 B main model, 36.6 B activated with the 0.9 B output head (DeepSeek's README_WEIGHTS);
    stored in FP8 with fp32 block scales, embeddings and head in bf16."""
    v3 = spec("deepseek-v3")
    assert v3.params_b == pytest.approx(671.03, abs=0.01)
    assert v3.active_params_b == pytest.approx(36.6, abs=0.05)
    assert v3.release_precision == "fp8"
    head_and_embeddings = 2 * 129280 * 7168
    assert v3.weight_bytes is not None
    assert v3.params_b * 1e9 < v3.weight_bytes < v3.params_b * 1e9 + head_and_embeddings + 3e9
    assert serve(v3, tensor_parallel=8).kv_bytes_per_token == 61 * 576 * 2


def test_gpt_oss_mxfp4_checkpoints() -> None:
    """OpenAI's model card: 20.91 B total and 3.61 B active; 116.83 B and 5.13 B. The 20b's
    checkpoint is 13,761,264,768 bytes: experts at 4.25 bits, everything else bf16."""
    small, large = spec("gpt-oss-20b"), spec("gpt-oss-120b")
    assert (round(small.params_b, 2), round(small.active_params_b, 2)) == (20.91, 3.61)
    assert (round(large.params_b, 2), round(large.active_params_b, 2)) == (116.83, 5.13)
    assert small.weight_bytes == 13_761_264_768
    assert small.release_precision == large.release_precision == "mxfp4"
    assert (small.sliding_window, small.sliding_window_layers) == (128, 12)
    on_h100 = serve(small)
    assert on_h100.weights_bytes == 13_761_264_768
    assert "precision_not_native" in on_h100.warning_codes  # Hopper runs MXFP4 weight-only
    on_b200 = estimate_serving(
        ServingInputs(accelerator=CAT.accelerator("b200"), model=small, context_tokens=16000)
    )
    assert "precision_not_native" not in on_b200.warning_codes


def test_llama_3_1_8b_exact_and_its_intermediate_size_derived_back() -> None:
    """8,030,261,248 parameters, as its safetensors index counts them; from that count alone the
    derivation a learner's hand-typed flags fall back on gives its MLP width, 14,336."""
    llama = spec("llama-3.1-8b")
    assert round(llama.params_b * 1e9) == 8_030_261_248
    assert (
        derived_intermediate_size(replace(llama, intermediate_size=0), Fraction(8_030_261_248))
        == 14336
    )


@pytest.mark.parametrize(
    ("name", "published"),
    [("qwen3-8b", 8_190_735_360), ("qwen2.5-7b", 7_615_616_512), ("llama-3.1-8b", 8_030_261_248)],
)
def test_dense_models_count_what_their_safetensors_hold(name: str, published: int) -> None:
    """Exact counts: Qwen3's q_norm and k_norm, Qwen2's q, k and v biases (no o_proj bias)."""
    model = spec(name)
    assert round(model.params_b * 1e9) == published
    assert model.weight_bytes == 2 * published


def test_mixtral_counts_its_experts_from_intermediate_size() -> None:
    """Mixtral keeps its expert width in intermediate_size: 46.7 B total, 12.9 B active as Mistral
    counts it (with the embedding table), 12.75 B without."""
    mixtral = {
        "model_type": "mixtral",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "max_position_embeddings": 32768,
        "num_attention_heads": 32,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "num_local_experts": 8,
        "vocab_size": 32000,
    }
    model = model_from_config(json.dumps(mixtral))
    assert round(model.params_b * 1e9) == 46_702_792_704
    assert round(model.active_params_b + 32000 * 4096 / 1e9, 1) == 12.9
    assert model.id == "config:mixtral" and model.family == "moe"


def test_gemma_3_reads_text_config_and_its_sliding_layers() -> None:
    """The 27B's config nests the language model under text_config and omits its vocabulary and
    layer pattern (transformers' defaults: 262,208 and every sixth layer global)."""
    gemma = spec("gemma-3-27b-it")
    assert (gemma.layers, gemma.hidden_size, gemma.head_dim, gemma.kv_heads) == (62, 5376, 128, 16)
    assert (gemma.vocab_size, gemma.tie_word_embeddings) == (262208, True)
    assert (gemma.sliding_window, gemma.sliding_window_layers) == (1024, 52)
    assert gemma.params_b == pytest.approx(27.43, abs=0.01)  # with its 0.42 B vision tower


def test_bge_encoders() -> None:
    base, large = spec("bge-base-en-v1.5"), spec("bge-large-en-v1.5")
    assert base.family == large.family == "encoder"
    assert round(base.params_b * 1e3) == 109 and round(large.params_b * 1e3) == 335
    assert base.release_precision == "fp32" and base.weight_bytes == 4 * round(base.params_b * 1e9)


CATALOGUE_FROM_CONFIG = {
    "qwen3-32b": "qwen3-32b",
    "qwen3-30b-a3b": "qwen3-30b-a3b",
    "deepseek-v3": "deepseek-v3",
    "gpt-oss-20b": "gpt-oss-20b",
    "gpt-oss-120b": "gpt-oss-120b",
    "gemma-3-27b": "gemma-3-27b-it",
    "bge-base-en-v1.5": "bge-base-en-v1.5",
    "bge-large-en-v1.5": "bge-large-en-v1.5",
}
ARCHITECTURE = (
    "params_b", "active_params_b", "routed_params_b", "layers", "hidden_size", "attention_heads",
    "kv_heads", "head_dim", "intermediate_size", "max_context_tokens", "vocab_size",
    "tie_word_embeddings", "family", "release_precision", "sliding_window",
    "sliding_window_layers", "kv_lora_rank", "qk_rope_head_dim", "weight_bytes", "experts",
    "experts_per_token",
)  # fmt: skip


@pytest.mark.parametrize(("row", "file"), CATALOGUE_FROM_CONFIG.items())
def test_catalogue_rows_are_what_the_reader_counts(row: str, file: str) -> None:
    from_row, read = CAT.model(row), spec(file)
    for name in ARCHITECTURE:
        assert getattr(from_row, name) == getattr(read, name), (row, name)
    assert "config.json" in from_row.source


# --- the safetensors index -------------------------------------------------------------------------


def test_an_index_gives_the_exact_bytes_and_a_foreign_one_is_refused() -> None:
    text = config("qwen3-32b")
    index = json.dumps({"metadata": {"total_size": 65_527_752_704}, "weight_map": {}})
    assert model_from_config(text, index_json=index).weight_bytes == 65_527_752_704
    foreign = json.dumps({"metadata": {"total_size": 16_060_522_496}})  # Llama-3.1-8B's
    with pytest.raises(CapacityInputError) as err:
        model_from_config(text, index_json=foreign)
    assert err.value.field == "index_json" and "metadata.total_size" in err.value.message
    for bad in ("{}", '{"metadata": {"total_size": "big"}}', "[]", "{"):
        with pytest.raises(CapacityInputError) as err:
            model_from_config(text, index_json=bad)
        assert err.value.field == "index_json"


# --- hostile files ---------------------------------------------------------------------------------


def with_key(name: str, key: str, value: Any) -> str:
    data = json.loads(config(name))
    data[key] = value
    return json.dumps(data)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (with_key("qwen3-32b", "num_hidden_layers", "64"), "num_hidden_layers"),
        (with_key("qwen3-32b", "num_hidden_layers", 64.5), "num_hidden_layers"),
        (with_key("qwen3-32b", "num_hidden_layers", True), "num_hidden_layers"),
        (with_key("qwen3-32b", "hidden_size", -5120), "hidden_size"),
        (with_key("qwen3-32b", "hidden_size", 0), "hidden_size"),
        (with_key("qwen3-32b", "vocab_size", 10**15), "vocab_size"),
        (with_key("qwen3-32b", "num_key_value_heads", 7), "num_key_value_heads"),
        (with_key("qwen3-32b", "tie_word_embeddings", "no"), "tie_word_embeddings"),
        (with_key("qwen3-32b", "torch_dtype", "float64"), "torch_dtype"),
        (with_key("qwen3-32b", "text_config", [1]), "text_config"),
        (with_key("qwen3-32b", "quantization_config", {"quant_method": "bitsandbytes"}), "quant_method"),
        (with_key("qwen3-30b-a3b", "num_experts_per_tok", 129), "num_experts_per_tok"),
        (with_key("qwen3-30b-a3b", "mlp_only_layers", [0, 99]), "mlp_only_layers[1]"),
        (with_key("gpt-oss-20b", "layer_types", ["sliding_attention"]), "layer_types"),
        (with_key("deepseek-v2-lite", "kv_lora_rank", -512), "kv_lora_rank"),
        (config("qwen3-32b").replace('"hidden_size": 5120', '"hidden_size": NaN'), "hidden_size"),
        (config("qwen3-32b").replace('"rms_norm_eps": 1e-06', '"rms_norm_eps": Infinity'), "rms_norm_eps"),
        (config("qwen3-32b").replace('"hidden_size": 5120', '"hidden_size": 1e400'), "hidden_size"),
        (config("qwen3-32b").replace('"hidden_size": 5120', '"hidden_size": ' + "9" * 400), "hidden_size"),
        (config("qwen3-32b").replace('"vocab_size": 151936', '"vocab_size": 151936, "vocab_size": 1'), "vocab_size"),
        (json.dumps({k: v for k, v in json.loads(config("qwen3-32b")).items() if k != "num_hidden_layers"}), "num_hidden_layers"),
        (json.dumps({k: v for k, v in json.loads(config("qwen3-32b")).items() if k != "vocab_size"}), "vocab_size"),
        (json.dumps({k: v for k, v in json.loads(config("llama-3.1-8b")).items() if k != "intermediate_size"}), "intermediate_size"),
    ],
    ids=[
        "string", "fraction", "bool", "negative", "zero", "huge", "kv-heads", "not-bool", "dtype",
        "text-config", "quantisation", "experts-per-token", "mlp-only-layers", "layer-types",
        "mla-negative", "nan", "infinity", "overflow", "400-digits", "duplicate", "missing-layers",
        "missing-vocab", "missing-intermediate",
    ],
)  # fmt: skip
def test_a_hostile_value_is_refused_naming_its_key(text: str, key: str) -> None:
    with pytest.raises(CapacityInputError) as err:
        model_from_config(text)
    assert err.value.field == "config"
    assert err.value.message.startswith(key) or f".{key}" in err.value.message.split(":")[0]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"pad": "' + "x" * MAX_CONFIG_BYTES + '"}', "at most"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nests deeper"),
        ('{"a":' * 100_000 + "1" + "}" * 100_000, "nests deeper"),
        ("[1, 2, 3]", "JSON object"),
        ('{"num_hidden_layers": 64,', "not JSON"),
        ("", "not JSON"),
        (b"\xff\xfe\x00garbage", "UTF-8"),
    ],
    ids=["too-big", "too-deep", "deep-objects", "a-list", "truncated", "empty", "not-utf8"],
)
def test_an_unreadable_file_is_refused(text: str | bytes, why: str) -> None:
    with pytest.raises(CapacityInputError) as err:
        model_from_config(text)
    assert err.value.field == "config" and why in err.value.message


def test_a_multimodal_config_names_the_nested_key() -> None:
    data = json.loads(config("gemma-3-27b-it"))
    data["text_config"]["num_hidden_layers"] = -62
    with pytest.raises(CapacityInputError) as err:
        model_from_config(json.dumps(data))
    assert err.value.message.startswith("text_config.num_hidden_layers: ")
    data = json.loads(config("gemma-3-27b-it"))
    data["torch_dtype"] = 16
    with pytest.raises(CapacityInputError) as err:
        model_from_config(json.dumps(data))
    assert err.value.message.startswith("torch_dtype: ")


def test_a_brace_inside_a_string_does_not_count_as_depth() -> None:
    text = with_key("qwen3-32b", "_name_or_path", "[" * 100 + "{" * 100)
    assert model_from_config(text).layers == 64


# --- flags typed by hand ---------------------------------------------------------------------------


def test_flags_without_an_intermediate_size_derive_it_and_say_so() -> None:
    """Qwen3-32B typed as flags: the profiled forward's width comes from the parameter count,
    named among the assumptions; given, it is used and nothing is assumed."""
    flags = dict(layers=64, kv_heads=8, head_dim=128, hidden_size=5120, vocab_size=151936)
    trail = Trail()
    model = engine_model(ServingInputs(**flags), Fraction(32_762_123_264), trail)
    assert model is not None and model.intermediate_size > 20000
    assert [a.field for a in trail.assumptions] == ["intermediate_size"]
    assert "derived from 32.762 B parameters" in trail.assumptions[0].assumed
    given = Trail()
    model = engine_model(ServingInputs(**flags, intermediate_size=25600), None, given)
    assert model is not None and model.intermediate_size == 25600 and not given.assumptions
    unknown = Trail()
    engine_model(ServingInputs(**flags), None, unknown)
    assert "unknown" in unknown.assumptions[0].assumed
    assert engine_model(ServingInputs(layers=64), None, Trail()) is None


def test_the_kv_cache_is_never_mxfp4() -> None:
    with pytest.raises(CapacityInputError) as err:
        serve(spec("gpt-oss-20b"), kv_precision="mxfp4")
    assert err.value.field == "kv_precision"
