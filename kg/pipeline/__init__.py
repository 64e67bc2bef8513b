"""The pipeline: the stages of a build run in order (``stages``: ingest -> extract ->
resolve -> write), the folder it writes into (``staging``), the writing of the outputs
(``outputs``, ``jsonl``, ``forked``), and the reuse of an earlier build's files:
the units' digests (``digests``), where their blocks are (``state``), each block
copied or rendered (``blocks``), big files written and copied (``writeback``). Nothing below this package imports it."""
