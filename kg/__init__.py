"""abstract-kg: a knowledge graph of ML methods, tasks, datasets and code from paper abstracts.

>>> from kg import KnowledgeGraph
>>> kg = KnowledgeGraph.build()          # the bundled sample abstracts
>>> len(kg.papers())
68
"""
from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["KnowledgeGraph", "__version__"]


def __getattr__(name: str):
    # Lazy, so that `import kg` (the CLI, query workers) does not load spaCy.
    if name == "KnowledgeGraph":
        from kg.api import KnowledgeGraph

        return KnowledgeGraph
    raise AttributeError(f"module 'kg' has no attribute {name!r}")
