"""Fixtures of the torch-version tests: the real torch 1.13.1."""

from __future__ import annotations

import os

import pytest

from quizgen.torch_versions import environments
from tests.support.torch_matrix import OLD, REAL_TORCHES


@pytest.fixture
def torch_113(monkeypatch: pytest.MonkeyPatch) -> str:
    """The real torch 1.13.1 where this user keeps environments: in CI provisioned there when missing
    (a download of about 2.5 GB, once); elsewhere the test is skipped without it."""
    monkeypatch.setenv("QUIZGEN_TORCH_DIR", str(REAL_TORCHES))
    if environments.python_for(OLD) is None:
        if os.environ.get("CI") != "true":
            pytest.skip(f"torch {OLD} is not provisioned (`quizgen torch add {OLD}`); CI provisions it")
        environments.provision(OLD)
    return OLD
