"""`python -m shapescript.runtime [--verbose] SPEC.json`: see run_export.py."""

import sys

from .run_export import main

sys.exit(main())
