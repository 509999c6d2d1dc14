#!/usr/bin/env bash
# Build the image where the container cannot reach a package index: wheels are
# built on the host into docker/wheels/ and installed from there in the image.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf docker/wheels && mkdir -p docker/wheels
python3 -m pip wheel --quiet . -w docker/wheels
docker build -f docker/Dockerfile -t "${1:-kcsim}" .
