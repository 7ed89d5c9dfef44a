"""``folio ARGS`` in a new process forked from an interpreter that has already imported folio.

The end-to-end tests run the CLI hundreds of times; most of a short command's time is Python
starting and importing folio (0.3-0.5 s of CPU each). Every test process (xdist worker) starts one
*fork server* on first use: this file run as a script, an interpreter that imports folio's CLI and
the modules its commands load (not the vendor and MCP SDKs, which folio imports only when a
command uses them), then waits on a Unix socket. Each command a test runs is a child
forked from it that behaves as ``python -m folio.entrypoints.cli.main ARGS`` would: the test's
environment and working directory, stdin/stdout/stderr on files, ``sys.argv`` as ``python -m``
sets it, the module run as ``__main__``, atexit handlers run and the exit status (or the killing
signal, negative) returned as a process's would be.

What a fresh interpreter decides at start-up is the server's: a run whose environment changes a
``PYTHON*``, ``LANG`` or ``LC_*`` variable gets a fresh interpreter instead, and so does every run
when ``FOLIO_TEST_FRESH_PROCESSES=1``. ``spawn`` starts a long-running one (``folio serve``) as
a ``subprocess.Popen`` would. Tests of start-up itself (imports, ``--help`` time) and of terminals
(pexpect) start fresh interpreters and do not come here. The server holds no thread but OpenBLAS's
idle one and no open file of folio's; onnxruntime, which starts a thread when imported, is left
for each child to import. The children look up the shipped model's vectors of the test excerpts'
passages (``tests/excerpts.py``) besides the demo book's; a fresh interpreter computes them.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import importlib
import json
import os
import pkgutil
import runpy
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NoReturn

MODULE = "folio.entrypoints.cli.main"
STDOUT = "=stdout"  # as ``stderr``: the child's stderr is its stdout (subprocess.STDOUT)
_STARTUP_VARIABLES = ("PYTHON", "LANG", "LC_")
# (pid, exit status): the first message has the pid only, the second (once it has exited) both
_STATUS = struct.Struct("!qq")


# --- the server (this file run as a script) --------------------------------------------------


# What folio itself imports only when a command needs it: the vendor SDKs (3 s of CPU to import,
# for the few children that chat with a vendor's API) and the MCP SDK.
_LEFT_TO_CHILDREN = (
    "folio.adapters.llm.anthropic",
    "folio.adapters.llm.openai",
    "folio.entrypoints.mcp.server",
)


def _preload() -> None:
    import folio

    for module in pkgutil.walk_packages(folio.__path__, "folio."):
        if module.name not in _LEFT_TO_CHILDREN:
            importlib.import_module(module.name)
    assert "onnxruntime" not in sys.modules, "onnxruntime starts a thread at import"
    assert not {"anthropic", "openai", "mcp"} & set(sys.modules), "see _LEFT_TO_CHILDREN"


def _child(request: dict[str, object], inherited: Sequence[object]) -> NoReturn:
    """In the forked child: run as ``python -m folio.entrypoints.cli.main ARGS`` and exit as a
    fresh interpreter would (see ``_finish``); never returns to the server."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for resource in inherited:
            os.close(resource) if isinstance(resource, int) else resource.close()  # type: ignore[attr-defined]
        os.chdir(str(request["cwd"]))
        env = request["env"]
        assert isinstance(env, dict)
        os.environ.clear()
        os.environ.update(env)
        for fd, name, flags in ((0, "stdin", os.O_RDONLY), (1, "stdout", os.O_WRONLY),
                                (2, "stderr", os.O_WRONLY)):  # fmt: skip
            if request[name] == STDOUT:
                os.dup2(1, fd)
                continue
            opened = os.open(str(request[name]), flags)
            os.dup2(opened, fd)
            os.close(opened)
        args = request["args"]
        assert isinstance(args, list)
        sys.argv = ["-m", *args]  # runpy puts the module's path first, as ``python -m`` does
        sys.modules.pop(MODULE, None)  # run as ``__main__`` only, as in a fresh interpreter
        code = _run_main()
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


