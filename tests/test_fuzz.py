"""Fuzzing the rule of docs/errors.md over every registered op and over graph files.

Every op in ``mg.registered_ops()`` is built from its declaration alone (so ops added
later are fuzzed with no change here) with arguments right and wrong: random dtypes,
ranks and shapes, huge and negative sizes, NaN/inf, out-of-range indices and axes,
junk Python objects, mismatched list lengths, attrs of every kind with good and bad
values. Each graph is built, then run with its inputs as constants or as fed
placeholders. The rule:

- building succeeds or raises an ``mg.errors`` error (never InternalError) naming the
  node; running succeeds or raises one naming the node;
- no unguarded allocation: a ResourceExhaustedError comes from a size check, not from
  a MemoryError that escaped a kernel (the run is under a tensor cap and, on Linux,
  an address-space limit, so such an allocation fails fast instead of killing CI);
- feeds and constants are never modified, and the Session runs again after a failure.

Graph files: documents written from fuzzed graphs are mutated (values replaced by
junk, huge ints, bad dtype strings, keys dropped, nodes reordered, text truncated) and
must load or be refused with an mg error, and run or fail by the same rule. GraphDefs
(when tensorboard's protobuf classes are installed) likewise: serialized bytes flipped,
cut and padded, and fields set to unknown dtype enums, tensor_content of the wrong length,
huge declared shapes, dangling inputs, cycles and attrs of the wrong kind.

``pytest --fuzz-long`` runs 100,000 examples per test instead of CI's bounded count.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigraph as mg
from minigraph import errors, graph_io
from minigraph.op_def import OpDef
from minigraph.wrappers import apply_op

LONG = os.environ.get("MINIGRAPH_FUZZ_LONG", "") not in ("", "0") or (
    settings.get_current_profile_name() == "fuzz-long"
)
_COUNT = int(os.environ.get("MINIGRAPH_FUZZ_EXAMPLES", "0") or 0)  # overrides both
FILE_EXAMPLES = _COUNT or (100_000 if LONG else 300)
# Kept small so every kernel is fast; sizes in attrs and values may still be huge.
CAP_BYTES = 1 << 24


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=not LONG,  # CI: the same examples every run
        suppress_health_check=list(HealthCheck),
        database=None,
    )


DTYPES = [
    np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, np.complex64, np.complex128,
]  # fmt: skip
SIZES = [0, 1, 2, 3, -1, -2, 2**31 - 1, 2**31, 2**40, 2**62, 2**63 - 1, -(2**31)]
JUNK = [None, "a", b"\xff", object(), [1, [2]], [[1, 2], [3]], {"a": 1}, 1.5, True, 10**30,
        [[[]]], (), [], float("nan"), 2**64, slice(1), Ellipsis, 10**5000,
        [1, 10**5000]]  # fmt: skip


def _stats() -> dict[str, int]:
    return {"examples": 0, "built": 0, "ran": 0, "build_errors": 0, "run_errors": 0}


STATS = {"ops": _stats(), "files": _stats(), "graphdefs": _stats()}
BUILT_OPS: set[str] = set()  # ops the fuzzer has built at least once
MODES = ["const", "fed", "fed-shaped", "const-gpu", "fed-gpu"]  # "-gpu": on "/gpu:0"


# -- strategies ----------------------------------------------------------------------------


@st.composite
def shapes(draw: Any, max_rank: int = 4) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.integers(0, 3), max_size=max_rank)))


@st.composite
def arrays(draw: Any, dtype: Any = None, shape: Any = None, host: bool = False) -> np.ndarray:
    """A small array; values include extremes, NaN/inf, and (for host inputs) huge sizes."""
    dt = np.dtype(dtype if dtype is not None else draw(st.sampled_from(DTYPES)))
    shp = shape if shape is not None else draw(shapes())
    n = int(np.prod(shp, dtype=np.int64))
    if dt.kind == "b":
        flat = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        special = [v for v in SIZES if info.min <= v <= info.max] + [info.min, info.max]
        small = st.integers(max(info.min, -3), min(info.max, 5))
        flat = draw(st.lists(small | st.sampled_from(special), min_size=n, max_size=n))
    else:
        floats = st.floats(-10, 10, width=16) | st.sampled_from(
            [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30]
        )
        flat = draw(st.lists(floats, min_size=n, max_size=n))
    with np.errstate(all="ignore"):
        arr = np.array(flat, dtype=dt if dt.kind != "c" else np.float64).astype(dt)
    return arr.reshape(shp)


def _type_choices(op_def: OpDef, type_attr: str | None) -> list[Any]:
    if type_attr is None:
        return []
    a = op_def.attr(type_attr)
    return [d.np for d in a.allowed] if a.allowed else []


@st.composite
def input_value(draw: Any, op_def: OpDef, arg: Any) -> Any:
    """One input: mostly an array of an allowed dtype, sometimes a wrong one, rarely junk."""
    host = arg.name in op_def.host_inputs
    choice = draw(st.integers(0, 19))
    if choice == 0:
        return draw(st.sampled_from(JUNK))
    if arg.dtype is not None and arg.dtype.is_handle:
        good = DTYPES  # only ops make a variant or resource: any array is the wrong dtype
    elif arg.dtype is not None:
        good = [arg.dtype.np]
    else:
        good = _type_choices(op_def, arg.type_attr) or DTYPES
    dt = draw(st.sampled_from(good)) if choice > 3 else draw(st.sampled_from(DTYPES))
    if host and np.dtype(dt).kind in "iu":
        rank = draw(st.sampled_from([0, 1, 1, 1, 2]))
        shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
        return draw(arrays(dt, shape))
    return draw(arrays(dt))


@st.composite
def tame_input(draw: Any, op_def: OpDef, arg: Any, types: dict, shape: tuple) -> Any:
    """A plausible input: one dtype per type attr, one shape for all data inputs, small
    non-negative shape-like values, so that the ops' success paths run too."""
    if arg.dtype is not None:
        dt = np.float32 if arg.dtype.is_handle else arg.dtype.np  # refused: made by ops only
    else:
        key = arg.type_attr
        if key not in types:
            types[key] = draw(st.sampled_from(_type_choices(op_def, key) or DTYPES))
        dt = types[key]
    if arg.name in op_def.host_inputs and np.dtype(dt).kind in "iu":
        rank = draw(st.sampled_from([0, 1]))
        n = draw(st.sampled_from([len(shape), 1, 2]))
        values = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
        return np.array(values[0] if rank == 0 and values else values, dt)
    return draw(arrays(dt, shape))


