"""Image resizing: ResizeBilinear, ResizeNearestNeighbor and ResizeBicubic (NHWC images).

Both compute their source coordinates exactly as TensorFlow's CPU kernels do, in float32:
the scale is ``in / out`` (``(in - 1) / (out - 1)`` with ``align_corners``), a coordinate
``i * scale`` (legacy) or ``(i + 0.5) * scale - 0.5`` (``half_pixel_centers``; nearest
neighbour leaves out the ``- 0.5`` and floors). Each kernel works out the source rows and
columns once (vectors of the output's height and width), gathers them from the whole batch
(two ``take`` calls) and, for bilinear, blends them in TensorFlow's order of float32
operations; bicubic gathers four rows, then four columns, with float32 weights from
TensorFlow's table. No Python loop runs over pixels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph import dtypes
from minigraph.graph import Output
from minigraph.inference import InferenceContext, TensorSpec
from minigraph.kernel import KernelContext
from minigraph.ops.common import host_array, shape_str, type_set
from minigraph.registry import define_op, register_kernel
from minigraph.shapes import ShapeError, TensorShape, with_rank
from minigraph.wrappers import make_builder, make_wrapper_class

BUILDERS = ("resize_bilinear", "resize_nearest_neighbor", "resize_bicubic")

_TYPES = type_set(
    (dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.int64)
    + (dtypes.float16, dtypes.float32, dtypes.float64)
)
_ATTRS = [f"T: {_TYPES}", "align_corners: bool = False", "half_pixel_centers: bool = False"]
_BOTH = "If half_pixel_centers is True, align_corners must be False."
_INT32_MAX = 2**31 - 1


def _resize_shape(c: InferenceContext, images: TensorSpec, size: TensorSpec) -> TensorShape:
    """TensorFlow's ResizeShapeFn: [batch, size[0], size[1], channels]."""
    if c.attrs["half_pixel_centers"] and c.attrs["align_corners"]:
        c.fail(_BOTH)
    dims = with_rank(images.shape, 4).dims
    assert dims is not None  # with_rank gives a known rank
    sdims = with_rank(size.shape, 1).dims
    if sdims is not None and sdims[0] not in (None, 2):
        raise ShapeError(f"Dimension must be 2 but is {sdims[0]}")
    hw: list[int | None] = [None, None]
    if size.value is not None:
        hw = [int(v) if v >= 0 else None for v in size.value.reshape(-1).tolist()]
    return TensorShape([dims[0], hw[0], hw[1], dims[3]])


def resize_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """CalculateResizeScale, in float32."""
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def _validate(ctx: KernelContext, images: Any, size: Any) -> tuple[int, int]:
    """ImageResizerState::ValidateAndCalculateOutputSize's checks; the output's (h, w)."""
    if ctx.attrs["half_pixel_centers"] and ctx.attrs["align_corners"]:
        ctx.fail(_BOTH)
    if images.ndim != 4:
        ctx.fail(f"input must be 4-dimensional{shape_str(images.shape)}")
    n, h, w, channels = images.shape
    if channels <= 0:
        ctx.fail("image must have at least one channel")
    if h <= 0 or w <= 0:
        ctx.fail("input image must be of non-zero size")
    if h > _INT32_MAX or w > _INT32_MAX:
        ctx.fail("input sizes must be between 0 and max int32")
    size = host_array(ctx, size)
    if size.ndim != 1:
        ctx.fail(f"shape_t must be 1-dimensional{shape_str(size.shape)}")
    if size.size != 2:
        ctx.fail(f"shape_t must have two elements{shape_str(size.shape)}")
    out_h, out_w = (int(v) for v in size.tolist())
    if out_h <= 0 or out_w <= 0:
        ctx.fail("output dimensions must be positive")
    return out_h, out_w


def _coords(xp: Any, out_size: int, scale: np.float32, half_pixel: bool, shift: bool) -> Any:
    """Each output index's source coordinate, in float32 as TensorFlow's scalers (the
    half-pixel one subtracts 0.5 when ``shift``: bilinear, not nearest neighbour)."""
    i = xp.arange(out_size, dtype=np.float32)
    if not half_pixel:
        return i * scale
    v = (i + np.float32(0.5)) * scale
    return v - np.float32(0.5) if shift else v


# -- ResizeBilinear --------------------------------------------------------------------


def lerp_weights(xp: Any, out_size: int, in_size: int, scale: np.float32, half: bool) -> tuple:
    """compute_interpolation_weights: (lower, upper, lerp) for each output index."""
    v = _coords(xp, out_size, scale, half, shift=True)
    floor = xp.floor(v)
    lower = xp.clip(floor.astype(np.int64), 0, in_size - 1)  # TF never reads past the end
    upper = xp.minimum(xp.ceil(v).astype(np.int64), in_size - 1)
    return lower, upper, v - floor


