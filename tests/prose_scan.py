"""The prose-number scan of tests/test_prose_numbers.py: digits in a chapter's markdown that a cell
computes, but that the text types in instead of binding (``{eval}``, ``transformer_lib.prose``)."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

# What the text may type: not computed on the page.
PAPER_CONSTANTS = {  # Vaswani et al. 2017, quoted: the base model and its training, Tables 2 and 3
    "512", "2048", "64", "8", "6", "0.1", "4000", "4,000", "10000", "10,000", "0.9", "0.98", "1e-9", "100,000",
    "28.4", "41.8", "27.3", "38.1", "3.5", "12", "4.5", "36", "37,000", "32,000", "25,000",
    "65", "213", "23.7", "25.8", "24.6", "1.2",  # Table 3: parameters (millions), development BLEU
}
SMALL = 12  # counts and ordinals ("two layers", "chapter 3", "step 5") up to a dozen are words, not results
MASKED = [
    re.compile(r"\{eval\}`[^`]*`"),  # bound: the computed value
    re.compile(r"```.*?```", re.S),  # code blocks
    re.compile(r"\$\$.*?\$\$", re.S), re.compile(r"\$[^$]+\$"),  # formulas
    re.compile(r"`[^`]+`"),  # inline code (it may wrap a line): names, calls, literal arguments
    re.compile(r"\]\([^)]*\)"), re.compile(r"<[^>\n]*>"),  # link targets, HTML tags
    re.compile(r"\((?:[^()]*?)\b(?:19|20)\d\d[a-z]?\)"),  # "(Vaswani et al. 2017)": a citation
    re.compile(r"\b(?:19|20)\d\d\b"),  # a year
    re.compile(r"(?:\{(?:ref|numref|cite|cite:p|cite:t|doc)\}`[^`]*`)"),  # references
    re.compile(r"^#+ .*$", re.M),  # headings: "## 3. Positions"
    re.compile(r"\b(?:[Ss]ections?|[Tt]ables?|[Ff]igures?|[Ee]quations?) \d+(?:\.\d+)*"),  # the paper's parts
    re.compile(r"\bNBVAL\w*|\b[A-Za-z]+\d+[A-Za-z\d]*\b|\b[A-Z]+-\d+\b"),  # names: "fp16", "W1", "SHA-256", "GPT-2"
]
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:e-?\d+)?%?")


@dataclass(frozen=True)
class Typed:
    notebook: str
    cell: int
    number: str
    context: str


def _outputs_text(cell: dict) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append("".join(output.get("text", "")))
        data = output.get("data", {})
        for mime in ("text/plain", "text/markdown"):
            parts.append("".join(data.get(mime, "")))
    for entry in cell.get("metadata", {}).get("user_expressions", []):  # the bound values
        parts.append(entry.get("result", {}).get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def variants(number: str) -> set[str]:
    """The spellings a computed number may have in the outputs: 7,499 / 7499; 49% / 0.49."""
    plain = number.rstrip("%").replace(",", "")
    found = {number, plain, number.replace(",", "")}
    if number.endswith("%"):
        try:
            found.add(f"{float(plain) / 100:g}")
        except ValueError:
            pass
    return found


def computed_numbers(nb: dict) -> set[str]:
    found: set[str] = set()
    for cell in nb["cells"]:
        for number in NUMBER.findall(_outputs_text(cell)):
            found |= variants(number.rstrip(".,"))
    return found


def allowed(number: str) -> bool:
    plain = number.rstrip("%").replace(",", "")
    if number in PAPER_CONSTANTS or plain in PAPER_CONSTANTS:
        return True
    return re.fullmatch(r"\d+", plain) is not None and int(plain) <= SMALL


def code_numbers(nb: dict) -> set[str]:
    """Numbers the code cells type: a setting the text describes (300 steps), or a bound that an assert
    states as the text does (at most 0.06)."""
    found: set[str] = set()
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"]).replace("_", "")  # 15_000 is 15000
            for number in NUMBER.findall(source):
                found |= variants(number)
                if re.fullmatch(r"\d*\.\d+", number):
                    found.add(f"{float(number) * 100:g}%")  # 0.95 in an assert, 95% in the text
    return found


@functools.cache
def _ledger_table() -> str:
    from transformer_lib import paper

    return paper.ledger_markdown()


def typed_numbers(path: Path, nb: dict | None = None) -> list[Typed]:
    """Every number of a notebook's markdown that is typed in (not bound, allowed, or in a formula), that
    no code cell states (a setting, or a bound an assert checks), and that either a cell computes (it is
    in an output at the same precision) or has a fraction or a percent sign (a measurement, and nothing
    on the page backs it)."""
    nb = nb if nb is not None else json.loads(path.read_text())
    computed = computed_numbers(nb)
    stated = code_numbers(nb)
    found = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        # The paper ledger's table is the code's own (tests/test_paper.py asserts that the appendix shows
        # exactly paper.ledger_markdown(), whose values are read from the library): bound, not typed.
        text = text.replace(_ledger_table(), " " * len(_ledger_table()))
        for pattern in MASKED:
            text = pattern.sub(lambda m: " " * len(m.group()), text)
        for match in NUMBER.finditer(text):
            number = match.group().rstrip(".,")
            if allowed(number) or variants(number) & stated:
                continue
            if variants(number) & computed or re.search(r"[.%]", number):
                context = text[max(0, match.start() - 40):match.end() + 20].replace("\n", " ")
                found.append(Typed(path.name, index, number, " ".join(context.split())))
    return found
