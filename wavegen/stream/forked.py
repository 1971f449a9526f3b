"""Runs the parts of one job in forked child processes and brings their results back in order."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from ..errors import EXIT_USAGE, WavegenError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    Result = TypeVar("Result")

JOBS_ENV = "WAVEGEN_JOBS"
# More processes than this gain little: each builds its own caches, and its results are copied back.
MOST_JOBS = 4


def jobs_wanted(environ: Mapping[str, str] = os.environ) -> int:
    """How many processes a one-shot run may use: WAVEGEN_JOBS (a whole number, or ``auto``, the
    default: the CPUs this process may run on, within its container's CPU limit, at most
    MOST_JOBS); 1 where forking is unsafe."""
    value = environ.get(JOBS_ENV, "").strip()
    if value in ("", "auto"):
        wanted = min(_usable_cpus(), MOST_JOBS)
    elif value.isdecimal() and int(value) > 0:
        wanted = int(value)
    else:
        raise WavegenError(f"{JOBS_ENV} must be a whole number above 0 or 'auto', not {value!r}", exit_code=EXIT_USAGE)
    return wanted if wanted > 1 and _may_fork() else 1


def _usable_cpus(cgroup_root: str = "/sys/fs/cgroup") -> int:
    """The CPUs this process may run on, and no more than its container's CPU limit allows: a
    pod limited to one CPU sees every CPU of its node, but two processes would share one."""
    affinity = getattr(os, "sched_getaffinity", None)
    cpus = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    limit = _cgroup_cpu_limit(cgroup_root)
    return max(1, min(cpus, limit)) if limit is not None else cpus


def _cgroup_cpu_limit(root: str) -> int | None:
    """Whole CPUs the CPU quota of the cgroup hierarchy mounted at ``root`` allows (v2 ``cpu.max``,
    else v1 ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``); None without a quota or a readable one."""
    for quota_file, period_file in (("cpu.max", None), ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us")):
        try:
            with open(os.path.join(root, quota_file)) as file:
                fields = file.read().split()
            if period_file is not None:
                with open(os.path.join(root, period_file)) as file:
                    fields = [fields[0], file.read().strip()]
        except (OSError, IndexError):
            continue
        try:
            quota, period = int(fields[0]), int(fields[1])
        except (ValueError, IndexError):
            return None  # "max" (v2) or anything unexpected: no quota
        return quota // period if quota > 0 and period > 0 else None  # v1 writes -1 for none
    return None


def _may_fork() -> bool:
    """Whether this process can fork safely: POSIX but macOS (whose system libraries may not
    survive a fork), and no other thread running (a fork copies only the calling thread)."""
    if not hasattr(os, "fork") or sys.platform == "darwin":
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def _mapping_view(mapping: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(mapping)


def _proxy_reduced(proxy: MappingProxyType[Any, Any]) -> tuple[Any, tuple[dict[Any, Any]]]:
    # By a function of this module: pickle cannot name the view's own type.
    return _mapping_view, (dict(proxy),)


def _fallback(index: int) -> None:
    """Called when part ``index``'s child gave no result or was never started, so the part runs here (tests watch it)."""


def in_parts(parts: Sequence[Callable[[], Result]], shared: Sequence[object] = ()) -> list[Result]:
    """Each part's result, in order: the first computed here, every other in a forked child.

    A part must not depend on state another part changes (each child has its own copy of
    this process), and its result must pickle; the objects in ``shared`` come back as
    themselves, not copies (sentinels compared by identity), and read-only mapping views
    as new views. A child that fails in any way (an exception, a result that does not
    pickle, a signal), or could not be started, has its part run here instead, where an
    exception takes its usual course: the results never depend on how the work was divided.
    """
    import pickle

    pids: list[int] = []  # the children not yet waited for, for parts[1:] in order
    read_ends: list[int] = []  # the read end of each child's pipe, until it is read
    try:
        for part in parts[1:]:
            try:
                read_end, write_end = os.pipe()
            except OSError:
                break  # out of file descriptors: the parts left run here
            try:
                pid = os.fork()
            except OSError:
                os.close(read_end)
                os.close(write_end)
                break  # out of processes or memory: likewise
            if pid == 0:  # pragma: no cover - the child leaves by os._exit (coverage never sees it)
                os.close(read_end)
                _run_child(part, write_end, shared, pickle)
            os.close(write_end)
            pids.append(pid)
            read_ends.append(read_end)
        forked = len(pids)
        results = [parts[0]()]
        for index in range(1, len(parts)):
            result = _NOTHING
            if index <= forked:
                with os.fdopen(read_ends.pop(0), "rb") as pipe:
                    data = pipe.read()
                _, status = os.waitpid(pids.pop(0), 0)
                result = _loaded(data, status, shared, pickle)
            if result is _NOTHING:
                _fallback(index)
                result = parts[index]()
            results.append(result)
        return results
    finally:
        for read_end in read_ends:  # after an exception here: leave nothing behind
            os.close(read_end)
        for pid in pids:
            _end_child(pid)


_NOTHING: Any = object()


def _run_child(part: Callable[[], Any], write_end: int, shared: Sequence[object], pickle: Any) -> None:
    """In the child: run the part, write its pickled result, leave without running the parent's exit handlers."""
    code = 1
    try:
        import io

        buffer = io.BytesIO()
        # Pickled whole before writing: the parent reads only once its own part is done.
        pickler = pickle.Pickler(buffer, pickle.HIGHEST_PROTOCOL)
        pickler.dispatch_table = {MappingProxyType: _proxy_reduced}
        ids = {id(item): index for index, item in enumerate(shared)}
        pickler.persistent_id = lambda obj: ids.get(id(obj))
        pickler.dump(part())
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(buffer.getbuffer())
        code = 0
    except BaseException:  # any failure: the parent runs the part itself
        pass
    finally:
        os._exit(code)


def _loaded(data: bytes, status: int, shared: Sequence[object], pickle: Any) -> Any:
    """A child's result, or _NOTHING when it did not finish well."""
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return _NOTHING
    import io

    unpickler = pickle.Unpickler(io.BytesIO(data))
    unpickler.persistent_load = shared.__getitem__
    try:
        return unpickler.load()
    except Exception:  # a short or damaged result: the part runs here
        return _NOTHING


def _end_child(pid: int) -> None:
    import signal

    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
