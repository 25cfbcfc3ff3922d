"""Distributed mode: connector tasks executed as long-lived Spark tasks through PySpark.

PySpark is an optional dependency (``pip install 'connect-cdk[spark]'``), imported lazily: this
package imports without it, and starting a :class:`SparkPlacement` says what to install.
"""

from cdk.spark._placement import SparkPlacement
from cdk.spark._session import session_settings

__all__ = ["SparkPlacement", "session_settings"]
