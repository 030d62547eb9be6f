"""Object-detection ops: NonMaxSuppressionV3/V4/V5 and CropAndResize, as TensorFlow's CPU
kernels compute them, written once against ``xp``.

Non-max suppression. TensorFlow pops candidates (scores above ``score_threshold``) from a
priority queue by score, the lower box index first among equal scores, and compares each
with the boxes selected since it was last compared, newest first, by intersection over union
(IoU, in float32 from the boxes cast to float, then cast to ``T``). Hard NMS
(``soft_nms_sigma`` 0) drops a candidate that overlaps a selected box by more than
``iou_threshold``; with finite boxes that is the greedy rule, run here as a loop over the
selected boxes only: each selection computes one row of IoUs against the later candidates
(one vector operation) and the next selection is the first survivor. Soft NMS multiplies a
candidate's score by ``exp(-0.5 / sigma * iou * iou)`` for each box selected since it was
last popped, in ``T``, and puts it back unless it fell to ``score_threshold``; here each
selection round refreshes the candidates that TensorFlow's queue would pop before the winner
(those whose stale score beats the winner's refreshed one) with the same products in the same
order, in blocks found by doubling, so scores match TensorFlow bit for bit. Boxes holding
NaN or infinity take that path too, as their IoUs feed TensorFlow's weights oddly (a NaN IoU
zeroes a score rather than suppressing it). Corners may come in either order.

CropAndResize samples each box's ``crop_size`` grid, vectorised over boxes and pixels, with
TensorFlow's float32 coordinates (``y1 * (h - 1) + y * scale``, the box centre in double for
a size of 1) and blends, extrapolating outside the image.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from minigraph import dtypes, errors
from minigraph.devices import is_cupy
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array, shape_str, type_set
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import ShapeError, TensorShape, merge_dim, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = (
    "non_max_suppression",
    "non_max_suppression_with_scores",
    "non_max_suppression_v4",
    "non_max_suppression_v5",
    "crop_and_resize",
)

_NMS_T = "T: {float16, float32} = float32"
_NMS_THRESHOLD_T = "T_threshold: {float16, float32} = float32"
_PAD = "pad_to_max_output_size: bool = False"
_NMS_HOST = ["max_output_size", "iou_threshold", "score_threshold"]
_BLOCK = 16  # candidates refreshed at once by soft NMS before doubling


# -- shape function ----------------------------------------------------------------------


def _known(spec: TensorSpec) -> Any:
    """The value of a known scalar input, else None."""
    return None if spec.value is None or spec.value.ndim else spec.value


def _nms_shape(
    c: InferenceContext,
    boxes: TensorSpec,
    scores: TensorSpec,
    max_output_size: TensorSpec,
    iou_threshold: TensorSpec,
    score_threshold: TensorSpec,
    *soft_nms_sigma: TensorSpec,
) -> list[TensorShape]:
    """TensorFlow's NMSShapeFn (SoftNMSShapeFn with a sigma), with the kernel's value checks
    where the values are known: ``[num_selected]`` (``max_output_size`` when padded)."""
    bdims = with_rank(boxes.shape, 2).dims
    sdims = with_rank(scores.shape, 1).dims
    assert bdims is not None and sdims is not None  # with_rank gives a known rank
    for spec in (max_output_size, iou_threshold, score_threshold, *soft_nms_sigma):
        with_rank(spec.shape, 0)
    merge_dim(bdims[0], sdims[0])
    if bdims[1] not in (None, 4):
        raise ShapeError(f"Dimension must be 4 but is {bdims[1]}")
    t = c.attrs["T"].np
    iou = _known(iou_threshold)
    if iou is not None and not 0 <= iou.astype(t) <= 1:
        c.fail("iou_threshold must be in [0, 1]")
    sigma = _known(soft_nms_sigma[0]) if soft_nms_sigma else None
    if sigma is not None and not sigma.astype(t) >= 0:
        c.fail("soft_nms_sigma_val must be >= 0")
    size, limit = None, _known(max_output_size)
    if limit is not None and limit < 0:
        if c.attrs.get("pad_to_max_output_size"):
            raise ShapeError(
                f"Dimension size, given by scalar input 2, must be non-negative but is {limit}"
            )
        c.fail("output size must be non-negative")
    if limit is not None and c.attrs.get("pad_to_max_output_size"):
        size = int(limit)
    if c.op_type == "NonMaxSuppressionV3":
        return [TensorShape([size])]
    if c.op_type == "NonMaxSuppressionV4":
        return [TensorShape([size]), TensorShape([])]
    return [TensorShape([size]), TensorShape([size]), TensorShape([])]


# -- kernel checks -----------------------------------------------------------------------


def _scalar(ctx: KernelContext, x: Any, name: str, rank_note: bool) -> Any:
    """A scalar input as a NumPy scalar (which CuPy takes as an operand, unlike a 0-d
    NumPy array); V3 appends the rank to some of its messages."""
    x = host_array(ctx, x)
    if x.ndim != 0:
        note = f" (Shape must be rank 0 but is rank {x.ndim})" if rank_note else ""
        ctx.fail(f"{name} must be 0-D, got shape {shape_str(x.shape)}{note}")
    return x[()]


def _nms_args(ctx: KernelContext, boxes: Any, scores: Any, *scalars: Any) -> tuple:
    """TensorFlow's checks in its order; (limit, iou_threshold, score_threshold, sigma) with
    the thresholds in ``T``."""
    v3 = ctx.op_type == "NonMaxSuppressionV3"
    t = ctx.attrs["T"].np
    limit = _scalar(ctx, scalars[0], "max_output_size", v3)
    iou = _scalar(ctx, scalars[1], "iou_threshold", v3).astype(t)
    if not 0 <= iou <= 1:
        ctx.fail("iou_threshold must be in [0, 1]")
    score = _scalar(ctx, scalars[2], "score_threshold", False).astype(t)
    sigma = t.type(0)
    if len(scalars) > 3:
        sigma = _scalar(ctx, scalars[3], "soft_nms_sigma", False).astype(t)
        if not sigma >= 0:
            ctx.fail("soft_nms_sigma_val must be >= 0")
    if boxes.ndim != 2:
        ctx.fail(
            f"boxes must be 2-D{shape_str(boxes.shape)} "
            f"(Shape must be rank 2 but is rank {boxes.ndim})"
        )
    if boxes.shape[1] != 4:
        ctx.fail(f"boxes must have 4 columns (Dimension must be 4 but is {boxes.shape[1]})")
    if scores.ndim != 1:
        ctx.fail(
            f"scores must be 1-D{shape_str(scores.shape)} "
            f"(Shape must be rank 1 but is rank {scores.ndim})"
        )
    if scores.shape[0] != boxes.shape[0]:
        ctx.fail(
            "scores has incompatible shape (Dimensions must be equal, but are "
            f"{boxes.shape[0]} and {scores.shape[0]})"
        )
    if limit < 0:
        ctx.fail("output size must be non-negative")
    return int(limit), iou, score, sigma


# -- selection ---------------------------------------------------------------------------


def _mini(xp: Any, a: Any, b: Any) -> Any:
    """Eigen's numext::mini (std::min): ``b < a ? b : a``, NaNs where std::min puts them."""
    return xp.where(b < a, b, a)


