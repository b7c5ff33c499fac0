"""litkit: the course's literate toolchain (noweb sources tangled into
programs and woven into pages through pandoc), installed into each module's
build/venv.

DIR is the folder of the installed package: its shell tools (tangle.sh,
weave.sh, need.sh, setup.sh), pandoc filters (*.lua), make rules (lit.mk),
page theme (theme/) and clang-format style. `python -m litkit` prints it.
"""

import os

__version__ = "0.8.0"
DIR = os.path.dirname(os.path.abspath(__file__))
