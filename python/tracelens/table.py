"""Tables read from the CSV files the commands write: pandas DataFrames
when pandas is installed, else Table."""
import csv
import os

try:
    import pandas as _pd
except ImportError:  # the module works without pandas
    _pd = None

csv.field_size_limit(1 << 30)


class Table:
    """A table without pandas: .columns (names), .rows (lists of values:
    int, float, str, or None for an empty cell)."""

    def __init__(self, columns, rows):
        self.columns, self.rows = columns, rows

    def __len__(self):
        return len(self.rows)

    def to_dicts(self):
        return [dict(zip(self.columns, r)) for r in self.rows]

    def column(self, name):
        k = self.columns.index(name)
        return [r[k] for r in self.rows]

    def __repr__(self):
        return f"<tracelens.Table {len(self.rows)} rows x {len(self.columns)} columns>"


def _value(s):
    if s == "":
        return None
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return s


def read_csv(path):
    """One CSV file as a DataFrame (pandas) or a Table. An empty file (a
    sheet the report wrote with no rows and no header) is an empty table."""
    if _pd is not None:
        if os.path.getsize(path) == 0:
            return _pd.DataFrame()
        return _pd.read_csv(path)
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        return Table([], [])
    return Table(rows[0], [[_value(c) for c in r] for r in rows[1:]])
