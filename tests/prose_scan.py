"""The prose-number scan of tests/test_prose_numbers.py: every number a chapter's markdown types.

A number in prose is one of four things, and the scan reports any other, with its notebook, cell, the
number and why it is not one of them:

1. **bound**: ``{eval}`name``` shows a value a cell computed (``transformer_lib.prose``);
2. **a constant of the paper**: in ``PAPER_CONSTANTS``, the one list, each with the section that states it;
3. **part of a formula that states a definition**: a number inside ``$...$``, ``$$...$$`` or ``{math}``
   that has a variable in it ($1 - h_k^2$, $10000^{2i/d}$). A formula without a variable ($20 + 2 - 1 =
   21$, ``{math}`1000```) is arithmetic, and a value a formula is said to equal ($d_k = 4$, $p = 0.92$) is
   a value: both are scanned like prose;
4. **a setting the chapter's code names**: a literal a code cell assigns to a name (``STEPS = 300``,
   ``steps = 300``) or passes by keyword (``train(steps=300)``). A digit elsewhere in a cell
   (``reason[:300]``, ``range(5)``, a literal in an assert) is no setting.

What is not a number: the paper's and the book's parts ("section 3.2", "Table 3", "chapter 7"), list
markers, names with digits ("fp16", "GPT-2"), years and citations, and the identities 0 and 1 ("sums to 1",
"mean 0") when no unit follows them. Numbers written as words are scanned where they count a measured
quantity ("several points", "twenty minutes", "a few hundred thousand parameters"): such a word is
bound by rewriting it as a bound number, or is a setting's value written out ("three seeds").
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

# Vaswani et al. 2017: the number as prose may type it -> where the paper states it.
PAPER_CONSTANTS = {
    "512": "section 3.1, d_model", "2048": "section 3.3, d_ff", "64": "section 3.2.2, d_k = d_v",
    "8": "section 3.2.2, h = 8 heads; section 5.2, 8 P100 GPUs", "6": "section 3.1, N = 6 layers",
    "0.1": "section 5.4, P_drop and epsilon_ls", "4000": "section 5.3, warmup_steps", "10000": "section 3.5",
    "0.9": "section 5.3, beta_1", "0.98": "section 5.3, beta_2", "1e-9": "section 5.3, Adam's epsilon",
    "100000": "section 5.2, base training steps", "300000": "section 5.2, big training steps",
    "12": "section 5.2, 12 hours", "3.5": "section 5.2, 3.5 days", "0.4": "section 5.2, 0.4 seconds a step",
    "4.5": "section 5.1, 4.5 million sentence pairs", "36": "section 5.1, 36M sentences",
    "37000": "section 5.1, shared BPE vocabulary", "32000": "section 5.1, word-piece vocabulary",
    "25000": "section 5.1, tokens a batch", "28.4": "Table 2, big EN-DE BLEU", "41.8": "Table 2, big EN-FR BLEU",
    "27.3": "Table 2, base EN-DE BLEU", "38.1": "Table 2, base EN-FR BLEU",
    "65": "Table 3, base parameters (millions)", "213": "Table 3, big parameters (millions)",
    "23.7": "Table 3, N = 2 development BLEU", "25.8": "Table 3, base development BLEU",
    "24.6": "Table 3, h = 1 development BLEU", "4": "section 6.1, beam size", "0.6": "section 6.1, alpha",
    "50": "section 6.1, input length + 50", "5": "section 6.1, 5 checkpoints averaged (base)",
    "20": "section 6.1, 20 checkpoints averaged (big)", "1024": "Table 3, big d_model", "4096": "Table 3, big d_ff",
    "16": "Table 3, big h", "0.3": "Table 3, big EN-DE P_drop",
    "1.2": "Table 3, row (D): no dropout loses 1.2 BLEU (24.6 against 25.8)",
}
IDENTITIES = {"0", "1"}  # "sums to 1", "mean 0", "T = 1": the identities of arithmetic, not results
UNITS = (r"(?:%|percent|points?|times|minutes?|seconds?|hours?|days?|steps?|epochs?|[kMG]B|bytes?|"
         r"parameters?|million|thousand|sentences?|tokens?|words?|seeds?|runs?|gradients?)\b")
COUNTED = r"(?:words?|steps?|tokens?|sentences?|gradients?)"  # "between two words": counted, not measured
WORDS = ("two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand "
         "million billion several dozen dozens").split()
WORD_VALUES = {w: str(v) for v, w in enumerate(WORDS[:19], start=2)} | {
    w: str(v) for v, w in zip(range(30, 100, 10), WORDS[19:26], strict=True)}
MULTIPLIERS = ("hundred", "thousand", "million", "billion")  # a number word only after another: "a few hundred"
STARTS = [w for w in WORDS if w not in MULTIPLIERS]
NUMBER_WORD = re.compile(r"(?<!\d )\b(?:a few|a couple of|an?(?= (?:" + "|".join(MULTIPLIERS + ("dozen",)) + r"))|(?:"
                         + "|".join(STARTS) + r"))(?:[ -](?:" + "|".join(WORDS) + r"))*\s+(?:of\s+)?" + UNITS, re.I)
MATH = [re.compile(r"\$\$(.*?)\$\$", re.S), re.compile(r"\{math\}`([^`]*)`"), re.compile(r"\$([^$]+?)\$")]
OPERATORS = re.compile(r"\\(?:approx|cdot|times|quad|qquad|le|ge|leq|geq|ln|log|exp|sqrt|frac|left|right|big|Big|"
                       r"dots|ldots|mathrm|text|[,;! ])(?![A-Za-z])")  # no variables: \ln 330 \approx 5.8 is arithmetic
MASKED = [
    re.compile(r"\{eval\}`[^`]*`"),  # bound: the computed value
    re.compile(r"```.*?```", re.S), re.compile(r"^:::.*$", re.M),  # code blocks, directive lines
    re.compile(r"`[^`]+`"),  # inline code (it may wrap a line): names, calls, literal arguments
    re.compile(r"\]\([^)]*\)"), re.compile(r"<[^>\n]*>"),  # link targets, HTML tags
    re.compile(r"\((?:[^()]*?)\b(?:19|20)\d\d[a-z]?\)"),  # "(Vaswani et al. 2017)": a citation
    re.compile(r"\b(?:19|20)\d\d\b"),  # a year
    re.compile(r"(?:\{(?:ref|numref|cite|cite:p|cite:t|doc)\}`[^`]*`)"),  # references
    re.compile(r"^#+ .*$", re.M), re.compile(r"^\(.*\)=$", re.M),  # headings and their labels
    re.compile(r"^\s*\d+\.\s", re.M), re.compile(r"\*\*\d+\.\*\*"),  # list markers: "1. ", "**2.**"
    re.compile(r"\b(?:[Ss]ections?|[Tt]ables?|[Ff]igures?|[Ee]quations?|[Ff]ootnotes?|[Cc]hapters?|[Ee]xercises?)"
               r" \d+(?:\.\d+)*(?:(?:,| and| to|-|–) \d+)*"),  # the paper's and the book's parts
    re.compile(r"\bNBVAL\w*|\b[A-Za-z]+\d+[A-Za-z\d]*\b|\b[A-Z]+-\d+\b|\b\d+-gram"),  # "fp16", "GPT-2", "4-gram"
]
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:e-?\d+)?%?")
FORMULA_VALUE = re.compile(r"(?:=|\\approx|\\le|\\ge|<|>)\s*(-?\d[\d,]*(?:\\,\d{3})*(?:\.\d+)?)\s*(?=$|[,;.)]|\\quad)")


@dataclass(frozen=True)
class Typed:
    notebook: str
    cell: int
    number: str
    context: str
    why: str = "typed in prose"

    def __str__(self) -> str:
        return (f"{self.notebook} cell {self.cell}: {self.number!r} ({self.why}) in '{self.context}': bind it "
                "({eval}`name` after name = shown(value, spec)), name it as a setting in a code cell "
                f"(NAME = {self.number.rstrip('%')}), or, if the paper states it, add it to "
                "tests/prose_scan.py PAPER_CONSTANTS with its section")


def canonical(number: str) -> str:
    """The number without thousands separators, '%' or trailing zeros: '100,000' and '100000' are one."""
    plain = number.rstrip("%").replace(",", "").replace("\\,", "").replace("_", "")
    try:
        value = float(plain)
    except ValueError:
        return plain
    return f"{value:g}" if "e" in plain or "." in plain else plain


def variants(number: str) -> set[str]:
    """The spellings a number may have: 7,499 / 7499; 49% / 0.49."""
    plain = number.rstrip("%").replace(",", "")
    found = {number, plain, number.replace(",", ""), canonical(number)}
    if number.endswith("%"):
        try:
            found.add(f"{float(plain) / 100:g}")
        except ValueError:
            pass
    return found


def allowed(number: str) -> bool:
    """A paper constant or an identity."""
    return canonical(number) in PAPER_CONSTANTS or (canonical(number) in IDENTITIES and "%" not in number)


def _literal_numbers(node: ast.AST) -> set[str]:
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, int | float) and not isinstance(sub.value, bool):
            found |= {canonical(repr(sub.value)), canonical(f"{sub.value:g}")}
            if isinstance(sub.value, float) and sub.value < 1:
                found.add(canonical(f"{sub.value * 100:g}"))  # 0.95 as a setting, 95% in the text
    return found


def named_settings(nb: dict) -> set[str]:
    """The literals the code cells name: ``name = literal`` (also a tuple or list of literals) and
    ``call(name=literal)``. Magics and shell lines are skipped."""
    found: set[str] = set()
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "\n".join(line for line in "".join(cell["source"]).splitlines() if line.lstrip()[:1] not in ("%", "!"))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and all(
                    isinstance(s, ast.Constant | ast.Tuple | ast.List | ast.UnaryOp) for s in [node.value]):
                found |= _literal_numbers(node.value)
            elif isinstance(node, ast.keyword) and isinstance(node.value, ast.Constant | ast.Tuple | ast.List):
                found |= _literal_numbers(node.value)
    return found


def code_numbers(nb: dict) -> set[str]:
    """Kept for tests/test_prose_numbers.py's end-to-end check: the settings (see ``named_settings``)."""
    return named_settings(nb)


