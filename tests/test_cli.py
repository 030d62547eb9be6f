"""The minigraph command: demo, run, show, trace; good and bad arguments."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph.cli import main


@pytest.fixture
def graph_file(tmp_path):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None], name="x")
        mg.multiply(x, 2.0, name="y")
        mg.add(x, 1.0, name="z")
    path = tmp_path / "g.json"
    path.write_text(g.to_json())
    np.save(tmp_path / "x.npy", np.array([1.0, 2.0], np.float32))
    return path


def test_run_prints_and_saves(graph_file, tmp_path, capsys):
    feed = f"x={tmp_path / 'x.npy'}"
    assert main(["run", str(graph_file), "--feed", feed, "--fetch", "y:0"]) == 0
    assert "y:0: float32[2]" in capsys.readouterr().out
    out = tmp_path / "out.npz"
    assert (
        main(
            [
                "run",
                str(graph_file),
                "--feed",
                feed,
                "--fetch",
                "y",
                "--fetch",
                "z:0",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    saved = np.load(out)
    np.testing.assert_array_equal(saved["y:0"], [2.0, 4.0])
    np.testing.assert_array_equal(saved["z:0"], [2.0, 3.0])


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "--fetch"),
        (["--fetch", "y:0"], "must feed a value for placeholder tensor 'x'"),
        (["--fetch", "nope:0"], "nope"),
        (["--fetch", "y:0", "--feed", "x"], "NAME=FILE.npy"),
        (["--fetch", "y:0", "--feed", "x=/no/such.npy"], "cannot load feed x"),
        (["--fetch", "y:0", "--device", "/gpu:7", "--feed", "x=X"], "GPU"),
    ],
)
def test_run_errors(graph_file, tmp_path, capsys, extra, message):
    extra = [e.replace("x=X", f"x={tmp_path / 'x.npy'}") for e in extra]
    assert main(["run", str(graph_file), *extra]) == 1
    err = capsys.readouterr().err
    assert err.startswith("minigraph: error:") and message in err


@pytest.mark.parametrize(
    "content, message",
    [
        (b"{not json", "not valid JSON"),
        (b'{"format": "other"}', "not a minigraph graph file"),
        (
            b'{"format": "minigraph.graph", "version": 1, "nodes": [{"name": "a", "op": "Evil"}]}',
            "Op type not registered 'Evil'",
        ),
        (
            b'{"format": "minigraph.graph", "version": 1, "nodes": [{"name": "a", "op": "Neg",'
            b' "inputs": ["b:0"], "attrs": {}}]}',
            "is not an earlier node's output",
        ),
    ],
)
def test_malformed_graph_files(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert main(["run", str(path), "--fetch", "a:0"]) == 1
    assert message in capsys.readouterr().err


def test_missing_graph_file(capsys):
    assert main(["show", "/no/such/graph.json"]) == 1
    assert "cannot read graph file" in capsys.readouterr().err


def test_show(graph_file, tmp_path, capsys):
    assert main(["show", str(graph_file)]) == 0
    assert '"x" -> "y"' in capsys.readouterr().out
    dot = tmp_path / "g.dot"
    assert main(["show", str(graph_file), "-o", str(dot)]) == 0
    assert dot.read_text().startswith("digraph")
    svg = tmp_path / "g.svg"
    code = main(["show", str(graph_file), "-o", str(svg)])
    if shutil.which("dot"):
        assert code == 0 and "<svg" in svg.read_text()
    else:
        assert code == 1 and "Graphviz" in capsys.readouterr().err
        assert (tmp_path / "g.dot").exists()
    assert main(["show", str(graph_file), "-o", str(tmp_path / "g.txt")]) == 1


def test_trace_writes_chrome_trace_events(graph_file, tmp_path):
    out = tmp_path / "trace.json"
    args = [
        "trace",
        str(graph_file),
        "--feed",
        f"x={tmp_path / 'x.npy'}",
        "--fetch",
        "y:0",
        "--fetch",
        "z:0",
        "-o",
        str(out),
        "--runs",
        "2",
    ]
    assert main(args) == 0
    events = json.loads(out.read_text())["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert {e["name"] for e in complete} == {"y", "y/y", "z", "z/y"}
    assert {e["pid"] for e in complete} == {0, 1}
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in complete)
    assert main(args[:-2] + ["--runs", "0"]) == 1


def test_help_and_bad_command(capsys):
    for cmd in ["demo", "run", "show", "trace"]:
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0
        assert "example" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["frobnicate"])
    assert e.value.code == 2


def test_demo_shows_every_seed_example(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert out.count("matches the documented result") == 8
    for title in [
        "SpaceToBatchND (4)",
        "DynamicStitch",
        "DynamicPartition + DynamicStitch",
        "TensorScatterUpdate: two slices",
    ]:
        assert title in out


# -- TensorFlow GraphDefs (.pb / .pbtxt) --------------------------------------------------

GRAPHS = Path(__file__).parent / "fixtures" / "graphs"


def _tf_feeds(tmp_path, case):
    saved = np.load(GRAPHS / f"{case}.npz")
    args = []
    for key in saved.files:
        if key.startswith("feed/"):
            name = key[len("feed/") :]
            path = tmp_path / f"{name.replace(':', '_')}.npy"
            np.save(path, saved[key])
            args += ["--feed", f"{name}={path}"]
    return saved, args


@pytest.mark.parametrize(
    "case, file",
    [("dynamic_stitch", "dynamic_stitch.pb"), ("batch_to_space_nd", "batch_to_space_nd.pbtxt")],
)
def test_run_tensorflow_graph_files(tmp_path, capsys, case, file):
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    saved, feeds = _tf_feeds(tmp_path, case)
    out = tmp_path / "out.npz"
    assert main(["run", str(GRAPHS / file), *feeds, "--fetch", "y", "--out", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out)["y:0"], saved["fetch/y:0"])


def test_check_tensorflow_graph_files(tmp_path, capsys):
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    assert main(["check", str(GRAPHS / "atrous_conv2d.pb")]) == 0
    out = capsys.readouterr().out
    assert "SpaceToBatchND" in out and "yes" in out and "are supported" in out
    assert main(["check", str(GRAPHS / "unsupported.pb")]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("StatelessWhile"))
    assert row.split()[1:] == ["1", "no", "loop"]
    assert "not supported" in out


def test_check_json_graph_file(graph_file, capsys):
    assert main(["check", str(graph_file)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["op", "count", "supported", "example", "node"]
    assert "Placeholder" in out and "Mul" in out


def test_show_and_trace_tensorflow_graph_file(tmp_path, capsys):
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    assert main(["show", str(GRAPHS / "partition_stitch.pbtxt")]) == 0
    assert '"y" [label="y\\nDynamicStitch"]' in capsys.readouterr().out
    _, feeds = _tf_feeds(tmp_path, "space_to_batch_nd")
    logdir = tmp_path / "logs"
    trace = tmp_path / "t.json"
    args = ["trace", str(GRAPHS / "space_to_batch_nd.pb"), *feeds, "--fetch", "y:0"]
    assert main([*args, "-o", str(trace), "--runs", "2", "--logdir", str(logdir)]) == 0
    assert "2 runs to" in capsys.readouterr().out
    (events,) = logdir.glob("events.out.tfevents.*")
    data = events.read_bytes()
    assert b"SpaceToBatchND" in data and b"run_0" in data and b"run_1" in data


def test_tensorflow_graph_file_errors(tmp_path, capsys):
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"\xff\xff\xff")
    assert main(["run", str(bad), "--fetch", "y"]) == 1
    assert "not a valid binary GraphDef" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "none.pb")]) == 1
    assert "cannot read graph file" in capsys.readouterr().err
    assert main(["run", str(GRAPHS / "unsupported.pb"), "--fetch", "y"]) == 1
    assert "StatelessWhile" in capsys.readouterr().err
