#!/usr/bin/env bash
# Re-fetches the JavaScript the built book serves from its own static folder, at pinned versions,
# into book/_static/vendor/ (committed: building the book needs no network, and the pages load
# nothing from another host). Needs npm (registry access) and the project's Python environment
# (plotly.js is the copy inside the installed plotly package; its version follows requirements.txt).
#
#   bash tools/vendor_assets.sh            # PYTHON defaults to $VENV_DIR/bin/python (.venv)
#
# What comes from where:
#   plotly/        plotly-book.min.js: plotly.js PLOTLYJS (the one the installed plotly Python package is
#                  built for) as plotly.js's custom-bundle guide makes one (its CUSTOM_BUNDLE.md): its own
#                  modules, for the trace types the book draws (tools/plotly-bundle/entry.js), bundled
#                  and minified by esbuild with the options of plotly.js's esbuild-config.js; npm ci
#                  installs the exact versions of tools/plotly-bundle/package-lock.json. 1.2 MB, 400 kB
#                  gzip (the official cartesian bundle: 1.5 MB, 485 kB; the full one 4.8 MB). LICENSE
#                  from the same package; TRACES.txt lists the trace types it registers, and
#                  tests/test_vendor.py holds every figure in the notebooks to that list.
#   html-manager/  @jupyter-widgets/html-manager embed.js (renders saved ipywidgets state without a
#                  kernel and without require.js; 1.x is the line for ipywidgets 8) and its icon fonts;
#                  licence: the ipywidgets BSD-3-Clause LICENSE (same repository) + the bundle's notices.
#   d3/, jquery/   what bertviz's views need (bertviz pins d3 5.7.0; jQuery 3 for its selectors); also
#                  copied into transformer_lib/browser/vendor/ (package data, for a notebook run from the wheel).
#   mathjax/       MathJax 3 tex-chtml.js (base and AMS TeX: what the book uses; a macro from another
#                  extension would be autoloaded from mathjax/input/tex/extensions, which is not vendored,
#                  and the browser test would report the 404)
#                  and the CHTML fonts it loads relative to itself: only for pages with saved widgets, whose
#                  labels may hold TeX; the book's own formulas are typeset at build time (below).
#   book/_ext/mathjax/  (not served) the same MathJax's Node.js entry and the components that
#                  book/_ext/math_to_svg.js typesets the formulas with at build time: base and AMS TeX,
#                  SVG output, MathML for screen readers.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

PLOTLYJS=4.1.1
HTML_MANAGER=1.0.15
D3=5.7.0
JQUERY=3.7.1
MATHJAX=3.2.2

