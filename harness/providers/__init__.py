"""The environments checks and tests run in: Kafka, Spark and the Docker engine.

Each kind has one interface and several backends, picked by name:

- :mod:`harness.providers.kafka`: ``kafka_provider(spec)``: the embedded broker (Tansu, the
  default), a container (testcontainers), or an existing cluster; topic helpers that need no
  consumer group; a :class:`~harness.providers.kafka.BrokerStall` for the broker failure checks;
- :mod:`harness.providers.spark`: ``spark_provider(spec)``: ``local[N]``, a standalone cluster
  started from the pyspark wheel (whose workers can be killed), containers, or an existing
  cluster;
- :class:`TcpProxy`: a TCP forwarder on loopback that a driver's ``outage()`` cuts, so that the
  connector under test loses its connection to the external system while the driver's own
  connections go on;
- :class:`RecordsApi`: a small REST API of records with an ``updated_at`` cursor, the stand-in
  SaaS API of HTTP source drivers and tests; :class:`HttpFaultProxy`: an HTTP proxy in front of
  an API that answers 429/503 with ``Retry-After`` on demand and counts the requests that
  arrive before their time.

The Docker engine the container backends use is found, or started and stopped again, by
``_docker``. The certification (:mod:`harness.certify`) and the kit's tests use these; they
depend only on the public API of :mod:`cdk`.
"""

from __future__ import annotations

from harness.providers._http_proxy import HttpFaultProxy, ProxyCounts
from harness.providers._records_api import RecordsApi, stamp
from harness.providers._tcp_proxy import TcpProxy
from harness.providers.kafka import kafka_provider
from harness.providers.spark import spark_provider

__all__ = [
    "HttpFaultProxy",
    "ProxyCounts",
    "RecordsApi",
    "TcpProxy",
    "kafka_provider",
    "spark_provider",
    "stamp",
]
