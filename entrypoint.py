"""Entry point of the oloproof GitHub Action's container (Dockerfile ENTRYPOINT).

Thin on purpose: everything lives in ``oloproof.action`` so it is unit-tested in-process. First of
all, the token and the runner's file commands leave this process's environment (and its
``/proc/<pid>/environ``), so that the system under test, a child, cannot read them
(``oloproof.action.private``).
"""

from __future__ import annotations

import sys

from oloproof.action.private import private_environ

if __name__ == "__main__":
    environ = private_environ()
    from oloproof.action.main import main  # after the hand-over: nothing runs before it

    sys.exit(main(environ))