python="${PYTHON:-${VENV_DIR:-.venv}/bin/python}"
dest=book/_static/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fetch() {  # fetch NAME@VERSION DIR: unpack the npm tarball into $tmp/DIR/package
  mkdir -p "$tmp/$2"
  (cd "$tmp/$2" && npm pack --silent "$1" >/dev/null && tar xzf ./*.tgz)
}

mkdir -p "$tmp/plotly"
cp tools/plotly-bundle/package.json tools/plotly-bundle/package-lock.json tools/plotly-bundle/entry.js "$tmp/plotly/"
(cd "$tmp/plotly" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
fetch "@jupyter-widgets/html-manager@$HTML_MANAGER" html-manager
fetch "d3@$D3" d3
fetch "jquery@$JQUERY" jquery
fetch "mathjax@$MATHJAX" mathjax

installed=$("$python" -c "import plotly.offline; print(plotly.offline.get_plotlyjs_version())")
if [ "$installed" != "$PLOTLYJS" ]; then
  echo "plotly.js in the installed plotly package is $installed, this script pins $PLOTLYJS: update PLOTLYJS" >&2
  exit 1
fi

rm -rf "$dest"
mkdir -p "$dest"/{plotly,html-manager,d3,jquery,mathjax/output/chtml/fonts}

pj="$tmp/plotly/node_modules/plotly.js"
[ "$(node -p "require('$pj/package.json').version")" = "$PLOTLYJS" ] || { echo "tools/plotly-bundle pins another plotly.js" >&2; exit 1; }
(cd "$tmp/plotly" && node_modules/.bin/esbuild entry.js --bundle --format=iife --global-name=Plotly --minify \
  --target=es2016 --define:global=window --define:define.amd=false --define:process.env.NODE_DEBUG=false \
  --loader:.css=empty --log-level=warning --outfile="$root/$dest/plotly/plotly-book.min.js")
# (licence comments are kept, at the end; --loader:.css=empty leaves out maplibre's map styles,
# which plotly.js's registry imports for map traces, of which the book has none)
cp "$pj/LICENSE" "$dest/plotly/"
# The trace types it draws: scatter (in plotly.js's core) and the ones entry.js registers.
{ echo scatter; grep -o "require('plotly.js/lib/[a-z0-9]*')" tools/plotly-bundle/entry.js | sed "s|.*/lib/||; s|')||"; } \
  | grep -vx core | sort -u > "$dest/plotly/TRACES.txt"

hm="$tmp/html-manager/package/dist"
cp "$hm/embed.js" "$hm/embed.js.LICENSE.txt" "$dest/html-manager/"
cp "$hm"/*.woff2 "$dest/html-manager/"  # Font Awesome, loaded relative to embed.js; browsers take woff2
"$python" - "$dest/html-manager/LICENSE" <<'EOF'
import sys
from importlib.metadata import distribution

dist = distribution("ipywidgets")
licence = next(f for f in dist.files if f.name == "LICENSE")
open(sys.argv[1], "w").write(licence.read_text())
EOF

cp "$tmp/d3/package/dist/d3.min.js" "$tmp/d3/package/LICENSE" "$dest/d3/"
cp "$tmp/jquery/package/dist/jquery.min.js" "$tmp/jquery/package/LICENSE.txt" "$dest/jquery/"
# The same two inside the package, for a notebook running from an installed wheel (bertviz's views
# there read them with importlib.resources); tests/test_vendor.py checks the copies are the same bytes.
package_vendor=transformer_lib/browser/vendor
rm -rf "$package_vendor/d3" "$package_vendor/jquery"
mkdir -p "$package_vendor/d3" "$package_vendor/jquery"
cp "$dest/d3/"* "$package_vendor/d3/"
cp "$dest/jquery/"* "$package_vendor/jquery/"

mj="$tmp/mathjax/package"
cp "$mj/es5/tex-chtml.js" "$mj/LICENSE" "$dest/mathjax/"
cp -r "$mj/es5/output/chtml/fonts/woff-v2" "$dest/mathjax/output/chtml/fonts/"
build_mj=book/_ext/mathjax
rm -rf "$build_mj"
for file in es5/node-main.js es5/input/tex-base.js es5/input/tex/extensions/ams.js es5/output/svg.js \
    es5/output/svg/fonts/tex.js es5/a11y/assistive-mml.js es5/adaptors/liteDOM.js LICENSE; do
  mkdir -p "$build_mj/$(dirname "$file")"
  cp "$mj/$file" "$build_mj/$file"
done
echo "mathjax $MATHJAX (Apache-2.0), from npm; tools/vendor_assets.sh" > "$build_mj/VERSION.txt"

cat > "$dest/VERSIONS.txt" <<EOF
Vendored by tools/vendor_assets.sh; each folder holds its licence.
plotly.js (book bundle: $(tr '\n' ' ' < "$dest/plotly/TRACES.txt"| sed 's/ $//'))  $PLOTLYJS  (MIT)  plotly/
@jupyter-widgets/html-manager  $HTML_MANAGER  (BSD-3-Clause) html-manager/
d3                             $D3  (BSD-3-Clause) d3/
jquery                         $JQUERY  (MIT)         jquery/
mathjax                        $MATHJAX  (Apache-2.0)  mathjax/
EOF
du -sh "$dest"