def _maxi(xp: Any, a: Any, b: Any) -> Any:
    """Eigen's numext::maxi (std::max): ``a < b ? b : a``."""
    return xp.where(a < b, b, a)


def _corners(xp: Any, boxes: Any) -> Any:
    """``[5, n]`` float32: each box's ymin, xmin, ymax, xmax and area, as TensorFlow's IOU
    orders the corners of a float32 box."""
    y1, x1, y2, x2 = (boxes[:, k] for k in range(4))
    ymin, xmin, ymax, xmax = (
        _mini(xp, y1, y2),
        _mini(xp, x1, x2),
        _maxi(xp, y1, y2),
        _maxi(xp, x1, x2),
    )
    return xp.stack([ymin, xmin, ymax, xmax, (ymax - ymin) * (xmax - xmin)])


def _iou(xp: Any, cand: Any, sel: Any) -> Any:
    """TensorFlow's IOU(candidate, selected) in float32 from :func:`_corners` (broadcasting
    after the first axis): zero when either box is empty."""
    zero = np.float32(0)
    height = _maxi(xp, _mini(xp, cand[2], sel[2]) - _maxi(xp, cand[0], sel[0]), zero)
    width = _maxi(xp, _mini(xp, cand[3], sel[3]) - _maxi(xp, cand[1], sel[1]), zero)
    inter = height * width
    iou = inter / (cand[4] + sel[4] - inter)
    return xp.where((cand[4] <= 0) | (sel[4] <= 0), zero, iou)


def _greedy(xp: Any, corners: Any, limit: int, iou_threshold: Any) -> list[int]:
    """Hard NMS of finite boxes (:func:`_corners`) in queue order: the positions selected.
    One pass per selected box: its IoUs with the later candidates strike those above the
    threshold."""
    m = corners.shape[1]
    alive = xp.ones(m + 1, bool)  # the last entry ends the search for a survivor
    picks: list[int] = []
    start = 0
    while len(picks) < limit:
        p = start + int(xp.argmax(alive[start:]))
        if p == m:
            break
        picks.append(p)
        sims = _iou(xp, corners[:, p + 1 :], corners[:, p : p + 1])
        alive[p + 1 : m] &= ~(sims.astype(iou_threshold.dtype) > iou_threshold)
        start = p + 1
    return picks


