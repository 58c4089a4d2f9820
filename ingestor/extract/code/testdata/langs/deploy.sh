#!/bin/bash
set -euo pipefail

# Logs a message.
log() {
  echo "[$(date)] $*" >&2
}

function build {
  cat <<EOF
deploy() {
this is heredoc text, it's not code
EOF
  echo "count: ${#args[@]}"
}

cleanup () {
  rm -rf "$tmp"
}

main() {
  log 'starting'
  build
}

main "$@"
