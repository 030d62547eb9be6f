"""NonMaxSuppressionV3/V4/V5 and CropAndResize against references of their own: a plain
greedy loop for hard NMS, TensorFlow's queue loop line by line for soft NMS, a per-pixel loop
for CropAndResize. TensorFlow's own answers are in tests/fixtures/ops/detection.npz (replayed
by test_tf_op_fixtures.py within tolerances; here bit for bit, with TF's messages)."""

import ctypes
import ctypes.util
import heapq
import json
import math
from pathlib import Path

import numpy as np
import pytest
from op_helpers import build_fails, same_bits

import minigraph as mg
from minigraph import errors
from minigraph.ops import detection_ops
from minigraph.wrappers import apply_op

rng = np.random.default_rng(26)
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "ops" / "detection.npz"

_LIBM = ctypes.util.find_library("m")
libm = ctypes.CDLL(_LIBM) if _LIBM else None
if libm is not None:
    libm.expf.restype, libm.expf.argtypes = ctypes.c_float, [ctypes.c_float]


def _expf(x):
    """The C library's expf, which TensorFlow's soft-NMS weights call (float64 exp
    rounded where there is none: the two differ in about one case in 2000)."""
    if libm is not None:
        return np.float32(libm.expf(float(x)))
    return np.float32(math.exp(float(x)))


# -- references --------------------------------------------------------------------------


def _box_iou(a, b):
    """TensorFlow's IOU on two float32 boxes, one scalar at a time (std::min/max)."""
    lo = lambda x, y: y if y < x else x  # noqa: E731
    hi = lambda x, y: y if x < y else x  # noqa: E731
    ay0, ax0, ay1, ax1 = lo(a[0], a[2]), lo(a[1], a[3]), hi(a[0], a[2]), hi(a[1], a[3])
    by0, bx0, by1, bx1 = lo(b[0], b[2]), lo(b[1], b[3]), hi(b[0], b[2]), hi(b[1], b[3])
    area_a = (ay1 - ay0) * (ax1 - ax0)
    area_b = (by1 - by0) * (bx1 - bx0)
    if area_a <= 0 or area_b <= 0:
        return np.float32(0)
    h = hi(lo(ay1, by1) - hi(ay0, by0), np.float32(0))
    w = hi(lo(ax1, bx1) - hi(ax0, bx0), np.float32(0))
    inter = h * w
    return inter / (area_a + area_b - inter)


def greedy_nms(boxes, scores, max_output_size, iou_threshold, score_threshold):
    """Hard NMS as a plain loop: by score (lower index first on ties), keep a box unless it
    overlaps a kept one by more than the threshold."""
    t = scores.dtype.type
    order = sorted(
        (i for i in range(len(scores)) if scores[i] > t(score_threshold)),
        key=lambda i: (-float(scores[i]), i),
    )
    b = boxes.astype(np.float32)
    kept = []
    for i in order:
        if len(kept) == max_output_size:
            break
        if all(not t(_box_iou(b[i], b[j])) > t(iou_threshold) for j in kept):
            kept.append(i)
    return np.array(kept, np.int32)


def queue_nms(boxes, scores, max_output_size, iou_threshold, score_threshold, sigma):
    """TensorFlow's DoNonMaxSuppressionOp line by line: a heap keyed by (score, -index);
    a popped candidate is weighed against the boxes selected since it was last popped,
    newest first, then selected if unchanged, else queued again if above the threshold."""
    t = scores.dtype.type
    iou_threshold, score_threshold, sigma = t(iou_threshold), t(score_threshold), t(sigma)
    soft = sigma > 0
    scale = t(t(-0.5) / sigma) if soft else t(0)
    b = boxes.astype(np.float32)
    heap = [(-float(s), i, 0, s) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(heap)
    selected, selected_scores = [], []
    while len(selected) < max_output_size and heap:
        _, i, begin, score = heapq.heappop(heap)
        original, hard = score, False
        for j in range(len(selected) - 1, begin - 1, -1):
            sim = t(_box_iou(b[i], b[selected[j]]))
            weight = t(_expf(t(t(scale * sim) * sim)))
            score = t(score * (weight if soft or sim <= iou_threshold else t(0)))
            if not soft and sim > iou_threshold:
                hard = True
                break
            if score <= score_threshold:
                break
        if hard:
            continue
        if score == original:
            selected.append(i)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-float(score), i, len(selected), score))
    return np.array(selected, np.int32), np.array(selected_scores, scores.dtype)