RESIZE_BILINEAR = define_op(
    "ResizeBilinear",
    inputs=["images: T", "size: int32"],
    outputs=["resized_images: float"],
    attrs=_ATTRS,
    shape_fn=_resize_shape,
    host_inputs=["size"],
    doc="""
Resizes NHWC ``images`` to ``size`` = ``[new_height, new_width]`` by bilinear interpolation;
the result is float32 whatever ``T``. Source coordinates and blends follow TensorFlow's CPU
kernel in float32: with ``lerp`` the fractional part of the coordinate, each row blends
``left + (right - left) * x_lerp``, then ``top + (bottom - top) * y_lerp``; a size equal to
the input's is a plain cast (so inf and NaN stay put). ``align_corners`` maps the corner
pixels onto each other; ``half_pixel_centers`` samples at pixel centres (TF 2's
``tf.image.resize``); both at once are refused.

Errors (InvalidArgumentError): a non-positive size ("output dimensions must be positive"), an
empty image, ``size`` not a 2-vector, ``images`` not 4-D.

Example: the [1, 1, 2, 1] image ``[0, 4]`` resized to width 4 gives ``[0, 2, 4, 4]``.
""",
)


@register_kernel("ResizeBilinear", "CPU", "GPU")
def _resize_bilinear_kernel(ctx: KernelContext, images: Any, size: Any) -> Any:
    xp = ctx.xp
    out_h, out_w = _validate(ctx, images, size)
    n, h, w, c = images.shape
    ctx.check_size((n, out_h, out_w, c), np.float32)
    if (out_h, out_w) == (h, w):
        return images.astype(np.float32)
    half, corners = ctx.attrs["half_pixel_centers"], ctx.attrs["align_corners"]
    y0, y1, ylerp = lerp_weights(xp, out_h, h, resize_scale(h, out_h, corners), half)
    x0, x1, xlerp = lerp_weights(xp, out_w, w, resize_scale(w, out_w, corners), half)
    top = xp.take(images, y0, axis=1).astype(np.float32, copy=False)
    bottom = xp.take(images, y1, axis=1).astype(np.float32, copy=False)
    xlerp = xlerp[:, None]
    top_left = xp.take(top, x0, axis=2)
    top = top_left + (xp.take(top, x1, axis=2) - top_left) * xlerp
    bottom_left = xp.take(bottom, x0, axis=2)
    bottom = bottom_left + (xp.take(bottom, x1, axis=2) - bottom_left) * xlerp
    return top + (bottom - top) * ylerp[:, None, None]


ResizeBilinear = make_wrapper_class(RESIZE_BILINEAR)
_resize_bilinear = make_builder(RESIZE_BILINEAR, "resize_bilinear")


