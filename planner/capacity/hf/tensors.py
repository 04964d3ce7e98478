"""A model's tensors from its architecture, as Hugging Face transformers builds them: the parameter
count, what one token reads, and the checkpoint's bytes at its stored precision.

Sources (transformers/models/<type>/modeling_<type>.py): Llama-style attention (q, k, v, o; biases
on q, k, v for Qwen2, on all four where `attention_bias` is set), Qwen3's and Gemma 3's q_norm and
k_norm over one head, gpt-oss's per-head sinks; multi-head latent attention as DeepSeek-V2 builds
it (q_a/q_b or q, kv_a_proj_with_mqa, kv_a_layernorm, kv_b, o); gated MLPs (gate, up, down);
routed experts, shared experts and the router of DeepSeek, Qwen-MoE, Mixtral and gpt-oss; BERT's
biases, position and token-type embeddings and pooler; SigLIP's vision tower and Gemma 3's
projector. Weight bytes: MXFP4 packs 32 4-bit values with one 8-bit scale (OCP Microscaling
Formats v1.0, 4.25 bits); gpt-oss stores only its experts so (quantization_config's
modules_to_not_convert: attention, router, embeddings, LM head). FP8 checkpoints (DeepSeek-V3)
store each linear layer's weights in 1 byte with one fp32 scale per weight_block_size block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from planner.capacity.units import QUANTISED_BYTES_PER_WEIGHT

STORED_BYTES: Final[dict[str, int]] = {"bf16": 2, "fp16": 2, "fp32": 4}
MXFP4_BYTES: Final = QUANTISED_BYTES_PER_WEIGHT["mxfp4"]
FP8_SCALE_BYTES: Final = 4  # float32 weight_scale_inv per block (DeepSeek-V3's checkpoint)


@dataclass(frozen=True, slots=True)
class Mla:
    kv_lora_rank: int
    q_lora_rank: int | None
    rope_dim: int
    nope_dim: int
    v_dim: int


@dataclass(frozen=True, slots=True)
class Moe:
    experts: int
    per_token: int
    width: int  # each routed expert's intermediate size
    moe_layers: int
    dense_layers: int
    shared_width: int  # shared experts together (0: none)
    shared_gate: bool  # Qwen2-MoE's sigmoid gate on the shared expert
    router_bias: bool
    score_bias: bool  # DeepSeek-V3's fp32 e_score_correction_bias
    expert_bias: bool  # gpt-oss's expert biases


@dataclass(frozen=True, slots=True)
class Architecture:
    model_type: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int | None
    vocab: int
    max_positions: int
    tied: bool
    encoder: bool
    attention_bias: bool
    o_bias: bool  # with attention_bias: o_proj has a bias too (not in Qwen2's attention)
    qk_norm: bool
    four_norms: bool
    sinks: bool
    mla: Mla | None
    moe: Moe | None
    sliding_window: int | None
    sliding_layers: int | None
    type_vocab: int
    precision: str  # torch_dtype: what the unquantised tensors are stored in ("bf16")
    quantization: dict[str, Any] | None  # {"method": "fp8" | "mxfp4" | "int4", "block": (128, 128)}
    vision: tuple[int, int, int, int, int] | None


@dataclass(slots=True)
class Counted:
    params: int = 0
    active: int = 0
    routed: int = 0
    weight_bytes: Fraction = Fraction(0)
    notes: str = ""
    parts: dict[str, int] = field(default_factory=dict)


class _Tally:
    """Adds tensors by role; a role decides whether a quantised checkpoint packs it."""

    def __init__(self, arch: Architecture) -> None:
        self.arch = arch
        self.out = Counted()
        quant = arch.quantization or {}
        self.method: str | None = quant.get("method")
        self.block: tuple[int, int] | None = quant.get("block")
        self.stored = Fraction(STORED_BYTES[arch.precision])

    def vector(self, part: str, size: int, count: int = 1, fp32: bool = False) -> None:
        self._add(part, size * count, Fraction(4 if fp32 else self.stored) * size * count)

    def matrix(self, part: str, rows: int, cols: int, count: int = 1, packed: bool = True) -> None:
        """A weight matrix; `packed`: a quantised checkpoint stores it quantised (fp8, int4)."""
        n = rows * cols * count
        if packed and self.method == "fp8":
            scales = (
                math.ceil(rows / self.block[0]) * math.ceil(cols / self.block[1])
                if self.block
                else 1
            )
            size = Fraction(n) + FP8_SCALE_BYTES * scales * count
        elif packed and self.method == "int4":
            size = n * QUANTISED_BYTES_PER_WEIGHT["int4"]
        else:
            size = self.stored * n
        self._add(part, n, size)

    def expert_matrix(self, part: str, rows: int, cols: int, count: int) -> None:
        n = rows * cols * count
        if self.method == "mxfp4":
            self._add(part, n, n * MXFP4_BYTES)
        else:
            self.matrix(part, rows, cols, count)

    def _add(self, part: str, params: int, size: Fraction) -> None:
        self.out.params += params
        self.out.weight_bytes += size
        self.out.parts[part] = self.out.parts.get(part, 0) + params


def count_tensors(arch: Architecture) -> Counted:
    t = _Tally(arch)
    _embeddings(t, arch)
    _attention(t, arch)
    _mlps(t, arch)
    _vision_tower(t, arch)
    out = t.out
    embed_lookup = 0 if (arch.tied and not arch.encoder) else arch.vocab * arch.hidden
    idle_experts = 0
    if arch.moe is not None:
        m = arch.moe
        out.routed = out.parts.get("routed experts", 0)
        idle_experts = out.routed * (m.experts - m.per_token) // m.experts
    out.active = out.params - embed_lookup - idle_experts - out.parts.get("vision tower", 0)
    out.notes = _notes(arch, out)
    return out


def _embeddings(t: _Tally, a: Architecture) -> None:
    t.matrix("embeddings", a.vocab, a.hidden, packed=False)
    if a.encoder:
        t.matrix("embeddings", a.max_positions, a.hidden, packed=False)
        t.matrix("embeddings", a.type_vocab, a.hidden, packed=False)
        t.vector("norms", 2 * a.hidden)  # embeddings LayerNorm, weight and bias
        t.matrix("pooler", a.hidden, a.hidden)
        t.vector("pooler", a.hidden)
        return
    if not a.tied:
        t.matrix("LM head", a.vocab, a.hidden, packed=False)
    t.vector("norms", a.hidden)  # the final norm


def _attention(t: _Tally, a: Architecture) -> None:
    n, h = a.layers, a.hidden
    if a.mla is not None:
        m = a.mla
        qk = m.nope_dim + m.rope_dim
        if m.q_lora_rank:
            t.matrix("attention", m.q_lora_rank, h, n)
            t.vector("norms", m.q_lora_rank, n)
            t.matrix("attention", a.heads * qk, m.q_lora_rank, n)
        else:
            t.matrix("attention", a.heads * qk, h, n)
        t.matrix("attention", m.kv_lora_rank + m.rope_dim, h, n)
        t.vector("norms", m.kv_lora_rank, n)
        t.matrix("attention", a.heads * (m.nope_dim + m.v_dim), m.kv_lora_rank, n)
        t.matrix("attention", h, a.heads * m.v_dim, n)
    else:
        q, kv = a.heads * a.head_dim, a.kv_heads * a.head_dim
        t.matrix("attention", q + 2 * kv, h, n)
        t.matrix("attention", h, q, n)
        if a.attention_bias:
            t.vector("attention", q + 2 * kv, n)
            if a.o_bias:
                t.vector("attention", h, n)
        if a.qk_norm:
            t.vector("norms", 2 * a.head_dim, n)
        if a.sinks:
            t.vector("attention", a.heads, n)
    norms = 4 if a.four_norms or a.encoder else 2  # BERT's LayerNorms carry a bias each
    t.vector("norms", norms * h, n)


def _mlps(t: _Tally, a: Architecture) -> None:
    h = a.hidden
    m = a.moe
    dense_layers = m.dense_layers if m is not None else a.layers
    if dense_layers:
        width = a.intermediate or 0
        if a.encoder:  # BERT: up and down projections with biases, no gate
            t.matrix("MLP", width, h, 2 * dense_layers)
            t.vector("MLP", width + h, dense_layers)
        else:
            t.matrix("MLP", width, h, 3 * dense_layers)
    if m is None:
        return
    n = m.moe_layers
    t.expert_matrix("routed experts", m.width, h, 3 * m.experts * n)
    if m.expert_bias:  # gpt-oss: gate_up (2 x width) and down (hidden) biases, 16-bit
        t.vector("routed experts", 2 * m.width + h, m.experts * n)
    t.matrix("router", m.experts, h, n, packed=False)
    if m.router_bias:
        t.vector("router", m.experts, n)
    if m.score_bias:
        t.vector("router", m.experts, n, fp32=True)
    if m.shared_width:
        t.matrix("shared experts", m.shared_width, h, 3 * n)
        if m.shared_gate:
            t.matrix("shared experts", 1, h, n, packed=False)


def _vision_tower(t: _Tally, a: Architecture) -> None:
    """SigLIP (Gemma 3's tower): per layer q, k, v, o with biases, two LayerNorms, a two-layer MLP;
    a patch convolution, learnt positions, a final LayerNorm; Gemma 3's projector and its norm."""
    if a.vision is None:
        return
    layers, h, i, patch, image = a.vision
    per_layer = 4 * (h * h + h) + 4 * h + (h * i + i) + (i * h + h)
    positions = (image // patch) ** 2
    tower = layers * per_layer + (h * 3 * patch * patch + h) + positions * h + 2 * h
    tower += h * a.hidden + h  # mm_input_projection_weight and mm_soft_emb_norm
    t.vector("vision tower", tower)


def _notes(a: Architecture, c: Counted) -> str:
    parts = ", ".join(f"{name} {count / 1e9:.3f} B" for name, count in c.parts.items())
    out = f"Counted from config.json: {c.params / 1e9:.3f} B parameters ({parts})."
    if a.moe is not None:
        out += (
            f" Mixture of experts: {a.moe.per_token} of {a.moe.experts} routed experts per token on "
            f"{a.moe.moe_layers} layers; {c.active / 1e9:.3f} B parameters active (the input "
            "embedding is a lookup of one row and not counted)."
        )
    if a.vision is not None:
        out += " The vision tower is counted in the weights, not in what a text token reads."
    return out
