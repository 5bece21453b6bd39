"""A release as a publisher makes one: the version in one place (pyproject.toml) and held to it by
CHANGELOG.md and CITATION.cff; CITATION.cff valid by cffconvert; the sdist and wheel built by
``python -m build`` (no setuptools deprecation warning) and passed by ``twine check --strict``, with
the licence stated as PEP 639 has it; the footer of the built book names both licences."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

from tests import reader_env

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
CITATION = yaml.safe_load((ROOT / "CITATION.cff").read_text())
# cffconvert pins jsonschema 3.2, which would downgrade the project's Jupyter: it gets its own environment.
CFFCONVERT = "cffconvert==2.0.0"


def changelog_releases() -> list[tuple[str, str]]:
    """(version, date) of each release in CHANGELOG.md, newest first."""
    return re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", (ROOT / "CHANGELOG.md").read_text(),
                      re.MULTILINE)


def test_the_version_is_stated_once_and_the_changelog_and_citation_follow_it() -> None:
    version = PROJECT["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    releases = changelog_releases()
    assert releases and releases[0][0] == version, f"CHANGELOG.md's latest release is not {version}: {releases[:1]}"
    assert "## [Unreleased]" in (ROOT / "CHANGELOG.md").read_text()
    assert str(CITATION["version"]) == version and str(CITATION["date-released"]) == releases[0][1]
    # nothing in the package states it again: __version__ reads the installed metadata
    init = (ROOT / "transformer_lib" / "__init__.py").read_text()
    assert 'version("transformer_lib")' in init and version not in init


def test_the_citation_names_the_book_its_repository_and_licences() -> None:
    assert CITATION["title"] == CONFIG["title"]
    assert CITATION["repository-code"] == CONFIG["repository"]["url"]
    assert CITATION["license"] == ["MIT", "CC-BY-4.0"] and PROJECT["license"] == "MIT"
    assert [a["name"] for a in CITATION["authors"]] == [CONFIG["author"]] == [a["name"] for a in PROJECT["authors"]]
    intro = (ROOT / "book" / "intro.md").read_text()
    assert "CITATION.cff" in intro, "the intro says how to cite the book"
    year = str(CITATION["date-released"])[:4]
    assert f"*{CITATION['authors'][0]['name']} ({year}). {CITATION['title']}, version {CITATION['version']}.*" in intro


def test_the_project_urls_are_the_books_and_what_a_release_leaves_is_ignored() -> None:
    repository = CONFIG["repository"]["url"]
    slug = repository.removeprefix("https://github.com/")
    assert PROJECT["urls"] == {
        "Homepage": f"https://{slug.split('/')[0]}.github.io/{slug.split('/')[1]}/",
        "Repository": repository,
        "Changelog": f"{repository}/blob/{CONFIG['repository']['branch']}/CHANGELOG.md",
        "Issues": f"{repository}/issues",
    }
    # the training command's run folders (the README's runs/...) and python -m build's dist/
    ignored = subprocess.run(["git", "check-ignore", "runs/one/checkpoint.pt", "dist/x.whl"], cwd=ROOT,
                             capture_output=True, text=True)
    assert ignored.stdout.split() == ["runs/one/checkpoint.pt", "dist/x.whl"], ignored


@pytest.fixture(scope="module")
def cffconvert() -> Path:
    venv = reader_env.cached_venv("book-cffconvert", [CFFCONVERT], CFFCONVERT.encode())
    return venv / "bin" / "cffconvert"


def test_citation_cff_is_valid_by_cffconvert(cffconvert: Path, tmp_path: Path) -> None:
    result = subprocess.run([cffconvert, "--validate", "-i", ROOT / "CITATION.cff"], capture_output=True, text=True)
    assert result.returncode == 0 and "are valid" in result.stdout, result.stdout + result.stderr
    # the validator can fail: the same file without its authors is refused
    broken = tmp_path / "CITATION.cff"
    broken.write_text(re.sub(r"^authors:\n(  .*\n)+", "", (ROOT / "CITATION.cff").read_text(), flags=re.MULTILINE))
    assert "authors" not in yaml.safe_load(broken.read_text())
    refused = subprocess.run([cffconvert, "--validate", "-i", broken], capture_output=True, text=True)
    assert refused.returncode != 0, refused.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``python -m build`` of the package (sdist, then the wheel from it), as a release makes them:
    the dist folder and what the build printed."""
    folder = tmp_path_factory.mktemp("release")
    source = reader_env.package_source(folder / "source")
    result = reader_env.run(sys.executable, "-m", "build", "--outdir", folder / "dist", source)
    return folder / "dist", result.stdout + result.stderr


def test_build_makes_an_sdist_and_a_wheel_without_deprecation_warnings(built: tuple[Path, str]) -> None:
    dist, log = built
    version = PROJECT["version"]
    assert sorted(p.name for p in dist.iterdir()) == [f"transformer_lib-{version}-py3-none-any.whl",
                                                       f"transformer_lib-{version}.tar.gz"]
    assert "Deprecat" not in log and "deprecat" not in log, log[-3000:]
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(f"transformer_lib-{version}.dist-info/METADATA").decode()
        names = archive.namelist()
    assert f"Version: {version}\n" in metadata
    for name, url in PROJECT["urls"].items():
        assert f"Project-URL: {name}, {url}\n" in metadata
    assert "License-Expression: MIT\n" in metadata and "License-File: LICENSE\n" in metadata
    assert f"transformer_lib-{version}.dist-info/licenses/LICENSE" in names
    assert any(n.startswith("transformer_lib/pretrained/weights/") for n in names)


def test_twine_check_passes(built: tuple[Path, str]) -> None:
    dist, _ = built
    result = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir())],
                            capture_output=True, text=True, env={**reader_env.clean_env(), "NO_COLOR": "1"})
    assert result.returncode == 0 and result.stdout.count("PASSED") == 2, result.stdout + result.stderr