# glibc's expf (sysdeps/ieee754/flt-32/e_expf.c), which TensorFlow's soft-NMS weights call:
# within 0.502 ulp, so about one result in 2000 is not the correctly rounded one (NumPy's
# float32 exp, or float64 exp rounded, would differ there and move a score by one ulp).
# exp(x) = 2^(k/32) * 2^(r/32): a 32-entry table of 2^(i/32) (as bits, less i << 47), a
# cubic in r, all in float64, rounded once to float32.
_EXP2F_TABLE = (
    0x3FF0000000000000, 0x3FEFD9B0D3158574, 0x3FEFB5586CF9890F, 0x3FEF9301D0125B51,
    0x3FEF72B83C7D517B, 0x3FEF54873168B9AA, 0x3FEF387A6E756238, 0x3FEF1E9DF51FDEE1,
    0x3FEF06FE0A31B715, 0x3FEEF1A7373AA9CB, 0x3FEEDEA64C123422, 0x3FEECE086061892D,
    0x3FEEBFDAD5362A27, 0x3FEEB42B569D4F82, 0x3FEEAB07DD485429, 0x3FEEA47EB03A5585,
    0x3FEEA09E667F3BCD, 0x3FEE9F75E8EC5F74, 0x3FEEA11473EB0187, 0x3FEEA589994CCE13,
    0x3FEEACE5422AA0DB, 0x3FEEB737B0CDC5E5, 0x3FEEC49182A3F090, 0x3FEED503B23E255D,
    0x3FEEE89F995AD3AD, 0x3FEEFF76F2FB5E47, 0x3FEF199BDD85529C, 0x3FEF3720DCEF9069,
    0x3FEF5818DCFBA487, 0x3FEF7C97337B9B5F, 0x3FEFA4AFA2A490DA, 0x3FEFD0765B6E4540,
)  # fmt: skip
_EXP2F_SHIFT = float.fromhex("0x1.8p+52")
_EXPF_INV_LN2 = float.fromhex("0x1.71547652b82fep+0") * 32
_EXPF_POLY = (
    float.fromhex("0x1.c6af84b912394p-5") / 32**3,
    float.fromhex("0x1.ebfce50fac4f3p-3") / 32**2,
    float.fromhex("0x1.62e42ff0c52d6p-1") / 32,
)
_EXPF_UNDERFLOW = np.float32(float.fromhex("-0x1.9fe368p6"))  # below: 0


def _expf(xp: Any, x: Any) -> Any:
    """glibc's expf of float32 ``x`` <= 0 (the soft-NMS exponents), bit for bit."""
    z = _EXPF_INV_LN2 * x.astype(np.float64)
    shifted = z + _EXP2F_SHIFT  # k in the low bits: z rounded to an integer, ties to even
    k = shifted.view(np.uint64)
    r = z - (shifted - _EXP2F_SHIFT)
    table = xp.asarray(np.array(_EXP2F_TABLE, np.uint64))
    scale = (table[k & np.uint64(31)] + (k << np.uint64(47))).view(np.float64)
    c0, c1, c2 = _EXPF_POLY
    y = (c0 * r + c1) * (r * r) + (c2 * r + 1)
    return xp.where(x < _EXPF_UNDERFLOW, np.float32(0), (y * scale).astype(np.float32))


def _row_products(xp: Any, factors: Any) -> Any:
    """Each row's product, multiplied left to right in its dtype as TensorFlow's loop does
    (every product rounded). NumPy's cumprod does that; CuPy's scans in parallel, in another
    association that can move the last bit, so a GPU runs one thread a row instead."""
    if not is_cupy(xp):
        return xp.cumprod(factors, axis=1)[:, -1]
    out = xp.empty(factors.shape[0], factors.dtype)
    _row_products_kernel()(xp.ascontiguousarray(factors), factors.shape[1], out)
    return out


@functools.cache
def _row_products_kernel() -> Any:
    import cupy

    return cupy.ElementwiseKernel(
        "raw T factors, int64 cols",
        "T out",
        """
        T product = factors[i * cols];
        for (long long c = 1; c < cols; ++c) {
            product = product * factors[i * cols + c];
        }
        out = product;
        """,
        "minigraph_row_products",
    )


