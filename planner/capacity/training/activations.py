"""The activation memory of a training step: the layers' saved activations, one layer's backward,
and the logits of the loss. Each step records its formula on the Trail and returns exact bytes.

Sources:
- A layer keeps c·s·b·h bytes for its backward (16-bit, FlashAttention: no s × s scores);
  Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models", eq. 1,
  gives c = 34 for GPT; activation_coefficient counts it for a Llama-style block.
- With full activation checkpointing each layer keeps only its 16-bit input (2·s·b·h) and one
  layer's activations are live during its recomputation (+c·s·b·h). Offloaded checkpointing keeps
  those inputs in CPU RAM instead (Unsloth's "offloaded gradient checkpointing", unsloth.ai/blog/
  long-context): none stay on the GPU.
- One layer's backward holds its activation gradients beside its saved activations; the largest
  are the MLP's: the gradient of the SwiGLU product and those of gate and up (3 × i, 16-bit):
  6·s·b·i bytes. Unsloth's published contexts put its per-token cost at 212 kB for Llama-3.1-8B
  (the slope between its 48 and 80 GB rows), the saved activations of one layer 139 kB plus this
  86 kB.
- The loss: Hugging Face transformers upcasts the logits to fp32 before the cross-entropy
  (LlamaForCausalLM / ForCausalLMLoss: "Upcast to float if we need to compute the loss");
  at the backward's peak the fp32 logits, log-softmax's saved fp32 output and the fp32 gradients
  of the log-probabilities and of the logits are alive: 4 × 4 = 16 bytes × s·b × vocabulary.
  Unsloth's Hugging Face + FA2 column (its README) grows 2.47 MB a token between 48 and 80 GB for
  Llama-3.1-8B: 16 × 128,256 = 2.05 MB of logits plus 0.40 MB of layers. A fused loss (Cut
  Cross-Entropy, Wijmans et al. 2024; Liger's fused linear cross-entropy) never materialises the
  logits: nothing is counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from planner.capacity.catalogue import ModelSpec
from planner.capacity.formatting import gb, num, whole
from planner.capacity.results import Severity, Trail, WarningCode

ACTIVATION_BYTES_PER_LAYER_TOKEN_HIDDEN: Final = 34
CHECKPOINT_BYTES_PER_LAYER_TOKEN_HIDDEN: Final = 2
BACKWARD_BYTES_PER_INTERMEDIATE: Final = 6  # 3 gradients of the MLP's width, 16-bit
LOGIT_BYTES: Final = 16  # see the module: fp32 logits, log-softmax output, two fp32 gradients
GPT_MLP_RATIO: Final = 4  # intermediate = 4 × hidden where the architecture is unknown


def activation_coefficient(spec: ModelSpec | None, hidden_given: int | None) -> Fraction:
    """Bytes per token per hidden unit one layer keeps for the backward pass, in bf16.

    A Llama-style block (RMSNorm, GQA with FlashAttention, a fused SwiGLU) keeps: the two norm
    inputs and outputs (4 × 2h), Q and O (2 × 2·q), K and V (2 × 2·kv) for FlashAttention's
    backward, and gate, up and their product (3 × 2·i): (8h + 4q + 4kv + 6i) / h. For Llama-3.1-8B
    that is 34, Korthikanti et al.'s GPT figure, which stands in when the architecture is unknown.
    """
    if spec is None or hidden_given is not None:
        return Fraction(ACTIVATION_BYTES_PER_LAYER_TOKEN_HIDDEN)
    h, q = spec.hidden_size, spec.attention_heads * spec.head_dim
    kv, i = spec.kv_heads * spec.head_dim, spec.intermediate_size
    return Fraction(8 * h + 4 * q + 4 * kv + 6 * i, h)


@dataclass(frozen=True, slots=True)
class StepShape:
    """What sizes one step's activations (the architecture, and how the step is run)."""

    tokens: int | None  # batch × sequence
    hidden: int | None
    layers: int | None
    vocab: int | None
    intermediate: int | None  # None: 4 × hidden (GPT's MLP)
    coefficient: Fraction = Fraction(ACTIVATION_BYTES_PER_LAYER_TOKEN_HIDDEN)
    checkpointing: bool = False
    offload: bool = False  # checkpointed layer inputs in CPU RAM
    fused_loss: bool = False  # the loss never materialises the logits


def activations(shape: StepShape, trail: Trail) -> Fraction | None:
    """The layers (saved, checkpointed or offloaded), one layer's backward, and the logits."""
    tokens, hidden, layers = shape.tokens, shape.hidden, shape.layers
    if tokens is None or hidden is None or layers is None:
        trail.warn(
            WarningCode.ACTIVATIONS_NOT_COUNTED,
            Severity.WARNING,
            "Activations are not counted: give the batch size, sequence length and a model (or hidden size and layers).",
        )
        return None
    body = _layers(shape, tokens, hidden, layers, trail)
    return body + _backward(shape, tokens, hidden, trail) + _logits(shape, tokens, trail)


def _layers(shape: StepShape, tokens: int, hidden: int, layers: int, trail: Trail) -> Fraction:
    sbh, c = tokens * hidden, shape.coefficient
    if not shape.checkpointing:
        body = c * sbh * layers
        trail.formula(
            "Activations",
            "c·s·b·h·layers (c: bytes a layer keeps per token and hidden unit)",
            f"{num(c, 2)} × {whole(tokens)} × {hidden} × {layers} = {gb(body)}",
        )
        return body
    if shape.offload:
        trail.formula(
            "Activations (checkpoints offloaded to CPU RAM)",
            "c·s·b·h (one layer live; the layer inputs wait in CPU RAM)",
            f"{num(c, 2)} × {whole(tokens)} × {hidden} = {gb(c * sbh)}",
        )
        return c * sbh
    kept = CHECKPOINT_BYTES_PER_LAYER_TOKEN_HIDDEN * sbh * layers
    trail.formula(
        "Activations (checkpointed)",
        "2·s·b·h·layers + c·s·b·h (c per layer: see the module)",
        f"2 × {whole(tokens)} × {hidden} × {layers} + {num(c, 2)} × {whole(tokens)} × {hidden} = {gb(kept + c * sbh)}",
    )
    return kept + c * sbh


def _backward(shape: StepShape, tokens: int, hidden: int, trail: Trail) -> Fraction:
    width = shape.intermediate or GPT_MLP_RATIO * hidden
    if shape.intermediate is None:
        trail.assume("intermediate_size", f"4 × hidden = {width} (GPT's MLP)")
    grads = Fraction(BACKWARD_BYTES_PER_INTERMEDIATE * tokens * width)
    trail.formula(
        "One layer's backward (MLP gradients)",
        "6 bytes × s·b × intermediate size",
        f"6 × {whole(tokens)} × {whole(width)} = {gb(grads)}",
    )
    return grads


def _logits(shape: StepShape, tokens: int, trail: Trail) -> Fraction:
    if shape.fused_loss:
        trail.formula("Logits", "a fused loss keeps none", "0 bytes")
        return Fraction(0)
    if shape.vocab is None:
        trail.assume("vocab_size", "unknown: the logits are not counted")
        return Fraction(0)
    logits = Fraction(LOGIT_BYTES * tokens * shape.vocab)
    trail.formula(
        "Logits (fp32 cross-entropy)",
        f"{LOGIT_BYTES} bytes × s·b × vocabulary",
        f"{LOGIT_BYTES} × {whole(tokens)} × {whole(shape.vocab)} = {gb(logits)}",
    )
    return logits
