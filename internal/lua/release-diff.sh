#!/usr/bin/env bash
# Writes attune.patch: every change of this folder against gopher-lua
# v1.1.2 as released (its module zip, from the Go module cache or proxy),
# after the one mechanical change, the import paths
# (github.com/yuin/gopher-lua -> github.com/attune-dev/attune/internal/lua).
# The Go sources of the lua, ast, parse and pm packages and the parser's
# grammar; tests and testdata are not part of the patch (README.md says
# what they are).
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
rel=$(cd / && GOFLAGS=-mod=mod go mod download -json github.com/yuin/gopher-lua@v1.1.2 | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$rel" ] || { echo "release-diff.sh: could not download github.com/yuin/gopher-lua@v1.1.2" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
list() { (cd "$1" && ls *.go ast/*.go parse/*.go pm/*.go parse/parser.go.y 2>/dev/null | grep -v '_test\.go$' | sort); }
for side in a b; do mkdir -p "$tmp/$side/ast" "$tmp/$side/parse" "$tmp/$side/pm"; done
for f in $(list "$rel"); do
  sed 's#github.com/yuin/gopher-lua#github.com/attune-dev/attune/internal/lua#g' "$rel/$f" > "$tmp/a/$f"
done
for f in $(list "$here"); do cp "$here/$f" "$tmp/b/$f"; done
cd "$tmp"
diff -ruN a b | sed -E "s/^(\+\+\+|---) ([^\t]+)\t.*/\1 \2/" > "$here/attune.patch" || true
echo "attune.patch: $(grep -c '^+++ ' "$here/attune.patch") files, $(wc -l < "$here/attune.patch") lines" >&2
