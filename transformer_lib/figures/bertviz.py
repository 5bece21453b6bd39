"""bertviz's views of a model's attention, with their JavaScript libraries carried by the book.

bertviz's HTML loads require.js, d3 and jQuery from a CDN; the book has no network. Here its
views are rewritten so that d3 and jQuery come from the book's ``_static/vendor`` folder in the
built book, on first use (a button that says what it loads), and are carried inline in a live
session (see ``bertviz_head_view``), read from the package's own copy (``browser/vendor``, package
data: an installed wheel has it, wherever it is installed).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from importlib.resources import files
from importlib.resources.abc import Traversable

from IPython.display import HTML

from ..capture import AttentionMaps
from ..html_embed import PAGE_DECIMALS, json_for_script, script_safe
from ..progress import BOOK_BUILD_ENV
from ..validation import check_choice
from .display import div_id

# The package's copy (the same bytes as the book's _static/vendor/d3 and jquery: tests/test_vendor.py).
VENDOR: Traversable = files("transformer_lib") / "browser" / "vendor"
_LIBRARIES = {"jQuery": "jquery/jquery.min.js", "d3": "d3/d3.min.js"}  # under VENDOR and _static/vendor/

# In the built book, d3 and jQuery (LIBRARY_SIZE) are loaded only when the reader asks for the view:
# a first visit to the page does not pay for them. The button says what it loads and how much.
_BOOK_LOADER = """
  var root = document.documentElement.getAttribute("data-content_root");  // set by Sphinx on every page
  if (root === null) {
    element.textContent = "This bertviz view was saved for the book; run the cell again to draw it here.";
    return;
  }
  var loading = window.transformerBookScripts = window.transformerBookScripts || {};
  function load(path, name) {  // each library once per page, as a global (the book loads no AMD loader)
    loading[path] = loading[path] || new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = root + "_static/vendor/" + path;
      script.onload = function () { resolve(window[name]); };
      script.onerror = function () { reject(new Error("could not load " + script.src)); };
      document.head.appendChild(script);
    });
    return loading[path];
  }
  var button = document.createElement("button");
  button.type = "button";
  button.className = "tc-bertviz-load";
  button.textContent = "Show bertviz's interactive view (loads d3 and jQuery, LIBRARY_SIZE)";
  element.hidden = true;  // its menus are empty until bertviz's script fills them
  element.parentNode.insertBefore(button, element);
  button.addEventListener("click", function () {
    button.disabled = true;
    button.textContent = "Loading d3 and jQuery…";
    Promise.all([load(PATHS.jQuery, "jQuery"), load(PATHS.d3, "d3")])
      .then(function (libs) {
        button.remove();
        element.hidden = false;
        draw(libs[0], libs[1]);
        // the page's other views need nothing more: their buttons stop promising a download
        document.querySelectorAll("button.tc-bertviz-load:not([disabled])").forEach(function (other) {
          other.textContent = "Show bertviz's interactive view (d3 and jQuery are already loaded)";
        });
      })
      .catch(function (err) { button.textContent = "bertviz: " + err.message; throw err; });
  });
"""


def _library_size() -> str:
    """What the button's click downloads: d3 and jQuery, compressed (as a host sends them) and raw."""
    import gzip

    data = [(VENDOR / path).read_bytes() for path in _LIBRARIES.values()]
    packed = sum(len(gzip.compress(d, 6)) for d in data)
    return f"{packed / 1024:.0f} kB compressed, {sum(map(len, data)) / 1024:.0f} kB"


_INLINE_LOADER = """
  var libs = {};
  // Evaluated with no AMD or CommonJS loader in sight, so that each library hands over its object.
  (function (define, module, exports) { JQUERY_SOURCE }).call(libs);
  (function (define, module, exports) { D3_SOURCE }).call(libs);
  draw(window.jQuery.noConflict(true), libs.d3);
"""


# bertviz numbers layers and heads from 0, the book's own figures from 1: its controls say so.
ZERO_BASED_NOTE = ("bertviz numbers layers and heads from 0: its layer 0 is layer 1 in the book's other "
                   "figures, and its head 0 is head 1.")


def _labelled_controls(body: str) -> str:
    """bertviz's menus with accessible names (a screen reader otherwise announces a bare "combo box")
    and the note on its numbering from 0."""
    body = body.replace('<select id="layer">', '<select id="layer" aria-label="layer (numbered from 0)">')
    body = body.replace('<select id="filter">', '<select id="filter" aria-label="attention">')
    return body + f'<p class="bertviz-note" style="font-size:0.85em;color:#555">{ZERO_BASED_NOTE}</p>'


def _rounded_weights(kwargs: dict) -> dict:
    """bertviz's keyword arguments with every attention tensor rounded to ``PAGE_DECIMALS`` (in float64,
    so that bertviz's ``tolist`` writes 0.4322, not the float32 nearest to it)."""
    return {name: [a.double().round(decimals=PAGE_DECIMALS) for a in value] if name.endswith("attention")
            else value for name, value in kwargs.items()}


