"""The connection keys both RabbitMQ connectors share, and how pika's errors become Connect's.

Every call to RabbitMQ ends in bounded time: opening a connection is bounded by
``rabbitmq.connection.timeout.ms`` (TCP connect and socket operations) and
``rabbitmq.handshake.timeout.ms`` (the whole AMQP handshake); once open, a broker that stops
answering is detected by the heartbeat (``rabbitmq.requested.heartbeat.seconds``: pika closes
the connection when no frame came for about twice that), and a broker that blocks publishers
(a memory or disk alarm) for longer than ``rabbitmq.blocked.connection.timeout.ms`` closes it.
The password is never logged or put in an error message.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pika
import pika.exceptions

from cdk import (
    Config,
    ConfigDef,
    ConfigValue,
    ConnectException,
    Importance,
    RetriableException,
    Type,
)
from cdk.config import AbstractConfig, validators

__all__ = [
    "HOST",
    "PASSWORD",
    "PORT",
    "USERNAME",
    "VIRTUAL_HOST",
    "ConnectionSettings",
    "check_broker",
    "define_connection",
    "failure",
    "is_fatal",
    "reporting_missing",
    "translate",
]

log = logging.getLogger(__name__)

VERSION = "0.1.0"

HOST = "rabbitmq.host"
PORT = "rabbitmq.port"
USERNAME = "rabbitmq.username"
PASSWORD = "rabbitmq.password"
VIRTUAL_HOST = "rabbitmq.virtual.host"
CONNECTION_TIMEOUT_MS = "rabbitmq.connection.timeout.ms"
HANDSHAKE_TIMEOUT_MS = "rabbitmq.handshake.timeout.ms"
HEARTBEAT_SECONDS = "rabbitmq.requested.heartbeat.seconds"
BLOCKED_TIMEOUT_MS = "rabbitmq.blocked.connection.timeout.ms"

GROUP = "RabbitMQ connection"

#: AMQP reply codes that no retry can cure (the rest of a closed connection is transient).
NOT_FOUND = 404
ACCESS_REFUSED = 403
NOT_ALLOWED = 530
_FATAL_CODES = frozenset({NOT_FOUND, ACCESS_REFUSED, NOT_ALLOWED, 402, 406})


def define_connection(config: ConfigDef) -> ConfigDef:
    """Add the connection keys to ``config`` and return it."""
    order = iter(range(1, 100))
    return (
        config.define(
            HOST,
            Type.STRING,
            "localhost",
            validators.NonEmptyStringWithoutControlChars(),
            Importance.HIGH,
            "The RabbitMQ host to connect to.",
            group=GROUP,
            order_in_group=next(order),
        )
        .define(
            PORT,
            Type.INT,
            5672,
            validators.Range.between(1, 65535),
            Importance.MEDIUM,
            "The RabbitMQ port (AMQP 0-9-1, without TLS).",
            group=GROUP,
            order_in_group=next(order),
        )
        .define(
            USERNAME,
            Type.STRING,
            "guest",
            validators.NonEmptyString(),
            Importance.HIGH,
            "The user to authenticate as (PLAIN).",
            group=GROUP,
            order_in_group=next(order),
        )
        .define(
            PASSWORD,
            Type.PASSWORD,
            "guest",
            None,
            Importance.HIGH,
            "The user's password. Never logged.",
            group=GROUP,
            order_in_group=next(order),
        )
        .define(
            VIRTUAL_HOST,
            Type.STRING,
            "/",
            validators.NonEmptyString(),
            Importance.MEDIUM,
            "The virtual host to use.",
            group=GROUP,
            order_in_group=next(order),
        )
        .define(
            CONNECTION_TIMEOUT_MS,
            Type.INT,
            10_000,
            validators.Range.between(1, 3_600_000),
            Importance.LOW,
            "How long a TCP connect and each socket operation while connecting may take.",
            group=GROUP,
            order_in_group=next(order),
        )
        .define(
            HANDSHAKE_TIMEOUT_MS,
            Type.INT,
            10_000,
            validators.Range.between(1, 3_600_000),
            Importance.LOW,
            "How long opening a connection may take in all (TCP connect and AMQP handshake).",
            group=GROUP,
            order_in_group=next(order),
        )
        .define(
            HEARTBEAT_SECONDS,
            Type.INT,
            10,
            validators.Range.between(1, 3600),
            Importance.LOW,
            "The heartbeat interval to request: a broker that sends nothing for about twice "
            "this long is taken for lost (so a call to an unresponsive broker ends).",
            group=GROUP,
            order_in_group=next(order),
        )
        .define(
            BLOCKED_TIMEOUT_MS,
            Type.INT,
            60_000,
            validators.Range.between(1, 3_600_000),
            Importance.LOW,
            "How long the broker may block the connection (a memory or disk alarm) before it "
            "is closed and the call fails with a retriable error.",
            group=GROUP,
            order_in_group=next(order),
        )
    )


@dataclass(frozen=True)
class ConnectionSettings:
    """Where and how to connect; ``str()`` shows no password.

    Attributes:
        host: the broker's host.
        port: its AMQP port.
        username: the user.
        password: the user's password (never shown).
        virtual_host: the virtual host.
        connection_timeout: seconds for a TCP connect and each socket operation.
        handshake_timeout: seconds for opening a connection in all.
        heartbeat: the heartbeat interval to request, in seconds.
        blocked_timeout: seconds the broker may block the connection.
    """

    host: str
    port: int
    username: str
    password: str
    virtual_host: str
    connection_timeout: float = 10.0
    handshake_timeout: float = 10.0
    heartbeat: int = 10
    blocked_timeout: float = 60.0

    @classmethod
    def from_config(cls, config: AbstractConfig) -> ConnectionSettings:
        """The settings of a parsed config."""
        return cls(
            host=config.get_string(HOST),
            port=config.get_int(PORT),
            username=config.get_string(USERNAME),
            password=config.get_password(PASSWORD).value(),
            virtual_host=config.get_string(VIRTUAL_HOST),
            connection_timeout=config.get_int(CONNECTION_TIMEOUT_MS) / 1000,
            handshake_timeout=config.get_int(HANDSHAKE_TIMEOUT_MS) / 1000,
            heartbeat=config.get_int(HEARTBEAT_SECONDS),
            blocked_timeout=config.get_int(BLOCKED_TIMEOUT_MS) / 1000,
        )

    @classmethod
    def from_values(cls, values: dict[str, ConfigValue]) -> ConnectionSettings:
        """The settings of validated config values (``validate()``: no error on these keys)."""

        def get(key: str) -> Any:
            return values[key].value

        password = get(PASSWORD)
        return cls(
            host=get(HOST),
            port=get(PORT),
            username=get(USERNAME),
            password=password.value() if password is not None else "",
            virtual_host=get(VIRTUAL_HOST),
            connection_timeout=get(CONNECTION_TIMEOUT_MS) / 1000,
            handshake_timeout=get(HANDSHAKE_TIMEOUT_MS) / 1000,
            heartbeat=get(HEARTBEAT_SECONDS),
            blocked_timeout=get(BLOCKED_TIMEOUT_MS) / 1000,
        )

    def __str__(self) -> str:
        return (
            f"RabbitMQ {self.username}@{self.host}:{self.port} (virtual host {self.virtual_host!r})"
        )

    def parameters(self, name: str) -> pika.ConnectionParameters:
        """Pika's parameters: one attempt, every wait bounded; ``name`` shows in the broker."""
        return pika.ConnectionParameters(
            host=self.host,
            port=self.port,
            virtual_host=self.virtual_host,
            credentials=pika.PlainCredentials(self.username, self.password),
            heartbeat=self.heartbeat,
            connection_attempts=1,
            socket_timeout=self.connection_timeout,
            stack_timeout=self.handshake_timeout,
            blocked_connection_timeout=self.blocked_timeout,
            client_properties={"connection_name": name},
        )

    def connect(self, name: str) -> pika.BlockingConnection:
        """Open a connection (bounded by the timeouts).

        Raises:
            ConnectException: the broker refused the user or the virtual host (fatal).
            RetriableException: the broker cannot be reached or the connection failed.
        """
        try:
            return pika.BlockingConnection(self.parameters(name))
        except Exception as exc:
            raise translate(exc, f"connecting to {self}") from exc


