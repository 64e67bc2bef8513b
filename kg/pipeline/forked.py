"""A function run in a forked child process, its messages and result read by a thread
of the parent (the build's second core: JSON Lines files, the incremental block writer)."""
from __future__ import annotations

import os


class Forked:
    """``fn(send)`` in a forked child process. The parent takes, in order, each value the
    child passed to ``send`` and then its return value, with :meth:`next` (which raises
    the child's error in their place); :attr:`done` is true once the last was taken.
    A thread of the parent reads the pipe as the child writes, so the child never
    waits for the parent. A value sent with ``send(value, now=True)`` goes instead to
    ``on_now(value)``, called by that thread as soon as it arrives (an error it raises
    is raised by :meth:`next`). The child shares the parent's memory copy-on-write and
    leaves with ``os._exit`` (no atexit handlers, no flushing of the parent's buffers).
    Where there is no ``os.fork`` (Windows), ``fn`` runs here, at once.

    What ``multiprocessing`` lacks here: a fork-context ``Process`` gives the child, not
    its messages read as they come by a thread of the parent (so that a child sending
    megabytes never waits for a parent busy drawing a view), the ``on_now`` hook, nor
    the child's exception raised in the parent in its place among the messages."""

    def __init__(self, fn, on_now=None):
        import queue

        self.done = False
        self.pid = None
        self._fd = -1
        self._messages: queue.Queue = queue.Queue()
        self._on_now = on_now
        if not hasattr(os, "fork"):
            def send_here(message, now: bool = False) -> None:
                if now and on_now is not None:
                    on_now(message)
                else:
                    self._messages.put(("message", message))

            try:
                value = fn(send_here)
                self._messages.put(("ok", value))
            except BaseException as exc:  # raised by next(), as a child's would be
                self._messages.put(("error", exc))
            return
        from kg._fork import fork_held

        # forked with Ctrl-C held back (see kg._fork): one that came meanwhile stops the child
        fork_held(lambda mask: self._start(fn, mask), stop=lambda _: self.kill())

    def _start(self, fn, mask) -> None:
        """Fork the child that runs ``fn`` (restoring the signal ``mask`` first), and the thread that reads it."""
        import pickle
        import threading

        from kg._fork import child_signals, child_started, prepare

        parent = prepare()
        read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child
            try:
                child_started(parent)  # dies with this process, without its output lock
                child_signals(mask)
                os.close(read)

                def put(kind, value) -> None:
                    try:
                        data = pickle.dumps((kind, value), protocol=pickle.HIGHEST_PROTOCOL)
                    except Exception as exc:  # an error that does not pickle
                        data = pickle.dumps(("error", RuntimeError(f"{value!r} ({exc})")))
                    # a frame: its length, a byte saying whether it goes to on_now, the pickle
                    view = memoryview((len(data) + 1).to_bytes(8, "little") + (b"n" if kind == "now" else b"m") + data)
                    while view:
                        view = view[os.write(write, view):]

                try:
                    value = fn(lambda message, now=False: put("now" if now else "message", message))
                    put("ok", value)
                except BaseException as exc:  # sent to the parent, raised there
                    put("error", exc)
            finally:
                os._exit(0)
        os.close(write)
        self._fd = read
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """Thread: each message of the child, as bytes, into the queue; then reap the child."""

        def exactly(n: int) -> bytes:
            chunks = []
            while n:
                chunk = os.read(self._fd, min(n, 1 << 20))
                if not chunk:
                    raise EOFError
                chunks.append(chunk)
                n -= len(chunk)
            return b"".join(chunks)

        import pickle

        try:
            while True:
                data = exactly(int.from_bytes(exactly(8), "little"))
                if data[:1] == b"n" and self._on_now is not None:
                    try:
                        self._on_now(pickle.loads(memoryview(data)[1:])[1])
                    except Exception as exc:  # raised by next(), in its place among the messages
                        self._messages.put(("error", exc))
                    continue
                self._messages.put(("bytes", memoryview(data)[1:]))
        except (EOFError, OSError):
            pass
        os.close(self._fd)
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        # read only if the child ended before its result (killed, or out of memory)
        self._messages.put(("error", RuntimeError(f"the block writer process ended without a result "
                                                  f"(status {status})")))

    def ready(self) -> bool:
        """True if :meth:`next` has a value to give without waiting."""
        return not self.done and not self._messages.empty()

    def next(self):
        import pickle

        if self.done:
            raise RuntimeError("no more messages from the child process")
        kind, value = self._messages.get()
        if kind == "bytes":
            kind, value = pickle.loads(value)
        if kind in ("message", "now"):  # "now" without an on_now: an ordinary message
            return value
        self.done = True
        if kind == "error":
            raise value
        return value

    def kill(self) -> None:
        """Stop the child (on an error of the parent) and wait until it is reaped."""
        import signal

        pid = self.pid
        if pid is not None and not self.done:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.done = True
        if self._fd >= 0:
            self._reader.join()