def _bertviz_html(view: Callable[..., HTML], maps: AttentionMaps, index: int, assets: str | None) -> HTML:
    """Run a bertviz view and make its output work without a CDN.

    bertviz's HTML loads require.js from cdnjs, then asks require.js for d3 and jQuery from
    cdnjs. We drop the require.js tag and hand bertviz's script a stand-in ``requirejs`` that
    passes it d3 and jQuery loaded from the book's static folder (``assets="book"``) or
    evaluated from copies carried inside the output (``assets="inline"``, for a live notebook).
    """
    if assets is None:
        assets = "book" if os.environ.get(BOOK_BUILD_ENV) == "1" else "inline"
    check_choice("assets", assets, ["book", "inline"])
    depths = {len(maps.encoder_self), len(maps.decoder_self), len(maps.cross)} - {0}
    if len(depths) > 1:  # bertviz indexes every stack with the layer numbers of the first one
        raise ValueError(
            f"maps: bertviz needs as many encoder as decoder layers, got {len(maps.encoder_self)} encoder "
            f"and {len(maps.decoder_self)} decoder layers; use attention_menu_figure instead"
        )
    page = view(**_rounded_weights(maps.bertviz_kwargs(index)), html_action="return").data
    page = re.sub(r'<script src="https://cdnjs[^"]*require[^"]*"></script>', "", page)
    match = re.search(r'<script type="text/javascript">\n(.*)\n</script>', page, flags=re.DOTALL)
    if match is None or "https://" in page[: match.start()] + page[match.end():]:
        raise RuntimeError("bertviz: its HTML no longer has the layout this wrapper rewrites; check bertviz's version")
    # bertviz points require.js at cdnjs for d3 and jQuery; we hand them over ourselves.
    script, n_configs = re.subn(r"require\.config\(\{.*?\}\s*\}\);", "", match.group(1), count=1, flags=re.DOTALL)
    if n_configs != 1 or "cdnjs" in script:
        raise RuntimeError("bertviz: its script no longer has the require.config this wrapper removes; check bertviz")
    old_id = re.search(r"bertviz-[0-9a-f]{32}", page).group(0)
    content = json.dumps(maps.bertviz_kwargs(index), default=lambda t: t.tolist()) + view.__name__
    new_id = div_id(content, prefix="bertviz")
    body = _labelled_controls(page[: match.start()].replace(old_id, new_id))
    script = script_safe(script.replace(old_id, new_id))  # a token "</script>" or "<!--" cannot end it
    if assets == "book":
        loader = _BOOK_LOADER.replace("PATHS", json_for_script(_LIBRARIES)).replace("LIBRARY_SIZE", _library_size())
    else:
        sources = {name: VENDOR / path for name, path in _LIBRARIES.items()}
        missing = [str(p) for p in sources.values() if not p.is_file()]
        if missing:
            raise FileNotFoundError(f"bertviz: d3 and jQuery are package data of transformer_lib; missing "
                                    f"{', '.join(missing)} (reinstall transformer_lib)")
        loader = (_INLINE_LOADER.replace("JQUERY_SOURCE", sources["jQuery"].read_text(encoding="utf-8"))
                  .replace("D3_SOURCE", sources["d3"].read_text(encoding="utf-8")))
    wrapped = f"""<script type="text/javascript">
(function () {{
  var element = document.getElementById("{new_id}");
  function draw($, d3) {{
    // bertviz asks require.js for jQuery and d3; this stand-in hands it ours.
    var requirejs = function (names, callback) {{ callback($, d3); }};
{script}
  }}
{loader}
}})();
</script>"""
    # The model view is wider than a book page: let it scroll rather than spill over the margin.
    return HTML(f'<div style="overflow-x:auto">{body}</div>{wrapped}')


def bertviz_head_view(maps: AttentionMaps, index: int = 0, assets: str | None = None) -> HTML:
    """bertviz's head view of the encoder, decoder and cross attention in ``maps``.

    ``assets``: ``"book"`` loads d3 and jQuery from the book's ``_static/vendor`` folder when the
    reader presses the view's button (what the built book needs: a first visit does not load them);
    ``"inline"`` carries them in the output (about 330 kB, for a live notebook). By default ``"book"``
    when the environment variable TRANSFORMER_BOOK_BUILD is 1 (tools/execute_notebooks.py sets it),
    else ``"inline"``.
    """
    from bertviz import head_view

    return _bertviz_html(head_view, maps, index, assets)


def bertviz_model_view(maps: AttentionMaps, index: int = 0, assets: str | None = None) -> HTML:
    """bertviz's model view (every layer and head at once); ``assets`` as in ``bertviz_head_view``."""
    from bertviz import model_view

    return _bertviz_html(model_view, maps, index, assets)
