"""`python -m quadscope` is the `quadscope` command."""

import sys

from quadscope.cli import main

sys.exit(main())
