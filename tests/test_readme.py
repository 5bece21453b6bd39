"""The README's facts, computed or checked against what they describe: the size of the shipped
weights, the pins and lower bounds it quotes, the Python version, the Binder and repository URLs
(_config.yml's), the chapters; and its order, the one a newcomer needs: what it is, the two
commands, the ways in, then the detail."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())


def pins(path: Path) -> dict[str, str]:
    return dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", path.read_text(), re.MULTILINE))


def test_the_sections_come_in_a_newcomers_order() -> None:
    sections = re.findall(r"^## (.+)$", README, re.MULTILINE)
    assert sections[:3] == ["Two commands", "Ways in", "Licences, citation, releases"], sections
    assert README.index("bash tools/build-book.sh") < README.index("## Ways in")
    assert README.index("## Testing") > README.index("## What is here")  # the test detail after the map


def test_the_shipped_weights_size_is_the_folders() -> None:
    folder = ROOT / "transformer_lib" / "pretrained" / "weights"
    size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    stated = re.search(r"training figures\), about ([\d.]+) MB", README)
    assert stated is not None and float(stated.group(1)) == round(size / 1e6, 1), (stated, size)


def test_the_versions_it_quotes_are_the_pinned_ones() -> None:
    runtime = (ROOT / "runtime.txt").read_text().strip().removeprefix("python-")
    assert f"Python {runtime}" in README and not set(re.findall(r"Python (3\.\d+)", README)) - {runtime}
    torch = pins(ROOT / "requirements.txt")["torch"]
    assert f"`torch=={torch}`" in README and f"(torch {torch})" in README
    binder = pins(ROOT / "binder" / "requirements.txt")["torch"]
    assert f"`torch=={binder}`" in README
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["book"]
    bounds = dict(re.match(r"([A-Za-z0-9_-]+)>=(\S+)", r).groups() for r in requirements)
    for name, shown in (("torch", "torch"), ("numpy", "numpy"), ("pandas", "pandas"), ("matplotlib", "matplotlib"),
                        ("ipython", "IPython")):
        assert f"{shown} {bounds[name]}" in README, f"the README's lower bound of {name} is not {bounds[name]}"
    assert f"{bounds['torch']} or newer" in README


def test_binder_and_the_repository_are_config_ymls() -> None:
    url = CONFIG["repository"]["url"]
    slug, branch = url.removeprefix("https://github.com/"), CONFIG["repository"]["branch"]
    launches = re.findall(r"https://mybinder\.org/v2/gh/([^)\s]+)", README)
    assert len(launches) >= 2 and "Launch on Binder" in README  # the badge and the link
    assert set(launches) == {f"{slug}/{branch}?urlpath=lab/tree/book"}, launches
    assert f"git clone {url} && cd {slug.split('/')[-1]}" in README
    pages = f"https://{slug.split('/')[0]}.github.io/{slug.split('/')[1]}/"
    assert pages in README


def test_the_chapters_and_modules_it_names_exist() -> None:
    chapters = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    rows = re.findall(r"^\| (\d+)\. ", README, re.MULTILINE)
    assert [int(n) for n in rows] == list(range(1, len(chapters) + 1))
    for path in re.findall(r"`(transformer_lib/[\w/]+\.?\w*)`", README):
        assert (ROOT / path.rstrip("/")).exists(), path
    for path in re.findall(r"`((?:tools|tests|benchmarks|book|binder)/[\w./-]+)`", README):
        assert (ROOT / path).exists(), path


def test_its_python_snippets_run_as_printed(tmp_path, monkeypatch, capsys) -> None:
    """Every ```python block of the README, executed as a reader pastes it; the shipped model's prints
    what its comment says. The run folder that "Using the model you trained" loads (``runs/p20``)
    is made by the README's command, shortened to 2 steps (the distributed appendix runs it whole
    and checks its translation)."""
    from transformer_lib.train.cli import main

    snippets = re.findall(r"^```python\n(.*?)^```$", README, re.MULTILINE | re.DOTALL)
    assert len(snippets) == 3, snippets
    monkeypatch.chdir(tmp_path)
    data = ROOT / "book" / "data"
    assert main(["--data-src", str(data / "parallel20.en"), "--data-tgt", str(data / "parallel20.fr"),
                 "--steps", "2", "--batch-size", "20", "--bpe-merges", "200", "--out", "runs/p20"]) == 0
    capsys.readouterr()
    claims = []
    for snippet in snippets:
        exec(compile(snippet, "README.md", "exec"), {})  # noqa: S102 (the README's own code)
        printed = capsys.readouterr().out
        claimed = re.search(r"^print\(translate\(book_model\(\), .*\)\)  # (.+)$", snippet, re.MULTILINE)
        if claimed is not None:
            claims.append(snippet)
            assert printed == claimed.group(1) + "\n"
    assert len(claims) == 1 and len(claims[0].strip().splitlines()) == 3  # the shipped model in three lines


def test_its_links_are_absolute_as_a_package_index_shows_them() -> None:
    """The README is the package's long description (pyproject's ``readme``): a relative link would
    point nowhere on a package index. Links in code (``[chapter 3](03_...)`` as an example) do not count."""
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["readme"] == "README.md"
    prose = re.sub(r"```.*?```", "", README, flags=re.DOTALL)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    targets = re.findall(r"\]\(([^)\s]+)", prose) + re.findall(r"(?:src|href)=\"([^\"]+)\"", prose)
    assert targets and [t for t in targets if not t.startswith("https://")] == []
    blob = CONFIG["repository"]["url"] + "/blob/" + CONFIG["repository"]["branch"] + "/"
    for target in targets:
        if target.startswith(blob):
            assert (ROOT / target.removeprefix(blob)).exists(), target
