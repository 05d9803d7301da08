"""Where other devices reach this server: the OBS computer beside the laptop, the logger's
tablet at the table.  ``serve`` listens on 127.0.0.1 by default (this computer only); with
``--host 0.0.0.0`` (or an address of the machine) the server says which addresses the network
can use, and the studio builds the links it gives a tablet (the logger page, the feed) with
one of them rather than with the 127.0.0.1 it was opened on."""

from __future__ import annotations

import contextlib
import ipaddress
import socket

__all__ = ["ANY_HOSTS", "listens_on_network", "network_addresses"]

#: hosts that listen on every address of the machine
ANY_HOSTS = ("", "0.0.0.0", "::")


def listens_on_network(host: str) -> bool:
    """Whether a server bound to ``host`` can be reached from another device."""
    if host in ANY_HOSTS:
        return True
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True  # a host name: it names the machine to the network


def network_addresses(host: str) -> list[str]:
    """The IPv4 addresses another device may use to reach a server bound to ``host``: none for
    a loopback host; the host itself when it is one address; for every address, the one the
    machine's route out uses (found without sending a packet) and the addresses its name has."""
    if not listens_on_network(host):
        return []
    if host not in ANY_HOSTS:
        return [host]
    found: list[str] = []
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # (a UDP connect only picks the route)
        found.append(probe.getsockname()[0])
    with contextlib.suppress(OSError, UnicodeError):
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(str(info[4][0]))
    out: list[str] = []
    for a in found:
        with contextlib.suppress(ValueError):
            ip = ipaddress.ip_address(a)
            if not (ip.is_loopback or ip.is_unspecified or ip.is_link_local) and a not in out:
                out.append(a)
    return out
