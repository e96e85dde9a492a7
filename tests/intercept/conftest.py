"""Fixtures for the black-box tests: a shared mitmproxy confdir (one CA for the module).

mitmproxy's default addons import ldap3, whose pyasn1 import raises a
DeprecationWarning; the suite turns warnings into errors, so that one import is
done here once with the warning silenced (it is not ours to fix).
"""

from __future__ import annotations

import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import mitmproxy.addons.proxyauth  # noqa: F401


from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="module")
def confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary mitmproxy confdir; its CA is created by the first proxy and reused."""
    return tmp_path_factory.mktemp("mitmproxy")


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keep the machine's proxy settings out of the test clients."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    yield
