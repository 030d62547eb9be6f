"""Window geometry shared by the convolution and pooling ops (conv_ops, conv3d_ops,
conv_backprop_ops), for any number of spatial dims.

TensorFlow's GetWindowedOutputSize for VALID, SAME and EXPLICIT padding, its attr checks
(strides, dilations, explicit_paddings), channels-first formats (NCHW, NCDHW) as
channels-last views, padding an image once and the filter taps as strided views of it: the
forward ops slide windows over the padded image, the backprop ops add into those same
views. Also the tf.nn argument forms (an int or one value a spatial dim or a full list;
padding names or explicit pairs) every builder takes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from minigraph.graph import Output
from minigraph.kernel import KernelContext
from minigraph.ops.common import pad_into
from minigraph.wrappers import make_builder

__all__: list[str] = []

PADDING_ATTR = "padding: {'SAME', 'VALID', 'EXPLICIT'}"
EXPLICIT_ATTR = "explicit_paddings: list(int) = []"
FORMAT_ATTR = "data_format: {'NHWC', 'NCHW'} = 'NHWC'"


def spatial_axes(data_format: str) -> tuple[int, int, int]:
    """(height, width, channel) axes of a 4-D tensor in this format."""
    return (2, 3, 1) if data_format == "NCHW" else (1, 2, 3)


def window_output_size(
    fail: Any, size: int | None, k: int | None, stride: int, dilation: int, padding: str,
    pads: tuple[int, int] = (0, 0),
) -> int | None:  # fmt: skip
    """Output length of one spatial dim, TensorFlow's GetWindowedOutputSize."""
    if size is None:
        return None
    if padding == "SAME":
        return -(-size // stride)
    if k is None:
        return None
    effective = (k - 1) * dilation + 1
    num = size + pads[0] + pads[1] - effective + stride
    out = num // stride if num >= 0 else -(-num // stride)  # C's truncating division
    if out < 0:
        fail(
            f"Computed output size would be negative: {out} [input_size: {size}, "
            f"effective_filter_size: {effective}, stride: {stride}]"
        )
    return out


def same_pads(size: int, k: int, stride: int, dilation: int, out: int) -> tuple[int, int]:
    """SAME padding of one dim: the extra cell goes at the end, as TensorFlow."""
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def check_explicit(fail: Any, attrs: dict, axes: tuple[int, int, int]) -> list[tuple[int, int]]:
    """The (before, after) pads of the height and width dims from ``explicit_paddings``."""
    explicit = list(attrs.get("explicit_paddings", ()))
    if attrs["padding"] != "EXPLICIT":
        if explicit:
            fail(
                "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT"
            )
        return [(0, 0), (0, 0)]
    if len(explicit) != 8:
        fail(f"explicit_paddings attribute must contain 8 values, but got: {len(explicit)}")
    if min(explicit) < 0:
        fail("All elements of explicit_paddings must be nonnegative")
    pairs = [(explicit[2 * i], explicit[2 * i + 1]) for i in range(4)]
    if pairs[0] != (0, 0) or pairs[axes[2]] != (0, 0):
        fail("Nonzero explicit padding in the batch or depth dimensions is not supported")
    return [pairs[axes[0]], pairs[axes[1]]]


def check_four(fail: Any, name: str, values: Sequence[int], axes: tuple, what: str) -> None:
    if len(values) != 4:
        fail(f"Sliding window {name} field must specify 4 dimensions")
    if values[0] != 1 or values[axes[2]] != 1:
        fail(
            f"Current implementation does not yet support {what} in the batch and depth dimensions."
        )
    if min(values) < 1:
        fail(f"Sliding window {name} must be positive, got {list(values)}")


def window_geometry(
    fail: Any, attrs: dict, dims: Sequence[int | None], kdims: Sequence[int | None],
    strides: Sequence[int], dilations: Sequence[int],
) -> tuple[list[int | None], list[tuple[int, int]]]:  # fmt: skip
    """Output sizes and (before, after) pads of each spatial dim (EXPLICIT padding: the 2-D
    ops' ``explicit_paddings``; the 3-D ops have none)."""
    padding = attrs["padding"]
    explicit = [(0, 0)] * len(dims)
    if padding == "EXPLICIT" or "explicit_paddings" in attrs:
        explicit = check_explicit(fail, attrs, spatial_axes(attrs["data_format"]))
    outs, pads = [], []
    for size, k, s, d, pair in zip(dims, kdims, strides, dilations, explicit):
        out = window_output_size(fail, size, k, s, d, padding, pair)
        outs.append(out)
        if padding == "SAME" and size is not None and k is not None and out is not None:
            pads.append(same_pads(size, k, s, d, out))
        else:
            pads.append(pair)
    return outs, pads


def channels_first(data_format: str) -> bool:
    """Whether the format puts channels before the spatial dims (NCHW, NCDHW)."""
    return data_format.startswith("NC")


def to_nhwc(x: Any, data_format: str) -> Any:
    """``x`` as channels-last ([n, *spatial, c]): a view."""
    return x.transpose(0, *range(2, x.ndim), 1) if channels_first(data_format) else x


def from_nhwc(xp: Any, y: Any, data_format: str) -> Any:
    """Channels-last ``y`` in ``data_format`` (copied contiguous where it transposes)."""
    if not channels_first(data_format):
        return y
    return xp.ascontiguousarray(y.transpose(0, y.ndim - 1, *range(1, y.ndim - 1)))


def window_slices(
    offsets: Sequence[int], out: Sequence[int], s: Sequence[int], d: Sequence[int]
) -> tuple[slice, ...]:
    """The strided slices of the spatial dims that the tap at ``offsets`` reads for an
    output of sizes ``out`` (empty where a size is 0)."""
    return tuple(
        slice(o * dd, o * dd + (n - 1) * ss + 1 if n else o * dd, ss)
        for o, n, ss, dd in zip(offsets, out, s, d)
    )


def window_taps(
    xpad: Any, out: Sequence[int], k: Sequence[int], s: Sequence[int], d: Sequence[int]
) -> Iterator[tuple[int, Any]]:
    """Each filter tap by its flat index in the window (row-major, the filter's own
    layout), with its [n, *out, c] strided view of the padded image."""
    for index, offsets in enumerate(itertools.product(*(range(kk) for kk in k))):
        yield index, xpad[(slice(None), *window_slices(offsets, out, s, d))]


def tiles_fit(
    shape: Sequence[int], pads: Sequence[tuple[int, int]], outs: Sequence[int],
    k: Sequence[int], s: Sequence[int],
) -> bool:  # fmt: skip
    """Whether the windows of a channels-last input of ``shape`` are disjoint tiles that
    :func:`tap_tiles` can view: no padding, ksize <= strides, and every window's stride
    inside the input."""
    fits = zip(k, s, outs, shape[1:-1])
    return all(kk <= ss and o * ss <= n for kk, ss, o, n in fits) and not any(map(any, pads))


def tiles_gap(
    shape: Sequence[int], outs: Sequence[int], k: Sequence[int], s: Sequence[int]
) -> bool:
    """Whether some cell of an input whose windows are tiles is in no window."""
    return any(kk != ss or o * ss != n for kk, ss, o, n in zip(k, s, outs, shape[1:-1]))


def tap_tiles(a: Any, outs: Sequence[int], k: Sequence[int], s: Sequence[int]) -> Any:
    """The taps of ``a``'s windows where they are tiles (:func:`tiles_fit`), as one view
    [k1, k2, ..., n, o1, o2, ..., c]: the input cut to its windows' rows and each spatial
    axis split into (window, offset), which never copies."""
    d = len(k)
    cut = a[(slice(None), *(slice(0, o * ss) for o, ss in zip(outs, s)), slice(None))]
    split = cut.reshape(a.shape[0], *(v for o, ss in zip(outs, s) for v in (o, ss)), a.shape[-1])
    taps = split[(slice(None), *(v for kk in k for v in (slice(None), slice(0, kk))), slice(None))]
    offsets, windows = (2 + 2 * i for i in range(d)), (1 + 2 * i for i in range(d))
    return taps.transpose(*offsets, 0, *windows, 2 * d + 1)


def pad_image(
    xp: Any, x: Any, pads: Sequence[tuple[int, int]], value: Any = 0, dtype: Any = None
) -> Any:
    """Channels-last ``x`` padded in its spatial dims with ``value``, as ``dtype`` (default
    x's), by one assignment that also casts (np.pad: 0.27 ms on [1024, 8, 8, 4]; this: 0.10).
    A large image is a buffer of the host pool, only its border filled (a max pool's
    [8, 160, 160, 64] padded by one row and column: 17 -> 7 ms)."""
    dtype = np.dtype(x.dtype if dtype is None else dtype)
    if not any(p for pair in pads for p in pair):
        return x.astype(dtype, copy=False)
    shape = (x.shape[0], *(m + a + b for m, (a, b) in zip(x.shape[1:-1], pads)), x.shape[-1])
    ctx = KernelContext({}, xp)  # the pool's buffers and threads, as any kernel's
    out = ctx.empty(shape, dtype)
    pad_into(ctx, out, x, [(0, 0), *pads, (0, 0)], value)
    return out


def accumulator_dtype(dtype: Any) -> Any:
    return np.float32 if dtype == np.float16 else dtype


# -- the tf.nn builders' argument forms --------------------------------------------------


def spatial_list(value: Any, data_format: str, default: int = 1) -> list[int]:
    """TensorFlow 2 takes an int, one value a spatial dim, or one a dim of ``data_format``
    (4 for NHWC, 5 for NDHWC), for strides, dilations and ksize."""
    spatial = len(data_format) - 2
    if value is None:
        return [default] * (spatial + 2)
    vals = [int(value)] if np.ndim(value) == 0 else [int(v) for v in value]
    if len(vals) == 1:
        vals = vals * spatial
    if len(vals) == spatial:
        return [1, 1, *vals] if channels_first(data_format) else [1, *vals, 1]
    return vals


def padding_attrs(padding: Any) -> dict[str, Any]:
    """``"SAME"``/``"VALID"``, or explicit (before, after) pairs for the 4 dims."""
    if isinstance(padding, str | bytes):
        return {"padding": padding.decode() if isinstance(padding, bytes) else padding}
    flat = [int(p) for pair in padding for p in pair]
    return {"padding": "EXPLICIT", "explicit_paddings": flat}


def pool_builder(op_def: Any, name: str, example: str, data_format: str = "NHWC") -> Any:
    """The tf.compat.v1.nn builder of one pooling op (``ksize``/``strides``: an int, one
    value a spatial dim, or one a dim; ``padding``: "SAME", "VALID", or explicit pairs
    where the op takes them); ``data_format`` is its default."""
    generated = make_builder(op_def, name)
    default_format = data_format

    def pool(
        value: Any = None,
        ksize: Any = None,
        strides: Any = None,
        padding: Any = None,
        data_format: str = default_format,
        name: str | None = None,
        input: Any = None,  # noqa: A002
    ) -> Output:
        given = {"input": value if input is None else input, "ksize": ksize}
        given.update(strides=strides, padding=padding)
        missing = [key for key, v in given.items() if v is None]
        if missing:
            raise TypeError(f"{pool.__name__}() missing required arguments: {', '.join(missing)}")
        return generated(
            value if input is None else input,
            ksize=spatial_list(ksize, data_format),
            strides=spatial_list(strides, data_format),
            data_format=data_format,
            name=name or op_def.name,
            **padding_attrs(padding),
        )

    pool.__name__ = pool.__qualname__ = name
    pool.__doc__ = f"{op_def.name}, as tf.compat.v1.nn.{name}.\n{example}"
    return pool
