"""A tracelens store: ingest, list, report, query and SQL from Python."""
import os
import tempfile

from ._lib import run
from .table import read_csv


class Store:
    """The store at `db` (a folder); None means the program's default
    ($TRACELENS_DB, else ~/.local/share/tracelens)."""

    def __init__(self, db=None):
        self.db = None if db is None else os.fspath(db)

    def _run(self, *args, check=True):
        pre = ["--db", self.db] if self.db else []
        return run(*pre, *args, check=check)

    def ingest(self, *paths, label=None, jobs=None):
        """Parses files or folders into the store; returns the trace ids,
        in the order the program printed them (already stored files
        included). label: {"key": "value"} attached to every trace."""
        args = ["ingest", "-q"]
        for k, v in (label or {}).items():
            args += ["--label", f"{k}={v}"]
        if jobs:
            args += ["-j", str(jobs)]
        _, out, _ = self._run(*args, *map(os.fspath, paths))
        return [line.split("\t")[0] for line in out.splitlines() if "\t" in line]

    def sql(self, query):
        """The result of one read-only SQL statement (tracelens sql)."""
        with tempfile.TemporaryDirectory(prefix="tracelens_py_") as tmp:
            path = os.path.join(tmp, "result.csv")
            self._run("sql", "--format", "csv", "-o", path, query)
            return read_csv(path)

    def query(self, *args):
        """A `tracelens query` (its own words, e.g. "top", "kernels",
        "--trace", ID) as a table."""
        with tempfile.TemporaryDirectory(prefix="tracelens_py_") as tmp:
            path = os.path.join(tmp, "result.csv")
            self._run("query", *args, "--format", "csv", "-o", path)
            return read_csv(path)

    def traces(self):
        """One row per stored trace (the SQL table `traces`)."""
        return self.sql("SELECT * FROM traces ORDER BY trace_id")

    def report(self, trace, *flags):
        """Every sheet of the performance report of a stored trace (an id
        or id prefix; or a file, ingested first) as {sheet name: table}.
        flags are the report's own, e.g. "--enable_kernel_summary"; the
        trace's format picks the report as `tracelens report` does."""
        with tempfile.TemporaryDirectory(prefix="tracelens_py_") as tmp:
            out = os.path.join(tmp, "csvs")
            self._run("report", os.fspath(trace), "--csv-dir", out, *flags)
            return read_sheets(out)


def read_sheets(folder):
    """Every CSV of a report folder as {sheet name: table}, by name."""
    sheets = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".csv"):
            sheets[name[:-4]] = read_csv(os.path.join(folder, name))
    return sheets
