"""Attention ``O_h = softmax(Q_h K_g^T) V_g`` per query head ``h``, fused per head.

Tensors are stored as a layer's projections leave them, heads side by side in columns:
``q`` and ``out`` are ``[q_len, heads*head_dim]``, the new keys and values ``k``, ``v``
``[q_len, kv_heads*head_dim]``, and with ``past`` > 0 the KV cache ``k_cache``,
``v_cache`` ``[past, kv_heads*head_dim]``, read from DDR (decode: one new token attends
to ``past + 1`` keys). Grouped-query attention: query head ``h`` uses KV head
``g = h // (heads / kv_heads)``, whose key and value blocks are loaded once and shared by
every query head of the group.

Per head and block of ``block_q`` query rows: the matrix engine computes the scores
against each block of ``block_kv`` keys (``Q K^T``, K read transposed: same cost), the
vector engine takes the softmax over the whole key length from the on-chip score
accumulators (in f32) into one probability block, and the matrix engine multiplies it by
the value blocks, accumulating over the key blocks; the result is converted and stored
into the head's columns of ``out``. Scores never go to DDR. ``causal`` is kept in the
task's ``params`` (masking does not change this tiling: every block is computed).
``softcap`` > 0 caps the scores first, ``softcap * tanh(scores / softcap)`` (Gemma-2), in
the softmax op: ``VECTOR_PASSES["tanh"]`` more passes and two scalings (2 each).

The task's space is the score matrix of every head, ``[heads*q_len, past+q_len]``; the
softmax ops carry its row blocks.
"""

from __future__ import annotations

from typing import Any

from models.cost import VECTOR_PASSES, CostModel, transfer_modes, vector_modes
from models.dtypes import DTYPE_BYTES
from models.formats import Access, Task
from models.ops.builder import Block, ProblemBuilder, box_tag, round_up, split, value_access
from models.ops.checks import require_matrix_dtype, require_vector_dtype
from models.ops.gemm import accumulate, convert_and_store
from models.ops.params import Param

__all__ = ["KIND", "PARAMS", "build", "candidates", "op_count"]

KIND = "attention"
PARAMS = {
    "heads": Param("int", minimum=1, help="query heads"),
    "kv_heads": Param("int", minimum=1, help="key/value heads (divides heads)"),
    "head_dim": Param("int", minimum=1, help="elements per head"),
    "q_len": Param("int", minimum=1, help="query rows (tokens of this step)"),
    "past": Param("int", 0, minimum=0, help="cached keys and values read from DDR"),
    "causal": Param("int", 1, minimum=0, help="1: causal mask (kept; the tiling is the same)"),
    "dtype": Param("str", "f16", choices=tuple(DTYPE_BYTES), help="element type"),
    "q": Param("tensor", "{task}.Q", help="queries [q_len, heads*head_dim]"),
    "k": Param("tensor", "{task}.K", help="new keys [q_len, kv_heads*head_dim]"),
    "v": Param("tensor", "{task}.V", help="new values [q_len, kv_heads*head_dim]"),
    "k_cache": Param("tensor", "{task}.Kcache", help="cached keys [past, kv_heads*head_dim]"),
    "v_cache": Param("tensor", "{task}.Vcache", help="cached values [past, kv_heads*head_dim]"),
    "out": Param("tensor", "{task}.O", help="output [q_len, heads*head_dim]"),
    "softcap": Param("number", 0, minimum=0, help="> 0: scores capped to "
                                                  "softcap * tanh(scores / softcap)"),
    "block_q": Param("int", 128, minimum=1, help="query rows per block"),
    "block_kv": Param("int", 128, minimum=1, help="keys per block"),
}