def crop_and_resize_loop(image, boxes, box_ind, size, method, extrapolation_value):
    """TensorFlow's CPU loop for CropAndResize, one pixel at a time, in float32."""
    f = np.float32
    _, h, w, d = image.shape
    ch, cw = size
    out = np.empty((len(boxes), ch, cw, d), f)

    def coords(lo, hi, n, extent):
        if n == 1:
            return [f(0.5 * float(f(lo + hi)) * (extent - 1))]
        scale = (hi - lo) * f(extent - 1) / f(n - 1)
        return [lo * f(extent - 1) + f(i) * scale for i in range(n)]

    def near(v):
        return int(math.floor(v + 0.5)) if v - math.floor(v) != 0.5 else int(math.ceil(v))

    for b, (y1, x1, y2, x2) in enumerate(boxes):
        img = image[box_ind[b]].astype(f)
        for y, in_y in enumerate(coords(y1, y2, ch, h)):
            for x, in_x in enumerate(coords(x1, x2, cw, w)):
                if not (0 <= in_y <= h - 1 and 0 <= in_x <= w - 1):
                    out[b, y, x] = f(extrapolation_value)
                elif method == "nearest":
                    out[b, y, x] = img[near(in_y), near(in_x)]
                else:
                    top, left = math.floor(in_y), math.floor(in_x)
                    bottom, right = math.ceil(in_y), math.ceil(in_x)
                    yl, xl = in_y - f(top), in_x - f(left)
                    upper = img[top, left] + (img[top, right] - img[top, left]) * xl
                    lower = img[bottom, left] + (img[bottom, right] - img[bottom, left]) * xl
                    out[b, y, x] = upper + (lower - upper) * yl
    return out


# -- NMS ---------------------------------------------------------------------------------


def random_boxes(n, dtype=np.float32, flip=False):
    centre = rng.uniform(0, 1, (n, 2))
    half = rng.uniform(0.02, 0.2, (n, 2))
    boxes = np.concatenate([centre - half, centre + half], axis=1)
    if flip:
        boxes = boxes[:, [2, 1, 0, 3]]
    return boxes.astype(dtype)


