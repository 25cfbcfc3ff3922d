"""{{ cookiecutter.description }}.

{% if cookiecutter.kind != 'sink' -%}
``{{ cookiecutter.__class_prefix }}SourceConnector`` reads the JSON-lines files of a directory into
Kafka, one topic per file.
{% endif -%}
{% if cookiecutter.kind != 'source' -%}
``{{ cookiecutter.__class_prefix }}SinkConnector`` writes records to JSON-lines files, one file per
topic partition.
{% endif -%}
The certification drivers are in :mod:`{{ cookiecutter.package_name }}.certify`.
"""

from __future__ import annotations

from {{ cookiecutter.package_name }}._config import (
{%- if cookiecutter.kind != 'source' %}
    SINK_CONFIG_DEF,
{%- endif %}
{%- if cookiecutter.kind != 'sink' %}
    SOURCE_CONFIG_DEF,
{%- endif %}
    VERSION,
)
{% if cookiecutter.kind != 'source' -%}
from {{ cookiecutter.package_name }}._sink import (
    {{ cookiecutter.__class_prefix }}SinkConnector,
    {{ cookiecutter.__class_prefix }}SinkTask,
)
{% endif -%}
{% if cookiecutter.kind != 'sink' -%}
from {{ cookiecutter.package_name }}._source import (
    {{ cookiecutter.__class_prefix }}SourceConnector,
    {{ cookiecutter.__class_prefix }}SourceTask,
)
{% endif %}
__version__ = VERSION

__all__ = [
    "__version__",
{%- if cookiecutter.kind != 'sink' %}
    "SOURCE_CONFIG_DEF",
    "{{ cookiecutter.__class_prefix }}SourceConnector",
    "{{ cookiecutter.__class_prefix }}SourceTask",
{%- endif %}
{%- if cookiecutter.kind != 'source' %}
    "SINK_CONFIG_DEF",
    "{{ cookiecutter.__class_prefix }}SinkConnector",
    "{{ cookiecutter.__class_prefix }}SinkTask",
{%- endif %}
]
