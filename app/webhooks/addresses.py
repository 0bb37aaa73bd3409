"""Which webhook URLs Lethe may call: http(s), no credentials, and only public addresses.

A URL is checked when it is registered and again at every delivery, against every address
its host resolves to (a name that resolves to one public and one private address is
refused), and the delivery then connects to an address that passed, so a name re-pointed
between the check and the connection (DNS rebinding) reaches nothing new. Private, loopback,
link-local, multicast, reserved and other non-global addresses are refused unless the process
setting `LETHE_WEBHOOKS_ALLOW_PRIVATE` is on.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from app.webhooks.errors import UnsafeWebhookUrl

SCHEMES = {"http": 80, "https": 443}
IP = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Target:
    """A URL that passed, and the addresses it may be reached at."""

    scheme: str
    host: str
    port: int
    path: str  # path and query, as registered
    addresses: tuple[str, ...]

    def at(self, address: str) -> str:
        """The URL with its host replaced by ``address`` (the connection goes there)."""
        literal = f"[{address}]" if ":" in address else address
        return f"{self.scheme}://{literal}:{self.port}{self.path}"

    @property
    def host_header(self) -> str:
        literal = f"[{self.host}]" if ":" in self.host else self.host
        return literal if self.port == SCHEMES[self.scheme] else f"{literal}:{self.port}"


def check(url: str, *, allow_private: bool) -> Target:
    """Resolve ``url``'s host and vet every address; `UnsafeWebhookUrl` (422) if any fails."""
    try:
        parts = urlsplit(url)
    except ValueError:  # an unbalanced "[" of an IPv6 literal, say
        raise UnsafeWebhookUrl("The URL is not valid.") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise UnsafeWebhookUrl("Webhook URLs must be http or https.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeWebhookUrl("Webhook URLs may not carry credentials; verify the signature.")
    try:
        port = parts.port or SCHEMES[scheme]
    except ValueError:
        raise UnsafeWebhookUrl("The URL's port is not valid.") from None
    host = parts.hostname
    if not host:
        raise UnsafeWebhookUrl("The URL names no host.")
    addresses = _resolve(host, port)
    if not allow_private:
        refused = [address for address in addresses if not is_public(address)]
        if refused:
            raise UnsafeWebhookUrl(
                f"{host} resolves to a non-public address ({refused[0]}); webhooks reach "
                "public addresses only.")
    path = parts.path or "/"
    return Target(scheme=scheme, host=host, port=port,
                  path=path + (f"?{parts.query}" if parts.query else ""), addresses=addresses)


def is_public(address: str) -> bool:
    """A globally routable unicast address (IPv4 inside IPv6 judged as IPv4)."""
    ip: IP = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is not None:
            ip = embedded
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_loopback
                                 or ip.is_link_local or ip.is_private or ip.is_unspecified)


def _resolve(host: str, port: int) -> tuple[str, ...]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise UnsafeWebhookUrl(f"{host} does not resolve.") from None
    addresses = tuple(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise UnsafeWebhookUrl(f"{host} does not resolve.")
    return addresses
