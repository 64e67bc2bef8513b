"""abstract-kg: a knowledge graph of ML methods, tasks, datasets and code from paper abstracts.

>>> from kg import KnowledgeGraph
>>> kg = KnowledgeGraph.build()          # the bundled sample abstracts
>>> len(kg.papers())
68
"""
from __future__ import annotations

__version__ = "0.1.0"

from .api import KnowledgeGraph  # noqa: E402

__all__ = ["KnowledgeGraph", "__version__"]