def _run_main() -> int:
    try:
        runpy.run_module(MODULE, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            code = exit_.code or 0
        else:
            print(exit_.code, file=sys.stderr)
            code = 1
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    return _finish(code)


def _finish(code: int) -> int:
    """What a fresh interpreter does on exit that a test can see: atexit handlers run, then
    folio's modules are torn down so that what they held is finalised (an SQLite connection closes
    and checkpoints its write-ahead log into the database file), then stdout and stderr are
    flushed (120 if that fails, as Python exits). The server's own objects are frozen out of the
    collection, so this costs what the command allocated, not the whole interpreter's teardown."""
    atexit._run_exitfuncs()
    for name, module in list(sys.modules.items()):
        if name.startswith("folio.") and module is not None:
            module.__dict__.clear()
    gc.collect()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = code or 120
    return code


def _look_up_test_vectors(table: str) -> None:
    """The shipped model's vectors of the test excerpts' passages (``tests/excerpts.py``), added
    to the shipped table of known vectors wherever folio reads it: the children import those
    excerpts without computing what the model computed once for them."""
    import numpy as np

    from folio.adapters.embeddings import onnx

    shipped = onnx.read_known_vectors
    excerpts = functools.cache(lambda model_dir, window: shipped(Path(table), model_dir, window))
    if Path(table).is_file():  # read here, once, not again in every child that embeds
        with np.load(table) as stamped:
            excerpts(onnx.packaged_model_dir(), int(stamped["max_tokens"]))

    def read(path: Path, model_dir: Path, max_tokens: int) -> dict[bytes, object]:
        return {**excerpts(model_dir, max_tokens), **shipped(path, model_dir, max_tokens)}

    onnx.read_known_vectors = read  # type: ignore[assignment]


def serve(path: str, *, known_vectors: str | None = None) -> None:
    _preload()
    if known_vectors:
        _look_up_test_vectors(known_vectors)
    gc.freeze()  # the children's collections leave the server's objects alone
    sys.stdout.flush()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "request")
    selector.register(wake_read, selectors.EVENT_READ, "child")
    selector.register(0, selectors.EVENT_READ, "parent")  # EOF: the test process is gone
    waiting: dict[int, socket.socket] = {}
    print("ready", flush=True)
    while True:
        for key, _ in selector.select():
            if key.data == "parent" and not os.read(0, 4096):
                for pid in waiting:
                    os.kill(pid, signal.SIGKILL)
                return
            if key.data == "request":
                connection, _ = listener.accept()
                with connection.makefile("rb") as stream:
                    request = json.loads(stream.read())
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    _child(request, [selector, listener, connection, wake_read, wake_write])
                waiting[pid] = connection
                with contextlib.suppress(OSError):  # a caller that has gone changes nothing
                    connection.sendall(_STATUS.pack(pid, 0))
            if key.data == "child":
                os.read(wake_read, 4096)
                while waiting:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                    if pid == 0:
                        break
                    connection = waiting.pop(pid)
                    with contextlib.suppress(OSError):
                        connection.sendall(_STATUS.pack(pid, os.waitstatus_to_exitcode(status)))
                    connection.close()


# --- the client (imported by the tests) ------------------------------------------------------


