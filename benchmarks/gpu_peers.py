"""The best formulation of each case of benchmarks/ops.py in PyTorch and in raw CuPy.

benchmarks/gpu.py times these beside minigraph, in the same run. Each function takes the
case's feed arrays (host NumPy arrays, in the order of the case's feeds dict), uploads
them (and converts indices to int64 where PyTorch needs it) before returning, and returns
``(torch_fn, cupy_fn)``: zero-argument callables doing the whole op on device-resident
inputs, so that only the op is timed. ``torch_fn`` is None without PyTorch or CUDA;
``(None, None)`` means no formulation is given for the case (shown as "-").

``xp`` is CuPy, or minigraph's simulated GPU module where CuPy is absent (so that the code
runs on a machine without a GPU); the simulated module has no ``cupyx.scatter_add``, so
``xp.add.at`` stands in for it there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

Fn = Callable[[], Any]
Peers = tuple[Fn | None, Fn | None]


def load_torch() -> Any:
    """The torch module when it imports and sees a CUDA device, else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _scatter_add(xp: Any) -> Callable[[Any, Any, Any], None]:
    if xp.__name__ == "cupy":
        import cupyx

        return cupyx.scatter_add
    return xp.add.at  # the simulated GPU: NumPy's, limited to CuPy's atomics


def _up(torch: Any, a: np.ndarray, index: bool = False) -> Any:
    t = torch.as_tensor(a, device="cuda")
    return t.long() if index else t


