"""Resolve: the papers' extractions into one typed graph.

``entities`` clusters spellings into entities and papers into paper nodes,
``graph`` builds the networkx ``MultiDiGraph`` from them, ``algorithms`` ranks
and walks it (the Python API's queries).
"""