def is_fatal(exc: BaseException) -> bool:
    """Whether a pika error cannot be cured by reconnecting (credentials, a missing object)."""
    if isinstance(
        exc,
        pika.exceptions.ProbableAuthenticationError
        | pika.exceptions.ProbableAccessDeniedError
        | pika.exceptions.AuthenticationError
        | pika.exceptions.IncompatibleProtocolError,
    ):
        return True
    if isinstance(exc, pika.exceptions.ConnectionOpenAborted) and exc.args:
        return any(is_fatal(arg) for arg in exc.args if isinstance(arg, BaseException))
    if isinstance(
        exc, pika.exceptions.ChannelClosedByBroker | pika.exceptions.ConnectionClosedByBroker
    ):
        return exc.reply_code in _FATAL_CODES
    return False


def describe(exc: BaseException) -> str:
    """A pika error in words (pika's own ``str()`` is often empty or a bare tuple)."""
    if isinstance(
        exc, pika.exceptions.ChannelClosedByBroker | pika.exceptions.ConnectionClosedByBroker
    ):
        return f"{exc.reply_code} {exc.reply_text}"
    if isinstance(exc, pika.exceptions.ProbableAuthenticationError):
        return "authentication refused (wrong username or password?)"
    if isinstance(exc, pika.exceptions.ProbableAccessDeniedError):
        return "access refused to the virtual host"
    if isinstance(exc, pika.exceptions.AMQPConnectionError) and exc.args:
        inner = exc.args[0]
        if isinstance(inner, BaseException):
            return describe(inner)
    text = str(exc) or repr(exc)
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


