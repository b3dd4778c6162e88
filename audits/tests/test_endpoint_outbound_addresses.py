"""An endpoint's base URL must resolve to public addresses: loopback, private, link-local, multicast,
reserved and cloud-metadata addresses are refused when it is saved, unless the operator allows them
(EDUFAIR_ENDPOINT_ALLOWED_HOSTS, EDUFAIR_ENDPOINT_ALLOW_PRIVATE). Simulation endpoints call nothing and
are not subject to the rule. These tests override the test suite's allowance of loopback."""

import ipaddress

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from audits.llm.outbound_policy import OutboundPolicy, address_kind, policy_from
from audits.models import ModelEndpoint


@pytest.fixture
def default_policy(settings):
    """The operator's defaults: nothing allowed beyond public addresses."""
    settings.EDUFAIR_ENDPOINT_ALLOWED_HOSTS = []
    settings.EDUFAIR_ENDPOINT_ALLOW_PRIVATE = False
    return settings


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.5", "private"),
        ("172.16.3.4", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "private"),
        ("fd12:3456::1", "private"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("100.100.100.200", "cloud metadata"),
        ("192.0.0.192", "cloud metadata"),
        ("169.254.10.1", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("240.0.0.1", "reserved"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("::ffff:169.254.169.254", "cloud metadata"),
        ("2002:7f00:1::", "loopback"),  # 6to4 around 127.0.0.1
        ("64:ff9b::a00:5", "private"),  # NAT64 around 10.0.0.5
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_each_kind_of_address(address, kind):
    assert address_kind(ipaddress.ip_address(address)) == kind


def test_the_switch_and_the_list_allow_what_they_name():
    private = OutboundPolicy(allow_private=True)
    assert private.address_refusal("vllm", "127.0.0.1") is None
    assert private.address_refusal("vllm", "10.1.2.3") is None
    # The switch opens loopback and private ranges only: metadata and link-local need an explicit entry.
    for address in ["169.254.169.254", "fd00:ec2::254", "169.254.10.1", "0.0.0.0"]:
        assert private.address_refusal("x", address), address

    listed = policy_from({"EDUFAIR_ENDPOINT_ALLOWED_HOSTS": "10.0.0.0/8, gpu.lab.example, .cluster.local"})
    assert listed.address_refusal("anything", "10.9.9.9") is None
    assert listed.address_refusal("anything", "192.168.1.1")
    assert listed.address_refusal("gpu.lab.example", "192.168.1.1") is None
    assert listed.address_refusal("vllm.cluster.local", "172.20.0.3") is None
    assert listed.address_refusal("evil-cluster.local", "172.20.0.3")
    metadata = policy_from({"EDUFAIR_ENDPOINT_ALLOWED_HOSTS": "169.254.169.254"})
    assert metadata.address_refusal("x", "169.254.169.254") is None


def test_a_malformed_allowed_hosts_entry_names_the_variable():
    with pytest.raises(ValueError, match="EDUFAIR_ENDPOINT_ALLOWED_HOSTS.*10.0.0.0/99"):
        policy_from({"EDUFAIR_ENDPOINT_ALLOWED_HOSTS": "10.0.0.0/99"})


def test_a_malformed_allowed_hosts_setting_stops_the_start(settings):
    settings.EDUFAIR_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1", "not a host"]
    with pytest.raises(ImproperlyConfigured, match="EDUFAIR_ENDPOINT_ALLOWED_HOSTS.*not a host"):
        apps.get_app_config("audits").ready()


def test_a_host_name_is_judged_by_every_address_it_resolves_to():
    policy = OutboundPolicy()
    assert policy.base_url_refusal("http://public.example/v1", resolve=lambda h, p: ["93.184.215.14"]) is None
    refusal = policy.base_url_refusal("http://db.example/v1", resolve=lambda h, p: ["93.184.215.14", "10.0.0.7"])
    assert refusal and "private address" in refusal and "EDUFAIR_ENDPOINT_ALLOW_PRIVATE" in refusal
    assert "10.0.0.7" not in refusal  # says what kind, not what the internal address is

    def unresolvable(host, port):
        raise OSError("name does not resolve")

    # Nothing can be sent to a name that does not resolve; the connection is checked when it is made.
    assert policy.base_url_refusal("http://later.example/v1", resolve=unresolvable) is None
    assert policy.base_url_refusal("") is None  # the SDK's default, api.openai.com


def test_localhost_by_name_is_refused():
    assert "loopback" in OutboundPolicy().base_url_refusal("http://localhost:11434/v1")


INTERNAL_URLS = [
    "http://127.0.0.1:6379/",
    "http://[::1]:5432/v1",
    "http://10.0.0.5:8000/v1",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/latest/",
    "http://[::ffff:127.0.0.1]:8000/v1",
    "http://0.0.0.0:8000/v1",
]


@pytest.mark.django_db
@pytest.mark.parametrize("url", INTERNAL_URLS)
def test_the_api_refuses_an_internal_base_url_by_default(researcher_client, default_policy, url):
    body = {"name": "internal", "provider": "openai", "model": "m", "base_url": url}
    refused = researcher_client.post("/api/model-endpoints/", body, content_type="application/json")
    assert refused.status_code == 400 and "base_url" in refused.json(), refused.content
    assert "may not call" in " ".join(refused.json()["base_url"])
    assert not ModelEndpoint.objects.exists()


@pytest.mark.django_db
def test_the_form_refuses_an_internal_base_url_and_the_switch_allows_it(researcher_client, default_policy):
    form = {"name": "local-vllm", "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:8001/v1",
            "temperature": 0, "timeout": 60, "max_concurrency": 8, "revision": 1, "extra_params": "{}",
            "simulation_config": "{}", "price_input_per_million": 0, "price_output_per_million": 0,
            "batch_price_factor": 0.5}  # fmt: skip
    response = researcher_client.post(reverse("audits:endpoint-new"), form)
    assert response.status_code == 200 and "resolves to a loopback address" in response.content.decode()
    assert not ModelEndpoint.objects.exists()

    default_policy.EDUFAIR_ENDPOINT_ALLOW_PRIVATE = True
    assert researcher_client.post(reverse("audits:endpoint-new"), form).status_code == 302
    assert ModelEndpoint.objects.get().base_url == "http://127.0.0.1:8001/v1"


@pytest.mark.django_db
def test_the_allowed_hosts_setting_allows_one_address_and_not_its_neighbours(researcher_client, default_policy):
    default_policy.EDUFAIR_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]
    body = {"name": "ollama", "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:11434/v1"}
    made = researcher_client.post("/api/model-endpoints/", body, content_type="application/json")
    assert made.status_code == 201, made.content
    other = {**body, "name": "redis", "base_url": "http://10.0.0.5:6379/"}
    assert researcher_client.post("/api/model-endpoints/", other, content_type="application/json").status_code == 400
    patched = researcher_client.patch(
        f"/api/model-endpoints/{made.json()['id']}/",
        {"base_url": "http://[::1]:6379/"},
        content_type="application/json",
    )
    assert patched.status_code == 400 and "base_url" in patched.json()


@pytest.mark.django_db
def test_a_simulation_endpoint_is_not_subject_to_the_address_rule(researcher_client, default_policy):
    body = {"name": "sim", "provider": "simulation", "model": "m", "base_url": "http://127.0.0.1:1/"}
    made = researcher_client.post("/api/model-endpoints/", body, content_type="application/json")
    assert made.status_code == 201, made.content
