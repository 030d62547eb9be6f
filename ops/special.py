"""The error function and its complement, for the Erf and Erfc ops (ops/math_ops.py).

NumPy has no erf ufunc, so each is computed in float64 from Cephes' rational
approximations, region by region (|x| < 1, 1 <= |x| < 8, beyond), each only on the
elements it is for; the results are within a few ulp of float64's (the math tests).

Where Numba (the ``jit`` extra) is installed and config.jit() allows, a large float32 or
float64 tensor, alone or in a fused chain, runs as two compiled loops around NumPy's exp
instead (:func:`host_form`; erfc of [8,40,40,384] float32 in ConvNeXt's GELU: 60 ms as
NumPy calls, 13 compiled): the same operations in the same order, each exactly rounded,
and the same exp, so the same bits (a NaN input: itself, on either path).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minigraph.devices import is_cupy
from minigraph.kernel import KernelContext
from minigraph.op_def import AroundUfunc
from minigraph.ops.common import select_bits

__all__ = ["erf", "erfc", "host_form"]

# Erf and Erfc: Cephes' rational approximations (S. Moshier, ndtr.c; public domain),
# evaluated in float64 on both devices (NumPy has no erf), good to a few ulp.
_ERF_T = (
    9.60497373987051638749e0,
    9.00260197203842689217e1,
    2.23200534594684319226e3,
    7.00332514112805075473e3,
    5.55923013010394962768e4,
)
_ERF_U = (  # leading 1 implied
    3.35617141647503099647e1,
    5.21357949780152679795e2,
    4.59432382970980127987e3,
    2.26290000613890934246e4,
    4.92673942608635921086e4,
)
_ERFC_P = (
    2.46196981473530512524e-10,
    5.64189564831068821977e-1,
    7.46321056442269912687e0,
    4.86371970985681366614e1,
    1.96520832956077098242e2,
    5.26445194995477358631e2,
    9.34528527171957607540e2,
    1.02755188689515710272e3,
    5.57535335369399327526e2,
)
_ERFC_Q = (  # leading 1 implied
    1.32281951154744992508e1,
    8.67072140885989742329e1,
    3.54937778887819891062e2,
    9.75708501743205489753e2,
    1.82390916687909736289e3,
    2.24633760818710981792e3,
    1.65666309194161350182e3,
    5.57535340817727675546e2,
)
_ERFC_R = (
    5.64189583547755073984e-1,
    1.27536670759978104416e0,
    5.01905042251180477414e0,
    6.16021097993053585195e0,
    7.40974269950448939160e0,
    2.97886665372100240670e0,
)
_ERFC_S = (  # leading 1 implied
    2.26052863220117276590e0,
    9.39603524938001434673e0,
    1.20489539808096656605e1,
    1.70814450747565897222e1,
    9.60896809063285878198e0,
    3.36907645100081516050e0,
)


def _poly(x: Any, coefs: Sequence[float], monic: bool = False) -> Any:
    """Horner's rule, in place in one new array (no temporary per step)."""
    r = x + coefs[0] if monic else x * 0 + coefs[0]
    for c in coefs[1:]:
        r *= x
        r += c
    return r


def _poly_source(x: str, coefs: Sequence[float], monic: bool = False) -> str:
    """_poly as an expression's source text, its operations in _poly's order."""
    r = f"({x} + {coefs[0]!r})" if monic else repr(coefs[0])
    for c in coefs[1:]:
        r = f"({r} * {x} + {c!r})"
    return r


# Erf and Erfc run over blocks of this many elements on the host: their float64 temporaries
# then stay in the cache, and below the size at which malloc maps fresh pages for them.
_ERF_BLOCK = 1 << 16