def run_nms(version, boxes, scores, max_output_size, iou, score, sigma=0.0, pad=False):
    t = scores.dtype.type
    g = mg.Graph()
    with g.as_default():
        b = mg.placeholder(mg.as_dtype(boxes.dtype), [None, 4])
        s = mg.placeholder(mg.as_dtype(scores.dtype), [None])
        args = [b, s, np.int32(max_output_size), t(iou), t(score)]
        if version == 3:
            outs = [mg.non_max_suppression(*args)]
        elif version == 4:
            outs = mg.non_max_suppression_v4(*args, pad_to_max_output_size=pad)
        else:
            outs = mg.non_max_suppression_v5(*args, t(sigma), pad_to_max_output_size=pad)
    return mg.Session(g).run(outs, {b: boxes, s: scores})


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("version", [3, 4, 5])
def test_hard_nms_is_the_greedy_loop(version, dtype):
    for trial in range(12):
        n = int(rng.integers(0, 50))
        boxes = random_boxes(n, dtype, flip=trial % 2 == 1)
        if trial % 3 == 0:  # ties, duplicates
            scores = rng.integers(0, 4, n).astype(dtype) / 4
            boxes[: n // 3] = boxes[0] if n else boxes[:0]
        else:
            scores = rng.uniform(-1, 1, n).astype(dtype)
        iou = float(rng.choice([0.0, 0.25, 0.5, 1.0]))
        score = float(rng.choice([-np.inf, 0.0, 0.5]))
        limit = int(rng.integers(0, 40))
        want = greedy_nms(boxes, scores, limit, iou, score)
        got = run_nms(version, boxes, scores, limit, iou, score)
        same_bits(got[0], want)
        if version > 3:
            assert got[-1] == len(want)
        if version == 5:
            same_bits(got[1], scores[want])


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_soft_nms_follows_tensorflows_queue(dtype):
    for trial in range(10):
        n = int(rng.integers(0, 80))
        boxes = random_boxes(n, dtype, flip=trial % 3 == 0)
        scores = rng.uniform(-0.5 if trial % 2 else 0, 1, n).astype(dtype)
        if trial == 4 and n:
            boxes[n // 2] = np.nan  # NaN IoUs: weights of exp(NaN), so NaN scores that leave
        score = float(rng.choice([-np.inf, -0.2, 0.0, 0.3]))
        sigma = float(rng.choice([0.05, 0.5, 2.0]))
        limit = int(rng.integers(0, 90))
        want, want_scores = queue_nms(boxes, scores, limit, 0.5, score, sigma)
        got, got_scores, valid = run_nms(5, boxes, scores, limit, 0.5, score, sigma)
        same_bits(got, want)
        same_bits(got_scores, want_scores)
        assert valid == len(want)


@pytest.mark.usefixtures("any_device")
def test_hard_nms_with_nan_boxes_follows_tensorflows_queue():
    """A NaN IoU zeroes a candidate's score rather than suppressing it; it may then come
    back (as TensorFlow's queue does) and be selected."""
    boxes = random_boxes(40)
    boxes[[3, 17, 30]] = [[np.nan, 0, 1, 1], [0, np.inf, 1, 1], [0.2, 0.2, np.nan, 0.5]]
    scores = rng.uniform(0, 1, 40).astype(np.float32)
    for score in [-np.inf, -1.0, 0.0, 0.4]:
        want, want_scores = queue_nms(boxes, scores, 40, 0.3, score, 0.0)
        got, got_scores, valid = run_nms(5, boxes, scores, 40, 0.3, score)
        same_bits(got, want)
        same_bits(got_scores, want_scores)


@pytest.mark.usefixtures("any_device")
def test_padding_and_valid_outputs():
    boxes, scores = random_boxes(20), rng.uniform(0, 1, 20).astype(np.float32)
    want = greedy_nms(boxes, scores, 30, 0.2, 0.5)
    indices, valid = run_nms(4, boxes, scores, 30, 0.2, 0.5, pad=True)
    assert indices.shape == (30,) and valid == len(want) < 30
    same_bits(indices[:valid], want)
    assert not indices[valid:].any()
    indices, selected, valid = run_nms(5, boxes, scores, 30, 0.2, 0.5, sigma=0.5, pad=True)
    assert indices.shape == selected.shape == (30,) and valid.shape == ()
    assert not selected[valid:].any() and (selected[:valid] > 0.5).all()
    got = run_nms(4, boxes[:0], scores[:0], 3, 0.5, 0.0, pad=True)
    same_bits(got[0], np.zeros(3, np.int32))
    assert got[1] == 0


def test_glibc_expf_is_reproduced_bit_for_bit():
    if libm is None or not hasattr(libm, "expf"):
        pytest.skip("no C library expf to compare with")
    x = np.concatenate(
        [-rng.exponential(1, 20000), rng.uniform(-110, 0, 5000), -rng.exponential(0.01, 5000)]
    ).astype(np.float32)
    x = np.concatenate([x, np.float32([0, -0.0, -np.inf, -103.97, -103.98, -87.5, -0.032009393])])
    want = np.array([libm.expf(float(v)) for v in x], np.float32)
    with np.errstate(invalid="ignore"):  # -inf: inf - inf on the way to 0
        same_bits(detection_ops._expf(np, x), want)


def test_nms_shapes():
    with mg.Graph().as_default():
        boxes = mg.placeholder(mg.float32, [None, 4])
        scores = mg.placeholder(mg.float32, [None])
        assert mg.non_max_suppression(boxes, scores, 10).shape.as_list() == [None]
        i, v = mg.non_max_suppression_v4(
            boxes, scores, np.int32(7), np.float32(0.5), np.float32(0), pad_to_max_output_size=True
        )
        assert i.shape.as_list() == [7] and v.shape.as_list() == []
        n = mg.placeholder(mg.int32, [])
        i, s, v = mg.non_max_suppression_v5(
            boxes,
            scores,
            n,
            np.float32(0.5),
            np.float32(0),
            np.float32(0.5),
            pad_to_max_output_size=True,
        )
        assert i.shape.as_list() == s.shape.as_list() == [None] and v.shape.as_list() == []
        i, s = mg.non_max_suppression_with_scores(boxes, scores, 5)
        assert s.dtype == mg.float32
        half = mg.placeholder(mg.float16, [3, 4])
        i, s = mg.non_max_suppression_with_scores(half, mg.placeholder(mg.float16, [3]), 5)
        assert s.dtype == mg.float16


BOXES = np.float32([[0, 0, 1, 1], [0, 0.1, 1, 1.1]])
SCORES = np.float32([0.9, 0.8])


@pytest.mark.parametrize(
    "build,match",
    [
        (lambda: mg.non_max_suppression(BOXES[None], SCORES, 3), "must be rank 2 but is rank 3"),
        (lambda: mg.non_max_suppression(BOXES[:, :3], SCORES, 3), "Dimension must be 4 but is 3"),
        (lambda: mg.non_max_suppression(BOXES, SCORES[:1], 3), "must be equal, but are 2 and 1"),
        (lambda: mg.non_max_suppression(BOXES, SCORES, [3]), "must be rank 0 but is rank 1"),
        (lambda: mg.non_max_suppression(BOXES, SCORES, 3, 1.5), r"iou_threshold must be in \["),
        (lambda: mg.non_max_suppression(BOXES, SCORES, -1), "output size must be non-negative"),
        (
            lambda: mg.non_max_suppression_v4(
                BOXES,
                SCORES,
                np.int32(-2),
                np.float32(0.5),
                np.float32(0),
                pad_to_max_output_size=True,
            ),
            "Dimension size, given by scalar input 2, must be non-negative but is -2",
        ),
        (
            lambda: mg.non_max_suppression_with_scores(BOXES, SCORES, 2, soft_nms_sigma=-1.0),
            "soft_nms_sigma_val must be >= 0",
        ),
    ],
)
def test_nms_build_errors(build, match):
    build_fails(build, match)


# -- TensorFlow's fixtures, bit for bit and with its messages ------------------------------


def _fixture_cases():
    with np.load(FIXTURE, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays.pop("meta")))
    for i, m in enumerate(meta):
        own = {k[len(f"{i}/") :]: v for k, v in arrays.items() if k.startswith(f"{i}/")}
        yield pytest.param(m, own, id=m["name"])


FIXTURE_CASES = list(_fixture_cases())


def _run_fixture(meta, arrays):
    """The case with every input fed through a placeholder of unknown shape, so that the
    kernel (not shape inference) sees the values, as TensorFlow's eager run did."""
    op_def = mg.registered_ops()[meta["op"]]
    g = mg.Graph()
    feeds, inputs = {}, []
    with g.as_default():
        for arg in op_def.inputs:
            value = arrays[f"in/{arg.name}"]
            p = mg.placeholder(mg.as_dtype(value.dtype), None, name=arg.name)
            feeds[p] = value
            inputs.append(p)
        op = apply_op(meta["op"], None, inputs, meta["attrs"])
    return mg.Session(g).run(op.outputs, feeds)


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("meta,arrays", FIXTURE_CASES)
def test_fixtures_bit_for_bit(meta, arrays):
    if "tf_error" in meta:
        message = meta["tf_message"]
        if "}} " not in message:  # refused by TensorFlow's Python layer (an attr value)
            return
        message = message.split("}} ", 1)[1].split(" [Op:", 1)[0]
        with pytest.raises(getattr(errors, meta["tf_error"])) as e:
            _run_fixture(meta, arrays)
        assert message in str(e.value) and e.value.node_name
        return
    got = _run_fixture(meta, arrays)
    for k, value in enumerate(got):
        same_bits(value, arrays[f"out/{k}"])


# -- CropAndResize -----------------------------------------------------------------------


def run_crop(image, boxes, box_ind, size, **attrs):
    g = mg.Graph()
    with g.as_default():
        ph = [mg.placeholder(mg.as_dtype(a.dtype), a.shape) for a in (image, boxes, box_ind)]
        out = mg.crop_and_resize(*ph, size, **attrs)
    return mg.Session(g).run(out, dict(zip(ph, (image, boxes, box_ind))))


@pytest.mark.usefixtures("any_device")
@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("size", [(1, 1), (1, 6), (5, 1), (4, 7)])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.float64])
def test_crop_and_resize_is_tensorflows_loop(method, size, dtype):
    image = (rng.standard_normal((3, 6, 5, 2)) * 50).astype(dtype)
    boxes = rng.uniform(-0.3, 1.3, (12, 4)).astype(np.float32)  # out of the image, flipped
    boxes[0] = [0.5, 0.5, 0.5, 0.5]
    boxes[1] = [0.25, 0.125, 0.75, 0.375]  # samples on pixel centres and halves
    box_ind = rng.integers(0, 3, 12).astype(np.int32)
    want = crop_and_resize_loop(image, boxes, box_ind, size, method, -1.5)
    got = run_crop(image, boxes, box_ind, size, method=method, extrapolation_value=-1.5)
    same_bits(got, want)


