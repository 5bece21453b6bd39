"""The book in the reader's browser, one package for the Python and the JavaScript side.

* ``model``: the trained models written for the page (weights and a JSON manifest under a stem);
* ``page``: an explorer's HTML for the static book, the page's files (``write_page_files``), the
  one list of its scripts in load order (``LIVE_SCRIPTS``, ``LM_SCRIPTS``) and those a page with
  given explorers loads (``page_scripts``);
* ``theme``: the theme and messages the page reads, written once, by Python;
* ``live``: what every explorer of JupyterLab shares (``LiveExplorer``: its two views, its messages,
  callbacks that never raise);
* ``explorers``: the attention and positional-encoding explorers of JupyterLab (with ``lm_explorer``,
  ``stepper``, ``model_explorer`` and ``vit_explorer``, the only modules that import ipywidgets);
* ``lm_explorer``: chapter 8's language-model explorer (``static/book-lm.js`` and ``lm-explorer.js`` in the page);
* ``stepper``: the decoding stepper of JupyterLab (greedy and beam search, one step at a time);
* ``model_explorer``: the whole-model explorer (one token through every block);
* ``vit_explorer``: chapter 9's digits explorer (the Vision Transformer and the linear layer on a drawn digit;
  ``static/vit-explorer.js`` in the page, the weights in its state);
* ``static/``: the page's scripts (``page.LIVE_SCRIPTS`` and ``LM_SCRIPTS``: ``explorers.js`` starts every
  explorer, each registered by its own script) and style, as package data.

Import from the module; this package imports none of them.
"""
