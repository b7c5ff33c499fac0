"""The program on a machine without a GPU: the usage error and --help come
before any device work; with no device the run stops with the documented
message and exit 3 (DAY74_EXIT_NO_DEVICE)."""

import os
import shutil
import subprocess

import pytest

from conftest import run

NO_GPU = not os.path.exists("/dev/nvidia0") and (
    shutil.which("nvidia-smi") is None or
    run(["nvidia-smi", "-L"]).returncode != 0)
NO_DEVICE = ["pipelined_gemm: no CUDA device is available",
             "compute capability 8.0"]


RESULTS = ["matches the reference", "\nGPU:"]   # what a run prints


@pytest.mark.parametrize("args,rc,out,not_out,err,not_err", [
    (["--help"], 0, ["usage: ", "--sizes"], [], [], []),
    (["--sizes", "100"], 2, [], None, ["100"], ["device"]),
    (["--frobnicate"], 2, [], [], ["--frobnicate"], []),
    pytest.param([], 3, [], RESULTS, NO_DEVICE, [], marks=pytest.mark.skipif(
        not NO_GPU, reason="a GPU is here")),
    pytest.param(["--check-only", "--sizes", "64"], 3, [], RESULTS,
                 NO_DEVICE, [], marks=pytest.mark.skipif(not NO_GPU,
                                                         reason="a GPU"))],
    ids=["help", "bad-size", "unknown-option", "no-device", "check-only"])
def test_exit(binary, args, rc, out, not_out, err, not_err):
    """Exit status; what stdout and stderr must and must not hold (not_out
    None: stdout empty; "device" in stderr: looked at the GPU too early)."""
    p = run([binary, *args], timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == rc
    assert not_out is not None or p.stdout == ""
    for text in out + err:
        assert text in (p.stdout if text in out else p.stderr), text
    for text in not_err:
        assert text not in p.stderr.lower(), text
    for text in not_out or []:
        assert text not in "\n" + p.stdout, text