def _tame_attr(a: Any) -> st.SearchStrategy:
    low = a.minimum if a.minimum is not None else 0
    if a.kind == "type":
        return st.sampled_from(list(a.allowed or [mg.float32, mg.int32]))
    if a.kind == "int":
        return st.integers(low, low + 3)
    if a.kind == "float":
        return st.floats(0, 1)
    if a.kind == "bool":
        return st.booleans()
    if a.kind == "string":
        return st.sampled_from(list(a.allowed)) if a.allowed else st.just("")
    if a.kind == "list(int)" and a.minimum == 5:  # the 3-D windows: ksize, strides
        return st.sampled_from([[1, 1, 1, 1, 1], [1, 2, 2, 2, 1], [1, 1, 2, 1, 1]])
    if a.kind == "list(int)":
        return st.sampled_from([[1, 1, 1, 1], [1, 2, 2, 1], [1], [0, 1], []])
    if a.kind == "shape":
        return st.none()
    return arrays(shape=())


def _attr_values(a: Any) -> st.SearchStrategy:
    big = st.sampled_from(SIZES)
    junk = st.sampled_from(JUNK)
    kind = a.kind
    if kind == "type":
        good = st.sampled_from([mg.as_dtype(d) for d in DTYPES])
        return good | st.sampled_from(["(1099511627776,)f8", "f8", None, "float33", 3])
    if kind == "int":
        return st.integers(-3, 5) | big | junk | st.just(2**64)
    if kind == "float":
        return st.floats(allow_nan=True, allow_infinity=True) | junk
    if kind == "bool":
        return st.booleans() | junk
    if kind == "string":
        good = st.sampled_from(list(a.allowed)) if a.allowed else st.text(max_size=8)
        return good | junk | st.text(max_size=4)
    if kind == "list(int)":
        return st.lists(st.integers(-3, 5) | big, max_size=5) | junk
    if kind == "shape":
        dims = st.integers(-1, 5) | big | st.none()
        return st.lists(dims, max_size=4) | st.none() | junk | st.just([2, 1.5])
    if kind == "tensor":
        return arrays() | junk
    return junk


