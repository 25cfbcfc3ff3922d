"""Hypothesis strategies for Connect schemas and values that conform to them.

The kit's own property tests and the certification suites (SCH checks) share these::

    from hypothesis import given
    from harness.strategies import schema_and_value, schemas, values_for

    @given(schema_and_value())
    def test_round_trip(sv):
        data = converter.from_connect_data("t", sv.schema, sv.value)
        assert converter.to_connect_data("t", data) == sv

What is generated:

* :func:`schemas` -- any Connect :class:`~cdk.data.Schema`: the nine primitive types, optional or
  required, sometimes with a name (``com.example.*``), version, doc and string parameters, a
  default value (never on STRUCT schemas), the logical types Decimal/Date/Time/Timestamp, and up to
  ``max_depth`` levels of ARRAY, MAP (required, primitive key schemas) and STRUCT (1..5 fields with
  unique identifier names ``[a-z_][a-z0-9_]*``). Schema names are unique within one generated
  schema, so Avro's "one definition per full name" rule always holds.
* :func:`values_for` -- a value valid for a schema (``validate_value`` passes): Python types as
  documented in :func:`cdk.data.validate_value`; ``None`` sometimes for optional schemas; floats
  without NaN/infinities unless asked; FLOAT32 values exactly representable in 32 bits;
  Time/Timestamp at millisecond precision (Timestamp as an aware UTC ``datetime``); Decimal values
  at the schema's scale.
* :func:`schema_and_value` -- both at once, as a :class:`~cdk.data.SchemaAndValue`.
* :func:`hostile_values_for` -- the values real systems send and naive connectors mangle, for a
  schema: its hard corners (:func:`corner_values_for`: empty, blank and padded strings,
  1-to-4-byte UTF-8, control characters, quotes and metacharacters, 64 KiB strings, integers at
  their bounds and past 2^53, ``-0.0``, float extremes and subnormals, full-precision decimals,
  timestamps in year 1 and 9999, NUL and high bytes, null) mixed with random values of the same
  classes, inside the :class:`~harness.Limit` declarations given. SCH-09 sends them.
* :func:`configs_for` -- configuration maps (``str -> str``, as the REST API passes them) for a
  :class:`~cdk.config.ConfigDef`: each key missing, set to a value valid for its type (and its
  validator, where the validator says which values it accepts), or set to an invalid or hostile
  value (not of the type; the strings SCH-09 sends: blank, padded, non-ASCII, control
  characters, metacharacters; 300-character values, broken URLs, paths, huge numbers,
  unresolvable config provider references), plus the odd unknown key. The CFG
  certification checks fuzz ``Connector.validate`` with it.

The signatures are stable API: add keyword parameters with defaults, never change existing ones.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hypothesis import strategies as st

from cdk.config import ConfigDef, ConfigKey, Type, convert_to_string, validators
from cdk.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from harness._corner_data import STRINGS
from harness._hostile import corner_values, hostile_values
from harness._limits import Limit

__all__ = [
    "PRIMITIVE_TYPES",
    "LOGICAL_KINDS",
    "field_names",
    "primitive_schemas",
    "schemas",
    "struct_schemas",
    "values_for",
    "schema_and_value",
    "configs_for",
    "free_text",
    "hostile_config_values",
    "corner_values_for",
    "hostile_values_for",
]

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[T]], T]

PRIMITIVE_TYPES: tuple[SchemaType, ...] = tuple(t for t in SchemaType if t.is_primitive)
"""The nine primitive schema types."""

LOGICAL_KINDS: tuple[str, ...] = ("decimal", "date", "time", "timestamp")
"""The logical types :func:`schemas` can generate."""

_UTC = _dt.timezone.utc
_IDENT = r"[a-z_][a-z0-9_]{0,7}"
_MAX_UNSCALED = 10**24
# built once: hypothesis validates a strategy the first time it draws from it, which for a
# regex costs far more than a draw
_FIELD_NAMES = st.from_regex(_IDENT, fullmatch=True)
_PARAMETER_NAMES = st.from_regex(r"p_[a-z0-9]{1,5}", fullmatch=True)


def field_names() -> st.SearchStrategy[str]:
    """Field names valid everywhere (Connect, JSON, Avro): ``[a-z_][a-z0-9_]{0,7}``."""
    return _FIELD_NAMES


@dataclass
class _Ctx:
    """Per-draw state: switches and a counter that keeps schema names unique."""

    max_depth: int
    optional: bool
    defaults: bool
    logical: bool
    metadata: bool
    names_used: int = 0
    kinds: list[str] = field(default_factory=list)

    def next_name(self) -> str:
        self.names_used += 1
        return f"com.example.N{self.names_used}"


def _add_metadata(draw: Draw[Any], builder: SchemaBuilder, ctx: _Ctx, *, named: bool) -> None:
    if not ctx.metadata:
        return
    if named and draw(st.booleans()):
        builder.name(ctx.next_name())
    if draw(st.integers(0, 3)) == 0:
        builder.version(draw(st.integers(1, 1000)))
    if draw(st.integers(0, 3)) == 0:
        builder.doc(draw(st.text(max_size=12)))
    if draw(st.integers(0, 4)) == 0:
        builder.parameters(
            draw(
                st.dictionaries(
                    _PARAMETER_NAMES,
                    st.text(max_size=8),
                    max_size=2,
                )
            )
        )


def _primitive(draw: Draw[Any], ctx: _Ctx, *, key: bool = False) -> SchemaBuilder:
    kinds: list[Any] = list(PRIMITIVE_TYPES)
    if ctx.logical:
        kinds += list(LOGICAL_KINDS)
    kind = draw(st.sampled_from(kinds))
    if kind == "decimal":
        builder = Decimal.builder(draw(st.integers(-2, 8)))
    elif kind == "date":
        builder = Date.builder()
    elif kind == "time":
        builder = Time.builder()
    elif kind == "timestamp":
        builder = Timestamp.builder()
    else:
        builder = SchemaBuilder(kind)
        _add_metadata(draw, builder, ctx, named=not key)
    return builder


def _finish(draw: Draw[Any], builder: SchemaBuilder, ctx: _Ctx, *, allow_default: bool) -> Schema:
    if ctx.optional and draw(st.booleans()):
        builder.optional()
    if allow_default and ctx.defaults and draw(st.integers(0, 3)) == 0:
        plain = builder.build()
        required = _as_required(plain)
        builder.default_value(draw(values_for(required)))
    return builder.build()


def _as_required(schema: Schema) -> Schema:
    if not schema.optional:
        return schema
    return Schema(
        schema.type,
        optional=False,
        name=schema.name,
        version=schema.version,
        doc=schema.doc,
        parameters=schema.parameters,
        fields=schema.fields if schema.type is SchemaType.STRUCT else None,
        key_schema=schema.key_schema if schema.type is SchemaType.MAP else None,
        value_schema=schema.value_schema
        if schema.type in (SchemaType.MAP, SchemaType.ARRAY)
        else None,
    )


def _schema(draw: Draw[Any], depth: int, ctx: _Ctx, *, force_struct: bool = False) -> Schema:
    containers = ["array", "map", "struct"] if depth < ctx.max_depth else []
    if force_struct:
        kind = "struct"
    elif containers:
        kind = draw(st.sampled_from(["primitive", "primitive", *containers]))
    else:
        kind = "primitive"
    if kind == "primitive":
        return _finish(draw, _primitive(draw, ctx), ctx, allow_default=True)
    if kind == "array":
        builder = SchemaBuilder.array(_schema(draw, depth + 1, ctx))
        _add_metadata(draw, builder, ctx, named=True)
        return _finish(draw, builder, ctx, allow_default=True)
    if kind == "map":
        key_schema = _primitive(draw, ctx, key=True).build()
        builder = SchemaBuilder.map(key_schema, _schema(draw, depth + 1, ctx))
        _add_metadata(draw, builder, ctx, named=True)
        return _finish(draw, builder, ctx, allow_default=True)
    builder = SchemaBuilder.struct()
    if ctx.metadata and draw(st.booleans()):
        builder.name(ctx.next_name())
    names = draw(st.lists(field_names(), min_size=1, max_size=5, unique=True))
    for name in names:
        builder.field(name, _schema(draw, depth + 1, ctx))
    if ctx.metadata:
        if draw(st.integers(0, 3)) == 0:
            builder.version(draw(st.integers(1, 1000)))
        if draw(st.integers(0, 3)) == 0:
            builder.doc(draw(st.text(max_size=12)))
    return _finish(draw, builder, ctx, allow_default=False)


@st.composite
def schemas(
    draw: Draw[Any],
    max_depth: int = 2,
    *,
    optional: bool = True,
    defaults: bool = True,
    logical: bool = True,
    metadata: bool = True,
) -> Schema:
    """Any Connect schema, nesting ARRAY/MAP/STRUCT up to ``max_depth`` levels.

    Args:
        draw: supplied by hypothesis.
        max_depth: how many container levels may nest (0 = primitives and logical types only).
        optional: whether schemas may be optional.
        defaults: whether non-struct schemas may carry a default value.
        logical: whether Decimal/Date/Time/Timestamp may appear.
        metadata: whether names, versions, docs and parameters may appear.
    """
    ctx = _Ctx(max_depth, optional, defaults, logical, metadata)
    return _schema(draw, 0, ctx)


@st.composite
def struct_schemas(
    draw: Draw[Any],
    max_depth: int = 2,
    *,
    optional: bool = False,
    defaults: bool = True,
    logical: bool = True,
    metadata: bool = True,
) -> Schema:
    """A STRUCT schema (required unless ``optional``) whose fields nest up to ``max_depth``.

    Args:
        draw: supplied by hypothesis.
        max_depth: container levels including the top-level struct (at least 1).
        optional: whether the top-level struct itself may be optional (fields always may be).
        defaults: whether non-struct schemas may carry a default value.
        logical: whether Decimal/Date/Time/Timestamp may appear.
        metadata: whether names, versions, docs and parameters may appear.
    """
    ctx = _Ctx(max(max_depth, 1), True, defaults, logical, metadata)
    schema = _schema(draw, 0, ctx, force_struct=True)
    if schema.optional and not optional:
        schema = _as_required(schema)
    return schema


def primitive_schemas(*, optional: bool = True, logical: bool = True) -> st.SearchStrategy[Schema]:
    """Primitive (and, if ``logical``, logical-type) schemas, with no names or defaults."""
    return schemas(0, optional=optional, defaults=False, logical=logical, metadata=False)


# -- values ----------------------------------------------------------------------------------------
def _decimals(scale: int) -> st.SearchStrategy[_decimal.Decimal]:
    def make(unscaled: int) -> _decimal.Decimal:
        return _decimal.Decimal(unscaled).scaleb(-scale, _decimal.Context(prec=60))

    return st.integers(-_MAX_UNSCALED, _MAX_UNSCALED).map(make)


_TIMES = st.builds(
    _dt.time,
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    st.integers(0, 999).map(lambda ms: ms * 1000),
)
_TIMESTAMPS = st.datetimes(
    min_value=_dt.datetime(1, 1, 2), max_value=_dt.datetime(9999, 12, 30)
).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000, tzinfo=_UTC))


def _non_null(schema: Schema, allow_nan: bool, allow_infinity: bool) -> st.SearchStrategy[Any]:
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return _decimals(Decimal.scale(schema))
    if name == Date.LOGICAL_NAME:
        return st.dates()
    if name == Time.LOGICAL_NAME:
        return _TIMES
    if name == Timestamp.LOGICAL_NAME:
        return _TIMESTAMPS
    stype = schema.type
    if stype is SchemaType.INT8:
        return st.integers(-(2**7), 2**7 - 1)
    if stype is SchemaType.INT16:
        return st.integers(-(2**15), 2**15 - 1)
    if stype is SchemaType.INT32:
        return st.integers(-(2**31), 2**31 - 1)
    if stype is SchemaType.INT64:
        return st.integers(-(2**63), 2**63 - 1)
    if stype is SchemaType.FLOAT32:
        return st.floats(width=32, allow_nan=allow_nan, allow_infinity=allow_infinity)
    if stype is SchemaType.FLOAT64:
        return st.floats(allow_nan=allow_nan, allow_infinity=allow_infinity)
    if stype is SchemaType.BOOLEAN:
        return st.booleans()
    if stype is SchemaType.STRING:
        return st.text(max_size=20)
    if stype is SchemaType.BYTES:
        return st.binary(max_size=20)
    if stype is SchemaType.ARRAY:
        return st.lists(values_for(schema.value_schema, allow_nan, allow_infinity), max_size=4)
    if stype is SchemaType.MAP:
        return st.dictionaries(
            _non_null(schema.key_schema, False, False),
            values_for(schema.value_schema, allow_nan, allow_infinity),
            max_size=4,
        )
    return _structs(schema, allow_nan, allow_infinity)


@st.composite
def _structs(draw: Draw[Any], schema: Schema, allow_nan: bool, allow_infinity: bool) -> Struct:
    struct = Struct(schema)
    for f in schema.fields:
        struct.put(f, draw(values_for(f.schema, allow_nan, allow_infinity)))
    return struct


def values_for(
    schema: Schema, allow_nan: bool = False, allow_infinity: bool = False
) -> st.SearchStrategy[Any]:
    """Values valid for ``schema``; ``None`` sometimes when the schema is optional.

    Args:
        schema: the schema the values must conform to.
        allow_nan: whether FLOAT32/FLOAT64 values may be NaN.
        allow_infinity: whether FLOAT32/FLOAT64 values may be infinite.
    """
    base = _non_null(schema, allow_nan, allow_infinity)
    if schema.optional:
        return st.one_of(st.none(), base)
    return base


@st.composite
def schema_and_value(
    draw: Draw[Any],
    max_depth: int = 2,
    *,
    optional: bool = True,
    defaults: bool = True,
    logical: bool = True,
    metadata: bool = True,
    allow_nan: bool = False,
    allow_infinity: bool = False,
) -> SchemaAndValue:
    """A schema from :func:`schemas` and a value from :func:`values_for` it.

    Args:
        draw: supplied by hypothesis.
        max_depth: see :func:`schemas`.
        optional: see :func:`schemas`.
        defaults: see :func:`schemas`.
        logical: see :func:`schemas`.
        metadata: see :func:`schemas`.
        allow_nan: see :func:`values_for`.
        allow_infinity: see :func:`values_for`.
    """
    schema = draw(
        schemas(max_depth, optional=optional, defaults=defaults, logical=logical, metadata=metadata)
    )
    value = draw(values_for(schema, allow_nan, allow_infinity))
    return SchemaAndValue(schema, value)


# -- hostile values --------------------------------------------------------------------------------
def hostile_values_for(
    schema: Schema, limits: Sequence[Limit] = (), *, field: str = ""
) -> st.SearchStrategy[Any]:
    """Hostile values of ``schema``: its corner values mixed with random values of their classes.

    Args:
        schema: the schema the values conform to (null sometimes when it is optional).
        limits: the :class:`~harness.Limit` declarations to stay inside.
        field: the field path ``schema`` is at (``""`` for a whole value), which the limits
            name.
    """
    return hostile_values(schema, limits, field)


def corner_values_for(
    schema: Schema, limits: Sequence[Limit] = (), *, field: str = ""
) -> list[Any]:
    """Every hard-corner value of ``schema`` the limits allow (null first when optional).

    A STRUCT's corners take each field's corners in turn; ARRAY and MAP corners are empty, of
    one corner element, and of several.

    Args:
        schema: the schema the values conform to.
        limits: the :class:`~harness.Limit` declarations to stay inside.
        field: the field path ``schema`` is at, which the limits name.
    """
    return corner_values(schema, limits, field)


# -- configs ---------------------------------------------------------------------------------------
_INT_BOUNDS = {
    Type.SHORT: (-(2**15), 2**15 - 1),
    Type.INT: (-(2**31), 2**31 - 1),
    Type.LONG: (-(2**63), 2**63 - 1),
}
_CONFIG_TEXT = st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=20)
_LIST_TEXT = st.lists(
    st.text(st.characters(exclude_categories=("Cs", "Cc"), exclude_characters=",")).filter(
        lambda s: s.strip() != ""
    ),
    max_size=3,
).map(",".join)
_UNKNOWN_KEY = st.from_regex(r"unknown\.[a-z]{1,8}", fullmatch=True)
#: Hostile config values: the strings SCH-09 sends (blank, padded, non-ASCII, control
#: characters, quotes and metacharacters, 64 KiB), and what configs get wrong besides: long
#: values (a 300-character URL is a file name too long for the OS), broken and odd URLs,
#: paths, huge and special numbers, config provider references that resolve to nothing.
_HOSTILE_CONFIG = [
    *(s for s in STRINGS if len(s) <= 80),
    "x" * 300,
    "x" * 2000,
    "é" * 300,
    "/" + "a" * 300,
    "sqlite:///" + "x" * 300,
    "sqlite:////" + "d/" * 200 + "db",
    "://",
    "http://",
    "http://[::1",
    "http://host:99999999/",
    "postgresql://user:pass@:0/db",
    "mysql+pymysql://@/",
    "jdbc:postgresql://localhost/db",
    "file:///dev/null",
    "sqlite:///:memory:",
    "\\\\server\\share\\x",
    "/",
    "/dev/null",
    "/proc/self/mem",
    "..",
    "../../etc/passwd",
    "~",
    "9" * 400,
    "-" + "9" * 30,
    "1e400",
    "inf",
    "-inf",
    "NaN",
    "0x7fffffff",
    "${env:CDK_NO_SUCH_VARIABLE}",
    "${file:/nonexistent/file:key}",
    "a\x00b",
    "line\nbreak",
]
_ODD_TEXT = st.sampled_from(_HOSTILE_CONFIG)
_NOT_BOOLEAN = st.sampled_from(["yes", "no", "1", "0", "", "tru", "on"])
_NOT_NUMBER = st.sampled_from(["", "abc", "1.5", "0x10", "1e3", "--1", "1,000", "NaN", " 12a"])
_NOT_DOUBLE = st.sampled_from(["", "abc", "1,5", "--1", "1.2.3", "0x1p3", "one"])
_NOT_CLASS = st.sampled_from(["no.such.Class", "", "not a class", "builtins.NoSuchThing"])


def _accepted_strings(validator: validators.Validator | None) -> list[str] | None:
    """The strings ``validator`` accepts, when it says (ValidString and friends)."""
    if validator is None:
        return None
    if isinstance(validator, validators.ValidString):
        return list(validator.valid_strings)
    if isinstance(validator, validators.CaseInsensitiveValidString):
        return list(validator.valid_strings) + [s.lower() for s in validator.valid_strings]
    if isinstance(validator, validators.ValidList):
        return list(validator.valid_string.valid_strings)
    if isinstance(validator, validators.CompositeValidator):
        for inner in validator.validators:
            found = _accepted_strings(inner)
            if found is not None:
                return found
    return None


def _range_of(validator: validators.Validator | None) -> tuple[float | None, float | None]:
    if isinstance(validator, validators.Range):
        return validator.min, validator.max
    if isinstance(validator, validators.CompositeValidator):
        for inner in validator.validators:
            low, high = _range_of(inner)
            if low is not None or high is not None:
                return low, high
    return None, None


def _valid_config_values(key: ConfigKey) -> st.SearchStrategy[str]:
    """Strings that parse as ``key``'s type (and, where it tells, pass its validator)."""
    choices: list[st.SearchStrategy[str]] = []
    if key.has_default() and key.default_value is not None:
        shown = convert_to_string(key.default_value, key.type)
        if shown is not None and key.type is not Type.PASSWORD:
            choices.append(st.just(shown))
    accepted = _accepted_strings(key.validator)
    if accepted:
        if key.type is Type.LIST:
            choices.append(st.lists(st.sampled_from(accepted), max_size=3).map(",".join))
        else:
            choices.append(st.sampled_from(accepted))
        return st.one_of(choices)
    if key.type is Type.BOOLEAN:
        choices.append(st.sampled_from(["true", "false", "TRUE", "False"]))
    elif key.type in _INT_BOUNDS:
        low, high = _INT_BOUNDS[key.type]
        min_v, max_v = _range_of(key.validator)
        low = max(low, int(min_v)) if min_v is not None else low
        high = min(high, int(max_v)) if max_v is not None else high
        if low <= high:
            choices.append(st.integers(low, high).map(str))
        choices.append(st.integers(*_INT_BOUNDS[key.type]).map(str))
    elif key.type is Type.DOUBLE:
        choices.append(st.floats(allow_nan=False, allow_infinity=False).map(repr))
    elif key.type is Type.LIST:
        choices.append(_LIST_TEXT)
    elif key.type is Type.CLASS:
        choices.append(st.just("builtins.object"))
    else:  # STRING, PASSWORD
        choices.append(_CONFIG_TEXT)
    return st.one_of(choices)


