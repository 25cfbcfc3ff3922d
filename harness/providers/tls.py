"""TLS for tests and certification: a throw-away certificate authority and a TLS broker.

:class:`CertificateAuthority` makes keys and certificates in memory and writes them as PEM or
PKCS12; :class:`~harness.providers.kafka.TlsKafka` (also here) is the embedded broker behind a
TLS listener.
"""

from __future__ import annotations

from harness.providers._certs import CertificateAuthority, IssuedCertificate

__all__ = ["CertificateAuthority", "IssuedCertificate"]
