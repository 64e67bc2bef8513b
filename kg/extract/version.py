"""The extraction pipeline's version (no spaCy import: outputs and caches name it)."""

#: Bump when a rule changes what extraction outputs (used in provenance and caches).
PIPELINE_VERSION = "0.2.0"