@functools.cache
def _ledger_table() -> str:
    from transformer_lib import paper

    return paper.ledger_markdown()


def _blank(text: str, span: tuple[int, int]) -> str:
    return text[:span[0]] + " " * (span[1] - span[0]) + text[span[1]:]


def _formula_numbers(text: str) -> tuple[str, list[tuple[int, str, str]]]:
    """Blank the formulas; return the numbers in them that are scanned: those of a formula with no
    variable, and a value a formula says something equals."""
    scanned: list[tuple[int, str, str]] = []
    for pattern in MATH:
        for match in pattern.finditer(text):
            body, start = match.group(1), match.start(1)
            variables = OPERATORS.sub(" ", body)
            if not re.search(r"[A-Za-z]", variables):  # arithmetic, or a bare number typeset as math
                for number in re.finditer(r"\d[\d,]*(?:\\,\d{3})*(?:\.\d+)?", body):
                    scanned.append((start + number.start(), number.group().replace("\\,", ","),
                                    "a number in a formula without a variable"))
            else:
                for value in FORMULA_VALUE.finditer(body):
                    scanned.append((start + value.start(1), value.group(1).replace("\\,", ","),
                                    "the value a formula is said to equal"))
            text = _blank(text, match.span())
    return text, scanned


def typed_numbers(path: Path, nb: dict | None = None) -> list[Typed]:
    """Every number of a notebook's markdown that is neither bound, nor a paper constant, nor part of a
    formula with a variable, nor a setting a code cell names (see the module's docstring)."""
    nb = nb if nb is not None else json.loads(path.read_text())
    settings = named_settings(nb)
    found = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        original = "".join(cell["source"])
        # The paper ledger's table is the code's own (tests/test_paper.py asserts that the appendix shows
        # exactly paper.ledger_markdown(), whose values are read from the library): bound, not typed.
        text = original.replace(_ledger_table(), " " * len(_ledger_table()))
        for pattern in MASKED[:3]:  # bound values and code blocks first: no formula is looked for in them
            text = pattern.sub(lambda m: " " * len(m.group()), text)
        text, candidates = _formula_numbers(text)
        for pattern in MASKED[3:]:
            text = pattern.sub(lambda m: " " * len(m.group()), text)
        candidates += [(m.start(), m.group().rstrip(".,"), "typed in prose") for m in NUMBER.finditer(text)]
        for match in NUMBER_WORD.finditer(text):
            candidates.append((match.start(), match.group(), "a number written as words, with a unit"))
        for start, number, why in sorted(candidates):
            if why.startswith("a number written"):
                value = WORD_VALUES.get(number.lower().replace("-", " ").split()[0])
                single = value is not None and re.fullmatch(r"\w+\s+" + UNITS, number)
                if single and (value in settings or value in PAPER_CONSTANTS):
                    continue  # a setting's value written out ("three seeds"), the paper's ("twelve hours")
                if single and int(value) <= 12 and re.search(COUNTED + r"$", number):
                    continue  # a count of things, not a measurement: "two words", "three steps"
            elif allowed(number) and not (canonical(number) in IDENTITIES and re.match(
                    r"\s*" + UNITS, original[start + len(number):] if why == "typed in prose" else "")):
                continue
            elif variants(number) & settings or canonical(number) in settings:
                continue
            context = original[max(0, start - 40):start + len(number) + 20]
            found.append(Typed(path.name, index, number, " ".join(context.split()), why))
    return found