def library_ops() -> dict[str, OpDef]:
    """The registry without the ops tests declare for themselves (their kernels live in
    test modules)."""
    return {
        name: op_def
        for name, op_def in mg.registered_ops().items()
        if all(fn.__module__.startswith("minigraph") for fn in op_def.kernels.values())
    }


def _tame_rank(op_def: OpDef) -> int:
    """The largest rank of a tame case's shapes: 5 for the ops whose window attrs take 5
    values (Conv3D, MaxPool3D...), so that they get built; 4 for the others."""
    windows_3d = any(a.kind == "list(int)" and a.minimum == 5 for a in op_def.attrs)
    return 5 if windows_3d else 4


@st.composite
def op_case(draw: Any) -> tuple[str, list[Any], dict[str, Any]]:
    ops = library_ops()
    name = draw(st.sampled_from(sorted(ops)))
    op_def = ops[name]
    inferred = op_def.inferred_attrs()
    attrs: dict[str, Any] = {}
    if draw(st.booleans()):  # a tame case: plausible arguments, so success paths run too
        types: dict[str, Any] = {}
        shape = draw(shapes(_tame_rank(op_def)))
        for a in op_def.attrs:
            if a.name not in inferred and (not a.has_default or draw(st.integers(0, 3)) == 0):
                attrs[a.name] = draw(_tame_attr(a))
        tame: list[Any] = []
        for arg in op_def.inputs:
            if arg.is_list:
                n = draw(st.integers(1, 3))
                tame.append([draw(tame_input(op_def, arg, types, shape)) for _ in range(n)])
            else:
                tame.append(draw(tame_input(op_def, arg, types, shape)))
        return name, tame, attrs
    for a in op_def.attrs:
        if a.name in inferred:
            if draw(st.integers(0, 29)) == 0:  # setting an inferred attr is an error
                attrs[a.name] = draw(_attr_values(a))
            continue
        if not a.has_default or draw(st.booleans()):
            attrs[a.name] = draw(_attr_values(a))
    inputs: list[Any] = []
    lengths: dict[str, int] = {}
    for arg in op_def.inputs:
        if arg.is_list:
            n = lengths.setdefault(arg.number_attr, draw(st.integers(0, 3)))
            if draw(st.integers(0, 9)) == 0:
                n = draw(st.integers(0, 4))  # a mismatched list
            inputs.append([draw(input_value(op_def, arg)) for _ in range(n)])
        else:
            inputs.append(draw(input_value(op_def, arg)))
    return name, inputs, attrs


# -- the rule -----------------------------------------------------------------------------


def _safe_repr(value: Any, n: int) -> str:
    try:
        return repr(value)[:n]
    except ValueError:  # an int too long for str()
        return f"<{type(value).__name__} holding a huge int>"


def _arrays_in(value: Any) -> Iterator[np.ndarray]:
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _arrays_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _arrays_in(v)


def _snapshot(values: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(a, a.copy()) for a in _arrays_in(values)]


def _assert_unchanged(snap: list[tuple[np.ndarray, np.ndarray]], what: str) -> None:
    for arr, before in snap:
        same = np.array_equal(arr, before, equal_nan=arr.dtype.kind in "fc")
        assert same and arr.dtype == before.dtype, f"{what} was modified"


# Bugs this fuzzer found in ops owned elsewhere, reported and not yet fixed: op type ->
# the text of the one failure tolerated for it (any other failure of the op still fails).
# Remove an entry when its op is fixed.
KNOWN_BUGS: dict[str, tuple[str, ...]] = {}  # op type -> messages of bugs not fixed yet


def _check_error(e: BaseException, where: str) -> None:
    """An allowed error: an mg error (not InternalError) naming its node."""
    if any(text in str(e) for text in KNOWN_BUGS.get(getattr(e, "op_type", ""), ())):
        return
    if not isinstance(e, errors.OpError) or isinstance(e, errors.InternalError):
        raise AssertionError(f"{where}: {type(e).__name__} leaked: {e}") from e
    assert e.node_name, f"{where}: {type(e).__name__} names no node: {e}"
    assert e.node_name in str(e), f"{where}: the message does not name the node: {e}"
    assert "OOM while running the kernel" not in e.message, (
        f"{where}: a kernel allocated without a size check: {e}"
    )


