"""`python -m dlc ARGS...` runs the dlc command with ARGS."""
import os
import sys

from . import DlcError, cli

if __name__ == "__main__":
    try:
        path = cli()
    except DlcError as e:
        sys.stderr.write("dlc: error: %s\n" % e)
        sys.exit(1)
    os.execv(path, [path] + sys.argv[1:])
