"""python -m litkit [--version]: print the installed package's folder
(litkit.DIR), or its version."""

import sys

import litkit

if __name__ == "__main__":
    print(litkit.__version__ if sys.argv[1:] == ["--version"] else litkit.DIR)