def test_crop_and_resize_shapes():
    with mg.Graph().as_default():
        image = mg.placeholder(mg.uint8, [2, None, None, 3])
        boxes = mg.placeholder(mg.float32, [None, 4])
        ind = mg.placeholder(mg.int32, [5])
        y = mg.crop_and_resize(image, boxes, ind, [7, 9])
        assert y.shape.as_list() == [5, 7, 9, 3] and y.dtype == mg.float32
        y = mg.crop_and_resize(image, boxes, ind, mg.placeholder(mg.int32, [2]))
        assert y.shape.as_list() == [5, None, None, 3]


IMAGE = np.zeros((2, 3, 3, 1), np.float32)
BOX = np.float32([[0, 0, 1, 1]])


@pytest.mark.parametrize(
    "build,match",
    [
        (lambda: mg.crop_and_resize(IMAGE[0], BOX, [0], [2, 2]), "must be rank 4 but is rank 3"),
        (lambda: mg.crop_and_resize(IMAGE, BOX, [0, 1], [2, 2]), "equal, but are 1 and 2"),
        (lambda: mg.crop_and_resize(IMAGE, [[0, 0, 1]], [0], [2, 2]), "must be 4 but is 3"),
        (lambda: mg.crop_and_resize(IMAGE, BOX, [0], [2, 2, 2]), "must be 2 but is 3"),
        (lambda: mg.crop_and_resize(IMAGE, BOX, [0], [0, 2]), "crop dimensions must be positive"),
        (
            lambda: mg.crop_and_resize(np.zeros((1, 0, 2, 1)), BOX, [0], [2, 2]),
            "image dimensions must be positive",
        ),
        (lambda: mg.crop_and_resize(IMAGE, BOX, [0], [2, 2], method="area"), "method"),
    ],
)
def test_crop_and_resize_build_errors(build, match):
    build_fails(build, match)


