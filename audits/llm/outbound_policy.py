"""The outbound policy for model endpoints: which API-key variables they may send and which addresses they may call.

The API key is named by an environment variable. The policy is the operator's rule, checked when an endpoint is saved
and again when its HTTP client is built and connects.

Without it, a researcher could name `SECRET_KEY` (or `DATABASE_URL`) as an endpoint's key variable and a
listener of theirs as its URL, and the connection test would send the value as a bearer token; or point
the URL at the database, the cache or the cloud's metadata service; or name `OPENAI_API_KEY` with a host of
theirs. So a key variable must start with an allowed prefix or be a known provider's name, its value goes only
to the hosts the variable is bound to (the provider's own by default), and a host must resolve to public
addresses only, unless the operator allows more (settings of the same names as the environment variables below).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import re
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

KEY_PREFIX_SETTING = "EDUFAIR_LLM_KEY_ENV_PREFIX"
KEY_NAMES_SETTING = "EDUFAIR_LLM_KEY_ENV_NAMES"
KEY_HOSTS_SETTING = "EDUFAIR_LLM_KEY_HOSTS"
ALLOWED_HOSTS_SETTING = "EDUFAIR_ENDPOINT_ALLOWED_HOSTS"
ALLOW_PRIVATE_SETTING = "EDUFAIR_ENDPOINT_ALLOW_PRIVATE"
SETTINGS = (KEY_PREFIX_SETTING, KEY_NAMES_SETTING, KEY_HOSTS_SETTING, ALLOWED_HOSTS_SETTING, ALLOW_PRIVATE_SETTING)

DEFAULT_KEY_PREFIX = "EDUFAIR_KEY_"
ANY_HOST = "*"  # a binding to any host: the operator's explicit choice
DEFAULT_BASE_HOST = "api.openai.com"  # where the SDK sends an endpoint with no base URL
# The variables the providers' own tools read, so a key already set for them is usable as it is, each bound to the
# hosts its provider documents ("." before a name: the domain and its subdomains). A self-hosted server's key
# (VLLM_API_KEY) has no default host: the operator binds it to theirs.
PROVIDER_KEY_HOSTS: dict[str, tuple[str, ...]] = {
    "OPENAI_API_KEY": ("api.openai.com",),
    "OPENROUTER_API_KEY": ("openrouter.ai",),
    "AZURE_OPENAI_API_KEY": (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com"),
    "ANTHROPIC_API_KEY": ("api.anthropic.com",),
    "GEMINI_API_KEY": ("generativelanguage.googleapis.com",),
    "MISTRAL_API_KEY": ("api.mistral.ai",),
    "GROQ_API_KEY": ("api.groq.com",),
    "TOGETHER_API_KEY": ("api.together.xyz", "api.together.ai"),
    "FIREWORKS_API_KEY": ("api.fireworks.ai",),
    "DEEPINFRA_API_KEY": ("api.deepinfra.com",),
    "DEEPSEEK_API_KEY": ("api.deepseek.com",),
    "XAI_API_KEY": ("api.x.ai",),
    "CEREBRAS_API_KEY": ("api.cerebras.ai",),
    "VLLM_API_KEY": (),
}
PROVIDER_KEY_NAMES = tuple(PROVIDER_KEY_HOSTS)

# Cloud instance-metadata services (AWS, Azure, GCP; AWS IPv6, ECS and EKS; Alibaba; Oracle): refused even
# when private addresses are allowed, unless named one by one in the allowed hosts.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",
        "169.254.170.2",
        "169.254.170.23",
        "fd00:ec2::254",
        "fd00:ec2::23",
        "100.100.100.200",
        "192.0.0.192",
    )
)
SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: private in practice
NAT64 = ipaddress.ip_network("64:ff9b::/96")
# What EDUFAIR_ENDPOINT_ALLOW_PRIVATE lets through; every other non-public kind needs an explicit entry.
PRIVATE_KINDS = frozenset({"loopback", "private"})

LABEL = r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?"
HOST_NAME = re.compile(rf"^\.?(?=.{{1,253}}$){LABEL}(\.{LABEL})*\.?$")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]


def host_in(host: str, entries) -> bool:
    """Whether a host is one of the entries (lower-case names or addresses; ".example.org": with its subdomains)."""
    host = host.lower().rstrip(".")
    return host in entries or any(
        entry.startswith(".") and (host.endswith(entry) or host == entry[1:]) for entry in entries
    )


class OutboundRefused(Exception):
    """An endpoint's host resolves to an address the operator does not allow (nothing was sent)."""


