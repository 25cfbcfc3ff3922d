"""TLS for tests and certification: a throw-away certificate authority and a TLS broker.

:class:`CertificateAuthority` makes keys and certificates in memory and writes them as PEM or
PKCS12; :class:`TlsKafka` is the embedded broker behind a TLS listener (a
:class:`TlsProxy` in front of it, since the broker's own TLS switches do nothing).
"""

from __future__ import annotations

from harness.providers._certs import CertificateAuthority, IssuedCertificate
from harness.providers._tls_kafka import TlsKafka
from harness.providers._tls_proxy import TlsProxy

__all__ = ["CertificateAuthority", "IssuedCertificate", "TlsKafka", "TlsProxy"]
