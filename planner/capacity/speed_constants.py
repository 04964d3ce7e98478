"""The speed model's constants, each with its source: achieved bandwidth and MFU per device class
and weight format, fixed costs, all-reduce latencies, experts of the catalogue's MoE models.

Fitted on the "fit" rows of bench/_speed_published.py per hardware family and checked on the others
(bench/serving_speed.py; the lab notes and the fit and check tables are docs/speed-model.md).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

# Achieved share of the datasheet memory bandwidth while decoding ("model bandwidth utilisation",
# Databricks, "LLM Inference Performance Engineering: Best Practices", 2023: well below 100 % even
# at batch 1), by device class and by how the weights are stored. Fitted on the fit rows of
# bench/_speed_published.py (NIM / TensorRT-LLM on H100, llama.cpp on RTX 3090: 0.75-0.82 of
# peak); 8-bit weights carry scales and block-quantised 4-bit weights (AWQ, GPTQ, GGUF Q4_0)
# unpack in the kernel, so they stream a little less. Each other class is fitted on its own
# family's rows: "amd-gpu" on OCI's MI300X batch-1 run (vLLM on ROCm, 405B TP8: 0.70 with the
# fixed step and all-reduces below), "tpu" on JetStream-PyTorch's Llama 2 7B v5e-8 rows (0.70 bf16,
# 0.60 int8), "cpu-amx" on SGLang's Xeon 6 TPOTs (R1-Distill-Llama-70B INT8 and Llama 3.2 3B BF16:
# 0.60 with a 3 ms step). The "cpu" class (the EPYC and Sapphire Rapids rows) stays unfitted
# (STREAM sustains 70-80 % of a DDR5 server's peak; llama.cpp decode reaches less): no run on them.
CLASSES: Final = ("gpu", "amd-gpu", "tpu", "cpu", "cpu-amx")
BANDWIDTH_EFFICIENCY: Final[dict[tuple[str, str], Fraction]] = {
    ("gpu", "16-bit"): Fraction(80, 100),
    ("gpu", "8-bit"): Fraction(75, 100),
    ("gpu", "4-bit"): Fraction(75, 100),
    ("amd-gpu", "16-bit"): Fraction(70, 100),
    ("amd-gpu", "8-bit"): Fraction(70, 100),
    ("amd-gpu", "4-bit"): Fraction(65, 100),
    ("tpu", "16-bit"): Fraction(70, 100),
    ("tpu", "8-bit"): Fraction(60, 100),
    ("tpu", "4-bit"): Fraction(60, 100),
    ("cpu", "16-bit"): Fraction(55, 100),
    ("cpu", "8-bit"): Fraction(55, 100),
    ("cpu", "4-bit"): Fraction(50, 100),
    ("cpu-amx", "16-bit"): Fraction(60, 100),
    ("cpu-amx", "8-bit"): Fraction(60, 100),
    ("cpu-amx", "4-bit"): Fraction(55, 100),
}
# Achieved share of the dense peak in a compute-bound pass (prefill, a large decode batch), by
# device class and the precision the tensor cores compute in. Fitted on TensorRT-LLM's first-token
# latencies (v0.5 performance.md: Llama 7B, 2,048-token prompt, 133 ms on an A100 at FP16 and 36 ms
# on an H100 at FP8: 0.76 and 0.55 of peak once the fixed cost and the weight read are taken out)
# and its batch-768 H100 run; 0.65 and 0.50 keep those rows within tolerance. Pope et al. 2022
# ("Efficiently Scaling Transformer Inference") report 40-60 % MFU for prefill on TPUs. The MI300X's
# 0.22 at fp8 is fitted on OCI's batch-256 405B run (0.30 at bf16 is set in the same ratio to the
# GPUs', unfitted); the Xeon 6 AMX server's 0.10 (bf16) and 0.055 (int8) of its AMX peak on
# SGLang's Llama 3.2 3B and R1-Distill-Llama-70B first tokens (268 and 2,638 ms for 1,024 tokens).
ACHIEVED_MFU: Final[dict[tuple[str, str], Fraction]] = {
    ("gpu", "16-bit"): Fraction(65, 100),
    ("gpu", "8-bit"): Fraction(50, 100),
    ("amd-gpu", "16-bit"): Fraction(30, 100),
    ("amd-gpu", "8-bit"): Fraction(22, 100),
    ("tpu", "16-bit"): Fraction(50, 100),
    ("tpu", "8-bit"): Fraction(40, 100),
    ("cpu", "16-bit"): Fraction(40, 100),
    ("cpu", "8-bit"): Fraction(40, 100),
    ("cpu-amx", "16-bit"): Fraction(10, 100),
    ("cpu-amx", "8-bit"): Fraction(55, 1000),
}
# A CPU row has no TFLOPS in the catalogue: an AMD EPYC 9654 (96 Zen 4 cores, 2.4 GHz) runs
# AVX-512 BF16 dot products (VDPBF16PS: 64 FLOPs a cycle a core, AMD "Zen 4" software optimisation
# guide, publication 57647): 96 x 2.4 GHz x 64 = 14.7 TFLOPS peak; llama.cpp's prompt processing
# reaches about 40 % of it (ACHIEVED_MFU above). Indicative: a Xeon with AMX tiles peaks higher.
CPU_DENSE_BF16_TFLOPS: Final = Fraction(147, 10)
# Per decode step, whatever the batch: the scheduler, sampling and the kernel launches that CUDA
# graphs do not remove. NIM's single-stream Llama 3.3 70B TP2 run (18.91 ms a token, of which the
# weights and all-reduces explain ~17 ms) allows ~1.5 ms; llama.cpp's micro-batch-1 run (6.45 ms,
# 4.65 GB of weights on a 936 GB/s card) allows less, vLLM's Python scheduler more: 1.5 ms keeps
# both fit rows within 25 % (bench/_speed_published.py).
DECODE_STEP_FIXED_S: Final = Fraction(15, 10000)
# By class: the MI300X's 3 ms and the Xeon 6's 3 ms are fitted with their bandwidth (the batch-1
# rows above; SGLang's blog says Python overhead is considerable at low concurrency), the TPU's
# 10 ms on JetStream-PyTorch's rows (its host-side generate loop); the EPYC class keeps the GPUs'.
DECODE_STEP_FIXED_BY_CLASS: Final[dict[str, Fraction]] = {
    "gpu": DECODE_STEP_FIXED_S,
    "amd-gpu": Fraction(3, 1000),
    "tpu": Fraction(10, 1000),
    "cpu": DECODE_STEP_FIXED_S,
    "cpu-amx": Fraction(3, 1000),
}
# The share of the achieved bandwidth a mixture of experts' experts stream at in a decode step:
# on a CPU, 8 small matmuls a layer at batch 1 leave most of 256 cores idle. 0.35 fitted on
# SGLang's DeepSeek-R1 INT8 TPOT (67.99 ms against 41 ms at the dense rate); checked on Qwen3-235B.
EXPERT_READ_SHARE: Final[dict[str, Fraction]] = {"cpu-amx": Fraction(35, 100)}
# Per request before its first token: HTTP, tokenising, scheduling, detokenising. NIM's
# single-stream first tokens (47.8 ms for a 500-token prompt on 2 H100s) sit above their prefill;
# in-process TensorRT-LLM runs (no HTTP) come out 1.2-1.9x slow with it, still within 2x.
FIRST_TOKEN_FIXED_S: Final = Fraction(8, 1000)
# Latency of one step of a small-message all-reduce, by link. Small messages go by recursive
# doubling or a tree: 2 x ⌈log2 N⌉ steps (the alpha-beta model, Thakur, Rabenseifner & Gropp 2005,
# "Optimization of Collective Communication Operations in MPICH"), so two GPUs pay 2 steps, four 4,
# eight 6. Two GPUs: 15 us over NVLink (nccl-tests' small-message all-reduce latency on NVLink is
# ~10-20 us; vLLM PR 2192's custom all-reduce is of that order), fitted on NIM's single-stream
# TP2 run; 40 us over PCIe (NCCL crosses the host bridge); 10 us over TPU ICI, assumed (no TPU run);
# AMD Infinity Fabric 7 us a step (42 us an 8-GPU all-reduce), fitted on OCI's MI300X 405B TP8
# batch-1 run (252 all-reduces a step: at PCIe's latency they alone would exceed its 27 ms step).
ALL_REDUCE_STEP_LATENCY_S: Final[dict[str, Fraction]] = {
    "nvlink": Fraction(75, 10**7),
    "pcie": Fraction(20, 10**6),
    "ici": Fraction(5, 10**6),
    "infinity-fabric": Fraction(7, 10**6),
}
# After attention and after the MLP (Megatron-LM, Shoeybi et al. 2019).
ALL_REDUCES_PER_LAYER: Final = 2
ACTIVATION_BYTES: Final = 2  # bf16/fp16 activations are what the all-reduces move
# Experts (total, routed per token) of the catalogue's mixtures of experts, from their config.json
# (num_local_experts / n_routed_experts and num_experts_per_tok), for rows that do not carry them.
MOE_EXPERTS: Final[dict[str, tuple[int, int]]] = {
    "mixtral-8x7b": (8, 2),
    "deepseek-v2-lite": (64, 6),
    "qwen3-30b-a3b": (128, 8),
    "qwen3-235b-a22b": (128, 8),
    "gpt-oss-20b": (32, 4),
    "gpt-oss-120b": (128, 4),
    "deepseek-v3": (256, 8),
}