class _Queue:
    """TensorFlow's candidate queue, refreshed lazily: each candidate's score, the number of
    selected boxes it has been compared with, and whether it is still queued."""

    def __init__(self, xp: Any, corners: Any, scores: Any, limit: int, args: tuple) -> None:
        self.xp = xp
        self.corners, self.score = corners, scores.copy()
        m = corners.shape[1]
        self.seen = xp.zeros(m, np.int64)
        self.queued = xp.ones(m, bool)
        self.selected = xp.empty((5, min(limit, m)), np.float32)
        self.k = 0
        self.iou_threshold, self.score_threshold, sigma = args
        self.soft = bool(sigma > 0)
        self.scale = (np.float32(-0.5) / sigma).astype(sigma.dtype) if self.soft else None

    def refresh(self, rows: Any) -> tuple[Any, Any]:
        """What popping ``rows`` would make of them: their scores after the selected boxes
        they have not seen (newest first, in ``T``), and whether they leave the queue."""
        xp, score, seen = self.xp, self.score[rows], self.seen[rows]
        first = int(seen.min())
        if first >= self.k:
            return score, xp.zeros(rows.shape[0], bool)
        t = score.dtype
        sel = self.selected[:, first : self.k][:, None, ::-1]  # newest first, as TensorFlow
        sims = _iou(xp, self.corners[:, rows][:, :, None], sel).astype(t)
        column = xp.arange(self.k - 1, first - 1, -1)
        unseen = column[None, :] >= seen[:, None]
        if self.soft:
            weight = _expf(xp, (self.scale * sims * sims).astype(np.float32)).astype(t)
        else:
            weight = (sims <= self.iou_threshold).astype(t)  # a NaN IoU zeroes the score
        weight = xp.where(unseen, weight, t.type(1))
        new = _row_products(xp, xp.concatenate([score[:, None], weight], axis=1))
        # at or below the threshold it leaves; no later weight (in [0, 1]) lifts it back
        leaves = ~(new > self.score_threshold)
        if not self.soft:
            leaves |= (unseen & (sims > self.iou_threshold)).any(axis=1)
        return new, leaves

    def next(self) -> tuple[int, Any] | None:
        """Pop until a candidate is selected, as TensorFlow's loop: (row, score) or None.

        In queue order (position ``i`` of ``n``), each popped candidate goes back with its
        refreshed key ``f_i``; the round ends once some refreshed key beats the next queued
        one, i.e. after position ``min_i max(i, q_i - 1)``, with ``q_i`` the number of
        queued keys above ``f_i``, and the best refreshed key so far is selected. A block
        of the first candidates settles it unless that position lies past the block.
        """
        xp = self.xp
        live = xp.nonzero(self.queued)[0]
        if live.size == 0:
            return None
        keys = _queue_keys(xp, self.score[live], live)
        ranked = xp.argsort(keys)
        ascending, order = keys[ranked], live[ranked[::-1]]
        n = order.shape[0]
        size = min(_BLOCK, n)
        while True:
            rows = order[:size]
            new, leaves = self.refresh(rows)
            new_keys = _queue_keys(xp, new, rows)
            above = n - xp.searchsorted(ascending, new_keys, side="right")
            ends = xp.where(leaves, n, xp.maximum(xp.arange(size), above - 1))
            stop = int(ends.min())
            if stop < size:
                break
            if size == n:  # every candidate left the queue
                self.queued[live] = False
                return None
            size = min(2 * size, n)
        done, leaves = rows[: stop + 1], leaves[: stop + 1]
        lowest = np.iinfo(np.int64).min
        win = int(xp.argmax(xp.where(leaves, lowest, new_keys[: stop + 1])))
        self.score[done] = new[: stop + 1]
        self.seen[done] = self.k
        self.queued[done[leaves]] = False
        row = int(done[win])
        self.queued[row] = False
        self.selected[:, self.k] = self.corners[:, row]
        self.k += 1
        return row, new[win]


def _queue_keys(xp: Any, scores: Any, rows: Any) -> Any:
    """One int64 per candidate that orders as TensorFlow's queue pops: by score (-0.0 as
    0.0; no NaN is queued), then the lower row (rows ascend with box index)."""
    size = scores.dtype.itemsize
    bits = (scores + scores.dtype.type(0)).view(f"u{size}").astype(np.int64)
    sign = 1 << (8 * size - 1)
    magnitude = bits & (sign - 1)
    ordered = xp.where(bits >= sign, -magnitude, magnitude)  # monotone in the score
    return ordered * (1 << 32) - rows.astype(np.int64)


