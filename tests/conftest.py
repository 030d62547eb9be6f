"""Test-wide settings: every kernel's outputs are checked against shape inference.

``pytest --fuzz-long`` runs the fuzzers of tests/test_fuzz.py for 100,000 examples each
(and loads the hypothesis profile "fuzz-long"); CI runs their bounded default, with the
same draws every run (``--hypothesis-profile=explore`` draws new ones).
"""

import os

import pytest
from hypothesis import settings

import minigraph as mg

# ``--hypothesis-profile=fuzz-long`` is the same as ``--fuzz-long`` for tests/test_fuzz.py
# (which reads the profile's name); other tests keep their own example counts.
settings.register_profile("fuzz-long", deadline=None)
# A plain run (CI's) draws the same examples every time, so that it fails for a change and
# not for a new draw; ``--hypothesis-profile=explore`` (or fuzz-long) draws new ones.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore")
settings.load_profile("repeatable")


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-long",
        action="store_true",
        default=False,
        help="run tests/test_fuzz.py for 100,000 examples per fuzzer (CI runs a bounded count)",
    )


def pytest_configure(config):
    if config.getoption("--fuzz-long", default=False):
        os.environ["MINIGRAPH_FUZZ_LONG"] = "1"  # read by tests/test_fuzz.py at import


@pytest.fixture(autouse=True)
def _check_kernel_outputs():
    mg.config.set_check_outputs(True)
    yield
    mg.config.set_check_outputs(False)


@pytest.fixture(params=["cpu", "gpu", "unoptimized"])
def any_device(request, monkeypatch):
    """Run a test on the CPU, with every Session on "/gpu:0", and on the CPU with every
    optimizer pass off (so each op's results are checked with and without the optimizer).

    Without a real GPU, "/gpu:0" is the simulated one (NumPy behind another module), so
    placement, host/device copies and the kernels' GPU code paths run on every machine.
    """
    init = mg.Session.__init__
    if request.param == "gpu":
        from minigraph.devices import gpu_unavailable_reason

        if gpu_unavailable_reason() is not None:
            monkeypatch.setattr(mg.config, "simulated_gpu", lambda: True)
        else:  # results compare by the GPU contract (op_helpers.same_bits)
            import op_helpers

            monkeypatch.setattr(op_helpers, "REAL_GPU", True)

        def on_gpu(self, graph=None, device=None, **kwargs):
            init(self, graph, "/gpu:0" if device is None else device, **kwargs)

        monkeypatch.setattr(mg.Session, "__init__", on_gpu)
    elif request.param == "unoptimized":
        off = mg.ConfigProto(
            graph_options=mg.GraphOptions(optimizer_options=mg.OptimizerOptions.off())
        )

        def unoptimized(self, graph=None, device=None, **kwargs):
            kwargs.setdefault("config", off)
            init(self, graph, device, **kwargs)

        monkeypatch.setattr(mg.Session, "__init__", unoptimized)
    return request.param


@pytest.fixture
def cpu_only_op():
    """Declares a one-input test op (output shaped as its input) whose only kernel is
    ``kernel`` on the CPU; returns its builder. Each op type may be declared once."""
    from minigraph.registry import define_op, register_kernel
    from minigraph.wrappers import apply_op

    def declare(op_type, kernel):
        define_op(
            op_type,
            inputs=["x: T"],
            outputs=["y: T"],
            attrs=["T: type"],
            shape_fn=lambda c, x: x.shape,
        )
        register_kernel(op_type, "CPU")(kernel)
        return lambda x: apply_op(op_type, None, [x], {}).output(0)

    return declare
