"""Dask clusters for extraction: ``kg build --dask local`` or ``--dask tcp://host:8786``.

Dask is optional (``pip install "abstract-kg[dask]"``); only this module imports it.
A local cluster runs worker processes on this machine (one thread each: spaCy
is CPU-bound), without the dashboard, listening on the loopback address only.
"""
from __future__ import annotations

import contextlib
import logging
import os


class ClusterError(RuntimeError):
    """Dask is missing or the scheduler cannot be reached."""


@contextlib.contextmanager
def dask_client(address: str, workers: int | None = None, timeout: str = "20s"):
    """A ``distributed.Client`` for ``address`` ("local" starts a ``LocalCluster`` of
    ``workers`` processes, default one per core), closed on exit."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ClusterError('--dask needs Dask: pip install "abstract-kg[dask]"') from None
    if address == "local":
        n = workers if workers and workers > 1 else (os.cpu_count() or 1)
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        yield client
