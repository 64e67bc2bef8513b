"""Build: the pipeline that runs the stages (``pipeline``), the folder it writes
into (``staging``, ``lock``), the writing of the outputs (``outputs``, ``jsonl``,
``forked``), and the reuse of an earlier build's files (``reuse``, ``writeback``)."""
