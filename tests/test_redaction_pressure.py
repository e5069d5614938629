"""The redaction-pressure sub-project's own checks, exactly as its README states them (run from the
repository root by examples/redaction-pressure/ci.sh): the lock is current, the environment syncs
from it, and its unittest suite passes. It has its own interpreter environment (uv), so the main
package never depends on it or on verifiers; this test only makes the README's one test command
run it too."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CI = ROOT / "examples" / "redaction-pressure" / "ci.sh"


def test_the_sub_projects_readme_checks_pass() -> None:
    assert CI.is_file(), CI
    result = subprocess.run(["bash", str(CI)], cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    ran = re.findall(r"^Ran (\d+) tests? in", log, re.M)
    assert ran and int(ran[-1]) >= 50, f"the sub-project ran {ran or 'no'} tests:\n{log[-2000:]}"
    assert re.search(r"^OK\b", log, re.M), log[-2000:]
