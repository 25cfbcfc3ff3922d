"""How the SQL connectors reach a database: the connection keys, the engine, and error texts.

``connection.url`` is a SQLAlchemy URL (``postgresql://host:5432/db``,
``mysql://host:3306/db``, ``mariadb://...``, ``sqlite:///path``); the JDBC forms
(``jdbc:postgresql://...``, ``jdbc:mysql://...``, ``jdbc:mariadb://...``, ``jdbc:sqlite:path``) and
a bare file path (SQLite) are accepted too. The driver is picked for the dialect (psycopg 3 for
PostgreSQL, PyMySQL for MariaDB/MySQL, the standard library for SQLite) unless the URL names one.
The user and the password are separate keys (``connection.user``, ``connection.password``); a URL
that carries a password is refused, so the secret never sits in a key that is logged and shown.

:func:`translate_error` turns what a driver raises into a :class:`~cdk.RetriableException`
(the database is unreachable, locked or went away: try again) or a
:class:`~cdk.ConnectException` (bad credentials, unknown database, table or column...), with a
text that names the problem and the database (its URL with the password masked).
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cdk import (
    NO_DEFAULT,
    ConfigDef,
    ConfigException,
    ConnectException,
    Importance,
    RetriableException,
    Type,
    Width,
)
from cdk.config import Password
from cdk.config.validators import Range, Validator

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = [
    "CONNECTION_ATTEMPTS",
    "CONNECTION_BACKOFF_MS",
    "CONNECTION_PASSWORD",
    "CONNECTION_URL",
    "CONNECTION_USER",
    "DIALECTS",
    "ConnectionSettings",
    "ConnectionUrl",
    "check_connection",
    "missing_table",
    "define_connection",
    "parse_url",
    "share_preferred_tls",
    "require_sqlalchemy",
    "translate_error",
]

CONNECTION_URL = "connection.url"
CONNECTION_USER = "connection.user"
CONNECTION_PASSWORD = "connection.password"
CONNECTION_ATTEMPTS = "connection.attempts"
CONNECTION_BACKOFF_MS = "connection.backoff.ms"

#: The dialects the connectors support, by SQLAlchemy backend name.
DIALECTS = ("sqlite", "postgresql", "mysql")
_DRIVERS = {"postgresql": "psycopg", "mysql": "pymysql", "mariadb": "pymysql"}
_BACKENDS = {"postgres": "postgresql", "postgresql": "postgresql", "mysql": "mysql"}
_BACKENDS["mariadb"] = "mariadb"
_JDBC = re.compile(r"jdbc:(postgresql|mysql|mariadb|sqlite):(.*)", re.IGNORECASE | re.DOTALL)
#: Seconds a connection attempt waits for the server (an unreachable host fails fast).
CONNECT_TIMEOUT_S = 5
#: Seconds SQLite waits for a lock before it reports "database is locked".
SQLITE_BUSY_TIMEOUT_S = 0.5


def require_sqlalchemy() -> None:
    """Raise a ConnectException saying which extra to install when SQLAlchemy is missing."""
    try:
        import sqlalchemy  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the dev extra installs it
        raise ConnectException(
            "The SQL connectors need SQLAlchemy and the database drivers: "
            "pip install 'connect-cdk[sql]'"
        ) from exc


def _mask(text: str, secret: str | None) -> str:
    if secret:
        text = text.replace(secret, "****")
    return text


def parse_url(raw: str, *, key: str = CONNECTION_URL) -> sa.URL:
    """The SQLAlchemy URL that ``raw`` names, with its driver chosen.

    Raises:
        ConfigException: naming ``key``, when the URL is malformed, names an unsupported
            database, or carries a password (never echoed).
    """
    require_sqlalchemy()
    import sqlalchemy as sa
    from sqlalchemy.exc import ArgumentError

    text = raw.strip()
    if not text:
        raise ConfigException(key, raw, "the URL is empty")
    jdbc = _JDBC.fullmatch(text)
    if jdbc:
        scheme, rest = jdbc.group(1).lower(), jdbc.group(2)
        if scheme == "sqlite":
            text = "sqlite:///" + rest
        else:
            text, _, query = f"{scheme}:{rest}".partition("?")
            params = [p for p in query.split("&") if p] if query else []
            if any(p.split("=", 1)[0].lower() == "password" for p in params):
                raise ConfigException(key, _strip_query(raw), _PASSWORD_IN_URL)
            users = [p.split("=", 1)[1] for p in params if p.lower().startswith("user=")]
            if users:
                text = text.replace("://", f"://{users[0]}@", 1)
    elif "://" not in text:
        text = "sqlite:///" + text  # a bare file path, as the SQLite connectors took
    try:
        url = sa.engine.make_url(text)
    except (ArgumentError, ValueError) as exc:
        raise ConfigException(
            key, _strip_query(raw), f"not a database URL ({_first_line(exc)})"
        ) from None
    if any(k.lower() == "password" for k in url.query):
        raise ConfigException(key, _strip_query(raw), _PASSWORD_IN_URL)
    if url.password is not None:
        raise ConfigException(key, url.render_as_string(hide_password=True), _PASSWORD_IN_URL)
    backend, _, driver = url.drivername.partition("+")
    backend = _BACKENDS.get(backend.lower(), backend.lower())
    if backend not in (*DIALECTS, "mariadb"):
        raise ConfigException(
            key,
            url.render_as_string(hide_password=True),
            f"unsupported database {backend!r}: use postgresql://, mysql://, mariadb:// or "
            "sqlite:///",
        )
    if backend == "sqlite":
        database = url.database or ""
        if not database or database == ":memory:" or "mode=memory" in str(url):
            raise ConfigException(
                key,
                raw,
                "an in-memory or unnamed SQLite database is private to one connection; name a "
                "database file",
            )
        return url.set(drivername="sqlite")
    return url.set(drivername=f"{backend}+{driver or _DRIVERS[backend]}")


_PASSWORD_IN_URL = (
    "the URL contains a password: remove it from the URL and set connection.password instead "
    "(a URL is logged and shown, a password key is masked)"
)


def _strip_query(raw: str) -> str:
    return raw.split("?", 1)[0] + ("?..." if "?" in raw else "")


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


class ConnectionUrl(Validator):
    """Checks that ``connection.url`` is a database URL the connectors support."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            return  # a missing required key is reported by the ConfigDef itself
        if not isinstance(value, str):
            raise ConfigException(name, value, "expected a string")
        parse_url(value, key=name)

    def __str__(self) -> str:
        return (
            "a database URL: postgresql://host:port/db, mysql://..., mariadb://..., "
            "sqlite:///path (or the jdbc: forms, or a SQLite file path), without a password"
        )


