#!/usr/bin/env bash
# Builds the test collector (tests/otlp.rs's real consumer: the OTLP
# receiver, the debug and file exporters) once per state of its sources,
# into a cache outside the repository keyed by their hash. Never tidies:
# go.sum is committed (a test-only dependency of the file exporter is not
# served, so a plain `go mod tidy` fails).
#
#   tests/otelcol/build.sh          build it if missing; print its path
#   tests/otelcol/build.sh --path   only print where it is (or would be)
#
# Cache: $PROFRJ_OTELCOL_CACHE, else ~/.cache/profrj-otelcol. A cold build
# takes about 4 minutes on 2 cores and ~500 MB of Go modules.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
key=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)
cache="${PROFRJ_OTELCOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/profrj-otelcol}"
bin="$cache/$key/profrj-otelcol"
if [ "${1:-}" = --path ]; then
  echo "$bin"
  exit 0
fi
if [ ! -x "$bin" ]; then
  command -v go >/dev/null || { echo "otelcol/build.sh: Go is needed to build the test collector" >&2; exit 1; }
  mkdir -p "$cache/$key"
  tmp="$cache/$key/.build.$$"
  echo "otelcol/build.sh: building the test collector into $bin" >&2
  (cd "$here" && go build -mod=readonly -trimpath -o "$tmp" .)
  mv -f "$tmp" "$bin"
fi
echo "$bin"
