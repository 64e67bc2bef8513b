"""Shared fixtures: real pipeline, real files, real stores (no mocks)."""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def built(tmp_path_factory, sample_kg) -> Path:
    """An output folder written by a real build of the samples."""
    out = tmp_path_factory.mktemp("build") / "outputs"
    sample_kg.save(out)
    return out


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path