def _nms_kernel(ctx: KernelContext, boxes: Any, scores: Any, *scalars: Any) -> tuple:
    """The selected indices, their scores and the valid count, padded when asked."""
    xp = ctx.xp
    limit, iou, score_threshold, sigma = _nms_args(ctx, boxes, scores, *scalars)
    pad = ctx.attrs.get("pad_to_max_output_size", False)
    if pad:
        ctx.check_size((limit,), np.int32)
    rows = xp.nonzero(scores > score_threshold)[0]
    if not sigma > 0 and bool(xp.isfinite(boxes[rows]).all()):
        order = rows[xp.argsort(_queue_keys(xp, scores[rows], rows))[::-1]]  # queue order
        picks = np.array(_greedy(xp, _corners(xp, boxes[order].astype(np.float32)), limit, iou))
        chosen = host_array(ctx, order)[picks.astype(np.int64)]
        kept = scores[order[xp.asarray(picks.astype(np.int64))]]
    else:
        args = (iou, score_threshold, sigma)
        queue = _Queue(xp, _corners(xp, boxes[rows].astype(np.float32)), scores[rows], limit, args)
        picked, values = [], []
        while len(picked) < limit:
            popped = queue.next()
            if popped is None:
                break
            picked.append(popped[0])
            values.append(popped[1])
        chosen = host_array(ctx, rows)[np.array(picked, np.int64)]
        kept = xp.stack(values) if values else xp.zeros(0, scores.dtype)
    valid = len(chosen)
    size = limit if pad else valid
    indices = np.zeros(size, np.int32)
    indices[:valid] = chosen
    selected_scores = xp.zeros(size, scores.dtype)
    selected_scores[:valid] = kept
    return xp.asarray(indices), selected_scores, xp.asarray(np.int32(valid))


_NMS_DOC = """
Greedy non-max suppression of ``boxes`` (``[num_boxes, 4]``, corners ``[y1, x1, y2, x2]`` in
either order) by ``scores``, as TensorFlow's CPU kernel: candidates are the boxes scoring
above ``score_threshold``, taken by score (the lower index first among equal scores); each
is selected unless its IoU with a box selected before it is above ``iou_threshold``, until
``max_output_size`` are selected. IoUs are float32 (zero for an empty box), compared in
``T``. ``max_output_size``, ``iou_threshold`` and ``score_threshold`` are read on the host;
a GPU runs the same kernel, reading back one index a selection.
"""
_NMS_ERRORS = """
Errors (InvalidArgumentError, TensorFlow's messages): ``iou_threshold`` outside [0, 1],
a negative ``max_output_size``, non-scalar thresholds, ``boxes`` not ``[n, 4]``, ``scores``
not ``[n]``.
"""
_PAD_DOC = """
With ``pad_to_max_output_size`` the indices are padded with zeros to ``max_output_size``
(a static shape when that is a constant); ``valid_outputs`` counts the real ones.
"""

NON_MAX_SUPPRESSION_V3 = define_op(
    "NonMaxSuppressionV3",
    inputs=["boxes: T", "scores: T", "max_output_size: int32"]
    + ["iou_threshold: T_threshold", "score_threshold: T_threshold"],
    outputs=["selected_indices: int32"],
    attrs=[_NMS_T, _NMS_THRESHOLD_T],
    shape_fn=_nms_shape,
    host_inputs=_NMS_HOST,
    doc=_NMS_DOC + _NMS_ERRORS + "\nExample: see ``non_max_suppression``.\n",
)
NON_MAX_SUPPRESSION_V4 = define_op(
    "NonMaxSuppressionV4",
    inputs=["boxes: T", "scores: T", "max_output_size: int32"]
    + ["iou_threshold: T_threshold", "score_threshold: T_threshold"],
    outputs=["selected_indices: int32", "valid_outputs: int32"],
    attrs=[_NMS_T, _NMS_THRESHOLD_T, _PAD],
    shape_fn=_nms_shape,
    host_inputs=_NMS_HOST,
    doc=_NMS_DOC + _PAD_DOC + _NMS_ERRORS,
)
NON_MAX_SUPPRESSION_V5 = define_op(
    "NonMaxSuppressionV5",
    inputs=["boxes: T", "scores: T", "max_output_size: int32"]
    + ["iou_threshold: T", "score_threshold: T", "soft_nms_sigma: T"],
    outputs=["selected_indices: int32", "selected_scores: T", "valid_outputs: int32"],
    attrs=[_NMS_T, _PAD],
    shape_fn=_nms_shape,
    host_inputs=[*_NMS_HOST, "soft_nms_sigma"],
    doc=_NMS_DOC
    + """
With ``soft_nms_sigma`` > 0 this is Soft-NMS (Bodla et al.): no box is dropped for its
overlap (``iou_threshold`` plays no part); instead a candidate's score is multiplied by
``exp(-0.5 / sigma * iou**2)`` for each box selected before it (in ``T``, in TensorFlow's
order and with glibc's ``expf``, as TensorFlow on Linux, so the scores match bit for bit)
and it competes again with the lowered score, leaving once that is no longer above
``score_threshold``. ``selected_scores`` are the scores at selection.
"""
    + _PAD_DOC
    + _NMS_ERRORS
    + "A negative ``soft_nms_sigma`` is refused too.\n",
)


