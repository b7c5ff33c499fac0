"""Readers for the files pipelined_gemm writes (its --csv output).

A run CSV starts with provenance lines "# key: value" (gpu, compute_capability,
build_arch, stages, source_sha256, per-kernel registers, static shared memory
in bytes and resident blocks per SM, ...), then a header row and one row per
matrix size N: times in milliseconds (median, min, max of the timed
launches), GFLOP/s (2 N^3 / time), piped_over_sync (a ratio, < 1 means the
pipelined kernel is faster) and percentages of cuBLAS.
"""

import csv
import io


class ResultsError(Exception):
    """A results file is missing, empty or not in pipelined_gemm's format."""


def read_run_csv(path):
    """Returns (meta, rows) for a pipelined_gemm CSV at `path`.

    meta: dict of the "# key: value" lines (all values str).
    rows: list of dicts keyed by column name; "n" is int, every other
    numeric column float. Raises ResultsError on a malformed file.
    """
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ResultsError(f"{path}: cannot read: {e.strerror}") from e
    meta, body = {}, []
    for line in text.splitlines():
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if sep:
                meta[key.strip()] = value.strip()
        elif line.strip():
            body.append(line)
    if not body:
        raise ResultsError(f"{path}: no header row")
    rows = []
    for rec in csv.DictReader(io.StringIO("\n".join(body) + "\n")):
        row = {}
        for key, value in rec.items():
            if key is None or value is None:
                raise ResultsError(f"{path}: ragged row {rec}")
            try:
                row[key] = int(value) if key == "n" else float(value)
            except ValueError as e:
                raise ResultsError(f"{path}: column {key}: {value!r} is not a number") from e
        rows.append(row)
    return meta, rows


def row_for(rows, n):
    """The row for matrix size n, or None."""
    for row in rows:
        if row["n"] == n:
            return row
    return None
