"""transformer_lib.measure: best_time and OperationCounter."""

from __future__ import annotations

import pytest
import torch

from transformer_lib.measure import OperationCounter, best_time


class FakeClock:
    """Stands in for time.perf_counter: each call of ``work`` takes the next scripted duration."""

    def __init__(self, durations: list[float]) -> None:
        self.now, self.durations = 100.0, list(durations)

    def perf_counter(self) -> float:
        return self.now

    def work(self) -> None:
        self.now += self.durations.pop(0)


def test_best_time_is_the_shortest_of_the_calls(monkeypatch):
    clock = FakeClock([0.5, 0.25, 0.875, 0.375])
    monkeypatch.setattr("transformer_lib.measure.time.perf_counter", clock.perf_counter)
    assert best_time(clock.work, repeats=4) == 0.25  # the second call's, not the first, last or mean
    assert clock.durations == []  # called exactly ``repeats`` times


def test_best_time_checks_its_arguments():
    with pytest.raises(TypeError, match="fn"):
        best_time(3)
    with pytest.raises(ValueError, match="repeats"):
        best_time(lambda: None, repeats=0)


def test_operation_counter_counts_what_runs_inside_the_block():
    linear = torch.nn.Linear(3, 2)
    x = torch.randn(4, 3)
    with torch.no_grad(), OperationCounter() as counter:
        for _ in range(3):
            linear(x)
    assert counter.counts["addmm"] == 3  # one matrix product with a bias per call
    linear(x)  # outside the block: not counted
    assert counter.counts["addmm"] == 3


def test_operation_counter_finds_the_largest_tensor_made():
    a, b = torch.zeros(3, 1, 5), torch.zeros(1, 7, 5)
    with torch.no_grad(), OperationCounter() as counter:
        (a + b).sum(-1)  # the broadcast sum is (3, 7, 5): 105 numbers; its reduction only 21
    assert counter.largest == 105
    with OperationCounter() as empty:
        pass
    assert empty.largest == 0