def resize_bilinear(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> Output:
    """Bilinear resize of NHWC ``images`` to ``size``, as tf.compat.v1.image.resize_bilinear.

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.resize_bilinear(np.float32([0, 4]).reshape(1, 1, 2, 1), [1, 4])
    >>> mg.Session(g).run(y).reshape(-1)
    array([0., 2., 4., 4.], dtype=float32)
    """
    return _resize_bilinear(
        images,
        np.asarray(size, np.int32) if not isinstance(size, Output) else size,
        align_corners=align_corners,
        half_pixel_centers=half_pixel_centers,
        name=name or "ResizeBilinear",
    )


# -- ResizeNearestNeighbor -------------------------------------------------------------


def nearest_index(xp: Any, out_size: int, in_size: int, scale: np.float32, attrs: dict) -> Any:
    """compute_indices: the source index of each output index."""
    half, corners = attrs["half_pixel_centers"], attrs["align_corners"]
    v = _coords(xp, out_size, scale, half, shift=False)
    floor = xp.floor(v)
    if corners:  # roundf: halves away from zero (v >= 0 here; v - floor is exact)
        floor = floor + (v - floor >= np.float32(0.5))
    index = xp.minimum(floor.astype(np.int64), in_size - 1)
    return xp.maximum(index, 0)  # TF clamps below only with half_pixel_centers: v >= 0


RESIZE_NEAREST_NEIGHBOR = define_op(
    "ResizeNearestNeighbor",
    inputs=["images: T", "size: int32"],
    outputs=["resized_images: T"],
    attrs=_ATTRS,
    shape_fn=_resize_shape,
    host_inputs=["size"],
    doc="""
Resizes NHWC ``images`` to ``size`` = ``[new_height, new_width]`` by taking, for each output
pixel, the input pixel at ``floor(i * scale)`` (``round`` with ``align_corners``;
``floor((i + 0.5) * scale)`` with ``half_pixel_centers``), clamped to the image, in float32
as TensorFlow's CPU kernel. The result keeps ``T``. Errors as ResizeBilinear, and images
of 2**24 rows or columns or more are refused.

Example: the [1, 1, 2, 1] image ``[1, 2]`` resized to width 4 gives ``[1, 1, 2, 2]``.
""",
)


@register_kernel("ResizeNearestNeighbor", "CPU", "GPU")
def _resize_nearest_neighbor_kernel(ctx: KernelContext, images: Any, size: Any) -> Any:
    xp = ctx.xp
    out_h, out_w = _validate(ctx, images, size)
    n, h, w, c = images.shape
    if h >= 1 << 24 or w >= 1 << 24:
        ctx.fail("nearest neighbor requires max height & width of 2^24")
    ctx.check_size((n, out_h, out_w, c), images.dtype)
    corners = ctx.attrs["align_corners"]
    rows = nearest_index(xp, out_h, h, resize_scale(h, out_h, corners), ctx.attrs)
    cols = nearest_index(xp, out_w, w, resize_scale(w, out_w, corners), ctx.attrs)
    return xp.take(xp.take(images, rows, axis=1), cols, axis=2)


ResizeNearestNeighbor = make_wrapper_class(RESIZE_NEAREST_NEIGHBOR)
_resize_nearest_neighbor = make_builder(RESIZE_NEAREST_NEIGHBOR, "resize_nearest_neighbor")


def resize_nearest_neighbor(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> Output:
    """Nearest-neighbour resize of NHWC ``images``, as
    tf.compat.v1.image.resize_nearest_neighbor.

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     y = mg.resize_nearest_neighbor(np.int32([1, 2]).reshape(1, 1, 2, 1), [1, 4])
    >>> mg.Session(g).run(y).reshape(-1)
    array([1, 1, 2, 2], dtype=int32)
    """
    return _resize_nearest_neighbor(
        images,
        np.asarray(size, np.int32) if not isinstance(size, Output) else size,
        align_corners=align_corners,
        half_pixel_centers=half_pixel_centers,
        name=name or "ResizeNearestNeighbor",
    )


# -- ResizeBicubic ---------------------------------------------------------------------

_TABLE_SIZE = 1024


def _cubic_table(a: float) -> np.ndarray:
    """InitCoeffsTable: Keys' cubic kernel at i / 1024 (column 0: |x| in [0, 1]) and at
    1 + i / 1024 (column 1: |x| in [1, 2]), i = 0..1024, computed in double, kept as float."""
    x = np.arange(_TABLE_SIZE + 1, dtype=np.float64) / _TABLE_SIZE
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x = x + 1.0
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.stack([near, far], axis=1).astype(np.float32)


_KEYS_TABLE = _cubic_table(-0.5)  # half_pixel_centers: Keys' A = -0.5
_LEGACY_TABLE = _cubic_table(-0.75)


def cubic_taps(out_size: int, in_size: int, scale: np.float32, half: bool) -> tuple:
    """GetWeightsAndIndices for each output index: (indices, weights), each (out_size, 4),
    on the host.

    The weights come from the table at the fraction rounded to 1/1024 (lrintf, ties to
    even). Legacy: indices clamped to the image, weights as they are. Half-pixel centres:
    taps outside the image weigh 0 and the rest are scaled to sum to 1, as TF does."""
    v = _coords(np, out_size, scale, half, shift=True)
    base = np.floor(v)
    offset = np.rint((v - base) * np.float32(_TABLE_SIZE)).astype(np.int64)
    table = _KEYS_TABLE if half else _LEGACY_TABLE
    weights = np.stack(
        [
            table[offset, 1],
            table[offset, 0],
            table[_TABLE_SIZE - offset, 0],
            table[_TABLE_SIZE - offset, 1],
        ],
        axis=1,
    )
    taps = base.astype(np.int64)[:, None] + np.arange(-1, 3)
    index = np.clip(taps, 0, in_size - 1)
    if half:
        weights = np.where(index == taps, weights, np.float32(0))
        total = ((weights[:, 0] + weights[:, 1]) + weights[:, 2]) + weights[:, 3]
        usable = np.abs(total) >= np.float32(1000) * np.finfo(np.float32).tiny
        scaled = weights * (np.float32(1) / np.where(usable, total, np.float32(1)))[:, None]
        weights = np.where(usable[:, None], scaled, weights)
    return index, weights


def _blend4(xp: Any, x: Any, index: Any, weights: Any) -> Any:
    """Sum over the 4 taps of the rows of ``x`` (a 2-D array, or 3-D with rows on axis 1)
    gathered along axis 1, times their weights (one per output index, spread over the rows'
    ``inner`` values), in TensorFlow's order: ((v0 * w0 + v1 * w1) + v2 * w2) + v3 * w3, in
    float32, each product and sum rounded once."""
    out = None
    for k in range(4):  # the four taps, each vectorised over every pixel
        term = xp.take(x, index[k], axis=1).astype(np.float32, copy=False)
        term *= weights[k]
        out = term if out is None else xp.add(out, term, out=out)
    return out


RESIZE_BICUBIC = define_op(
    "ResizeBicubic",
    inputs=["images: T", "size: int32"],
    outputs=["resized_images: float"],
    attrs=_ATTRS,
    shape_fn=_resize_shape,
    host_inputs=["size"],
    doc="""
Resizes NHWC ``images`` to ``size`` = ``[new_height, new_width]`` by bicubic interpolation
over a 4x4 neighbourhood; the result is float32 whatever ``T``. As TensorFlow's CPU kernel:
the cubic convolution kernel is Keys' with ``A = -0.5`` under ``half_pixel_centers`` (taps
outside the image weigh 0, the others are renormalised) and ``A = -0.75`` otherwise (taps
clamped to the edge); its weights come from a 1025-entry table at the fractional source
coordinate rounded to 1/1024; columns of four rows are blended first, then four columns,
in float32 and TensorFlow's order of operations. ``align_corners`` and ``half_pixel_centers``
as ResizeBilinear; both at once are refused.

Errors (InvalidArgumentError): a non-positive size ("output dimensions must be positive"), an
empty image, ``size`` not a 2-vector, ``images`` not 4-D.

Example: the [1, 1, 4, 1] image ``[0, 1, 2, 3]`` resized to width 8 with
``half_pixel_centers`` gives about ``[-0.088, 0.168, 0.710, 1.25, 1.75, 2.290, 2.832, 3.088]``
(the cubic kernel's negative lobes overshoot at the ends), as TensorFlow.
""",
)


@register_kernel("ResizeBicubic", "CPU", "GPU")
def _resize_bicubic_kernel(ctx: KernelContext, images: Any, size: Any) -> Any:
    xp = ctx.xp
    out_h, out_w = _validate(ctx, images, size)
    n, h, w, c = images.shape
    ctx.check_size((n, out_h, out_w, c), np.float32)
    ctx.check_size((n, out_h, w, c), np.float32)  # the rows blended, before the columns
    half, corners = ctx.attrs["half_pixel_centers"], ctx.attrs["align_corners"]
    rows, row_weights = cubic_taps(out_h, h, resize_scale(h, out_h, corners), half)
    cols, col_weights = cubic_taps(out_w, w, resize_scale(w, out_w, corners), half)
    # Rows: whole image rows (w * c values) gathered at once, weighted per output row.
    row_index = [xp.asarray(rows[:, k]) for k in range(4)]
    row_w = [xp.asarray(row_weights[:, k, None]) for k in range(4)]
    blended = _blend4(xp, images.reshape(n, h, w * c), row_index, row_w)
    # Columns: each tap's flat offsets (column * c + channel), as single values: NumPy
    # gathers those far faster than runs of c values along a 4-D axis.
    channel = np.arange(c)
    col_index = [xp.asarray((cols[:, k, None] * c + channel).reshape(-1)) for k in range(4)]
    col_w = [xp.asarray(np.repeat(col_weights[:, k], c)) for k in range(4)]
    out = _blend4(xp, blended.reshape(n * out_h, w * c), col_index, col_w)
    return out.reshape(n, out_h, out_w, c)


ResizeBicubic = make_wrapper_class(RESIZE_BICUBIC)
_resize_bicubic = make_builder(RESIZE_BICUBIC, "resize_bicubic")


def resize_bicubic(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> Output:
    """Bicubic resize of NHWC ``images`` to ``size``, as tf.compat.v1.image.resize_bicubic.

    >>> import numpy as np, minigraph as mg
    >>> g = mg.Graph()
    >>> with g.as_default():
    ...     x = np.float32([0, 1, 2, 3]).reshape(1, 1, 4, 1)
    ...     y = mg.resize_bicubic(x, [1, 8], half_pixel_centers=True)
    >>> mg.Session(g).run(y).reshape(-1)
    array([-0.0882353 ,  0.16788322,  0.7099237 ,  1.25      ,  1.75      ,
            2.2900763 ,  2.8321168 ,  3.0882356 ], dtype=float32)
    """
    return _resize_bicubic(
        images,
        np.asarray(size, np.int32) if not isinstance(size, Output) else size,
        align_corners=align_corners,
        half_pixel_centers=half_pixel_centers,
        name=name or "ResizeBicubic",
    )


__all__ = ["ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", *BUILDERS]
