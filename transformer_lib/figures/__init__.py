"""The book's figures, one module per kind of picture.

* ``display``: showing a figure in JupyterLab and in the static book, and the book's template;
* ``attention``, ``positions``: attention maps and masks (chapters 4, 5 and 7), positional
  encodings (chapter 3);
* ``rnn``, ``embeddings``, ``models``, ``training``: the figures of chapters 1, 2, 6 and 7;
* ``architecture``: the whole model in one picture, generated from a ``Transformer`` (chapter 6);
* ``sampling``: a language model's next word under temperature, top-k and top-p (chapter 8);
* ``errors``: where cross-attention read at a wrong word of the trained model (chapter 7);
* ``bertviz``: bertviz's views, rewritten to load their libraries from the book.

Import from the module (``from transformer_lib.figures.display import show``): this package
imports none of them. (The explorers, the modules that import ipywidgets, are in ``browser``.)
"""