def define_connection(config: ConfigDef, *, group: str = "Database") -> ConfigDef:
    """Add the connection keys (``connection.*``) to ``config``."""
    return (
        config.define(
            CONNECTION_URL,
            Type.STRING,
            NO_DEFAULT,
            ConnectionUrl(),
            Importance.HIGH,
            "The database, as a SQLAlchemy URL: postgresql://host:5432/db, "
            "mysql://host:3306/db, mariadb://host:3306/db, sqlite:///relative/path or "
            "sqlite:////absolute/path. The JDBC forms (jdbc:postgresql://host/db...) and a bare "
            "SQLite file path work too. Put the user and the password in connection.user and "
            "connection.password, not in the URL.",
            group=group,
            order_in_group=1,
            width=Width.LONG,
            display_name="JDBC URL",
        )
        .define(
            CONNECTION_USER,
            Type.STRING,
            None,
            None,
            Importance.HIGH,
            "The database user (overrides a user named in the URL).",
            group=group,
            order_in_group=2,
            width=Width.LONG,
            display_name="JDBC User",
        )
        .define(
            CONNECTION_PASSWORD,
            Type.PASSWORD,
            None,
            None,
            Importance.HIGH,
            "The database user's password.",
            group=group,
            order_in_group=3,
            width=Width.SHORT,
            display_name="JDBC Password",
        )
        .define(
            CONNECTION_ATTEMPTS,
            Type.INT,
            3,
            Range.at_least(1),
            Importance.LOW,
            "How many times to try to connect when a task starts before it fails.",
            group=group,
            order_in_group=4,
            width=Width.SHORT,
            display_name="Connection Attempts",
        )
        .define(
            CONNECTION_BACKOFF_MS,
            Type.LONG,
            10_000,
            Range.at_least(0),
            Importance.LOW,
            "How long, in milliseconds, to wait between two connection attempts.",
            group=group,
            order_in_group=5,
            width=Width.SHORT,
            display_name="Connection Backoff (ms)",
        )
    )


