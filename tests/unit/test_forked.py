"""forked.in_parts: parts run in child processes, results come back in order, and any child failure is made good here."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from wavegen.errors import EXIT_USAGE, WavegenError
from wavegen.stream import forked

SENTINEL: Any = MappingProxyType({})


@pytest.fixture
def fallbacks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The parts whose child gave no result (run here instead)."""
    seen: list[int] = []
    monkeypatch.setattr(forked, "_fallback", seen.append)
    return seen


@pytest.fixture
def forked_pids(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The children in_parts forks (other tests' processes may be children of this one too)."""
    pids: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return pids


def _all_reaped(pids: list[int]) -> bool:
    """Whether every one of these children has been waited for (none left running or a zombie)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return bool(pids)


def test_each_part_after_the_first_runs_in_a_child_of_its_own(fallbacks: list[int], forked_pids: list[int]) -> None:
    parts: list[Callable[[], tuple[int, int]]] = [lambda n=n: (n, os.getpid()) for n in range(4)]
    results = forked.in_parts(parts)
    assert [n for n, _ in results] == [0, 1, 2, 3]
    pids = [pid for _, pid in results]
    assert pids[0] == os.getpid()
    assert len(set(pids)) == 4
    assert fallbacks == []
    assert _all_reaped(forked_pids)


def test_large_results_come_back_whole(fallbacks: list[int]) -> None:
    # Far more than a pipe holds: the child writes while this process reads.
    big = [f"line {i}\n" * 3 for i in range(100_000)]
    results = forked.in_parts([lambda: "here", lambda: big])
    assert results == ["here", big]
    assert fallbacks == []


def test_shared_objects_come_back_as_themselves_and_mapping_views_as_views(fallbacks: list[int]) -> None:
    view = MappingProxyType({"a": [1, 2], "b": MappingProxyType({"c": None})})
    parts: list[Callable[[], Any]] = [lambda: None, lambda: (SENTINEL, [SENTINEL], view)]
    result = forked.in_parts(parts, shared=(SENTINEL,))[1]
    assert result[0] is SENTINEL
    assert result[1][0] is SENTINEL
    assert isinstance(result[2], MappingProxyType)
    assert isinstance(result[2]["b"], MappingProxyType)
    assert result[2] == view
    assert fallbacks == []


def test_an_exception_in_a_child_runs_its_part_here(fallbacks: list[int], forked_pids: list[int]) -> None:
    parent = os.getpid()

    def flaky() -> str:
        if os.getpid() != parent:
            raise RuntimeError("only in the child")
        return "ran here"

    assert forked.in_parts([lambda: 1, flaky, lambda: 3]) == [1, "ran here", 3]
    assert fallbacks == [1]
    assert _all_reaped(forked_pids)


def test_a_result_that_does_not_pickle_is_made_here(fallbacks: list[int]) -> None:
    results = forked.in_parts([lambda: 1, lambda: lambda: "a function"])
    assert results[1]() == "a function"
    assert fallbacks == [1]


def test_a_child_killed_by_a_signal_has_its_part_run_here(fallbacks: list[int]) -> None:
    parent = os.getpid()

    def killed() -> str:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return "ran here"

    assert forked.in_parts([lambda: 1, killed]) == [1, "ran here"]
    assert fallbacks == [1]


def test_an_error_of_a_part_here_takes_its_course_and_leaves_no_child(fallbacks: list[int], forked_pids: list[int]) -> None:
    def fails() -> int:
        raise WavegenError("bad input")

    with pytest.raises(WavegenError, match="bad input"):
        forked.in_parts([fails, lambda: 2, lambda: 3])
    assert _all_reaped(forked_pids)


def test_a_failing_part_fails_the_same_whichever_process_it_was_given_to(fallbacks: list[int], forked_pids: list[int]) -> None:
    def fails() -> int:
        raise WavegenError("bad input")

    with pytest.raises(WavegenError, match="bad input"):
        forked.in_parts([lambda: 1, fails])
    assert fallbacks == [1]
    assert _all_reaped(forked_pids)


def test_parts_whose_child_cannot_be_started_run_here(fallbacks: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    real_fork = os.fork
    forks: list[int] = []

    def fork_once() -> int:
        if forks:
            raise BlockingIOError(11, "Resource temporarily unavailable")  # fork's EAGAIN
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", fork_once)
    parts: list[Callable[[], tuple[int, int]]] = [lambda n=n: (n, os.getpid()) for n in range(4)]
    results = forked.in_parts(parts)
    assert [n for n, _ in results] == [0, 1, 2, 3]
    assert results[1][1] != os.getpid()  # the one child that started
    assert [pid for _, pid in results[2:]] == [os.getpid(), os.getpid()]
    assert fallbacks == [2, 3]

    def no_pipes() -> tuple[int, int]:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(os, "pipe", no_pipes)
    fallbacks.clear()
    assert [n for n, _ in forked.in_parts(parts)] == [0, 1, 2, 3]
    assert fallbacks == [1, 2, 3]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", 1), ("3", 3), ("12", 12), (" 2 ", 2)],
)
def test_jobs_from_the_environment(value: str, expected: int) -> None:
    assert forked.jobs_wanted({forked.JOBS_ENV: value}) == expected


def test_jobs_by_default_are_the_usable_cpus_up_to_a_limit() -> None:
    cpus = len(os.sched_getaffinity(0))
    expected = min(cpus, forked.MOST_JOBS)
    assert forked.jobs_wanted({}) == expected
    assert forked.jobs_wanted({forked.JOBS_ENV: "auto"}) == expected


@pytest.mark.parametrize(
    ("files", "limit"),
    [
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu.max": "100000 100000\n"}, 1),
        ({"cpu.max": "150000 100000\n"}, 1),
        ({"cpu.max": "50000 100000\n"}, 0),
        ({"cpu.max": "400000 100000\n"}, 4),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "200000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 2),
        ({"cpu/cpu.cfs_quota_us": "200000\n"}, None),  # no period: not a quota it can read
        ({"cpu.max": "garbage"}, None),
        ({}, None),
    ],
)
def test_a_containers_cpu_limit_bounds_the_processes(tmp_path: Path, files: dict[str, str], limit: int | None) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert forked._cgroup_cpu_limit(str(tmp_path)) == limit
    cpus = len(os.sched_getaffinity(0))
    assert forked._usable_cpus(str(tmp_path)) == (cpus if limit is None else max(1, min(cpus, limit)))


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "auto2"])
def test_bad_jobs_values_are_usage_errors(value: str) -> None:
    with pytest.raises(WavegenError) as caught:
        forked.jobs_wanted({forked.JOBS_ENV: value})
    assert caught.value.exit_code == EXIT_USAGE
    assert forked.JOBS_ENV in str(caught.value)


@pytest.fixture
def another_thread() -> Iterator[None]:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@pytest.mark.usefixtures("another_thread")
def test_no_forking_while_another_thread_runs() -> None:
    assert forked.jobs_wanted({forked.JOBS_ENV: "4"}) == 1
