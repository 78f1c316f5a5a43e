#!/usr/bin/env bash
# Regenerate the graph explorer's vendored Cytoscape.js (src/loregraph/api/rest/ui/static/) from npm.
# The built file is committed so a fresh clone works offline; run this to update it (needs npm and network).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${CYTOSCAPE_VERSION:-3.34.4}
dest=src/loregraph/api/rest/ui/static
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "cytoscape@$VERSION" >/dev/null && tar xzf cytoscape-*.tgz)
cp "$work/package/dist/cytoscape.min.js" "$dest/cytoscape.min.js"
cp "$work/package/LICENSE" "$dest/cytoscape.LICENSE"
echo "vendored cytoscape $VERSION into $dest" >&2
