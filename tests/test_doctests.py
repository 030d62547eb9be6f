"""The runnable examples in docstrings and op docs work as written."""

import doctest
import importlib
import pkgutil

import pytest

import minigraph as mg

MODULES = sorted(
    name
    for pkg in (mg, mg.ops)
    for _, name, _ in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + ".")
)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("name", MODULES)
def test_module_docstrings(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=FLAGS)
    assert result.failed == 0


@pytest.mark.parametrize("op", sorted(n for n in mg.registered_ops() if not n.startswith("_")))
def test_op_doc_examples(op):
    doc = mg.registered_ops()[op].doc
    test = doctest.DocTestParser().get_doctest(doc, {}, op, None, 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    assert runner.failures == 0