def translate(exc: BaseException, doing: str) -> ConnectException:
    """The Connect exception for a pika error while ``doing`` something.

    A fatal error (:func:`is_fatal`) is a :class:`ConnectException`; a lost or refused
    connection (and anything else pika raises) a :class:`RetriableException`.
    """
    if isinstance(exc, ConnectException):
        return exc
    message = f"{doing}: {describe(exc)}"
    if is_fatal(exc):
        return ConnectException(message)
    return RetriableException(message)


def failure(
    exc: BaseException,
    doing: str,
    settings: ConnectionSettings | None,
    missing: str,
    *,
    retrying: str = "",
) -> ConnectException:
    """The exception a task raises for a pika error while ``doing`` something on the broker.

    A channel the broker closed because an object is missing (404) is fatal and says that
    ``missing`` (e.g. ``exchange 'x'``) does not exist; other fatal errors (:func:`is_fatal`)
    are a :class:`ConnectException`, the rest a :class:`RetriableException` whose message says
    ``retrying`` after the broker (the source's ``" (reconnecting)"``).
    """
    if isinstance(exc, pika.exceptions.ChannelClosedByBroker) and exc.reply_code == NOT_FOUND:
        return ConnectException(
            f"{doing}: {missing} does not exist in {settings} (deleted?): {describe(exc)}"
        )
    where = f"{doing} on {settings}"
    return translate(exc, where if is_fatal(exc) else where + retrying)


#: What :func:`check_broker` checks once connected: the objects the config names.
BrokerCheck = Callable[[pika.BlockingConnection, ConnectionSettings, dict[str, ConfigValue]], None]


def check_broker(config: Config, what: str, check: BrokerCheck) -> Config:
    """Add to a validated ``config`` what is wrong with the broker, then what ``check`` finds.

    Nothing is checked when a key has an error already. A connection that fails is reported on
    the key to fix (:data:`USERNAME` for refused credentials, :data:`VIRTUAL_HOST` for a refused
    virtual host, else :data:`HOST`); once connected, ``check(connection, settings, by_name)``
    adds errors to the config values ``by_name``, and anything else it raises is reported on
    :data:`HOST` as a failure while checking ``what`` (e.g. ``the queues``). Never raises.
    """
    by_name = {value.name: value for value in config.config_values}
    if any(value.error_messages for value in by_name.values()):
        return config  # a key is wrong already: no point in connecting
    settings = ConnectionSettings.from_values(by_name)
    try:
        connection = pika.BlockingConnection(settings.parameters("cdk-validate"))
    except Exception as exc:  # noqa: BLE001 - validate() reports, never raises
        message = f"cannot connect to {settings}: {describe(exc)}"
        by_name[_refused_key(exc)].add_error_message(message)
        return config
    try:
        check(connection, settings, by_name)
    except Exception as exc:  # noqa: BLE001 - validate() reports, never raises
        by_name[HOST].add_error_message(f"checking {what} on {settings}: {describe(exc)}")
    finally:
        close_quietly(connection)
    return config


def _refused_key(exc: BaseException) -> str:
    """The key to blame for a connection that could not be opened."""
    inner = exc.args[0] if exc.args and isinstance(exc.args[0], BaseException) else exc
    if isinstance(
        inner, pika.exceptions.ProbableAuthenticationError | pika.exceptions.AuthenticationError
    ):
        return USERNAME
    if isinstance(inner, pika.exceptions.ProbableAccessDeniedError) or (
        isinstance(inner, pika.exceptions.ConnectionClosedByBroker)
        and inner.reply_code in (NOT_ALLOWED, ACCESS_REFUSED)
    ):
        return VIRTUAL_HOST
    return HOST


@contextlib.contextmanager
def reporting_missing(
    value: ConfigValue, what: str, settings: ConnectionSettings
) -> Iterator[None]:
    """Report on ``value`` that ``what`` (e.g. ``queue 'q'``) does not exist, if the block finds so.

    The block's passive declare of a missing object makes the broker close the channel (404):
    that ends the block, and is reported rather than raised.
    """
    try:
        yield
    except pika.exceptions.ChannelClosedByBroker as exc:
        if exc.reply_code == NOT_FOUND:
            value.add_error_message(
                f"{what} does not exist in virtual host {settings.virtual_host!r} of {settings}"
            )
        else:
            value.add_error_message(f"{what}: {describe(exc)}")


@contextlib.contextmanager
def quietly_closing(connection: pika.BlockingConnection | None) -> Iterator[None]:
    """Close ``connection`` when the block ends, ignoring a connection that is already gone."""
    try:
        yield
    finally:
        close_quietly(connection)


def close_quietly(connection: pika.BlockingConnection | None) -> None:
    """Close a connection, ignoring one that is already closed or broken."""
    if connection is None:
        return
    try:
        if connection.is_open:
            connection.close()
    except Exception as exc:  # noqa: BLE001 - a broken connection is closed anyway
        log.debug("closing a RabbitMQ connection: %s", describe(exc))
