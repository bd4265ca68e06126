"""``python -m psro.cli``: the ``psro`` command."""

import sys

from psro.cli import main

sys.exit(main())
