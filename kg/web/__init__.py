"""The web side: the HTML views (``views``, ``viz``, ``fieldmap``, ``layout``,
``templates/``) and the SPARQL endpoint (``serve``)."""
