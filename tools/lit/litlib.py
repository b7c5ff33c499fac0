"""litlib: helpers every tool of the literate toolchain shares.

Course-generic: provenance headers ("# key: value" lines at the top of a
transcript or CSV), atomic writes, numbers from text, and tool versions.
Python 3 standard library only.
"""

import csv
import io
import os
import re
import subprocess
import tempfile

NVCC_VERSION = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")


def write_atomic(path, text):
    """Write text (str, UTF-8) to path through a temporary file and a rename.

    The temporary file sits beside path, so the rename is atomic: a reader
    sees the old file or the new one, never half of either. Creates the
    folder. Raises OSError (the temporary file is removed first).
    """
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-",
                               suffix="-" + os.path.basename(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def read_text(path):
    """The UTF-8 text of path. Raises OSError with the path in the message."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as e:
        raise OSError(f"{path}: {e.strerror}") from e


def read_stamp(text):
    """The provenance header of a transcript: {key: value} (both str).

    text: the file's text. The header is the "# key: value" lines that
    start the file (blank lines and "#" lines without a ": " may sit among
    them); it ends at the first other line. Later keys win.
    """
    meta = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].partition(": ")
        if sep and key.strip():
            meta[key.strip()] = value.strip()
    return meta


def number(text):
    """text as an int or a float when it is one, else the text unchanged."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_stamped_csv(path):
    """Read a CSV that starts with a provenance header.

    Returns (meta, rows): meta as read_stamp gives it, rows a list of dicts
    keyed by the header row, every cell passed through number(). Raises
    ValueError naming path for a file with no header row or a ragged row,
    OSError when it cannot be read.
    """
    text = read_text(path)
    body = [l for l in text.splitlines() if l.strip() and not l.startswith("#")]
    if not body:
        raise ValueError(f"{path}: no header row")
    rows = []
    for rec in csv.DictReader(io.StringIO("\n".join(body) + "\n")):
        if None in rec or None in rec.values():
            raise ValueError(f"{path}: ragged row {rec}")
        rows.append({k: number(v) for k, v in rec.items()})
    return read_stamp(text), rows


def nvcc_version(text):
    """(release, full) from `nvcc --version` text, e.g. ("13.0", "13.0.88").

    Raises ValueError when the text holds no "release X.Y, VX.Y.Z".
    """
    m = NVCC_VERSION.search(text)
    if not m:
        raise ValueError("no 'release X.Y, VX.Y.Z' in nvcc's version text")
    return m.group(1), m.group(2)


def run_version(cmd):
    """The stdout of `cmd --version` (str). Raises OSError when it fails."""
    try:
        return subprocess.run([cmd, "--version"], check=True, text=True,
                              capture_output=True).stdout
    except subprocess.CalledProcessError as e:
        raise OSError(f"{cmd} --version exited {e.returncode}") from e
