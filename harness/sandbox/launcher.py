"""The bwrap sandbox's exec launcher: one small fork server per host process.

Why it exists: before it, every exec ran ``sh`` (join the sample's cgroups) -> ``setpriv``
(drop to the sample's uid) -> ``prlimit`` (rlimits) -> ``bwrap``, three extra program
starts, from Inspect's asyncio ``subprocess()`` in the (large) provider process; together
that more than doubled the cost of a bare ``bwrap ... true`` (tests/perf/test_bwrap_perf.py).
Here one long-lived, single-threaded Python process, started once with an empty
environment, forks per exec and does the same three steps as system calls in the child
(write ``0`` to each group's ``tasks``/``cgroup.procs``, ``setgroups``/``setresgid``/
``setresuid``, ``setrlimit``) before it execs ``bwrap`` directly. The launcher itself is
in no sample's cgroup, so a sample's memory and task accounting are what they were.

Protocol (``SOCK_SEQPACKET`` socket pair, inherited only by the provider: nothing else can
reach the launcher). One request per exec, one record carrying file descriptors::

    record: JSON {"argv", "cgroup_files", "ids": [uid, gid] | null, "rlimits": [[name, n]]
                  }  (or ``M``: the JSON is then in the last fd, a memfd)
    fds:    [status socket, stdin, stdout, stderr, (memfd)]

The launcher answers on the exec's own ``status`` socket (a stream socket pair) with one
line, ``exit <code>`` (negative: killed by that signal, as ``subprocess`` reports it) or
``error <message>`` when it could not fork. Anything the provider writes to the status
socket, or its closing, SIGKILLs the exec's bwrap (not yet reaped, so the pid is still
the child's); its ``--die-with-parent`` init then takes the PID namespace with it. When
the provider goes away (the control socket closes) every exec still running is killed
and the launcher exits.

This file runs as a script (``python -I -S launcher.py FD``: standard library only, no
site-packages) and is imported by the provider for :func:`start`.
"""

from __future__ import annotations

import json
import os
import resource
import selectors
import signal
import socket
import sys
from typing import Any

_MAX_FDS = 5
_RECORD = 65536
INLINE_MAX = 32 * 1024
"""Requests larger than this travel in a memfd (a 1 MiB argv fits no socket record)."""
MEMFD_MARK = b"M"
"""The record's whole data when the request is in the memfd instead."""
CHILD_FAILED = 125
"""Exit code of an exec whose cgroup join, uid drop or rlimits failed (as ``sh`` did)."""


def _child(request: dict[str, Any], stdio: list[int]) -> None:
    """In the forked child: join, drop, limit, wire stdio, exec bwrap. Never returns."""
    step = "cgroup join"
    try:
        for path in request["cgroup_files"]:
            fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
        ids = request["ids"]
        if ids is not None:
            step = "uid drop"
            os.setgroups([])
            os.setresgid(ids[1], ids[1], ids[1])
            os.setresuid(ids[0], ids[0], ids[0])
        step = "rlimits"
        for name, value in request["rlimits"]:
            resource.setrlimit(getattr(resource, name), (value, value))
        step = "stdio"
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        # Python ignores SIGPIPE and SIGXFSZ; an ignored signal stays ignored across
        # exec, and a payload past its file-size limit must die of SIGXFSZ as usual.
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        step = "exec"
        argv = request["argv"]
        os.execve(argv[0], argv, {})
    except BaseException as ex:  # noqa: BLE001 - report anything, then leave
        try:
            os.write(2, f"bwrap sandbox launcher: {step} failed: {ex}\n".encode())
        finally:
            os._exit(CHILD_FAILED)


class _Exec:
    """One running exec: its pid, pidfd and status socket."""

    def __init__(self, pid: int, pidfd: int, status: socket.socket) -> None:
        self.pid = pid
        self.pidfd = pidfd
        self.status = status
        self.reaped = False


def _answer(status: socket.socket, line: str) -> None:
    try:
        status.setblocking(True)
        status.sendall(line.encode() + b"\n")
    except OSError:
        pass  # the provider went away; nothing to tell


def _read_request(data: bytes, memfd: int | None) -> dict[str, Any]:
    """The request: the record itself, or (record ``M``) the memfd's contents."""
    if data != MEMFD_MARK or memfd is None:
        return dict(json.loads(data))
    size = os.fstat(memfd).st_size
    chunks, offset = [], 0
    while offset < size:
        chunk = os.pread(memfd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return dict(json.loads(b"".join(chunks)))


def serve(control: socket.socket) -> None:
    """Serve requests until the control socket closes; then kill what still runs."""
    sel = selectors.DefaultSelector()
    sel.register(control, selectors.EVENT_READ, None)
    running: dict[int, _Exec] = {}  # by pidfd
    by_status: dict[int, _Exec] = {}  # by status socket fd
    fd_bytes = _MAX_FDS * 4
    while True:
        for key, _ in sel.select():
            target = key.data
            if target is None:
                data, ancdata, _flags, _addr = control.recvmsg(
                    _RECORD, socket.CMSG_SPACE(fd_bytes), socket.MSG_CMSG_CLOEXEC
                )
                fds: list[int] = []
                for level, kind, payload in ancdata:
                    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                        usable = len(payload) - len(payload) % 4
                        fds += list(memoryview(payload[:usable]).cast("i"))
                if not data and not fds:  # the provider is gone
                    for job in running.values():
                        if not job.reaped:
                            os.kill(job.pid, signal.SIGKILL)
                    return
                _start(sel, data, fds, running, by_status)
            elif target == "pidfd":
                job = running.pop(key.fd)
                sel.unregister(key.fd)
                _, wait_status = os.waitpid(job.pid, 0)
                job.reaped = True
                os.close(job.pidfd)
                if by_status.pop(job.status.fileno(), None) is not None:
                    sel.unregister(job.status)
                _answer(job.status, f"exit {os.waitstatus_to_exitcode(wait_status)}")
                job.status.close()
            else:  # a kill request, or the provider's end of the status socket closed
                job = by_status.pop(key.fd)
                sel.unregister(key.fd)  # one kill is enough; the pidfd reports the exit
                if not job.reaped:
                    os.kill(job.pid, signal.SIGKILL)


def _start(
    sel: selectors.BaseSelector,
    data: bytes,
    fds: list[int],
    running: dict[int, _Exec],
    by_status: dict[int, _Exec],
) -> None:
    """Fork one exec from a request record (its fds are closed here whatever happens)."""
    if len(fds) < 4:
        for fd in fds:
            os.close(fd)
        return
    status = socket.socket(fileno=fds[0])
    stdio = fds[1:4]
    try:
        request = _read_request(data, fds[4] if len(fds) > 4 else None)
        pid = os.fork()
        if pid == 0:
            _child(request, stdio)
        pidfd = os.pidfd_open(pid)
    except Exception as ex:  # noqa: BLE001 - the provider raises it
        _answer(status, f"error {type(ex).__name__}: {ex}".replace("\n", " "))
        status.close()
        return
    finally:
        for fd in fds[1:]:
            try:
                os.close(fd)
            except OSError:
                pass
    job = _Exec(pid, pidfd, status)
    running[pidfd] = job
    by_status[status.fileno()] = job
    sel.register(pidfd, selectors.EVENT_READ, "pidfd")
    sel.register(status, selectors.EVENT_READ, "status")


def main(argv: list[str]) -> int:
    control = socket.socket(fileno=int(argv[1]))
    control.set_inheritable(False)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the provider decides when we stop
    serve(control)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
