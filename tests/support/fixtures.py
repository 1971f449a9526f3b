"""pytest fixtures for a real control plane, shared by the suites that need one.

Import them into a ``conftest.py``::

    from tests.support.fixtures import control_plane, controller_manager, namespace  # noqa: F401

and register the summary hook there (``pytest_terminal_summary = terminal_summary``).

- ``control_plane`` (session): etcd + kube-apiserver, a :class:`ControlPlane`.
- ``controller_manager`` (session): the same object with kube-controller-manager
  running too (Deployments get ReplicaSets, ServiceAccounts get created).
- ``namespace`` (function): the name of a fresh namespace, deleted afterwards.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator

import pytest

from tests.support.controlplane import STARTUP_TIMES, ControlPlane, start_control_plane
from tests.support.tools import tool


def _announce(config: pytest.Config, line: str) -> None:
    """Print a line now, even while pytest captures output."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None:
        return
    if capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)
    else:
        reporter.write_line(line)


@pytest.fixture(scope="session")
def control_plane(request: pytest.FixtureRequest) -> Iterator[ControlPlane]:
    """etcd + kube-apiserver on 127.0.0.1 (RBAC, token auth, ServiceAccount tokens)."""
    etcd, apiserver, kubectl = tool("etcd"), tool("kube-apiserver"), tool("kubectl")
    cp = start_control_plane(etcd, apiserver, kubectl)
    try:
        _announce(
            request.config,
            f"\nwavegen control plane: {cp.server} ready in {STARTUP_TIMES[-1][1]:.1f}s",
        )
        yield cp
    finally:
        cp.close()


@pytest.fixture(scope="session")
def controller_manager(request: pytest.FixtureRequest, control_plane: ControlPlane) -> Iterator[ControlPlane]:
    """The control plane with kube-controller-manager running (``--controllers=*``)."""
    if not control_plane.controller_manager_bin:
        control_plane.controller_manager_bin = tool("kube-controller-manager")
    if not control_plane.controller_manager_running:
        seconds = control_plane.start_controller_manager()
        _announce(
            request.config,
            f"\nwavegen control plane: kube-controller-manager ready in {seconds:.1f}s",
        )
    yield control_plane
    control_plane.stop_controller_manager()


@pytest.fixture
def namespace(request: pytest.FixtureRequest, control_plane: ControlPlane) -> Iterator[str]:
    """A fresh namespace (with its ``default`` ServiceAccount) for one test; deleted afterwards without waiting."""
    base = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"wg-{base}-{secrets.token_hex(3)}"
    control_plane.create_namespace(name)
    try:
        yield name
    finally:
        control_plane.kubectl(
            "delete",
            "namespace",
            name,
            "--wait=false",
            "--ignore-not-found",
            check=False,
        )


def terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """``pytest_terminal_summary`` body: start-up times of this run's control plane."""
    if STARTUP_TIMES:
        terminalreporter.section("wavegen control plane start-up")
        for component, seconds in STARTUP_TIMES:
            terminalreporter.write_line(f"{component}: {seconds:.1f}s")
