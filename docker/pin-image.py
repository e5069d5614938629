"""Point action.yml at a pushed image by digest: `image: Dockerfile` -> `image: docker://REF@sha256:...`.

Used by .github/workflows/release.yml on the release commit. Refuses anything but an image
reference pinned by digest, and an action.yml that does not build the Dockerfile (already pinned).
Usage: python3 docker/pin-image.py action.yml docker://ghcr.io/OWNER/oloproof-action@sha256:<64 hex>
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REF = re.compile(r"docker://ghcr\.io/[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)+@sha256:[0-9a-f]{64}")
LINE = "  image: Dockerfile\n"


def pin(text: str, ref: str) -> str:
    if not REF.fullmatch(ref):
        raise SystemExit(f"pin-image: {ref!r} is not docker://ghcr.io/OWNER/NAME@sha256:<64 hex digits>")
    if text.count(LINE) != 1:
        raise SystemExit("pin-image: action.yml does not say `  image: Dockerfile` exactly once (already pinned?)")
    return text.replace(LINE, f"  image: {ref}\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    path = Path(sys.argv[1])
    path.write_text(pin(path.read_text(encoding="utf-8"), sys.argv[2]), encoding="utf-8")
