"""The tests' port picker: every server a test starts gets its own port (the Hub's proxy once got
the same port as its API), and none comes from the range the kernel hands to outgoing connections
and Jupyter kernels."""

from __future__ import annotations

import socket

from tests.conftest import _ephemeral_range, free_port


def test_ports_are_distinct_bindable_and_outside_the_ephemeral_range():
    lo, hi = _ephemeral_range()
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports)
    assert not [p for p in ports if lo <= p <= hi]
    for p in ports[:20]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))


def test_a_port_in_use_is_never_handed_out():
    held = []
    try:
        for _ in range(50):
            s = socket.socket()
            s.bind(("127.0.0.1", free_port()))
            held.append(s)
        taken = {s.getsockname()[1] for s in held}
        assert not taken & {free_port() for _ in range(200)}
    finally:
        for s in held:
            s.close()


def test_a_host_whose_ephemeral_range_covers_everything_still_gets_ports(monkeypatch):
    import tests.conftest as conftest

    monkeypatch.setattr(conftest, "_ephemeral_range", lambda: (1024, 65535))
    ports = [conftest.free_port() for _ in range(20)]
    assert len(set(ports)) == 20
