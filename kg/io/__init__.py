"""Graph files for other tools: ``graphjson`` (graph.json and records.jsonl, read
back by :meth:`kg.KnowledgeGraph.load`) and ``exports`` (GraphML, GEXF, node-link,
Cytoscape, Neo4j CSV)."""
