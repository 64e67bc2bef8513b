"""The pipeline: the stages of a build run in order (``stages``: ingest -> extract ->
resolve -> write), the folder it writes into (``staging``), the writing of the outputs
(``outputs``, ``jsonl``, ``forked``), and the reuse of an earlier build's files
(``reuse``, ``writeback``). Nothing below this package imports it."""
