"""The program on a machine without a GPU: the usage error and --help come
before any device work, and with no device the run stops with the
documented message and exit 3 (DAY74_EXIT_NO_DEVICE)."""

import os
import shutil
import subprocess

import pytest

from conftest import run


def has_gpu():
    """True when this machine has an NVIDIA device."""
    return os.path.exists("/dev/nvidia0") or (
        shutil.which("nvidia-smi") is not None
        and run(["nvidia-smi", "-L"]).returncode == 0)


def test_help(binary):
    """--help prints the usage on stdout and exits 0, device or not."""
    p = run([binary, "--help"], timeout=60)
    assert p.returncode == 0
    assert p.stdout.startswith("usage: ") or "\nusage: " in p.stdout
    assert "--sizes" in p.stdout


def test_bad_size(binary):
    """--sizes 100 exits 2 naming 100, before any GPU work."""
    p = run([binary, "--sizes", "100"], timeout=60)
    assert p.returncode == 2, "want DAY74_EXIT_USAGE"
    assert "100" in p.stderr
    assert "device" not in p.stderr.lower(), "looked at the device first"
    assert p.stdout == ""


def test_unknown_option(binary):
    """An unknown option is a usage error too: exit 2, the option named."""
    p = run([binary, "--frobnicate"], timeout=60)
    assert p.returncode == 2
    assert "--frobnicate" in p.stderr


@pytest.mark.skipif(has_gpu(), reason="a GPU is here: no no-device path")
@pytest.mark.parametrize("args", [[], ["--check-only", "--sizes", "64"]])
def test_no_device(binary, args):
    """With no GPU the run exits 3 with the documented message and no
    results; --check-only takes the same path."""
    p = run([binary, *args], timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 3, "want DAY74_EXIT_NO_DEVICE"
    assert "pipelined_gemm: no CUDA device is available" in p.stderr
    assert "compute capability 8.0" in p.stderr, "says what it needs"
    assert "matches the reference" not in p.stdout
    assert not any(l.startswith("GPU:") for l in p.stdout.splitlines())

