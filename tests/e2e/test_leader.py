"""Two `wavegen watch` replicas on one Lease: the leader stops, the standby takes over, a change made meanwhile rolls once."""

from __future__ import annotations

import signal
import time

import pytest

from tests.e2e.test_watch import SECRET_VALUE, WatchFactory, eventually_rollouts, rollouts, set_secret, setup_external
from tests.support.controlplane import ControlPlane

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

LEASE_DURATION = 6.0
RETRY_PERIOD = 1.0


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
def test_standby_takes_over_and_change_during_handover_rolls_once(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory, stop: signal.Signals
) -> None:
    cp, ns = controller_manager, namespace
    ha = [f"--lease-namespace={ns}", "--leader-elect", f"--lease-duration={LEASE_DURATION:g}", "--renew-deadline=4",
          f"--retry-period={RETRY_PERIOD:g}", "--lease-name=wavegen-ha"]  # fmt: skip
    leader = setup_external(cp, ns, watch, *ha)
    standby = watch([f"--namespaces={ns}", "--window=1", *ha])
    time.sleep(2 * RETRY_PERIOD)
    assert leader.metrics()["wavegen_is_leader"] == 1 and standby.metrics()["wavegen_is_leader"] == 0
    holder = cp.kubectl_json("get", "lease", "wavegen-ha", "-n", ns)["spec"]["holderIdentity"]

    assert leader.proc is not None
    leader.proc.send_signal(stop)
    stopped = time.monotonic()
    set_secret(cp, ns, SECRET_VALUE + "-2")  # during the handover: nobody may be leading right now
    leader.proc.wait(20)
    leader.proc = None

    while standby.metrics().get("wavegen_is_leader") != 1:
        assert time.monotonic() - stopped < 30, standby.tail()
        time.sleep(0.1)
    took = time.monotonic() - stopped
    # A killed leader's Lease must first expire on the standby's own clock (it last saw a renewal at most one retry
    # period before the kill, and polls every retry period with up to 20 % jitter). A terminated leader releases it
    # once its workers have stopped (at most 2 s), and the standby takes it at its next poll. One more second
    # covers the acquiring request itself on a loaded machine.
    bound = (LEASE_DURATION if stop == signal.SIGKILL else 2.0) + 2.4 * RETRY_PERIOD + 1.0
    print(f"{stop.name}: the standby led {took:.1f}s after the stop (bound {bound:.1f}s)")
    assert took <= bound, f"took over after {took:.1f}s (bound {bound:.1f}s)"
    lease = cp.kubectl_json("get", "lease", "wavegen-ha", "-n", ns)["spec"]
    assert lease["holderIdentity"] not in ("", holder) and lease["leaseTransitions"] >= 1

    eventually_rollouts(cp, ns, 2)
    standby.wait_idle(settle=3)
    assert rollouts(cp, ns) == 2, "the change made during the handover must roll exactly once"
    rolled_by_standby = standby.metrics().get('wavegen_patches_total{action="roll"}', 0)
    # A killed leader cannot have rolled it; a terminated one may have, before it released the Lease.
    assert rolled_by_standby == 1 if stop == signal.SIGKILL else rolled_by_standby <= 1