@dataclass(frozen=True)
class OutboundPolicy:
    key_prefixes: tuple[str, ...] = (DEFAULT_KEY_PREFIX,)
    key_names: frozenset[str] = frozenset(PROVIDER_KEY_NAMES)
    # Key variable -> the hosts its value may be sent to (`host_in` entries, or ANY_HOST).
    key_hosts: Mapping[str, frozenset[str]] = dataclasses.field(
        default_factory=lambda: {name: frozenset(hosts) for name, hosts in PROVIDER_KEY_HOSTS.items()}
    )
    allowed_hosts: frozenset[str] = frozenset()  # lower-case names; ".example.org" also allows its subdomains
    allowed_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    allow_private: bool = False

    # --- key variables ------------------------------------------------------------------------

    def key_env_allowed(self, name: str) -> bool:
        return name in self.key_names or any(name.startswith(prefix) for prefix in self.key_prefixes)

    def key_env_rule(self) -> str:
        """The allowed names, in words (never which variables exist)."""
        parts = []
        if self.key_prefixes:
            parts.append("a name starting with " + " or ".join(self.key_prefixes))
        if self.key_names:
            parts.append("one of " + ", ".join(sorted(self.key_names)))
        allowed = "; or ".join(parts) if parts else "none (the operator has allowed no key variable)"
        return (
            f"Allowed key variables: {allowed}. The operator extends the list with {KEY_NAMES_SETTING} "
            f"or {KEY_PREFIX_SETTING}."
        )

    def key_env_refusal(self, name: str) -> str | None:
        """Why this key variable may not be used, or None. Decided on the name alone."""
        if not name or self.key_env_allowed(name):
            return None
        return f"{name} is not a variable an endpoint may send as its API key. {self.key_env_rule()}"

    def key_host_refusal(self, name: str, base_url: str) -> str | None:
        """Why this key variable may not be sent to this base URL's host, or None: a key goes only to the hosts the
        operator bound it to (the providers' own by default), so naming a known variable does not send its value
        anywhere else."""
        if not name:
            return None
        bound = self.key_hosts.get(name, frozenset())
        host = url_host(base_url) or DEFAULT_BASE_HOST
        if ANY_HOST in bound or host_in(host, bound):
            return None
        rule = (
            f"The operator binds a key variable to the hosts it may be sent to with {KEY_HOSTS_SETTING} "
            f"(NAME=host|host, comma-separated; {ANY_HOST} for any host)."
        )
        if not bound:
            return f"{name} is bound to no host, so no endpoint may send it. {rule}"
        return f"{name} may be sent only to {', '.join(sorted(bound))}, not to {host}. {rule}"

    # --- addresses ----------------------------------------------------------------------------

    def host_allowed(self, host: str) -> bool:
        return host_in(host, self.allowed_hosts)

    def address_refusal(self, host: str, address: str) -> str | None:
        """Why `host`, resolved to `address`, may not be called, or None."""
        ip = parse_ip(address)
        if ip is None:
            return f"{host} resolves to an address that is not an IP address"
        if any(ip in network for network in self.allowed_networks):
            return None
        kind = address_kind(ip)
        if kind is None or self.host_allowed(host) or (self.allow_private and kind in PRIVATE_KINDS):
            return None
        return (
            f"{host} resolves to a {kind} address, which endpoints may not call. The operator allows it with "
            f"{ALLOWED_HOSTS_SETTING} (host names, IP addresses or networks)"
            + (f" or {ALLOW_PRIVATE_SETTING}=1" if kind in PRIVATE_KINDS else "")
            + "."
        )

    def addresses_refusal(self, host: str, addresses: Iterable[str]) -> str | None:
        """The first refusal among a host's addresses: one address outside the rule refuses the host."""
        for address in addresses:
            refusal = self.address_refusal(host, address)
            if refusal:
                return refusal
        return None

    def base_url_refusal(self, base_url: str, resolve: Resolver | None = None) -> str | None:
        """Why an endpoint with this base URL may not be saved, or None. A host name that does not resolve
        here passes: nothing can be sent to it, and every connection is checked again when it is made."""
        if not base_url:
            return None  # the SDK's default, api.openai.com
        try:
            parts = urlsplit(base_url)
            host, port = parts.hostname, parts.port
        except ValueError:
            return "the base URL is not a valid URL"
        if parts.scheme not in ("http", "https") or not host:
            return "the base URL must be an http:// or https:// URL with a host"
        port = port or (443 if parts.scheme == "https" else 80)
        if parse_ip(host) is not None:
            return self.address_refusal(host, host)
        try:
            addresses = (resolve or resolve_addresses)(host, port)
        except (OSError, UnicodeError):
            return None
        return self.addresses_refusal(host, addresses)


