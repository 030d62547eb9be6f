"""Tests that need a real CUDA GPU with CuPy: skipped, with the reason, when there is none."""

from pathlib import Path

import pytest

from minigraph.devices import gpu_unavailable_reason

HERE = Path(__file__).parent


def pytest_collection_modifyitems(config, items):
    reason = gpu_unavailable_reason()
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.gpu)
            if reason is not None:
                item.add_marker(pytest.mark.skip(reason=f"needs a real GPU: {reason}"))


@pytest.fixture
def cupy():
    """CuPy itself (only imported once a test runs: these tests are skipped without it)."""
    import cupy

    return cupy
