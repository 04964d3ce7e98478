"""The KV pool of a serving estimate: overhead, the memory left for KV cache, users, fit warnings.

Two accountings, both exact:
- the learner gives the overhead: the course's planning function, available_for_cache = GPU memory
  − weights − runtime_overhead; max_active_users = available // KV cache per user (source, "Write a
  simple hardware planning function"); zero users is an error;
- no overhead given: the serving engine's accounting (planner.capacity.overhead), the pool in whole
  16-token blocks and the users as whole requests of the given context (vLLM's "maximum concurrency").
With tensor parallelism every figure here is per GPU; serving.py reports the deployment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from planner.capacity.engine_profiles import engine_profile
from planner.capacity.formatting import gb, num, whole
from planner.capacity.overhead import (
    BLOCK_SIZE_TOKENS,
    DEFAULT_GPU_MEMORY_UTILIZATION,
    EngineRun,
    engine_model,
    engine_overhead,
    run_batch,
)
from planner.capacity.results import Severity, Trail, WarningCode
from planner.capacity.serving.inputs import DEFAULT_CONTEXT_TOKENS, ServingInputs
from planner.capacity.serving.memory import DeviceMemory, KvCache, Weights, checkpoint_bytes
from planner.capacity.units import (
    BYTES_PER_GB,
    PRECISIONS_WIDEST_FIRST,
    CapacityInputError,
    bytes_per_element,
)
from planner.capacity.validation import positive, whole_number


@dataclass(frozen=True, slots=True)
class Pool:
    overhead: Fraction  # per GPU
    parts: dict[str, Fraction]  # per GPU; empty when the learner gave the overhead
    utilization: Fraction | None
    free_after_weights: Fraction  # per GPU, negative when the weights do not fit
    available: Fraction  # per GPU, for KV cache
    per_user_gpu: Fraction
    per_token_gpu: Fraction | None
    kv_cache_tokens: int | None  # tokens the deployment's pool holds (each GPU its share)
    max_users: int


def kv_pool(
    inputs: ServingInputs,
    device: DeviceMemory,
    weights: Weights,
    kv: KvCache,
    share: Fraction,
    n: int,
    trail: Trail,
) -> Pool:
    per_user_gpu = kv.per_user * share
    per_token_gpu = kv.per_token * share if kv.per_token is not None else None
    w_gpu = weights.bytes / n
    if inputs.overhead_gb is not None:
        overhead = positive(inputs.overhead_gb, "overhead_gb", allow_zero=True) * BYTES_PER_GB
        free = device.memory - w_gpu - overhead
        available = max(free, Fraction(0))
        max_users = math.floor(available / per_user_gpu)
        tokens = math.floor(available / per_token_gpu) if per_token_gpu else None
        _simple_formulas(
            device.memory, w_gpu, overhead, free, available, per_user_gpu, max_users, n, trail
        )
        return Pool(
            overhead, {}, None, free, available, per_user_gpu, per_token_gpu, tokens, max_users
        )
    return _engine_pool(inputs, device, weights, kv, per_user_gpu, per_token_gpu, n, trail)


def _simple_formulas(
    memory: Fraction,
    w_gpu: Fraction,
    overhead: Fraction,
    free: Fraction,
    available: Fraction,
    per_user: Fraction,
    max_users: int,
    n: int,
    trail: Trail,
) -> None:
    weights_term = "weights" if n == 1 else f"weights ÷ {n} GPUs"
    trail.formula(
        "Available for cache" + (" per GPU" if n > 1 else ""),
        f"GPU memory − {weights_term} − overhead",
        f"{gb(memory)} − {gb(w_gpu)} − {gb(overhead)} = {gb(free)}",
    )
    trail.formula(
        "Max active users",
        "⌊available for cache ÷ KV cache per user" + (" per GPU⌋" if n > 1 else "⌋"),
        f"⌊{gb(available)} ÷ {gb(per_user)}⌋ = {max_users}",
    )


def _utilization(inputs: ServingInputs, trail: Trail) -> Fraction:
    utilization = positive(inputs.gpu_memory_utilization, "gpu_memory_utilization")
    if utilization is None:
        trail.assume("gpu_memory_utilization", "0.9 (vLLM's default)")
        return DEFAULT_GPU_MEMORY_UTILIZATION
    if utilization > 1:
        raise CapacityInputError(
            "gpu_memory_utilization", "is a fraction of the memory: at most 1."
        )
    return utilization


def _engine_pool(
    inputs: ServingInputs,
    device: DeviceMemory,
    weights: Weights,
    kv: KvCache,
    per_user_gpu: Fraction,
    per_token_gpu: Fraction | None,
    n: int,
    trail: Trail,
) -> Pool:
    w_gpu = weights.bytes / n
    utilization = _utilization(inputs, trail)
    profile = engine_profile(inputs.engine_profile)
    run = EngineRun(
        profile=profile,
        # The learner's hidden size, vocabulary and MLP width size the profiling run's peak.
        spec=engine_model(inputs, weights.params, trail),
        accelerator_id=inputs.accelerator.id if inputs.accelerator is not None else "",
        max_model_len=kv.context or DEFAULT_CONTEXT_TOKENS,
        tensor_parallel=n,
        peer_to_peer=inputs.accelerator.peer_to_peer if inputs.accelerator is not None else True,
        max_num_seqs=whole_number(inputs.max_num_seqs, "max_num_seqs"),
    )
    parts = engine_overhead(usable=device.usable, utilization=utilization, run=run)
    if run.max_num_seqs is None:
        sequences = run_batch(run, device.usable).sequences
        trail.assume("max_num_seqs", f"{sequences:,} ({profile.name}'s default on this GPU)")
    trail.assume("overhead_gb", "a serving engine's own accounting (vLLM's), in parts")
    free = device.usable * utilization - w_gpu - parts.total + parts.utilization_headroom
    available = max(free, Fraction(0))
    trail.formula(
        "KV pool" + (" per GPU" if n > 1 else "") + f", as {profile.name} accounts it",
        "usable memory × utilization − weights − activation peak − non-torch memory − CUDA graphs",
        f"{gb(device.usable)} × {num(utilization)} − {gb(w_gpu)} − {gb(parts.activation_peak)} − "
        f"{gb(parts.non_torch)} − {gb(parts.cuda_graphs)} = {gb(free)}",
    )
    tokens, max_users = _users_in_blocks(available, per_user_gpu, per_token_gpu, kv.context, trail)
    return Pool(
        parts.total,
        parts.parts(),
        utilization,
        free,
        available,
        per_user_gpu,
        per_token_gpu,
        tokens,
        max_users,
    )


def _users_in_blocks(
    available: Fraction,
    per_user_gpu: Fraction,
    per_token_gpu: Fraction | None,
    context: int | None,
    trail: Trail,
) -> tuple[int | None, int]:
    """The pool in whole blocks, and the whole requests of `context` tokens it holds."""
    if per_token_gpu is None or context is None:
        max_users = math.floor(available / per_user_gpu)
        trail.formula(
            "Max active users",
            "⌊KV pool ÷ KV cache per user⌋",
            f"⌊{gb(available)} ÷ {gb(per_user_gpu)}⌋ = {max_users}",
        )
        return None, max_users
    blocks = math.floor(available / (BLOCK_SIZE_TOKENS * per_token_gpu))
    per_request = math.ceil(context / BLOCK_SIZE_TOKENS)
    max_users = blocks // per_request
    tokens = blocks * BLOCK_SIZE_TOKENS
    trail.formula(
        "KV cache tokens",
        f"⌊KV pool ÷ ({BLOCK_SIZE_TOKENS}-token block × KV bytes per token on one GPU)⌋ × "
        f"{BLOCK_SIZE_TOKENS}",
        f"⌊{gb(available)} ÷ ({BLOCK_SIZE_TOKENS} × {whole(math.ceil(per_token_gpu))} bytes)⌋ = "
        f"{whole(blocks)} blocks = {whole(tokens)} tokens",
    )
    trail.formula(
        "Max active users",
        "⌊blocks ÷ blocks per request⌋ (vLLM's maximum concurrency)",
        f"⌊{whole(blocks)} ÷ ⌈{whole(context)} ÷ {BLOCK_SIZE_TOKENS}⌉⌋ = {whole(max_users)}",
    )
    return tokens, max_users


def fit_warnings(
    inputs: ServingInputs,
    device: DeviceMemory,
    weights: Weights,
    pool: Pool,
    users: int | None,
    n: int,
    trail: Trail,
) -> str | None:
    """Weights that do not fit, no room for one user, or fewer users than the target; the hint's
    precision (the widest narrower one the hardware computes at which the target would fit)."""
    target = users if users else 1
    if pool.free_after_weights >= 0 and pool.max_users > 0 and target <= pool.max_users:
        return None
    hint, precision = _precision_hint(inputs, device, weights, pool, target, n)
    total_w, over = gb(weights.bytes / n), gb(pool.overhead)
    if pool.free_after_weights < 0:
        trail.warn(
            WarningCode.WEIGHTS_DO_NOT_FIT,
            Severity.ERROR,
            f"Weights ({total_w}{' per GPU' if n > 1 else ''}) plus overhead ({over}) exceed the {gb(device.memory)} of memory. {hint}",
        )
    elif pool.max_users == 0:
        trail.warn(
            WarningCode.NO_ROOM_FOR_SERVING,
            Severity.ERROR,
            f"The model fits, but the {gb(pool.available)} left is less than one user's KV cache "
            f"({gb(pool.per_user_gpu)}): zero active users is an error, not a capacity. {hint}",
        )
    elif users is not None and users > pool.max_users:
        trail.warn(
            WarningCode.TARGET_USERS_DO_NOT_FIT,
            Severity.ERROR,
            f"{users} users need {gb(users * pool.per_user_gpu)} of KV cache; {gb(pool.available)} is available, "
            f"enough for {pool.max_users}. Shorten the context, quantise the KV cache, or add memory.",
        )
    return precision


def _precision_hint(
    inputs: ServingInputs, device: DeviceMemory, weights: Weights, pool: Pool, target: int, n: int
) -> tuple[str, str | None]:
    if pool.free_after_weights >= 0 and pool.max_users > 0:
        return "", None  # only the target misses: the message says what to change
    room = device.memory - pool.overhead - target * pool.per_user_gpu
    if weights.params is None:
        limit = max(device.memory - pool.overhead - pool.per_user_gpu, Fraction(0))
        return (
            f"The weights must shrink to at most {gb(limit * n)} (give the parameter count to see which precision that is).",
            None,
        )
    current = (
        bytes_per_element(weights.precision, "weight_precision")
        if weights.precision
        else Fraction(4)
    )
    acc = inputs.accelerator
    for candidate in PRECISIONS_WIDEST_FIRST:
        if bytes_per_element(candidate, "weight_precision") >= current:
            continue
        # int4 (AWQ, GPTQ) runs weight-only where the tensor cores lack it (vLLM's Marlin
        # kernels on Hopper), and the engine fits it there: the hint offers it too.
        weight_only = acc is not None and not acc.supports(candidate)
        if weight_only and candidate != "int4":
            continue
        size = checkpoint_bytes(inputs, weights.params, candidate, Trail())
        if size / n <= room:
            how = " (weight-only on this device: it saves memory, not time)" if weight_only else ""
            return (
                f"At {candidate}{how} the weights would be {gb(size)} and {target} user(s) would fit.",
                candidate,
            )
    return (
        "No precision down to int4 (weight-only included) fits: use a GPU with more memory, or "
        "shard the model over several.",
        None,
    )


def largest_context(
    inputs: ServingInputs, pool: Pool, users: int | None, trail: Trail
) -> int | None:
    """⌊available ÷ (users × KV bytes per token)⌋, capped at the model's own maximum."""
    if pool.per_token_gpu is None or pool.per_token_gpu <= 0:
        return None
    target = users if users else 1
    fits = math.floor(pool.available / (target * pool.per_token_gpu))
    spec = inputs.model
    capped = min(fits, spec.max_context_tokens) if spec is not None else fits
    cap = (
        f", capped at {spec.name}'s {whole(spec.max_context_tokens)}"
        if spec is not None and capped < fits
        else ""
    )
    trail.formula(
        "Largest context for the target users",
        "⌊available ÷ (users × KV bytes per token)⌋, at most the model's context",
        f"⌊{gb(pool.available)} ÷ ({target} × {whole(math.ceil(pool.per_token_gpu))} bytes)⌋ = {whole(fits)} tokens{cap}",
    )
    return capped
