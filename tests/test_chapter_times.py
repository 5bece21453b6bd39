"""The chapter-times table of the performance appendix (``measure.chapter_times_table``) and the file it
reads, ``book/data/chapter_times.json``, which ``benchmarks/chapter_times.py`` writes. The times
themselves are the benchmark's business: nothing here asserts one."""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path

import pytest

from transformer_lib.measure import chapter_times_table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import chapter_times  # noqa: E402

RESULTS = {
    "host": {"cpu": "Example CPU 9000", "cores": 2, "threads": 1, "torch": "2.13.0+cpu", "python": "3.11.2",
             "load_average_before": 0.25, "load_average_after": 1.75},
    "date": "2026-11-26",
    "commit": "abc1234",
    "chapters": [
        {"notebook": "01_a.ipynb", "seconds": 9.04, "cpu_seconds": 8.46, "first_cell_seconds": 3.14,
         "peak_rss_mb": 433.4, "budget_seconds": 10.0, "budget_peak_rss_mb": 600.0},
        {"notebook": "02_b.ipynb", "seconds": 12.0, "cpu_seconds": 5.0, "first_cell_seconds": 3.0,
         "peak_rss_mb": 300.0, "budget_seconds": 10.0, "budget_peak_rss_mb": 600.0},
        {"notebook": "07_c.ipynb", "seconds": 59.0, "cpu_seconds": 58.0, "first_cell_seconds": 4.0,
         "peak_rss_mb": 851.0, "budget_seconds": 60.0, "budget_peak_rss_mb": 600.0},
        {"notebook": "08_d.ipynb", "seconds": 61.0, "cpu_seconds": 59.5, "first_cell_seconds": 4.0,
         "peak_rss_mb": 700.0, "budget_seconds": 60.0, "budget_peak_rss_mb": 600.0},
    ],
}


def table_rows(markdown: str) -> list[list[str]]:
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]  # past header and rule


def test_the_table_names_the_host_and_the_setting():
    text = chapter_times_table(RESULTS).split("\n\n")[0]
    for shown in ("Example CPU 9000", "2 cores", "2026-11-26", "1 thread", "OMP_NUM_THREADS=1", "2.13.0+cpu",
                  "0.2 at the start", "1.8 at the end"):  # load averages to one decimal (0.25 rounds to even)
        assert shown in text


def test_each_chapter_is_a_row_against_its_budgets():
    rows = table_rows(chapter_times_table(RESULTS))
    assert rows == [
        ["01_a", "9.0", "3.1", "8.5", "10", "433", "600", "yes"],
        ["02_b", "12.0", "3.0", "5.0", "10", "300", "600", "no: over in time"],  # the verdict is on the wall clock
        ["07_c", "59.0", "4.0", "58.0", "60", "851", "600", "no: over in memory"],
        ["08_d", "61.0", "4.0", "59.5", "60", "700", "600", "no: over in time and memory"],
    ]


def test_a_missing_or_wrong_entry_is_named():
    broken = copy.deepcopy(RESULTS)
    del broken["chapters"][1]["peak_rss_mb"]
    with pytest.raises(ValueError, match=r"results\['chapters'\]\[1\]: expected a 'peak_rss_mb' entry"):
        chapter_times_table(broken)
    broken = copy.deepcopy(RESULTS)
    broken["host"]["cores"] = "two"
    with pytest.raises(TypeError, match=r"results\['host'\]\['cores'\]: expected an int, got str"):
        chapter_times_table(broken)
    broken = copy.deepcopy(RESULTS)
    broken["chapters"][0]["seconds"] = -1.0
    with pytest.raises(ValueError, match=r"results\['chapters'\]\[0\]\['seconds'\]"):
        chapter_times_table(broken)
    with pytest.raises(ValueError, match=r"results\['chapters'\]: expected at least one chapter"):
        chapter_times_table({**RESULTS, "chapters": []})


def test_the_books_file_has_every_chapter_and_renders():
    results = json.loads((ROOT / "book" / "data" / "chapter_times.json").read_text())
    chapters = sorted(path.name for path in (ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    assert [row["notebook"] for row in results["chapters"]] == chapters
    assert len(table_rows(chapter_times_table(results))) == len(chapters)


def test_the_benchmark_reads_a_processes_peak_memory_and_cpu_time():
    status = Path(f"/proc/{os.getpid()}/status").read_text()
    now_mb = int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) / 1024
    assert chapter_times.peak_rss_mb(os.getpid()) >= now_mb > 10  # the peak is at least what it holds now
    before = chapter_times.cpu_seconds(os.getpid())
    sum(i * i for i in range(3_000_000))  # some CPU work
    after = chapter_times.cpu_seconds(os.getpid())
    own = os.times()
    assert before < after <= own.user + own.system + 0.05  # it grows with the work, and is this process's own
