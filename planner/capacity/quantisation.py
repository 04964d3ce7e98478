"""Which kernel a quantised model runs on a given accelerator, and what that changes: memory
always, compute only where the tensor cores take the narrow format. Pure lookups, no Django.

Sources: vLLM's "Supported Hardware" table for quantisation kernels (docs.vllm.ai, features/
quantization: FP8 W8A8 on Ada and Hopper, not Turing or Ampere; Marlin (GPTQ/AWQ/FP8) on Ampere and
newer; AWQ and INT8 W8A8 from Turing); vLLM's "FP8 W8A8" page ("Turing/Ampere GPUs are supported
for W8A16 (weight-only FP8) utilizing Marlin kernels"; PR 5975, FP8 Marlin); the catalogue's
`dense_fp8_tflops` marks the devices with fp8 tensor cores.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.capacity.catalogue import Accelerator


@dataclass(frozen=True, slots=True)
class KernelPath:
    name: str  # "W8A8", "W8A16", "W4A16", "16-bit" or "none"
    words: str  # what it means for memory and compute
    compute_precision: str  # what the matrix multiplies run in: "fp8", "int8", "bf16"/"fp16"


def _has_bf16(acc: Accelerator) -> bool:
    """Ampere and newer have bf16 tensor cores; the catalogue lists them (a T4 has none)."""
    return "bf16" in acc.precisions


def kernel_path(acc: Accelerator, precision: str) -> KernelPath:
    """The kernel vLLM takes for weights at `precision` on `acc` (a GPU; TPU and CPU rows get
    their own words)."""
    sixteen = "bf16" if _has_bf16(acc) or acc.kind != "gpu" else "fp16"
    if acc.kind != "gpu":
        return KernelPath(
            "16-bit", f"{acc.kind.upper()} kernels: check the runtime's list", sixteen
        )
    if precision in {"bf16", "fp16", "fp32"}:
        note = "" if _has_bf16(acc) else " (no bf16 tensor cores: fp16)"
        return KernelPath("16-bit", f"16-bit tensor cores, no quantisation{note}", sixteen)
    if precision == "fp8":
        if acc.dense_fp8_tflops:
            return KernelPath(
                "W8A8",
                "fp8 weights and activations on fp8 tensor cores: half the memory and up to "
                "twice the 16-bit compute",
                "fp8",
            )
        if _has_bf16(acc):
            return KernelPath(
                "W8A16",
                "weight-only fp8 (FP8 Marlin): half the memory, compute still at 16-bit",
                sixteen,
            )
        return KernelPath("none", "no fp8 kernel before Ampere: use int8 or int4", sixteen)
    if precision == "int8":
        return KernelPath("W8A8", "int8 weights and activations on int8 tensor cores", "int8")
    if precision in {"int4", "mxfp4"}:
        kernel = "Marlin" if _has_bf16(acc) else "AWQ's own GEMM kernels, slower"
        return KernelPath(
            "W4A16",
            f"weight-only 4-bit ({kernel}): a quarter of the memory, unpacked to 16-bit to compute",
            sixteen,
        )
    return KernelPath("none", f"no kernel listed for {precision}", sixteen)
