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
        ([], "must feed a value for placeholder tensor 'x'"),
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
    err = capsys.readouterr().err.splitlines()[-1]
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
    for cmd in ["demo", "inputs", "check", "run", "show", "trace"]:
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
    row = next(line for line in out.splitlines() if line.startswith("StringLength"))
    assert row.split()[1:] == ["1", "no", "len", "no", "kernel"]
    row = next(line for line in out.splitlines() if line.startswith("StatelessWhile"))
    assert row.split()[1:] == ["1", "yes"]
    assert "not supported" in out


def test_check_json_graph_file(graph_file, capsys):
    assert main(["check", str(graph_file)]) == 0
    out = capsys.readouterr().out
    header = ["op", "count", "supported", "example", "node", "reason"]
    assert out.splitlines()[0].split() == header
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
    assert "StringLength" in capsys.readouterr().err


# -- issue 25: version, inputs, fetching the likely outputs, one-line errors ---------------


def _one_error_line(capsys) -> str:
    """The command's stderr, checked to be exactly one `minigraph: error:` line."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("minigraph: error: "), err
    assert "Traceback" not in err
    return err


def test_version_is_the_package_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"minigraph {mg.__version__}\n"
    assert mg.__version__ == version("minigraph")  # pyproject reads it from minigraph/


def test_inputs_lists_placeholders_and_the_nodes_nobody_reads(tmp_path, capsys):
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None, 4], name="x")
        ids = mg.placeholder(mg.int32, shape=[3], name="ids")
        mg.placeholder(mg.float32, name="unused")  # an unread Placeholder is an input only
        h = mg.multiply(x, 2.0, name="h")
        mg.reduce_sum(h, axis=1, name="total")  # read by nothing: an output
        mg.unique(ids, name="u")  # two outputs, neither read: both listed
        mg.constant(1.0, name="dangling")  # a Const is never a likely output
        with mg.control_dependencies([mg.identity(x, name="gate")]):
            mg.identity(h, name="after")  # `gate` is read by a control edge: not an output
    path = tmp_path / "g.json"
    path.write_text(g.to_json())
    assert main(["inputs", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("inputs")
    assert [line.split() for line in lines[1:4]] == [
        ["x:0", "float32", "[?,4]"],
        ["ids:0", "int32", "[3]"],
        ["unused:0", "float32", "<unknown>"],
    ]
    assert lines[4].startswith("outputs")
    assert [line.split() for line in lines[5:]] == [
        ["total:0", "float32", "[?]", "Sum"],
        ["u:0", "int32", "[?]", "Unique"],
        ["u:1", "int32", "[3]", "Unique"],
        ["after:0", "float32", "[?,4]", "Identity"],
    ]


def test_inputs_of_a_tensorflow_graph_file(capsys):
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    # The frozen Keras transformer returns three tensors (docs/tensorflow.md's table).
    assert main(["inputs", str(GRAPHS / "keras_transformer.pb")]) == 0
    out = capsys.readouterr().out
    rows = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert rows == ["x:0", "Identity:0", "Identity_1:0", "Identity_2:0"]


def test_run_without_fetch_fetches_the_outputs_and_says_so(graph_file, tmp_path, capsys):
    feed = f"x={tmp_path / 'x.npy'}"
    out = tmp_path / "out.npz"
    assert main(["run", str(graph_file), "--feed", feed, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "no --fetch given: fetching y:0, z:0" in err
    saved = np.load(out)
    assert sorted(saved.files) == ["y:0", "z:0"]
    np.testing.assert_array_equal(saved["y:0"], [2.0, 4.0])  # x * 2 for x = [1, 2]
    np.testing.assert_array_equal(saved["z:0"], [2.0, 3.0])  # x + 1


def test_run_without_fetch_on_a_graph_with_no_output_is_an_error(tmp_path, capsys):
    g = mg.Graph()
    with g.as_default():
        mg.constant(1.0, name="c")
    path = tmp_path / "g.json"
    path.write_text(g.to_json())
    assert main(["run", str(path)]) == 1
    assert "give at least one --fetch" in _one_error_line(capsys)


def test_out_writes_the_file_it_names(graph_file, tmp_path, capsys):
    out = tmp_path / "out.txt"
    args = ["run", str(graph_file), "--feed", f"x={tmp_path / 'x.npy'}", "--fetch", "y:0"]
    assert main([*args, "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote 1 arrays to {out}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "out.txt", "x.npy"]
    np.testing.assert_array_equal(np.load(out)["y:0"], [2.0, 4.0])


def _keras_zip(path):
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        z.writestr("config.json", '{"class_name": "Sequential"}' * 500)
        z.writestr("model.weights.h5", bytes(range(256)) * 50)


# saved_model_schema_version = 1, then a MetaGraphDef: how TensorFlow's saved_model.pb begins.
SAVED_MODEL_BYTES = b"\x08\x01\x12\x04\x0a\x02\x08\x01"


def _saved_model_dir(path):
    (path / "variables").mkdir(parents=True)
    (path / "saved_model.pb").write_bytes(SAVED_MODEL_BYTES)


EMPTY_GRAPH = b'{"format": "minigraph.graph", "version": 1, "nodes": []}'

# (the path given, what is written there: bytes, or a function of the path, the message)
NOT_GRAPHS = [
    ("model.keras", _keras_zip, "a Keras model file"),
    ("model.bin", _keras_zip, "a Keras model file"),  # renamed: known by its first bytes
    ("m.h5", b"\x89HDF\r\n\x1a\n" + bytes(100), "a Keras model file"),
    ("sm", _saved_model_dir, "the SavedModel has no signature to run"),
    ("sm/saved_model.pb", None, "the SavedModel has no signature to run"),
    ("model.pb", SAVED_MODEL_BYTES, "a SavedModel apart from its directory"),  # renamed
    ("dir", lambda p: p.mkdir(), "is a directory, not a graph file"),
    ("e.pb", b"", "an empty GraphDef: it holds no nodes (the file is 0 bytes)"),
    ("e.json", b" \n", "is empty"),
    ("e.json", EMPTY_GRAPH, "an empty graph file: it holds no nodes"),
    ("cfg.json", b'{"name": "m", "layers": []}', 'no "format": "minigraph.graph" (its keys: name'),
    ("l.json", b"[1, 2]", "its top level is a JSON list"),
    ("n.json", b'{"format": "minigraph.graph", "nodes": 3}', '"nodes" is not a list'),
]


@pytest.mark.parametrize("name, content, message", NOT_GRAPHS)
@pytest.mark.parametrize("command", ["check", "run", "inputs", "show"])
def test_files_that_are_not_graphs_are_one_error_line(
    tmp_path, capsys, command, name, content, message
):
    path = tmp_path / name
    if name == "sm/saved_model.pb":
        _saved_model_dir(tmp_path / "sm")
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        content(path)
    assert main([command, str(path)]) == 1
    err = _one_error_line(capsys)
    assert message in err
    assert len(err) < 400 and "\\x" not in err  # never the file's bytes


def test_an_empty_graph_def_with_only_versions_is_an_error(tmp_path, capsys):
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    path = tmp_path / "v.pb"
    path.write_bytes(b"\x22\x02\x08\x01")  # GraphDef.versions {producer: 1}, no node
    assert main(["check", str(path)]) == 1
    assert "an empty GraphDef: it holds no nodes" in _one_error_line(capsys)


def test_npz_given_to_feed_names_the_format_and_its_arrays(graph_file, tmp_path, capsys):
    np.savez(tmp_path / "both.npz", images=np.zeros(2, np.float32), labels=np.ones(2))
    feed = f"x={tmp_path / 'both.npz'}"
    assert main(["run", str(graph_file), "--feed", feed, "--fetch", "y:0"]) == 1
    err = _one_error_line(capsys)
    assert "a .npz archive (holding images, labels)" in err and ".npy" in err


@pytest.mark.parametrize(
    "out, message",
    [("no/such/dir/out.npz", "directory"), (".", "is a directory")],
)
def test_out_into_a_missing_directory_fails_before_the_run(
    graph_file, tmp_path, capsys, out, message
):
    args = ["run", str(graph_file), "--feed", f"x={tmp_path / 'x.npy'}", "--fetch", "y:0"]
    assert main([*args, "--out", str(tmp_path / out)]) == 1
    assert message in _one_error_line(capsys)


@pytest.mark.parametrize(
    "args, nearest",
    [
        (["--fetch", "Y:0"], "Did you mean 'y:0'"),
        (["--fetch", "zz"], "Did you mean 'z:0'"),
        (["--feed", "X=X.npy", "--fetch", "y"], "Did you mean 'x:0'"),
    ],
)
def test_misspelled_names_suggest_the_nearest(graph_file, tmp_path, capsys, args, nearest):
    args = [a.replace("X.npy", str(tmp_path / "x.npy")) for a in args]
    assert main(["run", str(graph_file), *args]) == 1
    assert nearest in _one_error_line(capsys)


def test_bad_arguments_are_one_error_line(graph_file, capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", str(graph_file), "--bogus"])
    assert e.value.code == 2
    assert "unrecognized arguments: --bogus" in _one_error_line(capsys)


def test_an_unexpected_exception_is_one_line_unless_debugging(graph_file, capsys, monkeypatch):
    import minigraph.cli as cli

    def broken(args):
        raise RuntimeError("line one\nline two")

    monkeypatch.setattr(cli, "_cmd_inputs", broken)
    assert main(["inputs", str(graph_file)]) == 1
    err = _one_error_line(capsys)
    assert "RuntimeError: line one line two" in err and "MINIGRAPH_DEBUG=1" in err
    monkeypatch.setattr(mg.config, "debug", lambda: True)
    with pytest.raises(RuntimeError):
        main(["inputs", str(graph_file)])


# -- check: reasons and hints --------------------------------------------------------------


def test_check_gives_a_reason_and_a_hint_per_unsupported_op_type(tmp_path, capsys):
    nodes = [
        ("x", "Placeholder"),
        ("w", "TemporaryVariable"),
        ("w/read", "DestroyTemporaryVariable"),
        ("b", "TemporaryVariable"),
        ("b/read", "DestroyTemporaryVariable"),
        ("call", "RemoteCall"),
        ("noise", "RandomGamma"),
        ("drop", "Multinomial"),
        ("loop", "RefNextIteration"),
        ("fft", "FFT"),
        ("y", "AddV2"),
    ]
    doc = {
        "format": "minigraph.graph",
        "version": 1,
        "nodes": [{"name": n, "op": op, "inputs": [], "attrs": {}} for n, op in nodes],
    }
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc))
    assert main(["check", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    table = {line.split()[0]: line.split()[1:] for line in lines[1:9]}
    assert table == {
        "Placeholder": ["1", "yes"],
        "TemporaryVariable": ["2", "no", "w", "variable"],
        "DestroyTemporaryVariable": ["2", "no", "w/read", "variable"],
        "RemoteCall": ["1", "no", "call", "function", "call"],
        "RandomGamma": ["1", "no", "noise", "stateful", "random"],
        "Multinomial": ["1", "no", "drop", "stateful", "random"],
        "RefNextIteration": ["1", "no", "loop", "control", "flow"],
        "FFT": ["1", "no", "fft", "no", "kernel"],
    }
    assert lines[10] == "7 of 9 op types are not supported (9 of 11 nodes):"
    grouped = [line.split(":")[0].split() for line in lines[11:18]]
    assert grouped == [  # one line per op type, with its count, grouped by kind
        ["TemporaryVariable", "2", "nodes", "variable"],
        ["DestroyTemporaryVariable", "2", "nodes", "variable"],
        ["RemoteCall", "1", "node", "function", "call"],
        ["RandomGamma", "1", "node", "stateful", "random"],
        ["Multinomial", "1", "node", "stateful", "random"],
        ["RefNextIteration", "1", "node", "control", "flow"],
        ["FFT", "1", "node", "no", "kernel"],
    ]
    # this graph file does not load: check cannot say which fetches run
    assert lines[18].startswith("fetches: cannot tell (the graph does not load")
    hints = {line.split()[0]: line for line in lines[11:]}
    assert "SavedModel directory (its variables are frozen on load)" in hints["TemporaryVariable"]
    assert "freeze the variables into constants" in hints["TemporaryVariable"]
    assert "resource variables (mg.Variable)" in hints["TemporaryVariable"]
    assert "inlines its function calls" in hints["RemoteCall"]
    assert "training=False" in hints["Multinomial"]
    assert "lower_control_flow=False" in hints["RefNextIteration"]
    assert "has no kernel for this op type" in hints["FFT"]


def test_check_refuses_nodes_without_a_name_or_op(tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text('{"format": "minigraph.graph", "version": 1, "nodes": [{"op": "Neg"}]}')
    assert main(["check", str(path)]) == 1
    assert 'node 0 has no string "name" and "op"' in _one_error_line(capsys)


# -- trace: -o, progress, Dask ------------------------------------------------------------


def _trace_args(graph_file, tmp_path):
    return ["trace", str(graph_file), "--feed", f"x={tmp_path / 'x.npy'}", "--fetch", "y:0"]


def test_trace_does_not_overwrite_without_force(graph_file, tmp_path, capsys):
    out = tmp_path / "t.json"
    out.write_text("keep me")
    assert main([*_trace_args(graph_file, tmp_path), "-o", str(out)]) == 1
    assert "the file exists; add --force" in _one_error_line(capsys)
    assert out.read_text() == "keep me"
    assert main([*_trace_args(graph_file, tmp_path), "-o", str(out), "--force"]) == 0
    assert json.loads(out.read_text())["traceEvents"]
    with pytest.raises(SystemExit):
        main(["trace", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "-o TRACE.json, --output TRACE.json where to write the trace" in help_text
    assert "--force replace the -o file if it exists" in help_text


def test_trace_counts_the_nodes_it_ran(graph_file, tmp_path, capsys):
    # y = x * 2 runs two nodes (the Const 2.0 and the Mul); x is fed.
    assert main([*_trace_args(graph_file, tmp_path), "-o", str(tmp_path / "t.json")]) == 0
    assert "1 run, 2 nodes" in capsys.readouterr().out


def test_trace_shows_progress_on_a_terminal_only(graph_file, tmp_path, capsys, monkeypatch):
    import minigraph.progress as progress

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "RATE", 1e9)
    args = [*_trace_args(graph_file, tmp_path), "--runs", "3", "--force"]
    assert main([*args, "-o", str(tmp_path / "t.json")]) == 0
    assert "trace:" not in capsys.readouterr().err  # captured: not a terminal
    monkeypatch.setattr(progress, "enabled_for", lambda stream: True)
    assert main([*args, "-o", str(tmp_path / "t.json")]) == 0
    err = capsys.readouterr().err
    assert "\rtrace: 1/3 runs (33%)" in err and "\rtrace: 3/3 runs (100%)" in err
    assert err.endswith("\r")  # erased before the summary line


def test_trace_times_are_shifted_to_start_at_zero():
    from minigraph.cli import _from_zero
    from minigraph.executor import StepTiming

    # Dask's clock correction can put a task before the run's start: -2.5 µs here.
    runs = [
        StepTiming(("a", "DaskTask", "w0", -2.5, 4.0)),
        StepTiming(("b", "DaskTask", "w1", 7.5, 1.0)),
    ]
    assert [tuple(t) for t in _from_zero(runs)] == [
        ("a", "DaskTask", "w0", 0.0, 4.0),
        ("b", "DaskTask", "w1", 10.0, 1.0),
    ]
    assert _from_zero(runs[1:]) == runs[1:]  # already after 0: untouched


def test_trace_on_dask_counts_nodes_not_tasks(graph_file, tmp_path, capsys):
    distributed = pytest.importorskip("distributed", reason="needs the 'distributed' extra")
    out = tmp_path / "t.json"
    with distributed.Client(
        processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0"
    ) as client:
        args = [*_trace_args(graph_file, tmp_path), "--fetch", "z:0", "--runs", "3"]
        assert main([*args, "--dask", client.scheduler.address, "-o", str(out)]) == 0
    # y = x * 2 and z = x + 1: four nodes (two Consts, Mul, Add), whatever the tasks.
    assert "3 runs, 4 nodes" in capsys.readouterr().out
    events = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "X"]
    assert events and all(e["ts"] >= 0 and e["dur"] >= 0 for e in events)


def test_check_lists_the_functions_loops_run(capsys):
    pytest.importorskip("tensorboard", reason="needs the 'tensorboard' extra")
    path = GRAPHS.parent / "control_flow" / "keras_lstm_fn.pb"
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("While"))
    assert row.split()[1:] == ["1", "yes"]
    line = next(line for line in out.splitlines() if line.startswith("functions:"))
    assert "2 in the library" in line and "while_body" in line and "while_cond" in line