def _invalid_config_values(key: ConfigKey) -> st.SearchStrategy[str]:
    """Strings that do not parse as ``key``'s type, or odd ones (empty, blank, huge, binary)."""
    if key.type is Type.BOOLEAN:
        return st.one_of(_NOT_BOOLEAN, _ODD_TEXT, _CONFIG_TEXT)
    if key.type in _INT_BOUNDS:
        low, high = _INT_BOUNDS[key.type]
        too_big = st.sampled_from([str(high + 1), str(low - 1), str(10**30)])
        return st.one_of(_NOT_NUMBER, too_big, _ODD_TEXT, _CONFIG_TEXT)
    if key.type is Type.DOUBLE:
        return st.one_of(_NOT_DOUBLE, _ODD_TEXT, _CONFIG_TEXT)
    if key.type is Type.CLASS:
        return st.one_of(_NOT_CLASS, _ODD_TEXT)
    return st.one_of(_ODD_TEXT, _CONFIG_TEXT)


#: The hostile config values most often mishandled: empty, long ones (a file name or URL the
#: OS refuses), NUL, a config provider reference that resolves to nothing, a huge number.
HOSTILE_CONFIG_CORE: tuple[str, ...] = (
    "",
    "x" * 300,
    "é" * 300,
    "a\x00b",
    "${env:CDK_NO_SUCH_VARIABLE}",
    "9" * 400,
)


