"""Entry point of the oloproof GitHub Action's container (Dockerfile ENTRYPOINT).

Thin on purpose: everything lives in ``oloproof.action`` so it is unit-tested in-process. First of
all, the token and the runner's file commands leave this process's environment (and its
``/proc/<pid>/environ``), so that the system under test, a child, cannot read them
(``oloproof.action.private``). The composite variant (python/action.yml) runs this same file in the
job's own Python; its inputs arrive as one JSON value and become ``INPUT_*`` first.
"""

from __future__ import annotations

import sys

from oloproof.action.inputs import expand_composite_inputs
from oloproof.action.private import private_environ

if __name__ == "__main__":
    expand_composite_inputs()  # python/action.yml hands the inputs over as one JSON value
    environ = private_environ()
    from oloproof.action.main import main  # after the hand-over: nothing runs before it

    sys.exit(main(environ))
