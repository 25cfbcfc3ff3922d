"""The SCH suite: valid records, converter round trips, schemaless data and schema migration.

Source checks drive the connector in-process with :class:`~harness.certify.SourceProbe`, so they
see the exact :class:`~cdk.SourceRecord` objects (schemas and values) and put them through the
converters themselves. Sink checks run the connector on an embedded worker with the converter
under test set in the connector config, produce records encoded by the same converter, and
compare what the driver reads back (ids, and the stored fields when the driver implements
``read_values``) with what was sent.

Values are compared exactly: a Decimal must keep its value and its scale, a Timestamp its instant
to the millisecond (a naive datetime is UTC, as in :mod:`cdk.data`), bytes every byte, a FLOAT32
its 32-bit value. A failure names the record id and the first field that differs.

SCH-01 to SCH-04, SCH-10 and SCH-11 (records and converter round trips: JSON, Avro, Protobuf,
JSON Schema) are in :mod:`.round_trip`, SCH-05 to
SCH-08 (schema migration) in :mod:`.migration`; the source and sink flows, the schemas derived
from a driver's and the value comparison they share are in the private modules.
"""