@pytest.mark.usefixtures("any_device")
def test_crop_and_resize_run_errors_name_the_node():
    with pytest.raises(errors.OutOfRangeError, match=r"outside \[0, batch_size\)") as e:
        run_crop(IMAGE, np.float32([[0, 0, 1, 1]] * 2), np.int32([1, 2]), [2, 2])
    assert e.value.node_name == "CropAndResize"
    with pytest.raises(errors.InvalidArgumentError, match="not finite"):
        run_crop(IMAGE, np.float32([[0, 0, np.nan, 1]]), np.int32([0]), [2, 2])


def test_inputs_are_not_modified():
    boxes = random_boxes(30)
    scores = rng.uniform(0, 1, 30).astype(np.float32)
    before = boxes.copy(), scores.copy()
    run_nms(5, boxes, scores, 30, 0.3, 0.0, sigma=0.5)
    run_nms(3, boxes, scores, 30, 0.3, 0.0)
    image = rng.standard_normal((1, 4, 4, 1)).astype(np.float32)
    snapshot = image.copy()
    run_crop(image, boxes[:3], np.zeros(3, np.int32), [2, 2])
    same_bits(boxes, before[0])
    same_bits(scores, before[1])
    same_bits(image, snapshot)


def test_crop_and_resize_nan_coordinates_extrapolate():
    """Finite boxes whose extent overflows give NaN sample coordinates (inf * 0); those
    samples take the extrapolation value (TensorFlow reads outside the image there)."""
    image = rng.standard_normal((1, 4, 4, 1)).astype(np.float32)
    boxes = np.float32([[-3e38, 0, 3e38, 1]])
    got = run_crop(image, boxes, np.int32([0]), [3, 2], extrapolation_value=9.0)
    assert (got == 9.0).all()
