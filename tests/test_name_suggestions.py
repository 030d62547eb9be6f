"""A misspelled tensor or op name suggests the graph's nearest names (difflib), in every
lookup by name: Graph.get_tensor_by_name / get_operation_by_name and Session.run's fetches
and feeds. The suggestions below are the names one edit (or one case change) away."""

import numpy as np
import pytest

import minigraph as mg
from minigraph.graph import did_you_mean, nearest_names


@pytest.fixture
def graph():
    g = mg.Graph()
    with g.as_default():
        x = mg.placeholder(mg.float32, shape=[None], name="x")
        mg.multiply(x, mg.constant(3.0, name="three"), name="logits")
        mg.identity(x, name="Features")
        mg.split(mg.reshape(x, [2, -1]), 2, name="halves")
    return g


@pytest.mark.parametrize(
    "name, suggested",
    [
        ("logit:0", "'logits:0'"),  # a letter dropped
        ("Logits:0", "'logits:0'"),  # names are case-sensitive: the other case is suggested
        ("features:0", "'Features:0'"),
        ("halve:1", "'halves:1'"),  # the index asked for, where the node has it
        ("X:0", "'x:0'"),
    ],
)
def test_a_misspelled_tensor_suggests_the_nearest_tensors(graph, name, suggested):
    with pytest.raises(mg.errors.NotFoundError, match="Did you mean") as e:
        graph.get_tensor_by_name(name)
    message = str(e.value)
    assert f"The name '{name}' refers to a Tensor which does not exist" in message
    assert f"Did you mean {suggested}" in message


def test_the_index_falls_back_to_0_where_the_suggested_node_has_fewer_outputs(graph):
    with pytest.raises(mg.errors.NotFoundError, match=r"Did you mean 'logits:0'\?"):
        graph.get_tensor_by_name("logit:1")


def test_a_misspelled_operation_suggests_the_nearest_operations(graph):
    with pytest.raises(mg.errors.NotFoundError) as e:
        graph.get_operation_by_name("halfs")
    assert str(e.value).endswith("Did you mean 'halves'?")


def test_no_suggestion_when_nothing_is_close(graph):
    with pytest.raises(mg.errors.NotFoundError) as e:
        graph.get_tensor_by_name("qqqqqqqqqq:0")
    assert "Did you mean" not in str(e.value)


def test_session_run_fetches_and_feeds_suggest(graph):
    sess = mg.Session(graph)
    feed = {"x:0": np.ones(4, np.float32)}
    with pytest.raises(mg.errors.NotFoundError, match=r"Did you mean 'logits:0'\?"):
        sess.run("logitz:0", feed)
    with pytest.raises(mg.errors.NotFoundError, match=r"Did you mean 'logits'\?"):
        sess.run(["logitz"], feed)  # an op name (no ":"), as a target
    with pytest.raises(mg.errors.NotFoundError, match=r"Did you mean 'x:0'\?"):
        sess.run("logits:0", {"X:0": np.ones(4, np.float32)})
    np.testing.assert_array_equal(sess.run("logits:0", feed), [3.0] * 4)


def test_nearest_names_orders_case_matches_first_and_caps_the_count():
    names = ["alpha", "Alpha", "alpah", "alphas", "beta"]
    assert nearest_names("ALPHA", names) == ["alpha", "Alpha", "alphas"]
    assert nearest_names("alpha", names, n=1) == ["Alpha"]  # never the name itself
    assert nearest_names("zzz", names) == []
    assert nearest_names("a" * 10_000, ["a" * 10_000 + "b"]) == []  # too long to compare


def test_did_you_mean_reads_as_a_sentence():
    assert did_you_mean([]) == ""
    assert did_you_mean(["a"]) == " Did you mean 'a'?"
    assert did_you_mean(["a", "b", "c"]) == " Did you mean 'a', 'b' or 'c'?"
