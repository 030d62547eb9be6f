"""3x3 stride-1 convolutions by Winograd's minimal filtering, F(2x2, 3x3) (Lavin and Gray,
"Fast Algorithms for Convolutional Neural Networks", 2015).

Each 2x2 block of output pixels (a tile) is computed from the 4x4 input patch under it:
the patch and the filter are transformed (``d -> Bt d B``, ``g -> G g Gt``), multiplied
element by element (for each of the 16 transformed positions, a matrix product over the
channels: ``[tiles, cin] @ [cin, cout]``), and the product transformed back (``At m A``).
That is 16 multiplies a tile and channel pair where the direct method has 36: the products
do 2.25x fewer multiply-adds, and the input gathered for them is 4 values an output pixel
where im2col gathers 9. The transforms are small matrix products too ([16, 16] and
[4, 16] times a piece's patches), so every step runs in BLAS.

The transforms' entries are 0, +-1 and +-1/2, so F(2x2, 3x3) rounds like a reordered
sum: float32 results stay within a few ulps of the direct sum's magnitude (tested against
a float64 reference). The filter's transform is kept for the next run only where the
filter is a read-only array (a constant), which cannot have changed; a fed or variable
filter is transformed on every call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigraph.kernel import KernelContext

__all__: list[str] = []

_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)
_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], np.float64)
_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)
# The 2-D transforms as matrices on a tile's 16 (or 9, or 4) values in row-major order.
_INPUT = np.kron(_BT, _BT)  # [16, 16]
_FILTER = np.kron(_G, _G)  # [16, 9]
_OUTPUT = np.kron(_AT, _AT)  # [4, 16]

# Where it pays (2 cores): 3x3 filters with at least this many input and output channels
# (fewer make the products too narrow for BLAS), over at least this many tiles where the
# filter's transform is kept (a constant filter: [1,10,10,256] -> 256, 25 tiles, 1.23 ->
# 0.87 ms; 9 tiles lose, 1.34 -> 1.59), or this many where it is made on every call (its
# cost is 9 / tiles of the products').
MIN_CHANNELS = 32
MIN_TILES = 16
MIN_TILES_FED = 64
# The tiles of one piece of work take about this many bytes of transformed patches.
PIECE_BYTES = 1 << 20


def usable(xpad: Any, w: Any, outs: Any, s: Any, d: Any) -> bool:
    """Whether :func:`winograd_conv` runs this convolution (and pays)."""
    *k, cin, cout = w.shape
    tiles = xpad.shape[0] * -(-outs[0] // 2) * -(-outs[1] // 2) if len(outs) == 2 else 0
    return (
        list(k) == [3, 3]
        and list(s) == [1, 1]
        and list(d) == [1, 1]
        and w.dtype in (np.float32, np.float64)
        and min(cin, cout) >= MIN_CHANNELS
        and tiles >= (MIN_TILES_FED if w.flags.writeable else MIN_TILES)
    )


def transformed_filter(ctx: KernelContext, w: Any) -> Any:
    """``G g Gt`` of each input/output channel pair of ``w``, [16, cin, cout]; kept in the
    step's memo for the next run while ``w`` is the same read-only array (a constant, or
    a value minigraph froze: nobody writes it, so it cannot have changed)."""
    kept = ctx.memo.get("winograd_filter")
    if kept is not None and kept[0] is w:
        return kept[1]
    cin, cout = w.shape[2], w.shape[3]
    filters = (_FILTER.astype(w.dtype) @ w.reshape(9, cin * cout)).reshape(16, cin, cout)
    if not w.flags.writeable:  # holding w also keeps its id from being reused
        ctx.memo["winograd_filter"] = (w, filters)
    return filters


def winograd_conv(ctx: KernelContext, xpad: Any, w: Any, outs: Any) -> Any:
    """The stride-1 3x3 convolution of the padded channels-last ``xpad`` (on the host) with
    ``w`` [3, 3, cin, cout]; returns [n, oh, ow, cout]. Pieces of tile rows of one image
    (or of whole images) are taken by the threads as they come free; where there are fewer
    tiles than output channels (late layers: the transformed filter is the larger operand),
    all tiles are one piece and the 16 products are split over the threads instead, so
    each thread reads its own part of the filter once."""
    n, cin, cout = xpad.shape[0], w.shape[2], w.shape[3]
    oh, ow = outs
    th, tw = -(-oh // 2), -(-ow // 2)
    extra = (2 * th + 2 - xpad.shape[1], 2 * tw + 2 - xpad.shape[2])
    if any(extra):  # an odd output size: the last tiles read one zero row or column more
        grown = np.zeros((n, 2 * th + 2, 2 * tw + 2, cin), xpad.dtype)
        grown[:, : xpad.shape[1], : xpad.shape[2]] = xpad
        xpad = grown
    dtype = w.dtype
    filters = transformed_filter(ctx, w)
    to_patches, to_output = _INPUT.astype(dtype), _OUTPUT.astype(dtype)
    out = ctx.empty((n, oh, ow, cout), dtype)  # the output's size is checked
    if n * th * tw < cout:  # one piece
        pieces = [(slice(0, n), 0, th)]
    else:
        lines = max(1, PIECE_BYTES // max(1, 16 * tw * max(cin, cout) * dtype.itemsize))
        lines = min(lines, max(1, -(-n * th // ctx.threads)))  # a piece for every thread
        if lines >= th:  # whole images
            step = lines // th
            pieces = [(slice(i, min(i + step, n)), 0, th) for i in range(0, n, step)]
        else:
            pieces = [
                (slice(i, i + 1), r, min(r + lines, th))
                for i in range(n)
                for r in range(0, th, lines)
            ]

    def run(piece: tuple[slice, int, int]) -> None:
        images, r0, r1 = piece
        m, rows = images.stop - images.start, r1 - r0
        patches = np.empty((16, m, rows, tw, cin), dtype)
        for a in range(4):  # each of a tile's 16 input values, for every tile of the piece
            band = xpad[images, 2 * r0 + a : 2 * r1 + a : 2]
            for b in range(4):
                patches[4 * a + b] = band[:, :, b : b + 2 * tw : 2]
        tiles = m * rows * tw
        transformed = (to_patches @ patches.reshape(16, -1)).reshape(16, tiles, cin)
        products = np.empty((16, tiles, cout), dtype)
        if len(pieces) == 1:
            ctx.parallel_slices(
                lambda k: np.matmul(transformed[k], filters[k], out=products[k]),
                16,
                filters.nbytes,
            )
        else:
            np.matmul(transformed, filters, out=products)
        values = (to_output @ products.reshape(16, -1)).reshape(2, 2, m, rows, tw, cout)
        block = values.transpose(2, 3, 0, 4, 1, 5).reshape(m, 2 * rows, 2 * tw, cout)
        valid = min(2 * r1, oh) - 2 * r0
        out[images, 2 * r0 : 2 * r0 + valid] = block[:, :valid, :ow]

    ctx.parallel_map(run, pieces, out.nbytes + 4 * xpad.nbytes)
    return out
