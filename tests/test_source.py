import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from transformer_lib import positional_encoding
from transformer_lib.attention import attention_weights
from transformer_lib.multi_head_attention import MultiHeadAttention
from transformer_lib.residual import Residual
from transformer_lib.source import REPOSITORY, REVISION, show_source, source_of, source_url
from transformer_lib.torch_reference import copy_attention

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "book"  # the executed chapters, whose stored outputs hold the excerpts
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from source_links import build_revision, pinned  # noqa: E402 -- the book's Sphinx extension

# An excerpt's heading: [`module.name`](<repository>/blob/<revision>/<path>#L<first>-L<last>)
HEADING = re.compile(r"\[`(transformer_lib\.[\w.]+)`\]\((\S+)/blob/([^/]+)/(\S+)#L(\d+)-L(\d+)\)")
EXCERPT = re.compile(r"\A(?P<heading>[^\n]*)\n\n```python\n(?P<code>.*)\n```\Z", re.S)


def test_source_is_read_from_the_library_file():
    code = source_of(Residual.forward)
    assert code.startswith("def forward(self, x: Tensor, sublayer")
    assert "return self.norm(x + self.dropout(sublayer(x)))" in code


def test_a_part_between_markers():
    code = source_of(MultiHeadAttention, start="def split_heads", end="return x.view")
    assert code.splitlines()[0] == "def split_heads(self, x: Tensor, d_head: int | None = None) -> Tensor:"
    assert code.splitlines()[-1].strip().startswith("return x.view")


def test_markdown_names_the_module_and_links_to_its_lines():
    md = show_source(Residual.forward)
    heading, _, rest = md.data.partition("\n\n")
    assert heading.startswith("[`transformer_lib.residual.Residual.forward`](")
    assert rest.startswith("```python\ndef forward(self")
    assert HEADING.fullmatch(heading).group(2, 3, 4) == (REPOSITORY, REVISION, "transformer_lib/residual.py")


def _lines_at(url: str) -> tuple[str, str]:
    """The dedented lines an excerpt link names, read from this checkout's file; and its path."""
    match = re.fullmatch(rf"{re.escape(REPOSITORY)}/blob/{re.escape(REVISION)}/(\S+)#L(\d+)-L(\d+)", url)
    assert match, url
    path, first, last = match.group(1), int(match.group(2)), int(match.group(3))
    assert (ROOT / path).is_file(), f"{url}: no file {path} in the repository"
    lines = (ROOT / path).read_text().splitlines()[first - 1: last]
    return textwrap.dedent("\n".join(lines)), path


@pytest.mark.parametrize(("obj", "start", "end"), [
    (Residual.forward, None, None),  # a method
    (MultiHeadAttention, "def split_heads", "return x.view"),  # a part of a class
    (attention_weights, None, None),  # a function
    (positional_encoding.sinusoidal_table, "position =", "return"),
    (positional_encoding, None, None),  # a whole module, whose source starts at line 1
    (copy_attention, None, None),  # decorated: the wrapper is torch's, the code the library's
])
def test_the_link_points_at_the_lines_shown(obj, start, end):
    url = source_url(obj, start, end)
    shown, path = _lines_at(url)
    assert shown == source_of(obj, start, end)
    assert path.startswith("transformer_lib/")


def test_code_outside_the_library_has_no_link():
    assert source_url(json.dumps) is None
    assert show_source(json.dumps).data.startswith("`json.dumps`\n\n```python")


def _excerpts(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text())["cells"]
    texts = ["".join(o["data"]["text/markdown"]) for c in cells for o in c.get("outputs", [])
             if "text/markdown" in o.get("data", {})]
    return [t for t in texts if t.startswith(("`transformer_lib.", "[`transformer_lib."))]


def test_every_excerpt_in_the_chapters_links_to_the_lines_it_shows():
    """Each stored ``show_source`` output, in every chapter: its heading links to a file of the
    repository, and the lines at that link are the lines the excerpt shows."""
    chapters = sorted(CHAPTERS.glob("[0-9][0-9]_*.ipynb"))
    checked = 0
    for notebook in chapters:
        for text in _excerpts(notebook):
            excerpt = EXCERPT.match(text)
            assert excerpt, f"{notebook.name}: not an excerpt's form: {text[:120]!r}"
            heading = HEADING.fullmatch(excerpt["heading"])
            assert heading, f"{notebook.name}: an excerpt without its link: {excerpt['heading']}"
            url = excerpt["heading"][excerpt["heading"].index("](") + 2: -1]
            shown, _ = _lines_at(url)
            assert shown == excerpt["code"], f"{notebook.name}: {url} holds other lines than the excerpt shows"
            checked += 1
    assert len(chapters) == 9 and checked >= 40  # 44 excerpts when this test was written


def test_the_build_pins_each_link_to_its_revision(tmp_path: Path):
    body = (f'<a class="reference external" href="{REPOSITORY}/blob/{REVISION}/transformer_lib/residual.py#L3-L9">'
            f'x</a> <a href="{REPOSITORY}/blob/{REVISION}/book/intro.md">intro</a>')
    out = pinned(body, REPOSITORY, REVISION, "0123abc")
    assert f'href="{REPOSITORY}/blob/0123abc/transformer_lib/residual.py#L3-L9"' in out
    assert f'href="{REPOSITORY}/blob/{REVISION}/book/intro.md"' in out  # only the library's files
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    assert build_revision(str(ROOT)) == (head.stdout.strip() if head.returncode == 0 else None)
    assert build_revision(str(tmp_path)) is None  # not a checkout: the links stay at the branch


def test_missing_marker_is_an_error():
    with pytest.raises(ValueError, match="start: no line"):
        source_of(Residual.forward, start="no such line")
    with pytest.raises(TypeError, match="obj: expected a class"):
        source_of(3)