def _erf_regions(xp: Any, x: Any, complement: bool) -> Any:
    """erf(x), or erfc(x) when ``complement``, computed in float64 and rounded once to x's
    dtype, block by block on the host, the blocks split over the kernels' threads (erfc of
    [8,10,10,1536] float32, 2 cores: see the commit). Each block converts its own part: a
    float64 copy of the whole input and a float64 result took 2.5 ms of 18 for 1M float32
    values in page faults."""
    flat = xp.ascontiguousarray(x).reshape(-1)
    out = xp.empty(flat.shape, x.dtype)
    block = _ERF_BLOCK if xp is np else max(1, flat.size)
    wide = x.dtype == np.float64
    split = x.dtype.itemsize >= 8  # float64 results: exp(-x*x) without a*a's rounding error

    def run(b: int) -> None:  # the blocks are the same, on one thread or several
        part = slice(b * block, (b + 1) * block)
        x64 = flat[part].astype(np.float64, copy=False)  # only read
        result = out[part] if wide else xp.empty(x64.shape, np.float64)
        _erf_block(xp, x64, complement, result, split)
        if not wide:
            out[part] = result  # rounded once, as the float64 result cast whole
        nan = xp.isnan(flat[part])
        if nan.any():  # the input NaN itself (the regions' NumPy calls vary its sign by size)
            xp.copyto(out[part], flat[part], where=nan)

    # the kernels' thread pool, as any kernel's pieces (no Session's context here)
    KernelContext({}, xp).parallel_each(run, -(-flat.size // block), 32 * flat.nbytes)
    return out.reshape(x.shape)


def _erf_block(xp: Any, x64: Any, complement: bool, out: Any, split: bool) -> None:
    """erf or erfc of 1-D float64 ``x64`` into ``out``, region by region: each rational
    approximation runs on the elements it is for only, and writes them into ``out``
    (np.where over all elements between the regions' results took a third of the time:
    it branches on each element). ``split``: exp(-a*a) as exp(-hi*hi) * exp(-(2*hi + lo)*lo)
    with a = hi + lo, hi a multiple of 1/128, as Cephes does: the rounding error of a*a,
    up to 9e-14 of the result at a = 28, then never reaches it. A float32 or float16 result
    does not see that error (no float32 erfc of 3M random values changed), so those skip
    the split: a third fewer array operations."""
    ax = xp.abs(x64)
    small = ax < 1
    (where,) = xp.nonzero(small)
    if where.size:  # a region with no element costs no call (small tensors: half the time)
        xs = xp.take(x64, where)
        z = xs * xs
        erf_small = xs * _poly(z, _ERF_T) / _poly(z, _ERF_U, monic=True)
        out[where] = 1 - erf_small if complement else erf_small
    below_8 = ax < 8
    for p, q, pick in ((_ERFC_P, _ERFC_Q, below_8), (_ERFC_R, _ERFC_S, ~below_8)):
        (where,) = xp.nonzero(pick & ~small)  # NaN: with the large ones
        if not where.size:
            continue
        xb = xp.take(x64, where)
        a = xp.abs(xb)
        xp.minimum(a, 28.0, out=a)  # erfc(28) underflows
        if split:
            hi = xp.floor(a * 128) / 128
            lo = a - hi
            e = xp.exp(-hi * hi) * xp.exp(-(2 * hi + lo) * lo)
        else:
            e = a * a
            xp.exp(xp.negative(e, out=e), out=e)
        erfc_big = _poly(a, p)
        erfc_big /= _poly(a, q, monic=True)
        xp.multiply(e, erfc_big, out=erfc_big)  # erfc(|x|)
        if complement:  # 2 - erfc(|x|) where x < 0, selected by bits (np.where branches)
            out[where] = select_bits(xp, xb < 0, 2 - erfc_big, erfc_big)
        else:
            out[where] = xp.sign(xb) * (1 - erfc_big)


def host_form(complement: bool, dtype: Any) -> AroundUfunc | None:
    """erf, or erfc when ``complement``, of float32 or float64 as two compiled loops around
    NumPy's exp (minigraph.fusion_jit; GELU in ConvNeXt: see the commit): _erf_block's
    operations in its order, each exactly rounded, and the same exp, so its bits. The first
    loop keeps each element's result where |x| < 1, else the ratio of erfc(|x|)'s rational
    approximation (one division an element: its region's numerator and denominator selected
    first), and the arguments of exp; the second gives the result (a NaN: the input). Every
    branch is a select, so LLVM vectorises both loops."""
    if np.dtype(dtype) not in (np.float32, np.float64):
        return None
    split = np.dtype(dtype).itemsize >= 8  # as _erf_regions
    numerator = (
        f"(_v * {_poly_source('_z', _ERF_T)}) if _a < 1 else "
        f"({_poly_source('_m', _ERFC_P)}) if _a < 8 else ({_poly_source('_m', _ERFC_R)})"
    )
    denominator = (
        f"{_poly_source('_z', _ERF_U, monic=True)} if _a < 1 else "
        f"{_poly_source('_m', _ERFC_Q, monic=True)} if _a < 8 else "
        f"{_poly_source('_m', _ERFC_S, monic=True)}"
    )
    exps: tuple[str, ...]
    if split:
        exps = (
            "_hi = math.floor(_m * 128) / 128",
            "_lo = _m - _hi",
            "_u0 = -_hi * _hi",
            "_u1 = -(2 * _hi + _lo) * _lo",
        )
        e = "_u0 * _u1"
    else:
        exps, e = ("_u0 = -(_m * _m)",), "_u0"
    outside = "-(1 - _big) if _v < 0 else 1 - _big"
    if complement:
        outside = "2 - _big if _v < 0 else _big"
    return AroundUfunc(
        "exp",
        before=(
            "_v = np.float64({0})",
            "_a = abs(_v)",
            "_z = _v * _v",
            "_m = min(_a, 28.0)",  # erfc(28) underflows
            f"_q = ({numerator}) / ({denominator})",
            f"_k0 = ({'1 - _q' if complement else '_q'}) if _a < 1 else _q",
            *exps,
        ),
        after=(
            "_v = np.float64({0})",
            f"_big = ({e}) * _k0",
            f"_v if _v != _v else (_k0 if abs(_v) < 1 else ({outside}))",
        ),
        kept=1,
        through=2 if split else 1,
        wide="float64",
    )


def erf(xp: Any, x: Any) -> Any:
    """erf(x) for a float array, computed in float64, in x's dtype (on a GPU: CUDA's erf, as
    a fused chain's)."""
    if is_cupy(xp):
        return _cuda_special("erf", x)
    return _erf_regions(xp, x, complement=False)


def erfc(xp: Any, x: Any) -> Any:
    """erfc(x) = 1 - erf(x) for a float array, computed in float64, in x's dtype, accurate
    where erf(x) is near 1 (on a GPU: CUDA's erfc, as a fused chain's)."""
    if is_cupy(xp):
        return _cuda_special("erfc", x)
    return _erf_regions(xp, x, complement=True)


def _cuda_special(name: str, x: Any) -> Any:
    """CuPy's own ``cupyx.scipy.special.<name>`` (one kernel, CUDA's function: within the
    ulps docs/devices.md states), in float32 for float16 as fused chains compute it."""
    from cupyx.scipy import special

    return getattr(special, name)(x.astype(np.float32) if x.dtype == np.float16 else x)