@register_kernel("NonMaxSuppressionV3", "CPU", "GPU")
def _non_max_suppression_v3_kernel(ctx: KernelContext, *inputs: Any) -> Any:
    return _nms_kernel(ctx, *inputs)[0]


@register_kernel("NonMaxSuppressionV4", "CPU", "GPU")
def _non_max_suppression_v4_kernel(ctx: KernelContext, *inputs: Any) -> tuple[Any, Any]:
    indices, _, valid = _nms_kernel(ctx, *inputs)
    return indices, valid


@register_kernel("NonMaxSuppressionV5", "CPU", "GPU")
def _non_max_suppression_v5_kernel(ctx: KernelContext, *inputs: Any) -> tuple[Any, Any, Any]:
    return _nms_kernel(ctx, *inputs)


NonMaxSuppressionV3 = make_wrapper_class(NON_MAX_SUPPRESSION_V3)
NonMaxSuppressionV4 = make_wrapper_class(NON_MAX_SUPPRESSION_V4)
NonMaxSuppressionV5 = make_wrapper_class(NON_MAX_SUPPRESSION_V5)
non_max_suppression_v4 = make_builder(NON_MAX_SUPPRESSION_V4, "non_max_suppression_v4")
non_max_suppression_v5 = make_builder(NON_MAX_SUPPRESSION_V5, "non_max_suppression_v5")
_non_max_suppression_v3 = make_builder(NON_MAX_SUPPRESSION_V3, "non_max_suppression")


def _threshold(value: Any, like: Any) -> Any:
    """A Python threshold as a scalar of ``like``'s float type (float32 unless an Output)."""
    if isinstance(value, Output):
        return value
    dtype = like.dtype.np if isinstance(like, Output) else np.asarray(like).dtype
    return np.asarray(value, dtype if dtype in (np.float16, np.float32) else np.float32)


def non_max_suppression(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: Any = 0.5,
    score_threshold: Any = float("-inf"),
    name: str | None = None,
) -> Output:
    """The indices of the boxes kept by greedy non-max suppression, as
    ``tf.image.non_max_suppression`` (NonMaxSuppressionV3).

    >>> import numpy as np, minigraph as mg
    >>> boxes = np.float32([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]])
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     kept = mg.non_max_suppression(boxes, np.float32([0.9, 0.95, 0.5]), 3)
    >>> mg.Session(g).run(kept)
    array([1, 2], dtype=int32)
    """
    return _non_max_suppression_v3(
        boxes,
        scores,
        np.int32(max_output_size) if not isinstance(max_output_size, Output) else max_output_size,
        _threshold(iou_threshold, scores),
        _threshold(score_threshold, scores),
        name=name or "NonMaxSuppressionV3",
    )


def non_max_suppression_with_scores(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: Any = 0.5,
    score_threshold: Any = float("-inf"),
    soft_nms_sigma: Any = 0.0,
    name: str | None = None,
) -> tuple[Output, Output]:
    """``(selected_indices, selected_scores)``, as ``tf.image.non_max_suppression_with_scores``
    (NonMaxSuppressionV5): Soft-NMS when ``soft_nms_sigma`` > 0.

    >>> import numpy as np, minigraph as mg
    >>> boxes = np.float32([[0, 0, 1, 1], [0, 0.5, 1, 1.5]])
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     i, s = mg.non_max_suppression_with_scores(boxes, np.float32([1, 1]), 2,
    ...                                               soft_nms_sigma=0.5)
    >>> mg.Session(g).run([i, s])
    [array([0, 1], dtype=int32), array([1.       , 0.8948393], dtype=float32)]
    """
    indices, selected, _ = non_max_suppression_v5(
        boxes,
        scores,
        np.int32(max_output_size) if not isinstance(max_output_size, Output) else max_output_size,
        _threshold(iou_threshold, scores),
        _threshold(score_threshold, scores),
        _threshold(soft_nms_sigma, scores),
        name=name or "NonMaxSuppressionV5",
    )
    return indices, selected


# -- CropAndResize -----------------------------------------------------------------------


