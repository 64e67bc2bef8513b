"""RDF: the graph as statements of the project's ontology, and the SPARQL store.

``namespace`` holds the ontology terms, ``statements`` writes N-Triples, Turtle and
JSON-LD, ``store`` loads and queries Oxigraph, ``results`` serializes SPARQL
results, ``named`` the shipped queries (``queries/*.rq``), ``validate`` SHACL.
"""