class ForkServer:
    """One fork server per test process, started on first use and stopped when the process ends."""

    _lock = threading.Lock()
    _instance: ForkServer | None = None

    def __init__(self) -> None:
        self._directory = tempfile.mkdtemp(prefix="folio-forks-")
        self.socket_path = os.path.join(self._directory, "server.sock")
        self.environment = {**os.environ, "PYTHONIOENCODING": "utf-8"}
        from tests.excerpts import KNOWN_VECTORS

        self._process = subprocess.Popen(
            [sys.executable, __file__, self.socket_path, str(KNOWN_VECTORS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self.environment,
            cwd=Path(__file__).resolve().parent.parent,
            text=True,
        )
        assert self._process.stdout is not None
        ready = self._process.stdout.readline()
        if ready.strip() != "ready":
            self._process.kill()
            raise RuntimeError(f"the fork server did not start (it said {ready!r})")
        atexit.register(self.stop)

    @classmethod
    def serving(cls, env: Mapping[str, str]) -> ForkServer | None:
        """The shared server when it can run a process with ``env``; ``None`` when that process
        must be a fresh interpreter: asked by ``FOLIO_TEST_FRESH_PROCESSES=1``, outside a test
        (a benchmark timing a server), or an interpreter setting in ``env`` differs."""
        if os.environ.get("FOLIO_TEST_FRESH_PROCESSES") == "1":
            return None
        if "PYTEST_CURRENT_TEST" not in os.environ:
            return None
        server = cls.shared()
        return server if server.serves(env) else None

    @classmethod
    def shared(cls) -> ForkServer:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def stop(self) -> None:
        if self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
        for name in os.listdir(self._directory):
            os.unlink(os.path.join(self._directory, name))
        os.rmdir(self._directory)

    def serves(self, env: Mapping[str, str]) -> bool:
        """Whether a child of this server runs as a fresh interpreter given ``env`` would."""
        names = (set(env) | set(self.environment)) - {"PYTHONIOENCODING"}
        return (
            all(
                env.get(name) == self.environment.get(name)
                for name in names
                if name.startswith(_STARTUP_VARIABLES)
            )
            and env.get("PYTHONIOENCODING") == "utf-8"
        )

    def spawn(
        self,
        args: Sequence[str],
        *,
        env: Mapping[str, str],
        stdin: str = os.devnull,
        stdout: str,
        stderr: str,
    ) -> ForkedProcess:
        """Start ``folio ARGS`` with its standard streams on these files (``stderr`` may be
        ``STDOUT``); it runs until it exits or is signalled, like a ``subprocess.Popen``."""
        request = {"args": list(args), "env": dict(env), "cwd": os.getcwd(),
                   "stdin": stdin, "stdout": stdout, "stderr": stderr}  # fmt: skip
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(self.socket_path)
            connection.sendall(json.dumps(request).encode())
            connection.shutdown(socket.SHUT_WR)
            pid, _ = _STATUS.unpack(_receive(connection, _STATUS.size))
        except BaseException:
            connection.close()
            raise
        return ForkedProcess(connection, pid, [sys.executable, "-m", MODULE, *args])

    def run(
        self, args: Sequence[str], *, input: str, env: Mapping[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory(prefix="folio-run-") as directory:
            files = {name: os.path.join(directory, name) for name in ("stdin", "stdout", "stderr")}
            Path(files["stdin"]).write_text(input, encoding="utf-8")
            for name in ("stdout", "stderr"):
                Path(files[name]).touch()
            process = self.spawn(args, env=env, **files)
            try:
                returncode = process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise
            return subprocess.CompletedProcess(
                process.args,
                returncode,
                Path(files["stdout"]).read_text(encoding="utf-8"),
                Path(files["stderr"]).read_text(encoding="utf-8"),
            )


class ForkedProcess:
    """A child of the fork server, as much of ``subprocess.Popen`` as the tests use."""

    def __init__(self, connection: socket.socket, pid: int, args: list[str]) -> None:
        self._connection = connection
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._connection], [], [], 0)[0]:
            self.wait()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._connection.settimeout(timeout)
            try:
                _, returncode = _STATUS.unpack(_receive(self._connection, _STATUS.size))
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
            self._connection.close()
            self.returncode = returncode
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _receive(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise RuntimeError("the fork server closed the connection")
        data += chunk
    return data


if __name__ == "__main__":
    serve(sys.argv[1], known_vectors=sys.argv[2] if len(sys.argv) > 2 else None)
