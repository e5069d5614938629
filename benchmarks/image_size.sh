#!/usr/bin/env bash
# Where the action image's megabytes go (docs/action.md, "The image").
#
#   bash benchmarks/image_size.sh              # builds the repository's Dockerfile as oloproof-action:size
#   bash benchmarks/image_size.sh IMAGE        # an image already built
#
# Prints the image size, its layers, and inside it: the venv by package, the bundled libraries,
# compiled and source Python, and the rest of the file system.
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:-}"
if [ -z "$image" ]; then
  image=oloproof-action:size
  docker build -q -t "$image" . >/dev/null
fi
echo "image $image: $(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.1f MB", $1 / 1e6}')"
echo "layers (newest first):"
docker history --format '  {{.Size}}\t{{.CreatedBy}}' "$image" | cut -c1-110
docker run --rm --network none --entrypoint sh "$image" -c '
site=/opt/oloproof/lib/python3.11/site-packages
echo "venv by package (MB):"; cd "$site" && du -sm -- * | sort -rn | head -14 | sed "s/^/  /"
echo "bundled libraries (MB):"; du -sm -- *.libs | sed "s/^/  /"
echo "compiled .pyc (MB): $(find . -name "*.pyc" -print0 | du -cm --files0-from=- | tail -n 1 | cut -f1)"
echo "source .py (MB): $(find . -name "*.py" -print0 | du -cm --files0-from=- | tail -n 1 | cut -f1)"
echo "rest of the file system (MB):"; du -xsm /usr/lib/python3.11 /usr/lib/x86_64-linux-gnu /usr/bin /usr/share /var /opt | sed "s/^/  /"'
