"""The OFF suite: offsets survive stops and crashes, resume points are exact, the REST API works.

A source connector's offsets are the positions it attaches to its records (``source_offset``)
and the worker commits once Kafka acknowledged them; a sink connector's are its consumer group's
committed offsets, which the worker commits for what ``pre_commit`` returns. The checks stop,
kill (``kill -9`` of a real ``cdk standalone``) and restart connectors, resume source tasks from
every committed position, and drive the offsets REST API, then compare the delivered record ids
with what the driver wrote or the harness produced.

The source checks are in :mod:`.source`, the sink checks in :mod:`.sink` and the REST API
check in :mod:`.rest_api`; the flows they share are in the private modules.
"""