def _fed(graph: mg.Graph, inputs: list[Any], known_shape: bool) -> tuple[list[Any], dict]:
    """Placeholders (shape known or not) for the array inputs, and their feeds."""
    feeds: dict[Any, Any] = {}

    def swap(v: Any) -> Any:
        if isinstance(v, list):
            return [swap(x) for x in v]
        if isinstance(v, np.ndarray) and v.dtype.kind in "biufc":
            p = mg.placeholder(v.dtype, shape=v.shape if known_shape else None)
            feeds[p] = v
            return p
        return v

    with graph.as_default():
        return [swap(v) for v in inputs], feeds


def run_case(name: str, inputs: list[Any], attrs: dict[str, Any], mode: str) -> None:
    stats = STATS["ops"]
    stats["examples"] += 1
    where = f"{name} ({mode}) inputs={_safe_repr(inputs, 300)} attrs={_safe_repr(attrs, 200)}"
    snap = _snapshot([inputs, attrs])
    g = mg.Graph()
    feeds: dict = {}
    if not mode.startswith("const"):
        inputs, feeds = _fed(g, inputs, known_shape=mode.startswith("fed-shaped"))
    try:
        with g.as_default():
            op = apply_op(name, None, inputs, attrs)
    except Exception as e:  # noqa: BLE001 - the rule says which exceptions may leave
        stats["build_errors"] += 1
        _check_error(e, f"build {where}")
        _assert_unchanged(snap, f"an input of {name}")
        return
    stats["built"] += 1
    BUILT_OPS.add(name)
    device = "/gpu:0" if mode.endswith("gpu") else None
    sess = mg.Session(g, device=device, max_tensor_bytes=CAP_BYTES)
    try:
        outs = sess.run(op.outputs, feed_dict=feeds)
        stats["ran"] += 1
        for o in outs:
            assert isinstance(o, np.ndarray), f"{where}: fetched {type(o).__name__}"
    except Exception as e:  # noqa: BLE001
        stats["run_errors"] += 1
        _check_error(e, f"run {where}")
        # The Session stays usable after a failed run.
        with g.as_default():
            ok = mg.constant(1, name="still_ok")
        assert sess.run(ok) == 1
    _assert_unchanged(snap, f"an input or feed of {name}")


@contextlib.contextmanager
def address_space_limit(extra: int = 3 << 30) -> Iterator[None]:
    """On Linux, cap this process's address space at what it uses now plus ``extra``, so
    an unguarded huge allocation fails (MemoryError) instead of taking the machine."""
    try:
        import resource

        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        yield
        return
    limit = used + extra
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


COLLECT = os.environ.get("MINIGRAPH_FUZZ_COLLECT", "")  # a file: record failures, go on
FAILURES: dict[str, str] = {}


def _collecting(fn: Any, *args: Any, **kwargs: Any) -> None:
    """Run one case; with MINIGRAPH_FUZZ_COLLECT set, note a failure (one per op and
    exception kind) and go on, to survey what a long run finds."""
    if not COLLECT:
        fn(*args, **kwargs)
        return
    try:
        fn(*args, **kwargs)
    except AssertionError as e:
        cause = e.__cause__
        what = args[0] if kwargs.get("mode") else str(e).split(":")[0][:60]
        key = f"{what}:{type(cause).__name__}"
        if key not in FAILURES:
            FAILURES[key] = str(e)[:600]
            with open(COLLECT, "a") as f:
                f.write(f"{key}\n    {FAILURES[key]}\n")


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    yield
    for kind, s in STATS.items():
        if s["examples"]:
            print(f"\n[fuzz] {kind}: {s}", file=sys.stderr)


@pytest.fixture
def guarded() -> Iterator[None]:
    with address_space_limit():
        yield


# -- op fuzzing -----------------------------------------------------------------------------


# About a dozen draws an op, so that most ops meet a case they accept whatever their count.
OP_EXAMPLES = _COUNT or (100_000 if LONG else 12 * len(library_ops()))


@pytest.mark.usefixtures("guarded")
@fuzz_settings(OP_EXAMPLES)
@given(case=op_case(), mode=st.sampled_from(MODES))
def test_every_op_keeps_the_rule(case: tuple, mode: str) -> None:
    with _gpu_if_asked(mode):
        _collecting(run_case, *case, mode=mode)