def build(b: ProblemBuilder, name: str, p: dict[str, Any]) -> None:
    """Add the attention task ``name`` with parameters ``p`` (already checked) to ``b``."""
    heads, groups, d = int(p["heads"]), int(p["kv_heads"]), int(p["head_dim"])
    q_len, past, dtype = int(p["q_len"]), int(p["past"]), str(p["dtype"])
    if heads % groups:
        raise b.fail(f"kv_heads {groups} does not divide heads {heads}", "SHAPE")
    if int(p["causal"]) > 1:
        raise b.fail(f"causal must be 0 or 1, got {p['causal']}", "FORMAT")
    require_matrix_dtype(b, dtype)
    require_vector_dtype(b, dtype)
    require_vector_dtype(b, "f32")
    model = b.model
    matrix, tile = model.matrix, model.matrix.tile
    elem = DTYPE_BYTES[dtype]
    keys = past + q_len
    q, out = str(p["q"]), str(p["out"])
    b.tensor(q, (q_len, heads * d), dtype, name, written=False)
    sources = []  # (tensor, first key of the tensor) for the K and V streams
    for new, cache in (("k", "k_cache"), ("v", "v_cache")):
        b.tensor(str(p[new]), (q_len, groups * d), dtype, name, written=False)
        if past:
            b.tensor(str(p[cache]), (past, groups * d), dtype, name, written=False)
        sources.append((str(p[cache]), str(p[new])))
    b.tensor(out, (q_len, heads * d), dtype, name, written=True)
    b.task(name, Task(kind=KIND, space=((0, heads * q_len), (0, keys)),
                      outputs={out: ((0, q_len), (0, heads * d))}, params=dict(p)))
    # key blocks: the cache's, then the new keys' (a block never spans both tensors)
    kv_blocks = [(0, blk) for blk in split(past, int(p["block_kv"]))] + \
                [(1, blk) for blk in split(q_len, int(p["block_kv"]))]
    blocks = [Block(j, (past if which else 0) + blk.lo, (past if which else 0) + blk.hi)
              for j, (which, blk) in enumerate(kv_blocks)]
    head = Block(0, 0, d)

    def load(label: str, tensor: str, rows: Block, cols: Block) -> Access:
        box = ((rows.lo, rows.hi), (cols.lo, cols.hi))
        value = value_access(b.buffer(f"{name}.{label}", matrix.memory,
                                      round_up(rows.size, tile) * round_up(cols.size, tile)
                                      * elem), box_tag(tensor, box))
        b.op(f"{name}.ld{label}", name, transfer_modes(model, model.load,
                                                       b.bytes_of(tensor, box)),
             reads=(Access(tensor=tensor, box=box),), writes=(value,))
        return value

    capped = float(p["softcap"]) > 0
    passes = VECTOR_PASSES["softmax"] + (VECTOR_PASSES["tanh"] + 2 * VECTOR_PASSES["mul"]
                                         if capped else 0)
    kv: dict[tuple[str, int, int], Access] = {}
    for g in range(groups):
        cols = Block(g, g * d, (g + 1) * d)
        for operand, (cache, new) in zip("KV", sources, strict=True):
            for j, (which, blk) in enumerate(kv_blocks):
                kv[(operand, g, j)] = load(f"{operand}.g{g}.j{j}", new if which else cache,
                                           blk, cols)
    for h in range(heads):
        g = h // (heads // groups)
        cols = Block(h, h * d, (h + 1) * d)
        for qb in split(q_len, int(p["block_q"])):
            hq = f"h{h}.q{qb.index}"
            queries = load(f"Q.{hq}", q, qb, cols)
            scores = []
            for j, keys_j in enumerate(blocks):
                acc, _ = accumulate(b, name, f"qk.{hq}.j{j}", qb, keys_j, [head],
                                    [(queries, kv[("K", g, j)])], dtype, None)
                scores.append(acc)
            probs = value_access(b.buffer(f"{name}.P.{hq}", matrix.memory,
                                          round_up(qb.size, tile) * round_up(keys, tile)
                                          * elem), f"P({hq})")
            rows = (h * q_len + qb.lo, h * q_len + qb.hi)
            b.op(f"{name}.softmax.{hq}", name,
                 vector_modes(model, qb.size * keys * 4, passes, dtype="f32"),
                 reads=tuple(scores), writes=(probs,), space=(rows, (0, keys)))
            acc, size = accumulate(b, name, f"pv.{hq}", qb, head, blocks,
                                   [(probs, kv[("V", g, j)]) for j in range(len(blocks))],
                                   dtype, None)
            convert_and_store(b, name, f"pv.{hq}", acc, size, out,
                              ((qb.lo, qb.hi), (cols.lo, cols.hi)), dtype)


def candidates(p: dict[str, Any], model: CostModel) -> dict[str, tuple[Any, ...]]:
    """Query and key blocks of 32, 64 and 128 rows (capped at what there is)."""
    q_len, keys = int(p["q_len"]), int(p["past"]) + int(p["q_len"])
    return {"block_q": tuple(sorted({min(s, q_len) for s in (32, 64, 128)})),
            "block_kv": tuple(sorted({min(s, keys) for s in (32, 64, 128)}))}


def op_count(p: dict[str, Any], model: CostModel) -> int:
    """Per KV head a load of each key and value block; per query head and query block a
    query load, a score op per key block, the softmax, a product op per key block, a
    conversion and a store."""
    q_len, past, block_kv = int(p["q_len"]), int(p["past"]), int(p["block_kv"])
    key_blocks = -(-past // block_kv) + -(-q_len // block_kv)
    query_blocks = -(-q_len // int(p["block_q"]))
    return (2 * int(p["kv_heads"]) * key_blocks
            + int(p["heads"]) * query_blocks * (4 + 2 * key_blocks))