def address_kind(ip: IPAddress) -> str | None:
    """None for a public unicast address; otherwise its kind, in words. An IPv6 address that embeds an IPv4
    one (mapped, 6to4, Teredo, NAT64) is of the embedded address's kind when that one is not public."""
    if isinstance(ip, ipaddress.IPv6Address):
        for embedded in _embedded_ipv4(ip):
            kind = address_kind(embedded)
            if kind is not None:
                return kind
    if ip in METADATA_ADDRESSES:
        return "cloud metadata"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip.version == 4 and ip in SHARED_ADDRESS_SPACE:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if ip.is_private:
        return "private"
    if not ip.is_global:
        return "reserved"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    embedded = [ip.ipv4_mapped, ip.sixtofour, ip.teredo[1] if ip.teredo else None]
    if ip in NAT64:
        embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return [address for address in embedded if address is not None]


def url_host(base_url: str) -> str:
    """The lower-case host of a base URL ('' when it has none or does not parse)."""
    try:
        return (urlsplit(base_url).hostname or "").lower().rstrip(".")
    except ValueError:
        return ""


def parse_ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


def resolve_addresses(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for a host (each once, in its order)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


# --- the operator's settings ----------------------------------------------------------------------


def _items(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    return tuple(item.strip() for item in value if isinstance(item, str) and item.strip())


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    return str(value or "").strip().lower() in {"1", "true", "yes", "on"}


def policy_from(values: Mapping[str, object]) -> OutboundPolicy:
    """The policy the settings describe (each a comma-separated string or a list; missing: default). An
    allowed-hosts entry that is neither an address, a network nor a host name, or a key binding that is not
    NAME=host|host, is a ValueError."""
    prefix = values.get(KEY_PREFIX_SETTING)
    hosts, networks = set(), []
    for entry in _items(values.get(ALLOWED_HOSTS_SETTING)):
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            continue
        except ValueError:
            pass
        hosts.add(_host_entry(entry, ALLOWED_HOSTS_SETTING))
    return OutboundPolicy(
        key_prefixes=(DEFAULT_KEY_PREFIX,) if prefix is None else _items(prefix),
        key_names=frozenset(PROVIDER_KEY_NAMES) | frozenset(_items(values.get(KEY_NAMES_SETTING))),
        key_hosts=_key_hosts(values.get(KEY_HOSTS_SETTING)),
        allowed_hosts=frozenset(hosts),
        allowed_networks=tuple(networks),
        allow_private=_flag(values.get(ALLOW_PRIVATE_SETTING)),
    )


def _host_entry(entry: str, setting: str) -> str:
    host = entry.strip().strip("[]").lower().rstrip(".")
    if parse_ip(host) is None and not HOST_NAME.match(host):
        raise ValueError(f"{setting}: {entry!r} is not a host name or an IP address")
    return host


def _key_hosts(value: object) -> dict[str, frozenset[str]]:
    """The providers' bindings, each variable the setting names bound to its hosts instead."""
    bound = {name: frozenset(hosts) for name, hosts in PROVIDER_KEY_HOSTS.items()}
    for entry in _items(value):
        name, sep, hosts = entry.partition("=")
        name, targets = name.strip(), [h.strip() for h in hosts.split("|") if h.strip()]
        if not sep or not name or not targets:
            raise ValueError(f"{KEY_HOSTS_SETTING}: {entry!r} is not NAME=host (or NAME=host|host, or NAME=*)")
        bound[name] = frozenset(h if h == ANY_HOST else _host_entry(h, KEY_HOSTS_SETTING) for h in targets)
    return bound


@lru_cache(maxsize=16)
def _cached_policy(frozen: tuple) -> OutboundPolicy:
    return policy_from(dict(frozen))


def current_policy() -> OutboundPolicy:
    """The policy in force: Django's settings when they are configured (a web process, a worker, a test
    that overrides them), the environment otherwise (a plain script)."""
    source: Mapping[str, object] = os.environ
    try:
        from django.conf import settings

        if settings.configured:
            source = {name: getattr(settings, name, os.environ.get(name)) for name in SETTINGS}
    except ImportError:
        pass
    frozen = tuple((name, _hashable(source.get(name))) for name in SETTINGS)
    return _cached_policy(frozen)


def _hashable(value: object) -> object:
    return tuple(value) if isinstance(value, list | tuple | set | frozenset) else value