def _crop_and_resize_shape(
    c: InferenceContext,
    image: TensorSpec,
    boxes: TensorSpec,
    box_ind: TensorSpec,
    crop_size: TensorSpec,
) -> TensorShape:
    """TensorFlow's shape function: ``[num_boxes, crop_height, crop_width, depth]``."""
    idims = with_rank(image.shape, 4).dims
    bdims = with_rank(boxes.shape, 2).dims
    kdims = with_rank(box_ind.shape, 1).dims
    sdims = with_rank(crop_size.shape, 1).dims
    assert idims is not None and bdims is not None and kdims is not None and sdims is not None
    num_boxes = merge_dim(bdims[0], kdims[0])
    if bdims[1] not in (None, 4):
        raise ShapeError(f"Dimension must be 4 but is {bdims[1]}")
    if sdims[0] not in (None, 2):
        raise ShapeError(f"Dimension must be 2 but is {sdims[0]}")
    if 0 in idims[1:3]:
        c.fail("image dimensions must be positive")
    hw: list[int | None] = [None, None]
    if crop_size.value is not None:
        hw = [int(v) for v in crop_size.value.reshape(-1).tolist()]
        if min(hw) <= 0:
            c.fail("crop dimensions must be positive")
    return TensorShape([num_boxes, hw[0], hw[1], idims[3]])


def _crop_checks(ctx: KernelContext, image: Any, boxes: Any, box_ind: Any, crop_size: Any) -> tuple:
    """CropAndResizeOp::ComputeAsync's checks in its order: (num_boxes, height, width)."""
    if image.ndim != 4:
        ctx.fail(f"input image must be 4-D{shape_str(image.shape)}")
    if image.shape[1] <= 0 or image.shape[2] <= 0:
        ctx.fail("image dimensions must be positive")
    if boxes.ndim != 2:
        ctx.fail(f"boxes must be 2-D, got: {shape_str(boxes.shape)}")
    if box_ind.ndim != 1:
        ctx.fail(f"box_indices must be rank 1 but is shape {shape_str(box_ind.shape)}")
    num_boxes = 0
    if boxes.size or box_ind.size:  # TF takes empty boxes and indices of any shape as none
        num_boxes = boxes.shape[0]
        if boxes.shape[1] != 4:
            ctx.fail("boxes must have 4 columns")
        if box_ind.shape[0] != num_boxes:
            ctx.fail("box_index has incompatible shape")
    size = host_array(ctx, crop_size)
    if size.ndim != 1:
        ctx.fail(f"crop_size must be 1-D{shape_str(size.shape)}")
    if size.shape[0] != 2:
        ctx.fail(f"crop_size must have two elements{shape_str(size.shape)}")
    height, width = (int(v) for v in size.tolist())
    if height <= 0 or width <= 0:
        ctx.fail("crop dimensions must be positive")
    return num_boxes, height, width


def sample_at(
    xp: Any, lo: Any, hi: Any, size: int, in_size: int, by_ratio: bool = False
) -> tuple[Any, Any]:
    """Each box's sample coordinates along one axis (``[num_boxes, size]``, float32) from
    its edges, as TensorFlow computes them, and whether each lies inside the image.
    ``by_ratio``: the step as CropAndResizeGradBoxes rounds it, the edges' difference
    times ``(in_size - 1) / (size - 1)`` (the forward op and CropAndResizeGradImage
    multiply first, then divide)."""
    last = np.float32(in_size - 1)
    if size > 1:
        ratio = last / np.float32(size - 1)
        scale = (hi - lo) * ratio if by_ratio else (hi - lo) * last / np.float32(size - 1)
        at = lo[:, None] * last + xp.arange(size, dtype=np.float32)[None, :] * scale[:, None]
    else:  # the centre, in double: 0.5 * (y1 + y2) * (height - 1)
        at = (0.5 * (lo + hi).astype(np.float64) * (in_size - 1)).astype(np.float32)[:, None]
    inside = (at >= 0) & (at <= last)  # NaN (from overflowing boxes) extrapolates
    return xp.where(inside, at, np.float32(0)), inside