def space_to_batch_nd(arrays: list[np.ndarray], torch: Any, xp: Any, pads: Any) -> Peers:
    """Pad into a zeroed buffer (when padding), then one transposing copy."""
    (x,) = arrays
    b, h, w, c = x.shape
    (top, bottom), (left, right) = pads
    hp, wp = h + top + bottom, w + left + right
    out_shape = (b * 8, hp // 2, wp // 4, c)
    cx = xp.asarray(x)

    def cupy_fn():
        p = cx
        if top or bottom or left or right:
            p = xp.zeros((b, hp, wp, c), cx.dtype)
            p[:, top : top + h, left : left + w] = cx
        r = p.reshape(b, hp // 2, 2, wp // 4, 4, c).transpose(2, 4, 0, 1, 3, 5)
        return xp.ascontiguousarray(r).reshape(out_shape)

    if torch is None:
        return None, cupy_fn

    tx = _up(torch, x)

    def torch_fn():
        p = tx
        if top or bottom or left or right:
            p = tx.new_zeros((b, hp, wp, c))
            p[:, top : top + h, left : left + w] = tx
        r = p.view(b, hp // 2, 2, wp // 4, 4, c).permute(2, 4, 0, 1, 3, 5)
        return r.contiguous().view(out_shape)

    return torch_fn, cupy_fn


def batch_to_space_nd(arrays: list[np.ndarray], torch: Any, xp: Any, crops: Any) -> Peers:
    """One transposing copy, then (when cropping) a copy of the cropped window."""
    (x,) = arrays
    b, h, w, c = x.shape
    (top, bottom), (left, right) = crops
    full = (b // 8, h * 2, w * 4, c)
    cropped = top or bottom or left or right
    cx = xp.asarray(x)

    def cupy_fn():
        r = cx.reshape(2, 4, b // 8, h, w, c).transpose(2, 3, 0, 4, 1, 5)
        r = xp.ascontiguousarray(r).reshape(full)
        if cropped:
            r = xp.ascontiguousarray(r[:, top : h * 2 - bottom, left : w * 4 - right])
        return r

    if torch is None:
        return None, cupy_fn

    tx = _up(torch, x)

    def torch_fn():
        r = tx.view(2, 4, b // 8, h, w, c).permute(2, 3, 0, 4, 1, 5).reshape(full)
        if cropped:
            r = r[:, top : h * 2 - bottom, left : w * 4 - right].contiguous()
        return r

    return torch_fn, cupy_fn


def dynamic_stitch(arrays: list[np.ndarray], torch: Any, xp: Any) -> Peers:
    """``out[i] = d`` for each list in order; the row count (max index + 1) is read back
    to the host, as any stitch must before it allocates its output."""
    n = len(arrays) // 2
    width = arrays[n].shape[1:]
    dtype = arrays[n].dtype

    idx = [xp.asarray(i) for i in arrays[:n]]
    data = [xp.asarray(d) for d in arrays[n:]]

    def cupy_fn():
        rows = int(xp.stack([i.max() for i in idx]).max()) + 1
        out = xp.zeros((rows, *width), dtype)
        for i, d in zip(idx, data):
            out[i] = d
        return out

    if torch is None:
        return None, cupy_fn
    t_idx = [_up(torch, i, index=True) for i in arrays[:n]]
    t_data = [_up(torch, d) for d in arrays[n:]]

    def torch_fn():
        rows = int(torch.stack([i.max() for i in t_idx]).max()) + 1
        out = t_data[0].new_zeros((rows, *width))
        for i, d in zip(t_idx, t_data):
            out.index_copy_(0, i, d)
        return out

    return torch_fn, cupy_fn


def dynamic_partition(arrays: list[np.ndarray], torch: Any, xp: Any, parts: int) -> Peers:
    """A stable argsort of the ids, one gather, split by the ids' counts (read back)."""
    x, p = arrays
    cx, cp = xp.asarray(x), xp.asarray(p)

    def cupy_fn():
        gathered = xp.take(cx, xp.argsort(cp), axis=0)
        counts = xp.asnumpy(xp.bincount(cp, minlength=parts))
        return xp.split(gathered, np.cumsum(counts)[:-1].tolist())

    if torch is None:
        return None, cupy_fn

    tx, tp = _up(torch, x), _up(torch, p)  # int32 ids: sort keys, not indices

    def torch_fn():
        gathered = tx.index_select(0, torch.argsort(tp, stable=True))
        counts = torch.bincount(tp, minlength=parts).tolist()
        return list(torch.split(gathered, counts))

    return torch_fn, cupy_fn


def partition_stitch(arrays: list[np.ndarray], torch: Any, xp: Any) -> Peers:
    """The composition: positions of a stable argsort, a gather, a scatter back."""
    x, p = arrays
    cx, cp = xp.asarray(x), xp.asarray(p)

    def cupy_fn():
        order = xp.argsort(cp)
        out = xp.empty_like(cx)
        out[order] = xp.take(cx, order, axis=0)
        return out

    if torch is None:
        return None, cupy_fn

    tx, tp = _up(torch, x), _up(torch, p)  # int32 ids: sort keys, not indices

    def torch_fn():
        order = torch.argsort(tp, stable=True)
        out = torch.empty_like(tx)
        out.index_copy_(0, order, tx.index_select(0, order))
        return out

    return torch_fn, cupy_fn


def tensor_scatter(arrays: list[np.ndarray], torch: Any, xp: Any, op: str) -> Peers:
    """A copy of the tensor (or zeros, for scatter_nd), then ``out[i] = u`` or an atomic
    add (of ``-u`` for sub). Rows (index depth 1) and single elements (depth 2)."""
    if op not in ("update", "add", "sub", "scatter_nd"):
        return None, None
    if op == "scatter_nd":
        (idx, upd), t = arrays, None
        shape = (4 * 2**20, 16)  # ops.py's scatter_nd case: "into [4M,16]"
    else:
        t, idx, upd = arrays
        shape = t.shape
    rows = idx.shape[1] == 1
    scatter_add = _scatter_add(xp)
    cols = [np.ascontiguousarray(idx[:, k]) for k in range(idx.shape[1])]
    c_t = None if t is None else xp.asarray(t)
    c_u = xp.asarray(upd)
    c_key = xp.asarray(cols[0]) if rows else tuple(xp.asarray(k) for k in cols)

    def cupy_fn():
        out = xp.zeros(shape, c_u.dtype) if c_t is None else c_t.copy()
        if op == "update":
            out[c_key] = c_u
        else:
            scatter_add(out, c_key, -c_u if op == "sub" else c_u)
        return out

    if torch is None:
        return None, cupy_fn
    t_t = None if t is None else _up(torch, t)
    t_u = _up(torch, upd)
    t_key = tuple(_up(torch, k, index=True) for k in cols)

    def torch_fn():
        out = t_u.new_zeros(shape) if t_t is None else t_t.clone()
        if op == "update":
            return out.index_put_(t_key, t_u)
        if rows:
            return out.index_add_(0, t_key[0], t_u, alpha=-1 if op == "sub" else 1)
        return out.index_put_(t_key, -t_u if op == "sub" else t_u, accumulate=True)

    return torch_fn, cupy_fn


def gather_nd(arrays: list[np.ndarray], torch: Any, xp: Any) -> Peers:
    """``index_select`` / ``take(axis=0)`` of rows; advanced indexing of elements."""
    params, idx = arrays
    rows = idx.shape[1] == 1
    c_cols = [xp.asarray(np.ascontiguousarray(idx[:, k])) for k in range(idx.shape[1])]

    c_params = xp.asarray(params)

    def cupy_fn():
        if rows:
            return xp.take(c_params, c_cols[0], axis=0)
        return c_params[c_cols[0], c_cols[1]]

    if torch is None:
        return None, cupy_fn
    cols = [_up(torch, np.ascontiguousarray(idx[:, k]), index=True) for k in range(idx.shape[1])]

    t_params = _up(torch, params)

    def torch_fn():
        if rows:
            return t_params.index_select(0, cols[0])
        return t_params[cols[0], cols[1]]

    return torch_fn, cupy_fn


def elementwise_chain(arrays: list[np.ndarray], torch: Any, xp: Any, ops: int) -> Peers:
    """ops.py's chain (multiply, add alternating, then sqrt), in place after the first."""
    (x,) = arrays
    a, b = np.float32(1.0001), np.float32(0.5)

    cx = xp.asarray(x)

    def cupy_fn():
        out = xp.multiply(cx, a)
        for i in range(1, ops - 1):
            if i % 2 == 0:
                xp.multiply(out, a, out=out)
            else:
                xp.add(out, b, out=out)
        return xp.sqrt(out, out=out)

    if torch is None:
        return None, cupy_fn

    tx = _up(torch, x)

    def torch_fn():
        out = torch.mul(tx, float(a))
        for i in range(1, ops - 1):
            if i % 2 == 0:
                out.mul_(float(a))
            else:
                out.add_(float(b))
        return out.sqrt_()

    return torch_fn, cupy_fn


def for_case(name: str, arrays: list[np.ndarray], torch: Any, xp: Any) -> Peers:
    """The peers of the ops.py case called ``name`` (its parameters read from the name)."""
    shifted = [[1, 1], [3, 1]]
    none = [[0, 0], [0, 0]]
    if name.startswith("space_to_batch_nd"):
        return space_to_batch_nd(arrays, torch, xp, none if "no padding" in name else shifted)
    if name.startswith("batch_to_space_nd"):
        return batch_to_space_nd(arrays, torch, xp, none if "no crop" in name else shifted)
    if name.startswith(("dynamic_stitch", "parallel_dynamic_stitch")):
        return dynamic_stitch(arrays, torch, xp)
    if name.startswith("dynamic_partition"):
        parts = int(re.search(r"into (\d+)", name).group(1))
        return dynamic_partition(arrays, torch, xp, parts)
    if name.startswith("partition then stitch"):
        return partition_stitch(arrays, torch, xp)
    if name.startswith("tensor_scatter_nd_"):
        return tensor_scatter(
            arrays, torch, xp, name.split(",")[0].removeprefix("tensor_scatter_nd_")
        )
    if name.startswith("scatter_nd"):
        return tensor_scatter(arrays, torch, xp, "scatter_nd")
    if name.startswith("gather_nd"):
        return gather_nd(arrays, torch, xp)
    if name.startswith("elementwise chain"):
        return elementwise_chain(arrays, torch, xp, int(re.search(r"(\d+) ops", name).group(1)))
    return None, None
