"""tracelens from Python: open a store, ingest traces, get any report's
sheets and any query's result as pandas DataFrames.

    import tracelens
    store = tracelens.Store("/path/to/store")      # or tracelens.Store() for the default
    ids = store.ingest("runs/rank_0.json.gz")       # the stored trace ids
    store.traces()                                  # one row per stored trace
    sheets = store.report(ids[0], "--enable_kernel_summary")
    sheets["ops_summary"].head()
    store.sql("SELECT name, sum(dur) AS ns FROM kernels GROUP BY name")

Everything runs in this process through libtracelens (ctypes): the same
code and the same numbers as the tracelens program. Only the Python
standard library is needed to import it; with pandas installed, tables are
DataFrames, without it they are tracelens.Table objects (columns + rows).
"""
from ._lib import TraceLensError, run, version
from .store import Store
from .table import Table

__all__ = ["Store", "Table", "TraceLensError", "run", "version"]
