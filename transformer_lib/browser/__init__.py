"""The book in the reader's browser, one package for the Python and the JavaScript side.

* ``model``: the trained models written for the page (weights and a JSON manifest under a stem);
* ``page``: an explorer's HTML for the static book, the page's files (``write_page_files``) and the
  one list of its scripts in load order (``LIVE_SCRIPTS``, ``LM_SCRIPTS``);
* ``theme``: the theme and messages the page reads, written once, by Python;
* ``explorers``: the ipywidgets explorers of JupyterLab (with ``lm_explorer`` and ``stepper``, the only
  modules that import ipywidgets);
* ``lm_explorer``: chapter 8's language-model explorer (``static/book-lm.js`` and ``lm-explorer.js`` in the page);
* ``stepper``: the decoding stepper of JupyterLab (greedy and beam search, one step at a time);
* ``static/``: the page's scripts (``book-text.js``, ``book-model.js``, ``explorers.js``,
  ``positional-explorer.js``, ``book-trace.js``, ``stepper.js``, ``book-lm.js``, ``lm-explorer.js``) and
  style, as package data.

Import from the module; this package imports none of them.
"""