def free_text(key: ConfigKey) -> bool:
    """Whether ``key`` takes any text (a STRING, PASSWORD, LIST or CLASS without a closed set)."""
    texts = (Type.STRING, Type.PASSWORD, Type.LIST, Type.CLASS)
    return key.type in texts and not _accepted_strings(key.validator)


def hostile_config_values(key: ConfigKey) -> list[str]:
    """Every hostile value for ``key``, by its type, :data:`HOSTILE_CONFIG_CORE` first.

    Text keys (STRING, PASSWORD, LIST, CLASS) get all of them; numbers and booleans the values
    that are not of their type, out-of-range numbers, and the core ones.
    """
    out = list(HOSTILE_CONFIG_CORE)
    if key.type in _INT_BOUNDS:
        low, high = _INT_BOUNDS[key.type]
        out += [str(high + 1), str(low - 1), str(10**30), "", "abc", "1.5", "0x10", "1e3", "NaN"]
    elif key.type is Type.DOUBLE:
        out += ["1e400", "-1e400", "inf", "NaN", "1,5", "0x1p3", "1.2.3"]
    elif key.type is Type.BOOLEAN:
        out += ["yes", "1", "tru", "TRUE ", "null"]
    else:
        out += _HOSTILE_CONFIG
    return list(dict.fromkeys(out))


