"""THIRD_PARTY.md, the one list of what others wrote and the repository ships, against the files:
every file in a vendored folder is in exactly one row (or is one of our notes), every row names
files that exist, its licence file is there and holds that licence, and its version is the one the
folder's version note states (and tools/vendor_assets.sh pins, for what it fetches)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDORED = ("book/_static/vendor", "book/_ext/mathjax", "transformer_lib/browser/vendor", "tests/vendor")
NOTES = {"VERSIONS.txt", "VERSION.txt", "TRACES.txt"}  # ours: what tools/vendor_assets.sh wrote down
# A phrase each licence's text holds (its licence file, or the notice of a bundle that carries it).
LICENCE_TEXT = {
    "MIT": "Permission is hereby granted, free of charge",
    "BSD-3-Clause": "Redistribution and use in source and binary forms",
    "Apache-2.0": "Apache License",
    "MPL-2.0": "Mozilla Public License",
    "OFL-1.1": "Fonts: SIL OFL 1.1",
}
PINS = {"plotly.js": "PLOTLYJS", "@jupyter-widgets/html-manager": "HTML_MANAGER", "d3": "D3", "jQuery": "JQUERY",
        "MathJax": "MATHJAX"}


def rows() -> list[dict[str, str]]:
    lines = [line for line in (ROOT / "THIRD_PARTY.md").read_text().splitlines() if line.startswith("| `")]
    keys = ("files", "project", "version", "licence", "licence_file", "note")
    return [dict(zip(keys, (cell.strip() for cell in line.strip("|").split(" | ")), strict=True)) for line in lines]


def paths(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def vendored_files() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for folder in VENDORED for p in (ROOT / folder).rglob("*") if p.is_file()
            and "__pycache__" not in p.parts}


def test_every_vendored_file_is_listed_once() -> None:
    table = rows()
    assert len(table) >= 10
    files = vendored_files()
    covered: dict[str, list[str]] = {}
    for row in table:
        matched = {f for pattern in paths(row["files"]) for f in files if Path(f).match(pattern)
                   and f.count("/") == pattern.count("/")}
        assert matched, f"{row['project']}: no file matches {row['files']}"
        for f in matched:
            covered.setdefault(f, []).append(row["project"])
    licences = {paths(row["licence_file"])[0] for row in table}
    twice = {f: p for f, p in covered.items() if len(p) > 1}
    assert not twice, f"files in two rows: {twice}"
    unlisted = files - set(covered) - licences - {f for f in files if Path(f).name in NOTES}
    assert not unlisted, f"vendored files THIRD_PARTY.md does not list: {sorted(unlisted)}"


def test_each_row_has_its_licence_and_its_version() -> None:
    pins = dict(re.findall(r"^([A-Z0-9_]+)=(\S+)$", (ROOT / "tools" / "vendor_assets.sh").read_text(), re.MULTILINE))
    for row in rows():
        licence_file = ROOT / paths(row["licence_file"])[0]
        assert row["licence"] in LICENCE_TEXT, f"{row['project']}: unknown licence {row['licence']}"
        assert LICENCE_TEXT[row["licence"]] in licence_file.read_text(), f"{licence_file} is not {row['licence']}"
        note = (ROOT / paths(row["note"])[0]).read_text()
        version = re.escape(row["version"])
        assert re.search(rf"(^|[\s@v]){version}(\s|$)", note, re.MULTILINE), f"{row['project']}: not in {row['note']}"
        if not row["note"].endswith("embed.js`"):  # the notes of vendor_assets.sh state the licence too
            assert re.search(rf"{version}\s.*{re.escape(row['licence'])}", note), f"{row['project']} in {row['note']}"
        project = next((name for name in PINS if row["project"].startswith(name)), None)
        if project is not None:
            pin = pins[PINS[project]]
            assert pin == row["version"], f"{row['project']}: tools/vendor_assets.sh pins {pin}"


def test_the_licence_files_are_the_books() -> None:
    """The code under MIT (pyproject.toml's licence), the text and figures under CC BY 4.0, and both
    named where a reader looks: the README and the intro."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    mit = (ROOT / "LICENSE").read_text()
    assert mit.startswith("MIT License") and LICENCE_TEXT["MIT"] in mit
    text = (ROOT / "LICENSE-TEXT.md").read_text()
    assert "CC BY 4.0" in text and "https://creativecommons.org/licenses/by/4.0/" in text and "THIRD_PARTY.md" in text
    for page in ("README.md", "book/intro.md"):
        page_text = (ROOT / page).read_text()
        assert "CC BY 4.0" in page_text and "MIT" in page_text, page
