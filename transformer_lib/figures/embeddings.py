"""The figures of chapter 2 (tokens and embeddings), as plotly figures that work in the static book."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ..lexicon import ADJECTIVES, DETERMINERS, NOUNS, PREPOSITIONS, PRONOUNS, VERBS
from ..validation import check_sentence, check_token_list, empty_or_wrong_type
from .display import BOOK_TEMPLATE, MARKERS, PALETTE

OTHER = "other"  # the label of words a grouping says nothing about


def embedding_scatter_figure(
    points: np.ndarray | Sequence[Sequence[float]],
    words: Sequence[str],
    groupings: Mapping[str, Sequence[str | None]],
    title: str = "Embeddings projected to two dimensions",
) -> go.Figure:
    """A 2-D scatter of word vectors (hover over a point for its word), a dropdown picks what colours them.

    ``points`` is (n_words, 2); ``groupings`` maps a name ("gender", "part of speech") to one
    label per word, ``None`` for a word the grouping does not apply to (drawn small and grey).
    Every grouping's traces are precomputed, so the dropdown works in the static page.
    """
    check_sentence("title", title)
    try:
        points = np.asarray(points, dtype=float)
    except (TypeError, ValueError) as error:
        raise TypeError(f"points: expected an (n_words, 2) array of numbers, got {type(points).__name__} "
                        f"({error})") from None
    if points.ndim != 2 or points.shape[1] != 2:
        kind = TypeError if points.ndim == 0 else ValueError  # a number (None, 3) is no array of points
        raise kind(f"points: expected shape (n_words, 2), got {points.shape}")
    words = check_token_list("words", words, item="word")
    if len(words) != len(points):
        raise ValueError(f"words: expected one word per point ({len(points)}), got {len(words)}")
    if not isinstance(groupings, Mapping) or not groupings:
        raise empty_or_wrong_type(groupings)(
            "groupings: expected a non-empty mapping of name -> one label (or None) per word")
    for name, labels in groupings.items():
        if isinstance(labels, str) or not isinstance(labels, Sequence):
            raise TypeError(f"groupings[{name!r}]: expected a list of labels (str or None), "
                            f"got {type(labels).__name__}")
        if len(labels) != len(words):
            raise ValueError(f"groupings[{name!r}]: expected one label per word ({len(words)}), got {len(labels)}")
    points = points.round(3)
    fig = go.Figure()
    owners: list[str] = []  # the grouping each trace belongs to
    first = next(iter(groupings))
    for name, labels in groupings.items():
        names = [OTHER if label is None else str(label) for label in labels]
        values = sorted(set(names) - {OTHER}) + ([OTHER] if OTHER in names else [])
        for i, value in enumerate(values):
            rows = [n for n, label in enumerate(names) if label == value]
            other = value == OTHER
            fig.add_trace(go.Scatter(
                x=points[rows, 0], y=points[rows, 1], mode="markers", text=[words[n] for n in rows],
                name=value, visible=name == first, legendgroup=name,
                # colour and shape both tell the groups apart (colour alone fails colour-blind readers)
                marker=dict(size=5 if other else 8, color="#bbbbbb" if other else PALETTE[i % len(PALETTE)],
                            symbol="circle" if other else MARKERS[i % len(MARKERS)]),
                hovertemplate=f"%{{text}}<br>{name}: {value}<extra></extra>",
            ))
            owners.append(name)
    buttons = [dict(label=name, method="update",
                    args=[{"visible": [owner == name for owner in owners]}, {"title.text": f"{title}: {name}"}])
               for name in groupings]
    fig.update_layout(
        template=BOOK_TEMPLATE, height=620, title=dict(text=f"{title}: {first}"),
        xaxis=dict(title=dict(text="first principal component")),
        yaxis=dict(title=dict(text="second principal component")),
        updatemenus=[dict(name="grouping", buttons=buttons, direction="down", x=0.0, xanchor="left", y=1.12,
                          yanchor="top", showactive=True, active=0)],
        margin=dict(t=110),
    )
    return fig


def _merge(table: dict[str, str | None], word: str, label: str) -> None:
    """Record ``label`` for ``word``; a word met with two different labels gets None (ambiguous)."""
    if word in table and table[word] != label:
        table[word] = None
    else:
        table.setdefault(word, label)


def french_word_labels(words: Sequence[str]) -> dict[str, list[str | None]]:
    """Gender, number and part of speech of French words, read from the corpus's lexicon tables.

    Returns ``{"part of speech": [...], "gender": [...], "number": [...]}``, one label per word:
    ``None`` where the lexicon says nothing (e.g. the gender of a verb) or is ambiguous ("rouge"
    is masculine and feminine; "souris" singular and plural).
    """
    words = check_token_list("words", words, item="word")
    pos: dict[str, str | None] = {}
    gender: dict[str, str | None] = {}
    number: dict[str, str | None] = {}
    for noun in NOUNS.values():
        for word, plural in ((noun.fr, False), (noun.fr_plural, True)):
            _merge(pos, word, "noun")
            _merge(gender, word, "masculine" if noun.gender == "m" else "feminine")
            _merge(number, word, "plural" if plural else "singular")
    for adjective in ADJECTIVES.values():
        for word, g, n in zip(adjective.forms, "mfmf", "sspp", strict=True):
            _merge(pos, word, "adjective")
            _merge(gender, word, "masculine" if g == "m" else "feminine")
            _merge(number, word, "plural" if n == "p" else "singular")
    for verb in VERBS.values():
        for person, word in enumerate(verb.fr):
            _merge(pos, word, "verb")
            _merge(number, word, "plural" if person >= 3 else "singular")
    for masculine, feminine, plural in DETERMINERS.values():
        for word, g in ((masculine, "masculine"), (feminine, "feminine")):
            _merge(pos, word, "determiner")
            _merge(gender, word, g)
            _merge(number, word, "singular")
        if plural is not None:
            _merge(pos, plural, "determiner")
            _merge(number, plural, "plural")
    for french, person, _ in PRONOUNS.values():
        _merge(pos, french, "pronoun")
        _merge(number, french, "plural" if person >= 3 else "singular")
    for preposition in PREPOSITIONS.values():
        for word in preposition.fr.split():
            _merge(pos, word, "preposition")
    if isinstance(words, str):
        raise TypeError("words: expected a sequence of words, got a str")
    return {"part of speech": [pos.get(w) for w in words], "gender": [gender.get(w) for w in words],
            "number": [number.get(w) for w in words]}
