"""Loading libtracelens and running one command line in this process."""
import ctypes
import os
import sys
import tempfile
import threading

_HERE = os.path.dirname(os.path.abspath(__file__))
_lib = None
# The library's commands share process-wide state (the environment they
# read, the standard streams): one call at a time.
_lock = threading.Lock()


class TraceLensError(RuntimeError):
    """A command exited non-zero; .code is its exit code (tracelens --help
    lists them), .stderr what it printed."""

    def __init__(self, argv, code, stderr):
        self.argv, self.code, self.stderr = list(argv), code, stderr
        last = stderr.strip().splitlines()[-1] if stderr.strip() else "no message"
        super().__init__(f"tracelens {' '.join(argv[1:])}: exit {code}: {last}")


def _candidates():
    env = os.environ.get("TRACELENS_LIB")
    if env:
        yield env
    yield os.path.join(_HERE, "libtracelens.so")
    # a source checkout used with PYTHONPATH=python: the default build folder
    yield os.path.join(_HERE, "..", "..", "build", "libtracelens.so")


def _load():
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        if os.path.exists(path):
            lib = ctypes.CDLL(os.path.abspath(path))
            lib.tracelens_run.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
            lib.tracelens_run.restype = ctypes.c_int
            lib.tracelens_version.restype = ctypes.c_char_p
            _lib = lib
            return lib
        tried.append(path)
    raise ImportError("libtracelens.so not found (tried: " + ", ".join(tried)
                      + "); build it with CMake or set TRACELENS_LIB")


def version():
    """The library's version string."""
    return _load().tracelens_version().decode()


def _call(argv):
    lib = _load()
    words = [os.fsencode(a) for a in argv]
    arr = (ctypes.c_char_p * (len(words) + 1))(*words, None)
    return lib.tracelens_run(len(words), arr)


def run(*args, check=True):
    """Runs `tracelens ARGS...` in this process and returns (exit code,
    standard output, standard error) as text; raises TraceLensError on a
    non-zero exit unless check=False. A reference command is run by its
    name: run("TraceLens_generate_perf_report_pytorch", "--profile_json_path", ...)."""
    argv = list(args)
    if not argv or not argv[0].startswith("TraceLens_"):
        argv = ["tracelens"] + argv
    argv = [str(a) for a in argv]
    with _lock, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        try:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            code = _call(argv)
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    if check and code != 0:
        raise TraceLensError(argv, code, stderr)
    return code, stdout, stderr
