"""Fixtures shared by the tests and the docstring / README examples."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def sample_kg():
    """The graph of the four bundled sample files (real pipeline, built once)."""
    from kg import KnowledgeGraph

    return KnowledgeGraph.build()


@pytest.fixture(autouse=True)
def _doctest_sample(request):
    """Docstring examples may use ``sample``: the graph of the bundled samples."""
    if request.node.__class__.__name__ == "DoctestItem":
        request.getfixturevalue("doctest_namespace")["sample"] = request.getfixturevalue("sample_kg")
