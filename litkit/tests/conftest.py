"""litkit's tests, which need no module: from litkit's folder, `python3
-m pytest tests` (the source package), or a module's make litkit-test (the
installed one, the same bytes). FIXTURES: litkit/tests/fixtures."""

import os
import subprocess
import sys

LITKIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(LITKIT, "tests", "fixtures")
sys.path.insert(0, LITKIT)   # the source package, whatever the folder


def run(cmd, **kw):
    """Run cmd (a list) in litkit's folder unless cwd= says otherwise,
    capturing text; the package in reach of its Pythons."""
    kw.setdefault("cwd", LITKIT)
    env = kw.pop("env", None) or os.environ
    return subprocess.run(cmd, capture_output=True, text=True, env={
        **env, "PYTHONPATH": LITKIT}, **kw)
