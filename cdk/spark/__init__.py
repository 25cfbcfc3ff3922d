"""Distributed mode: connector tasks executed as long-lived Spark tasks through PySpark.

PySpark is an optional dependency (``pip install 'connect-cdk[spark]'``), imported lazily.
"""
