"""Entry point of the oloproof GitHub Action's container (Dockerfile ENTRYPOINT).

Thin on purpose: everything lives in ``oloproof.action`` so it is unit-tested in-process.
"""

from __future__ import annotations

import sys

from oloproof.action.main import main

if __name__ == "__main__":
    sys.exit(main())
