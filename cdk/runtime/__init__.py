"""What runs connectors, shared by the standalone and the Spark modes.

Task runners, offset and status stores, error handling and the dead letter queue, the herder,
plugin discovery and the REST API live here.
"""