def configs_for(
    config_def: ConfigDef,
    *,
    base: Mapping[str, str] | None = None,
    invalid: bool = True,
    unknown_keys: bool = True,
) -> st.SearchStrategy[dict[str, str]]:
    """A configuration map for ``config_def``, as the REST API would pass it (``str -> str``).

    Every key of the definition is, independently, left out (or, with ``base``, kept as it is
    there), set to a value of its type, or (with ``invalid``) set to a value that is not of its
    type or is odd (empty, blank, very long, with control characters). With ``unknown_keys``, a
    key the definition does not have is sometimes added.

    Args:
        draw: supplied by hypothesis.
        config_def: the definition whose keys and types shape the maps.
        base: a configuration to start from (e.g. a driver's example config); each key is then
            either kept from it or changed.
        invalid: whether invalid values may be drawn.
        unknown_keys: whether undefined keys may be added.
    """
    actions = ["drop", "valid"] + (["invalid"] if invalid else [])
    if base is not None:
        actions = ["keep", "keep", *actions]
    # each key's strategies are built once: hypothesis validates a strategy the first time it
    # draws from it, which for text and regex strategies costs far more than the draw
    keys = [
        (
            key.name,
            _valid_config_values(key),
            _invalid_config_values(key) if invalid else None,
        )
        for key in config_def.config_keys().values()
    ]
    return _configs(dict(base or {}), keys, st.sampled_from(actions), unknown_keys)


@st.composite
def _configs(
    draw: Draw[Any],
    base: dict[str, str],
    keys: list[tuple[str, st.SearchStrategy[str], st.SearchStrategy[str] | None]],
    actions: st.SearchStrategy[str],
    unknown_keys: bool,
) -> dict[str, str]:
    config = dict(base)
    for name, valid, not_valid in keys:
        action = draw(actions)
        if action == "keep":
            continue
        if action == "drop":
            config.pop(name, None)
        elif action == "valid" or not_valid is None:
            config[name] = draw(valid)
        else:
            config[name] = draw(not_valid)
    if unknown_keys and draw(st.integers(0, 4)) == 0:
        config.setdefault(draw(_UNKNOWN_KEY), draw(_CONFIG_TEXT))
    return config