@dataclass(frozen=True)
class ConnectionSettings:
    """Where and how to connect: the URL (without secrets) and the credentials.

    Attributes:
        url: the SQLAlchemy URL with its driver, user and no password.
        password: the password, or None.
        dialect: ``sqlite``, ``postgresql`` or ``mysql`` (MariaDB included).
    """

    url: sa.URL
    password: str | None
    dialect: str

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> ConnectionSettings:
        """The settings from parsed config values (``connection.*`` keys)."""
        url = parse_url(str(values[CONNECTION_URL]))
        backend = url.get_backend_name()
        dialect = "mysql" if backend in ("mysql", "mariadb") else backend
        if dialect == "sqlite":
            return cls(url, None, dialect)  # no users: connection.user/password do not apply
        user = values.get(CONNECTION_USER)
        if user:
            url = url.set(username=str(user))
        secret = values.get(CONNECTION_PASSWORD)
        password = secret.value() if isinstance(secret, Password) else secret
        return cls(url, str(password) if password else None, dialect)

    def describe(self) -> str:
        """The database for messages: the URL without a password."""
        return str(self.url.render_as_string(hide_password=True))

    def create_engine(self) -> sa.Engine:
        """A SQLAlchemy engine (connections are made on first use)."""
        require_sqlalchemy()
        import sqlalchemy as sa

        url = self.url if self.password is None else self.url.set(password=self.password)
        if self.dialect == "sqlite":
            return sa.create_engine(
                url,
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S},
                poolclass=sa.pool.NullPool,
            )
        args: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S}
        if self.dialect == "postgresql":
            args["options"] = "-c timezone=UTC"
        else:
            args["init_command"] = "SET time_zone = '+00:00'"
        engine = sa.create_engine(
            url, connect_args=args, pool_pre_ping=True, pool_size=2, max_overflow=2
        )
        return share_preferred_tls(engine)

    @contextlib.contextmanager
    def connect(self, doing: str) -> Iterator[sa.Connection]:
        """A connection from a fresh engine, disposed on exit; errors are translated."""
        engine = self.create_engine()
        try:
            with engine.connect() as connection:
                yield connection
        except ConnectException:
            raise
        except Exception as exc:  # noqa: BLE001 - every driver error is translated
            raise translate_error(exc, doing, self) from None
        finally:
            engine.dispose()

    def missing_database_file(self) -> str | None:
        """For SQLite: why the database file cannot be opened (None when it can)."""
        if self.dialect != "sqlite":
            return None
        from pathlib import Path

        path = Path(self.url.database or "")
        try:
            if path.is_dir():
                return f"{path} is a directory, not a database file"
            if not path.exists():
                return f"the database file {path} does not exist"
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else None
            return f"{path} is not a usable file path: {reason or exc}"
        return None


def share_preferred_tls(engine: sa.Engine) -> sa.Engine:
    """Give ``engine``'s PyMySQL connections one TLS context per process, not one each.

    PyMySQL (1.1 and later) offers TLS on every connection made without TLS options
    ("preferred": TLS when the server has it, its certificate not verified) and builds a fresh
    ``SSLContext`` for it each time, loading the system's CA certificates into a context that
    then verifies nothing: 20 to 40 ms of CPU per connection, half of all the CPU of a
    certification on MariaDB. That context is the same for every such connection, so it is
    built once (by PyMySQL, as it would) and shared. Connections with TLS options (``ssl_ca``,
    ``ssl`` in the URL's query) get theirs built as before. Other drivers are left alone.
    """
    if engine.dialect.driver != "pymysql":
        return engine
    from sqlalchemy import event

    connection_class = _shared_tls_connection()

    @event.listens_for(engine, "do_connect")
    def connect(dialect: Any, record: Any, cargs: Any, cparams: Any) -> Any:
        return connection_class(*cargs, **cparams)

    return engine


@functools.cache
def _shared_tls_connection() -> type:
    """A ``pymysql`` connection class whose "preferred" TLS context is built once."""
    import pymysql.connections

    lock = threading.Lock()
    shared: list[Any] = []

    class Connection(pymysql.connections.Connection):  # type: ignore[misc]
        def _create_ssl_ctx(self, sslp: Any) -> Any:
            if sslp:  # TLS options given: a context for them, as PyMySQL builds it
                return super()._create_ssl_ctx(sslp)
            with lock:
                if not shared:
                    shared.append(super()._create_ssl_ctx(sslp))
                return shared[0]

    return Connection


def check_connection(settings: ConnectionSettings) -> str | None:
    """Connect and run ``SELECT 1``; the problem as text, or None when the database answers."""
    require_sqlalchemy()
    import sqlalchemy as sa

    missing = settings.missing_database_file()
    if missing:
        return missing
    try:
        with settings.connect("connecting") as connection:
            connection.execute(sa.text("SELECT 1")).fetchall()
    except ConnectException as exc:
        return str(exc)
    return None


