"""The training-claim scan of tests/test_training_claims.py: every sentence of the book's prose that says a
training choice has an effect ("better", "hurts", "improves"...) is either backed by seeds or says it is one run.

A sentence is a *training claim* when it has an effect word (``EFFECT``) and a word that names a training
choice (``TRAINING``: the depth, dropout, the warm-up, the seed...). Such a sentence passes in one of three
ways, and the scan reports any other, with its file, cell and the sentence:

1. **it says it is one run**: "in this run", "one seed", "a single run", "not measured on this page"
   (``ONE_RUN``); the reader is told what the claim rests on;
2. **it is someone else's**: inside a blockquote or a quotation, or the sentence cites the work it reports
   (a link to the bibliography, a ``{cite}`` role) or says whose it is ("the paper reports", "they
   found", "the claim"): the book quotes it, it does not claim it;
3. **it is backed by the book's one rule**: the sentence quotes a bound number (``{eval}``,
   ``transformer_lib.prose``) whose expression, or what the code cells assigned it from, shares a name or
   a key with an ``assert`` of a code cell above it that reads a *verdict* of ``transformer_lib.verdict``
   (five or more paired seeds, a 95 % interval that excludes zero, a minimum size): a call of ``verdict``
   or ``table3_verdict``, or a verdict's ``directed`` (``RULE``). The stored multi-seed data carry the
   number; the assert fails if the rule stops giving it. A spread over seeds alone (``..._effect_min``,
   every seed agreeing) backs nothing: with three seeds a change with no effect gets one sign in four.

What is scanned: the markdown cells of every notebook of ``book/``, the book's markdown pages and the
README, with code blocks, inline code, link targets and HTML tags blanked (``prose_scan``'s patterns).
The text a code cell prints is the code's, and its asserts sit beside it: it is not scanned.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

from transformer_lib.prose import EVAL_ROLE

from . import prose_scan

EFFECT = re.compile(r"\b(?:better|worse|helps?|helped|helping|hurts?|hurting|improves?|improved|improving|"
                    r"improvements?|harms?|harmed|outperforms?|beneficial|gains?|no effect|remed(?:y|ies)|"
                    r"ahead (?:on|by))\b(?!-)", re.I)  # "better-trained" describes; "k steps ahead" moves
NOT_EFFECT = re.compile(r"^(?:Worse|Better)(?: still)?,|\b[Ii]t helps to\b")  # "Worse, ...", "it helps to have met"
TRAINING = re.compile(r"\b(?:layers?|depth|dropout|(?:label )?smoothing|warm-?up|learning rate|tying|tied|untied|"
                      r"recipe|initiali[sz]ation|batch size|checkpoint averaging|clipping|pre-norm|post-norm|"
                      r"schedule|retrain(?:ed|ing)?|steps|ablations?|variants?|seeds?|budget|Adam|RoPE|"
                      r"learned positions|shallower|deeper)\b", re.I)  # "training" alone names no choice
ONE_RUN = re.compile(r"\b(?:in )?(?:one|a single|this|that) (?:run|seed|training run)\b|\bone-seed\b|"
                     r"\bnot measured\b|\bhas not run\b", re.I)
CITED = re.compile(r"\]\(bibliography\.md#|\{cite(?::[pt])?\}|\bthe paper(?:'s)? (?:reports?|finds|found|says|"
                   r"measures)|\b(?:they|the authors) (?:found|find|report)|\bclaim(?:s|ed)?\b", re.I)  # whose it is
RULE = re.compile(r"(?<![A-Za-z0-9_])verdict\b|\btable3_verdict\b|\bdirected\b")  # the one rule's verdicts
# the markup whose text is no prose: code blocks, directive lines, inline code, link targets, HTML tags
MARKUP = [p for p in prose_scan.MASKED if p.pattern.startswith(("```", "^:::", "`[^`]", r"\]\(", "<[^>"))]
QUOTED = [re.compile(r"^\s*>.*$", re.M), re.compile(r"“[^”]*”"), re.compile(r'"[^"\n]*"')]
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*(\[_])|\n\s*\n|\n\s*[*-]\s")
PAGES = ("README.md",)  # beside book/*.md and book/*.ipynb


@dataclass(frozen=True)
class Claim:
    source: str  # the file's name
    cell: int | None  # the markdown cell's index (None: a markdown page)
    cell_id: str | None
    sentence: str

    def __str__(self) -> str:
        where = f"{self.source} cell {self.cell} (id {self.cell_id})" if self.cell is not None else self.source
        return (f"{where}: a training claim with no seeds behind it: '{self.sentence}'. Say it is one run "
                "('in this run', 'one seed', 'not measured on this page'), or bind its number ({eval}) to stored "
                "multi-seed data that an assert above judges with the book's one rule (transformer_lib.verdict)")


def _names(expression: str) -> set[str]:
    """The names and string keys of a Python expression or statement (``shown`` and builtins left out)."""
    try:
        tree = ast.parse(expression.strip())
    except SyntaxError:
        return set()
    found = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    found |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return found - {"shown", "round", "len", "min", "max", "sum", "abs", "int", "float", "str"}


def spread_asserts(code: str) -> list[set[str]]:
    """The names and keys of each ``assert`` of ``code`` that reads a verdict of the one rule (``RULE``)."""
    source = "\n".join(line for line in code.splitlines() if line.lstrip()[:1] not in ("%", "!"))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [_names(ast.unparse(node)) for node in ast.walk(tree)
            if isinstance(node, ast.Assert) and RULE.search(ast.unparse(node))]


def sentences(markdown: str) -> list[str]:
    """The sentences of a markdown text that are the book's own prose, markup and quotations blanked,
    ``{eval}`` roles kept."""
    evals: list[str] = []

    def keep(match: re.Match) -> str:
        evals.append(match.group())
        return f"EVALROLE{len(evals) - 1}X"

    text = EVAL_ROLE.sub(keep, markdown)
    for pattern in QUOTED[:1] + MARKUP[:2]:  # blockquotes and code blocks before any sentence is cut
        text = pattern.sub(lambda m: " " * len(m.group()), text)
    for pattern in MARKUP[2:] + QUOTED[1:]:
        if pattern.pattern == r"\]\([^)]*\)":  # a citation's target: keep the mark that the sentence cites
            text = pattern.sub(lambda m: "](bibliography.md#)" if "bibliography.md#" in m.group() else "]", text)
        else:
            text = pattern.sub(" ", text)
    found = []
    for sentence in SENTENCE_END.split(text):
        sentence = re.sub(r"EVALROLE(\d+)X", lambda m: evals[int(m.group(1))], " ".join(sentence.split()))
        if sentence:
            found.append(sentence)
    return found


def is_claim(sentence: str) -> bool:
    plain = NOT_EFFECT.sub(" ", EVAL_ROLE.sub(" ", sentence))
    return bool(EFFECT.search(plain) and TRAINING.search(plain))


def assignments(code: str) -> dict[str, set[str]]:
    """Each name a code cell assigns -> the names and keys its value reads (``gap = rows["N=1"]["effect"]``)."""
    source = "\n".join(line for line in code.splitlines() if line.lstrip()[:1] not in ("%", "!"))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                    found.setdefault(name, set()).update(_names(ast.unparse(node.value)))
    return found


def _reads(names: set[str], assigned: dict[str, set[str]]) -> set[str]:
    """``names`` and everything their assignments read, followed back through the code cells."""
    found, todo = set(names), list(names)
    while todo:
        for name in assigned.get(todo.pop(), ()):
            if name not in found:
                found.add(name)
                todo.append(name)
    return found


def unbacked(sentence: str, asserts: list[set[str]], assigned: dict[str, set[str]] | None = None) -> bool:
    """A training claim that says neither one run, nor whose it is, nor has a bound number that an assert
    on the one rule's verdict reads (directly, or through the assignments that computed it)."""
    if not is_claim(sentence) or ONE_RUN.search(sentence) or CITED.search(sentence):
        return False
    bound = set().union(set(), *(_names(e) for e in EVAL_ROLE.findall(sentence)))
    bound = _reads(bound, assigned or {}) - {"json", "Path", "read_text", "loads"}
    return not any(bound & names for names in asserts)


def notebook_claims(path: Path, nb: dict | None = None) -> list[Claim]:
    """The unbacked training claims of a notebook's markdown cells (see the module's docstring)."""
    nb = nb if nb is not None else json.loads(path.read_text())
    found, asserts, assigned = [], [], {}
    for index, cell in enumerate(nb["cells"]):
        source = "".join(cell["source"])
        if cell["cell_type"] == "code":
            asserts += spread_asserts(source)
            for name, reads in assignments(source).items():
                assigned.setdefault(name, set()).update(reads)
        elif cell["cell_type"] == "markdown":
            found += [Claim(path.name, index, cell.get("id"), s) for s in sentences(source)
                      if unbacked(s, asserts, assigned)]
    return found


def page_claims(path: Path) -> list[Claim]:
    """The unbacked training claims of a markdown page (no code cells: only the first two ways pass).
    The bibliography's entries are not read: their titles are the cited works' words, not the book's."""
    from tools.citations import ENTRIES_MARKER

    text = path.read_text()
    if ENTRIES_MARKER in text:
        text = text[:text.index(ENTRIES_MARKER)]
    return [Claim(path.name, None, None, s) for s in sentences(text) if unbacked(s, [])]
