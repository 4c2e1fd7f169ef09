#!/usr/bin/env bash
# Re-fetch the JavaScript libraries the docs site ships (adapters/docs_site/static/vendor/) from the npm
# registry at the pinned versions below, with their licence files. Needs node's npm; nothing is built, only
# the packages' own minified files are copied (their trailing sourceMappingURL line is dropped: the maps are
# not shipped, and a page opened from disk must request nothing it does not have).
# To update a library: change its version here, run this script, run the browser test
# (python -m pytest -m browser), commit the vendor folder with the new VERSIONS.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
CYTOSCAPE=3.35.0
CYTOSCAPE_DAGRE=4.0.1   # its dist bundles @dagrejs/dagre and @dagrejs/graphlib (versions below, licences shipped)
DAGRE=3.0.0
GRAPHLIB=4.0.1
HIGHLIGHT=11.12.0       # @highlightjs/cdn-assets: the browser build of highlight.js (sql and yaml included)

dest=adapters/docs_site/static/vendor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fetch() {  # fetch NAME@VERSION DIR: the package's files unpacked into $work/DIR
    (cd "$work" && npm pack --silent "$1" >/dev/null && mkdir -p "$2" && tar xzf ./*.tgz -C "$2" && rm ./*.tgz)
}
fetch "cytoscape@$CYTOSCAPE" cytoscape
fetch "cytoscape-dagre@$CYTOSCAPE_DAGRE" cytoscape-dagre
fetch "@dagrejs/dagre@$DAGRE" dagre
fetch "@dagrejs/graphlib@$GRAPHLIB" graphlib
fetch "@highlightjs/cdn-assets@$HIGHLIGHT" highlight

mkdir -p "$dest"
strip_map() { sed '/^\/\/# sourceMappingURL=/d' "$1" > "$2"; }
strip_map "$work/cytoscape/package/dist/cytoscape.min.js" "$dest/cytoscape.min.js"
strip_map "$work/cytoscape-dagre/package/dist/cytoscape-dagre.min.js" "$dest/cytoscape-dagre.min.js"
strip_map "$work/highlight/package/highlight.min.js" "$dest/highlight.min.js"
strip_map "$work/highlight/package/styles/github.min.css" "$dest/highlight-github.min.css"
cp "$work/cytoscape/package/LICENSE" "$dest/LICENSE.cytoscape"
cp "$work/cytoscape-dagre/package/LICENSE" "$dest/LICENSE.cytoscape-dagre"
cp "$work/dagre/package/LICENSE" "$dest/LICENSE.dagre"
cp "$work/graphlib/package/LICENSE" "$dest/LICENSE.graphlib"
cp "$work/highlight/package/LICENSE" "$dest/LICENSE.highlight.js"
cat > "$dest/VERSIONS.txt" <<VERSIONS
Fetched from the npm registry by scripts/update-docs-vendor.sh (MIT and BSD-3-Clause licences beside them).
cytoscape $CYTOSCAPE: cytoscape.min.js (LICENSE.cytoscape)
cytoscape-dagre $CYTOSCAPE_DAGRE: cytoscape-dagre.min.js, bundling @dagrejs/dagre $DAGRE and @dagrejs/graphlib $GRAPHLIB (LICENSE.cytoscape-dagre, LICENSE.dagre, LICENSE.graphlib)
@highlightjs/cdn-assets $HIGHLIGHT: highlight.min.js, highlight-github.min.css (LICENSE.highlight.js)
VERSIONS
echo "vendored into $dest:"
ls -l "$dest"
