"""``python -m psro.cli``: the ``psro`` command."""

import sys

from psro.cli import main

if __name__ == "__main__":
    sys.exit(main())
