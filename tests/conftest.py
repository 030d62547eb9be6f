"""Test-wide settings: every kernel's outputs are checked against shape inference."""

import pytest

import minigraph as mg


@pytest.fixture(autouse=True)
def _check_kernel_outputs():
    mg.config.set_check_outputs(True)
    yield
    mg.config.set_check_outputs(False)
