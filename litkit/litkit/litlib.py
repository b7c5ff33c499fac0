"""litlib: what the literate toolchain's tools share (standard library
only): provenance headers ("# key: value" lines at the top of a transcript
or CSV), atomic writes, numbers from text and tool versions."""

import csv
import io
import os
import re
import subprocess
import tempfile

NVCC_VERSION = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")


def write_atomic(path, text):
    """Write text (str) to path as UTF-8 through a temporary file beside it
    and a rename, so a reader sees the old file or the new one, never half
    of either. Creates the folder. Raises OSError (removing the temporary
    file first)."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.remove(tmp)
        raise


def read_text(path):
    """The UTF-8 text of path; OSError naming path when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise OSError(f"{path}: {e.strerror}") from e


def read_stamp(text):
    """{key: value} of the "# key: value" lines that start text (blank
    lines and other "#" lines may sit among them; later keys win)."""
    meta = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            break
        key, sep, value = line[1:].partition(": ")
        if sep and key.strip():
            meta[key.strip()] = value.strip()
    return meta


def number(text):
    """text as an int or a float when it is one, else text unchanged."""
    if re.fullmatch(r"[-+]?\d+", text.strip()):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def read_stamped_csv(path):
    """(meta, rows) of a CSV that starts with a provenance header: meta as
    read_stamp gives it, rows as dicts by the header row with each cell
    through number(). ValueError naming path for no header row or a ragged
    row; OSError when it cannot be read."""
    text = read_text(path)
    body = [l for l in text.splitlines() if l.strip() and l[0] != "#"]
    if not body:
        raise ValueError(f"{path}: no header row")
    rows = list(csv.DictReader(io.StringIO("\n".join(body))))
    if any(None in r or None in r.values() for r in rows):
        raise ValueError(f"{path}: a row has too few or too many cells")
    return read_stamp(text), [{k: number(v) for k, v in r.items()}
                              for r in rows]


def nvcc_version(text):
    """(release, full), e.g. ("13.0", "13.0.88"), from `nvcc --version`
    text; ValueError when it holds no "release X.Y, VX.Y.Z"."""
    m = NVCC_VERSION.search(text)
    if not m:
        raise ValueError("no 'release X.Y, VX.Y.Z' in nvcc's version text")
    return m.group(1), m.group(2)


def run_version(cmd):
    """The stdout of `cmd --version`; OSError when it cannot run or fails."""
    try:
        return subprocess.run([cmd, "--version"], check=True, text=True,
                              capture_output=True).stdout
    except subprocess.CalledProcessError as e:
        raise OSError(f"{cmd} --version exited {e.returncode}") from e