@contextlib.contextmanager
def _gpu_if_asked(mode: str) -> Iterator[None]:
    """For the "-gpu" modes: "/gpu:0", simulated (NumPy under CuPy's limits) when there is
    no GPU here."""
    if not mode.endswith("gpu"):
        yield
        return
    from minigraph.devices import gpu_unavailable_reason

    simulated = mg.config.simulated_gpu()
    if gpu_unavailable_reason() is not None:
        mg.config.set_simulated_gpu(True)
    try:
        yield
    finally:
        mg.config.set_simulated_gpu(simulated)


def test_the_fuzzer_reaches_the_ops() -> None:
    """After the fuzzer ran, most registered ops were built at least once (it is not stuck
    in its error paths), and every op could be drawn."""
    if STATS["ops"]["examples"] < 500:
        pytest.skip("the op fuzzer did not run first (or ran too few examples)")
    ops = library_ops()
    assert len(ops) >= 0.9 * len(mg.registered_ops())
    assert len(BUILT_OPS) >= 0.5 * len(ops), sorted(set(ops) - BUILT_OPS)


# -- graph files ------------------------------------------------------------------------------


def _seed_graph(seed: int) -> mg.Graph:
    """A small valid graph of several ops."""
    rng = np.random.default_rng(seed)
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, 3], name="x")
        c = mg.constant(rng.standard_normal((2, 3)).astype(np.float32), name="c")
        y = mg.concat([x, c], axis=0)
        r = mg.range(0, 5, 2)
        parts = mg.dynamic_partition(r, [0, 1, 0], 2)
        mg.dynamic_stitch([[0, 1], [2]], [parts[0], parts[1]])
        mg.cast(y, mg.int32)
        mg.stack([r, r])
    return g