# ---------------------------------------------------------------------------------------------
# Errors.

#: PostgreSQL SQLSTATEs and MySQL/MariaDB error numbers, with what they mean for a user.
_PG_STATES = {
    "28P01": "wrong user name or password (connection.user / connection.password)",
    "28000": "the user may not connect (connection.user)",
    "3D000": "the database does not exist",
    "42P01": "the table does not exist",
    "42703": "a column does not exist",
    "42501": "the user lacks a privilege",
    "42601": "SQL syntax error",
    "3F000": "the schema does not exist",
}
_PG_RETRIABLE = {"40001", "40P01", "55P03", "57P01", "57P02", "57P03", "53300"}
_MY_CODES = {
    1044: "the user may not use the database",
    1045: "wrong user name or password (connection.user / connection.password)",
    1698: "wrong user name or password (connection.user / connection.password)",
    1049: "the database does not exist",
    1146: "the table does not exist",
    1054: "a column does not exist",
    1142: "the user lacks a privilege",
    1064: "SQL syntax error",
}
_MY_RETRIABLE = {1040, 1205, 1213, 2002, 2003, 2005, 2006, 2013, 2055}


def translate_error(exc: BaseException, doing: str, settings: ConnectionSettings) -> Exception:
    """The ConnectException (or RetriableException) that explains a driver error.

    Args:
        exc: what SQLAlchemy or the driver raised.
        doing: what the connector was doing, e.g. ``reading table "orders"``.
        settings: the database, named by its URL with the password masked.
    """
    original = getattr(exc, "orig", None) or exc
    args: tuple[Any, ...] = tuple(getattr(original, "args", ()))
    if len(args) == 2 and isinstance(args[0], int) and isinstance(args[1], str):
        detail = _mask(f"{args[1]} (error {args[0]})", settings.password)  # PyMySQL
    else:
        detail = _mask(_first_line(original), settings.password)
    where = f"{doing} on {settings.describe()}"
    problem, retriable = _classify(original, detail)
    text = f"{where}: {problem}: {detail}" if problem else f"{where}: {detail}"
    return RetriableException(text) if retriable else ConnectException(text)


def missing_table(exc: BaseException) -> bool:
    """Whether a driver error says that a table does not exist."""
    original = getattr(exc, "orig", None) or exc
    args: tuple[Any, ...] = tuple(getattr(original, "args", ()))
    module = type(original).__module__ or ""
    if module.startswith("pymysql"):
        return bool(args) and args[0] == 1146
    if module.startswith("psycopg"):
        return getattr(original, "sqlstate", None) == "42P01"
    return "no such table" in str(original).lower()


def _classify(error: BaseException, detail: str) -> tuple[str | None, bool]:
    """What an error means for the user, and whether trying again may help."""
    lowered = detail.lower()
    args = getattr(error, "args", ())
    code = args[0] if args and isinstance(args[0], int) else None
    module = type(error).__module__ or ""
    if code is not None and module.startswith("pymysql"):
        if code in _MY_CODES:
            return _MY_CODES[code], False
        if code in _MY_RETRIABLE:
            return "the database is unreachable or went away", True
        return None, False
    state = getattr(error, "sqlstate", None)
    if isinstance(state, str) and module.startswith("psycopg"):
        if state in _PG_STATES:
            return _PG_STATES[state], False
        if state in _PG_RETRIABLE or state.startswith("08"):
            return "the database is unavailable", True
        return None, False
    if "database is locked" in lowered or "database table is locked" in lowered:
        return "the database is locked", True
    if "no such table" in lowered:
        return "the table does not exist", False
    if "no such column" in lowered:
        return "a column does not exist", False
    if "unable to open database" in lowered:
        return "the database file cannot be opened", False
    if "file is not a database" in lowered:
        return "the file is not a SQLite database", False
    if "password authentication failed" in lowered or "access denied" in lowered:
        return "wrong user name or password (connection.user / connection.password)", False
    if re.search(r'role "[^"]*" does not exist', lowered):
        return "the user does not exist (connection.user)", False
    if re.search(r'database "[^"]*" does not exist', lowered):
        return "the database does not exist", False
    unreachable = ("connection refused", "could not connect", "timeout", "timed out", "resolve")
    if module.startswith("psycopg") and any(word in lowered for word in unreachable):
        return "the database server is unreachable", True
    gone = (
        "server closed the connection",
        "connection is lost",
        "connection is closed",
        "connection reset",
        "broken pipe",
        "eof detected",
        "lost connection",
    )
    if any(word in lowered for word in gone):
        return "the database server went away", True
    return None, False