CROP_AND_RESIZE = define_op(
    "CropAndResize",
    inputs=["image: T", "boxes: float32", "box_ind: int32", "crop_size: int32"],
    outputs=["crops: float32"],
    attrs=[
        "T: "
        + type_set(
            (dtypes.uint8, dtypes.uint16, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
            + (dtypes.float16, dtypes.float32, dtypes.float64)
        ),
        "method: {'bilinear', 'nearest'} = 'bilinear'",
        "extrapolation_value: float = 0",
    ],
    shape_fn=_crop_and_resize_shape,
    host_inputs=["crop_size"],
    doc="""
Crops ``boxes`` (``[num_boxes, 4]`` rows ``[y1, x1, y2, x2]`` in normalised coordinates)
out of the NHWC ``image`` entries ``box_ind`` names and resizes each to ``crop_size`` =
``[crop_height, crop_width]``: float32 ``[num_boxes, crop_height, crop_width, depth]``. Row
``y`` samples at ``y1 * (height - 1) + y * (y2 - y1) * (height - 1) / (crop_height - 1)``
(the box centre when ``crop_height`` is 1), in float32 as TensorFlow's CPU kernel; a box may
be flipped (y1 > y2) or reach outside the image, where samples take
``extrapolation_value``. ``method`` is ``bilinear`` (blends as ResizeBilinear) or
``nearest`` (rounding halves up).

Errors: a ``box_ind`` outside ``[0, batch)`` is OutOfRangeError ("box_index has values
outside [0, batch_size)"); InvalidArgumentError for non-finite boxes, a non-positive crop
size, an empty image, and mismatched shapes, with TensorFlow's messages.

Example: the box ``[0, 0, 1, 1]`` of a 2x2 image ``[[0, 1], [2, 3]]`` cropped to 3x3 gives
``[[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]]``.
""",
)


@register_kernel("CropAndResize", "CPU", "GPU")
def _crop_and_resize_kernel(
    ctx: KernelContext, image: Any, boxes: Any, box_ind: Any, crop_size: Any
) -> Any:
    xp = ctx.xp
    num_boxes, height, width = _crop_checks(ctx, image, boxes, box_ind, crop_size)
    batch, image_height, image_width, depth = image.shape
    ctx.check_size((num_boxes, height, width, depth), np.float32)
    if not num_boxes:
        return xp.zeros((0, height, width, depth), np.float32)
    if bool(((box_ind < 0) | (box_ind >= batch)).any()):
        ctx.fail("box_index has values outside [0, batch_size)", errors.OutOfRangeError)
    if not bool(xp.isfinite(boxes).all()):
        ctx.fail("Boxes contains at least one element that is not finite")
    in_y, inside_y = sample_at(xp, boxes[:, 0], boxes[:, 2], height, image_height)
    in_x, inside_x = sample_at(xp, boxes[:, 1], boxes[:, 3], width, image_width)
    rows = image.reshape(batch * image_height * image_width, depth)
    base = box_ind.astype(np.int64)[:, None, None] * image_height

    def gather(y: Any, x: Any) -> Any:
        flat = ((base + y.astype(np.int64)[:, :, None]) * image_width) + x.astype(np.int64)[
            :, None, :
        ]
        return xp.take(rows, flat, axis=0).astype(np.float32, copy=False)

    if ctx.attrs["method"] == "nearest":  # roundf: halves away from zero (here >= 0)
        near_y = xp.floor(in_y) + (in_y - xp.floor(in_y) >= np.float32(0.5))
        near_x = xp.floor(in_x) + (in_x - xp.floor(in_x) >= np.float32(0.5))
        crops = gather(near_y, near_x)
    else:
        top, left = xp.floor(in_y), xp.floor(in_x)
        bottom, right = xp.ceil(in_y), xp.ceil(in_x)
        y_lerp = (in_y - top)[:, :, None, None]
        x_lerp = (in_x - left)[:, None, :, None]
        top_left = gather(top, left)
        upper = top_left + (gather(top, right) - top_left) * x_lerp
        bottom_left = gather(bottom, left)
        lower = bottom_left + (gather(bottom, right) - bottom_left) * x_lerp
        crops = upper + (lower - upper) * y_lerp
    inside = inside_y[:, :, None, None] & inside_x[:, None, :, None]
    return xp.where(inside, crops, np.float32(ctx.attrs["extrapolation_value"]))


CropAndResize = make_wrapper_class(CROP_AND_RESIZE)
_crop_and_resize = make_builder(CROP_AND_RESIZE, "crop_and_resize")


def crop_and_resize(
    image: Any,
    boxes: Any,
    box_indices: Any,
    crop_size: Any,
    method: str = "bilinear",
    extrapolation_value: float = 0.0,
    name: str | None = None,
) -> Output:
    """Crops ``boxes`` out of ``image`` and resizes them to ``crop_size``, as
    ``tf.image.crop_and_resize``.

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     image = np.float32([[0, 1], [2, 3]]).reshape(1, 2, 2, 1)
    ...     y = mg.crop_and_resize(image, [[0.0, 0.0, 1.0, 1.0]], [0], [3, 3])
    >>> mg.Session(g).run(y).reshape(3, 3)
    array([[0. , 0.5, 1. ],
           [1. , 1.5, 2. ],
           [2. , 2.5, 3. ]], dtype=float32)
    """

    def as_array(value: Any, dtype: Any) -> Any:
        return value if isinstance(value, Output) else np.asarray(value, dtype)

    return _crop_and_resize(
        image,
        as_array(boxes, np.float32),
        as_array(box_indices, np.int32),
        as_array(crop_size, np.int32),
        method=method,
        extrapolation_value=extrapolation_value,
        name=name or "CropAndResize",
    )


__all__ = [
    "NonMaxSuppressionV3",
    "NonMaxSuppressionV4",
    "NonMaxSuppressionV5",
    "CropAndResize",
    *BUILDERS,
]