HOSTILE = [
    10**5000, 2**63, 2**64, -1, -(2**63) - 1, 1e308, None, True,
    "(1099511627776,)f8", "f8", "<i4", "float33", [], {}, [[]], [2**62, 2**62], "^x",
    "x:0", "x:99", "", "nan", [None], [1.5], "QUJD", {"tensor": 1}, {"type": "int32"},
]  # fmt: skip


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def _set(obj: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = value
    return obj


def _dumps(doc: Any) -> str:
    """JSON text; a Python int too long for str() is written out digit by digit."""
    big = []

    def default(o: Any) -> Any:
        return str(o)

    def fix(o: Any) -> Any:
        if isinstance(o, int) and not isinstance(o, bool) and abs(o) > 10**4000:
            big.append(o)
            return f"__BIG{len(big) - 1}__"
        if isinstance(o, dict):
            return {k: fix(v) for k, v in o.items()}
        if isinstance(o, list):
            return [fix(v) for v in o]
        return o

    text = json.dumps(fix(doc), default=default)
    for i in range(len(big)):
        text = text.replace(f'"__BIG{i}__"', "9" * 5000)
    return text


@st.composite
def mutated_document(draw: Any) -> str:
    doc = graph_io.graph_to_dict(_seed_graph(draw(st.integers(0, 3))))
    for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2, 3]))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        action = draw(st.integers(0, 5))
        if action <= 2:
            doc = _set(doc, path, copy.deepcopy(draw(st.sampled_from(HOSTILE))))
        elif action == 3 and path and isinstance(doc, dict | list):
            parent = doc
            for k in path[:-1]:
                parent = parent[k]
            with contextlib.suppress(KeyError, IndexError, TypeError):
                del parent[path[-1]]
        elif action == 4 and isinstance(doc, dict) and isinstance(doc.get("nodes"), list):
            nodes = doc["nodes"]
            if nodes:
                i = draw(st.integers(0, len(nodes) - 1))
                j = draw(st.integers(0, len(nodes) - 1))
                nodes[i], nodes[j] = nodes[j], nodes[i]  # an input that is not defined yet
        elif action == 5 and isinstance(doc, dict) and isinstance(doc.get("nodes"), list):
            if doc["nodes"]:
                doc["nodes"].append(copy.deepcopy(doc["nodes"][0]))  # a duplicate name
    text = _dumps(doc)
    if draw(st.integers(0, 9)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text


@pytest.mark.usefixtures("guarded")
@fuzz_settings(FILE_EXAMPLES)
@given(text=mutated_document())
def test_mutated_graph_files_are_refused_or_run(text: str) -> None:
    _collecting(check_graph_file, text)


def check_graph_file(text: str) -> None:
    stats = STATS["files"]
    stats["examples"] += 1
    try:
        g = graph_io.from_json(text)
    except errors.OpError as e:
        stats["build_errors"] += 1
        assert not isinstance(e, errors.InternalError), e
        assert "graph file" in str(e) or e.node_name, f"load: {e} names neither node nor file"
        return
    stats["built"] += 1
    sess = mg.Session(g, max_tensor_bytes=CAP_BYTES)
    for node in g.nodes():
        name = node.name
        if not node.output_specs:
            continue
        try:
            sess.run(f"{name}:0")
            stats["ran"] += 1
        except Exception as e:  # noqa: BLE001
            stats["run_errors"] += 1
            _check_error(e, f"run {name} of a loaded file")


def test_graph_file_refuses_each_hostile_value() -> None:
    """Each hostile value, put at each place of a valid document, loads or is refused."""
    doc = graph_io.graph_to_dict(_seed_graph(0))
    count = 0
    for path in _paths(doc):
        for value in HOSTILE[:10]:
            mutated = _set(copy.deepcopy(doc), path, copy.deepcopy(value))
            try:
                graph_io.graph_from_dict(mutated)
            except errors.OpError as e:
                assert not isinstance(e, errors.InternalError), (path, value, e)
            count += 1
    assert count > 100


# -- GraphDef bytes ------------------------------------------------------------------------


def _graph_def_bytes(seed: int) -> bytes:
    return _seed_graph(seed).as_graph_def().SerializeToString()


@st.composite
def mutated_graph_def(draw: Any) -> Any:
    """Serialized GraphDef bytes, mutated (bytes flipped, cut, inserted), or a GraphDef
    whose fields are set to hostile values (unknown dtype enums, tensor_content of the
    wrong length, huge declared shapes, dangling inputs, cycles, wrong attr kinds)."""
    from tensorboard.compat.proto import graph_pb2

    raw = _graph_def_bytes(draw(st.integers(0, 2)))
    if draw(st.booleans()):
        data = bytearray(raw)
        for _ in range(draw(st.integers(1, 4))):
            action = draw(st.integers(0, 2))
            pos = draw(st.integers(0, max(len(data) - 1, 0)))
            if action == 0 and data:
                data[pos] = draw(st.integers(0, 255))
            elif action == 1:
                del data[pos:]
            else:
                data[pos:pos] = bytes(draw(st.lists(st.integers(0, 255), max_size=8)))
        return bytes(data)
    gd = graph_pb2.GraphDef()
    gd.ParseFromString(raw)
    node = gd.node[draw(st.integers(0, len(gd.node) - 1))]
    action = draw(st.integers(0, 7))
    consts = [n for n in gd.node if n.op == "Const"]
    if action == 0 and node.attr:
        key = draw(st.sampled_from(sorted(node.attr)))
        node.attr[key].type = draw(st.sampled_from([0, 7, 20, 99, 101, 1000, -1 & 0x7FFFFFFF]))
    elif action == 1 and consts:
        t = draw(st.sampled_from(consts)).attr["value"].tensor
        t.tensor_content = bytes(draw(st.lists(st.integers(0, 255), max_size=11)))
    elif action == 2 and consts:
        t = draw(st.sampled_from(consts)).attr["value"].tensor
        del t.tensor_shape.dim[:]
        for d in draw(st.lists(st.sampled_from([0, 1, 2**31, 2**40, 2**62, -1]), max_size=5)):
            t.tensor_shape.dim.add().size = d
        t.tensor_shape.unknown_rank = draw(st.integers(0, 3)) == 0  # maybe with dims too
        if draw(st.integers(0, 3)) == 0:  # more dims than NumPy holds
            for _ in range(65):
                t.tensor_shape.dim.add(size=1)
    elif action == 3:
        node.input.append(draw(st.sampled_from(["nope:0", "^nope", "x:7", "x:-1", ""])))
    elif action == 4 and len(gd.node) > 1:
        gd.node[0].input.append(f"{gd.node[-1].name}:0")  # a cycle through the graph
        gd.node[-1].input.append(f"{gd.node[0].name}:0")
    elif action == 5 and node.attr:
        key = draw(st.sampled_from(sorted(node.attr)))
        value = node.attr[key]
        value.Clear()
        choice = draw(st.integers(0, 3))
        if choice == 0:
            value.s = b"\xff(1099511627776,)f8"
        elif choice == 1:
            value.i = draw(st.sampled_from([2**40, -(2**63), 2**63 - 1]))
        elif choice == 2:
            value.f = float("nan")
        else:
            value.list.i.extend([1, 2**62])
    elif action == 6:
        node.op = draw(st.sampled_from(["NoSuchOp", "", "Const", "Placeholder"]))
    else:
        del node.input[:]
    return gd.SerializeToString()


@pytest.mark.usefixtures("guarded")
@fuzz_settings(FILE_EXAMPLES)
@given(data=mutated_graph_def())
def test_mutated_graph_defs_are_refused_or_run(data: bytes) -> None:
    pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    _collecting(check_graph_def, data)


def check_graph_def(data: bytes) -> None:
    stats = STATS["graphdefs"]
    stats["examples"] += 1
    g = mg.Graph()
    try:
        with g.as_default():
            mg.import_graph_def(data, name="")
    except Exception as e:  # noqa: BLE001
        stats["build_errors"] += 1
        if not isinstance(e, errors.OpError) or isinstance(e, errors.InternalError):
            raise AssertionError(f"GraphDef import: {type(e).__name__} leaked: {e}") from e
        return
    stats["built"] += 1
    sess = mg.Session(g, max_tensor_bytes=CAP_BYTES)
    for node in g.nodes():
        if not node.output_specs:
            continue
        try:
            sess.run(f"{node.name}:0")
            stats["ran"] += 1
        except Exception as e:  # noqa: BLE001
            stats["run_errors"] += 1
            _check_error(e, f"run {node.name} of an imported GraphDef")


# -- The corpus: inputs that once got through, replayed every run ------------------------------
#
# Issue 25's sweeps of bad inputs and hostile files found these; each must stay a clear
# mg.errors error (never InternalError, never a Python or NumPy exception), with nothing
# of the size it asks for allocated.


def _corpus_graph_def(node: str, op: str, **attrs: Any) -> Any:
    from tensorboard.compat.proto import graph_pb2

    gd = graph_pb2.GraphDef()
    nd = gd.node.add(name=node, op=op)
    for key, fill in attrs.items():
        fill(nd.attr[key])
    return gd


def _tensor_attr(dtype: int, dims: list[int], **values: Any) -> Any:
    def fill(av: Any) -> None:
        av.tensor.dtype = dtype
        for d in dims:
            av.tensor.tensor_shape.dim.add(size=d)
        for field, vals in values.items():
            getattr(av.tensor, field).extend(vals)

    return fill


def _type_attr(dtype: int) -> Any:
    return lambda av: setattr(av, "type", dtype)


def _unknown_rank_with_dims(av: Any) -> None:
    av.shape.unknown_rank = True
    av.shape.dim.add(size=3)


class _BytesPath:
    """An os.PathLike whose path is bytes holding a NUL."""

    def __fspath__(self) -> bytes:
        return b"model\x00.pb"


def graph_def_corpus(tmp: Any) -> list[tuple[str, Any, type[errors.OpError], str]]:
    """(what, the graph_def argument, error, message) for each hostile GraphDef input."""
    from tensorboard.compat.proto import graph_pb2, tensor_pb2

    from minigraph.tf_proto import NUMPY_MAX_DIMS

    float_, bool_, float_ref = 1, 10, 101  # DataType enums
    too_deep = [1] * (NUMPY_MAX_DIMS + 1)
    good = _corpus_graph_def("c", "Const", dtype=_type_attr(float_),
                             value=_tensor_attr(float_, [1], float_val=[1.0]))  # fmt: skip
    (tmp / "model.pb").write_bytes(good.SerializeToString())
    with open(tmp / "huge.pb", "wb") as f:  # 5 GiB, sparse: nothing on disk
        f.truncate(5 << 30)
    (tmp / "huge.pbtxt").symlink_to(tmp / "huge.pb")
    g = mg.Graph()
    with g.as_default():
        mg.dynamic_partition([1.0, 2.0], [0, 1], num_partitions=2, name="p")
    partitioned = g.as_graph_def()
    next(n for n in partitioned.node if n.name == "p").attr["num_partitions"].i = 2**40
    return [
        ("a Const of more dims than NumPy holds",
         _corpus_graph_def("c", "Const", dtype=_type_attr(float_),
                           value=_tensor_attr(float_, too_deep, float_val=[1.0])),
         errors.InvalidArgumentError, f"{len(too_deep)} dims"),
        ("a reference dtype (DT_FLOAT_REF)",
         _corpus_graph_def("c", "Const", dtype=_type_attr(float_ref),
                           value=_tensor_attr(float_ref, [1], float_val=[1.0])),
         errors.InvalidArgumentError, "reference dtype DT_FLOAT_REF"),
        ("a Placeholder of a reference dtype",
         _corpus_graph_def("x", "Placeholder", dtype=_type_attr(float_ref)),
         errors.InvalidArgumentError, "reference dtype"),
        ("a TensorProto for the GraphDef", tensor_pb2.TensorProto(dtype=float_),
         errors.InvalidArgumentError, "got a TensorProto message"),
        ("the GraphDef class itself", graph_pb2.GraphDef,
         errors.InvalidArgumentError, "the class GraphDef itself"),
        ("a path holding a NUL", str(tmp / "model\x00.pb"),
         errors.InvalidArgumentError, "NUL"),
        ("a bytes path holding a NUL", _BytesPath(), errors.InvalidArgumentError, "NUL"),
        ("a file path with a trailing /", str(tmp / "model.pb") + "/",
         errors.NotFoundError, "Not a directory"),
        ("unknown rank and dims", _corpus_graph_def(
            "x", "Placeholder", dtype=_type_attr(float_), shape=_unknown_rank_with_dims),
         errors.InvalidArgumentError, "unknown shape must not have any dimensions"),
        ("a bool Const of 8 GiB", _corpus_graph_def(
            "c", "Const", dtype=_type_attr(bool_),
            value=_tensor_attr(bool_, [8 << 30], bool_val=[True])),
         errors.ResourceExhaustedError, "8589934592 bytes needed"),
        ("a 5 GiB binary file", str(tmp / "huge.pb"),
         errors.InvalidArgumentError, "5368709120 bytes; a binary GraphDef is at most"),
        ("a 5 GiB text file", str(tmp / "huge.pbtxt"),
         errors.ResourceExhaustedError, "5368709120 bytes, at most"),
        ("num_partitions = 2**40", partitioned, errors.ResourceExhaustedError,
         "num_partitions = 1099511627776 outputs"),
    ]  # fmt: skip


def test_graph_def_corpus_is_refused_with_nothing_allocated(tmp_path) -> None:
    import tracemalloc

    pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    cases = graph_def_corpus(tmp_path)
    mg.config.set_max_tensor_bytes(1 << 30)  # less than the 5 and 8 GiB the cases ask for
    try:
        with address_space_limit():
            for what, graph_def, error, match in cases:
                g = mg.Graph()
                tracemalloc.start()
                try:
                    with pytest.raises(error, match=match) as info, g.as_default():
                        mg.import_graph_def(graph_def)
                    peak = tracemalloc.get_traced_memory()[1]
                finally:
                    tracemalloc.stop()
                assert not isinstance(info.value, errors.InternalError), what
                assert peak < 16 << 20, f"{what}: {peak} bytes allocated"
                assert not g.nodes(), f"{what}: the graph was changed"
    finally:
        mg.config.set_max_tensor_bytes(None)


def test_builder_and_graph_file_corpus() -> None:
    cases: list[tuple[str, Any, type[errors.OpError], str, str]] = [
        ("two ellipses", lambda x: x[..., ...],
         errors.InvalidArgumentError, "StridedSlice", "Multiple ellipses"),
        ("an index past int64", lambda x: x[2**70],
         errors.InvalidArgumentError, "StridedSlice", "out of range for int64"),
        ("a slice bound past int64", lambda x: x[: -(2**70)],
         errors.InvalidArgumentError, "StridedSlice", "out of range for int64"),
        ("num_partitions = 2**40",
         lambda x: mg.dynamic_partition(x, mg.constant([0, 1]), num_partitions=2**40),
         errors.ResourceExhaustedError, "DynamicPartition", "num_partitions"),
    ]  # fmt: skip
    with address_space_limit():
        for what, build, error, node, match in cases:
            with mg.Graph().as_default():
                x = mg.constant([1.0, 2.0])
                with pytest.raises(error, match=match) as info:
                    build(x)
                assert info.value.node_name == node, what
    doc = graph_io.graph_to_dict(_seed_graph(0))
    for version in (True, 1.0, "1", None):  # True == 1.0 == 1 in Python, yet not the int 1
        with pytest.raises(errors.InvalidArgumentError, match="unsupported version"):
            graph_io.graph_from_dict({**doc, "version": version})
    assert graph_io.graph_from_dict(doc).nodes()
