"""Config definitions as Kafka's ConfigDef has them: a type, a default, a validator.

A config's value travels as text (AlterConfigs, CreateTopics, the log); `parse`
reads it as Kafka's ConfigDef does (numbers and booleans trimmed, lists split on
commas) and checks it, and a bad value raises `ConfigProblem` with Kafka's own
message ("Invalid value abc for configuration retention.ms: Not a number of type
LONG"). `apply_ops` folds IncrementalAlterConfigs' operations into a resource's
overrides with Kafka's rules (APPEND and SUBTRACT only on lists). Nothing here
knows topics, brokers or groups: their tables of definitions use it.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from enum import IntEnum
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    Value = bool | int | float | str | list[str]
    Check = Callable[[str, Value], None]


class ConfigType(IntEnum):
    """DescribeConfigs' config_type codes (Kafka's ConfigDef.Type)."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    """DescribeConfigs' config_source codes."""

    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    GROUP_CONFIG = 8


class OpType(IntEnum):
    """IncrementalAlterConfigs' config_operation codes."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class ConfigProblem(ValueError):
    """A config that cannot be taken; the message is Kafka's."""


class ConfigDef(NamedTuple):
    name: str
    type: ConfigType
    default: str | None  # as DescribeConfigs shows it
    check: Check | None = None


_INTEGER = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dDfF]?")
_BOUNDS = {ConfigType.INT: 2**31, ConfigType.SHORT: 2**15, ConfigType.LONG: 2**63}


def java_text(value: Value) -> str:
    """How Java prints a parsed value (Kafka's messages quote it so)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, list):
        return "[" + ", ".join(value) + "]"
    return str(value)


def _java_double(x: float) -> str:
    if math.isnan(x) or math.isinf(x):
        return "NaN" if math.isnan(x) else "Infinity" if x > 0 else "-Infinity"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        text = repr(x)
        return text if "." in text and "e" not in text else f"{x:.1f}"
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    assert isinstance(exponent, int)
    shown = "".join(map(str, digits))
    power = exponent + len(shown) - 1
    return ("-" if sign else "") + f"{shown[0]}.{shown[1:] or '0'}E{power}"


def parse(definition: ConfigDef, text: str) -> Value:
    """`text` as the config's type, checked (ConfigProblem with Kafka's message)."""
    name, kind = definition.name, definition.type
    trimmed = text.strip()
    value: Value
    if kind is ConfigType.BOOLEAN:
        if trimmed.lower() not in ("true", "false"):
            raise _invalid(name, text, "Expected value to be either true or false")
        value = trimmed.lower() == "true"
    elif kind in _BOUNDS:
        bound = _BOUNDS[kind]
        if not _INTEGER.fullmatch(trimmed) or not -bound <= int(trimmed) < bound:
            raise _invalid(name, text, f"Not a number of type {kind.name}")
        value = int(trimmed)
    elif kind is ConfigType.DOUBLE:
        if not _FLOAT.fullmatch(trimmed):
            raise _invalid(name, text, "Not a number of type DOUBLE")
        value = float(trimmed.rstrip("dDfF"))
    elif kind is ConfigType.LIST:
        value = split_list(trimmed)
    else:
        value = trimmed
    if definition.check is not None:
        definition.check(name, value)
    return value


def split_list(text: str) -> list[str]:
    """A LIST config's items, as Kafka splits them (an empty text is an empty list)."""
    return [] if not text.strip() else re.split(r"\s*,\s*", text.strip())


def _invalid(name: str, value: object, why: str) -> ConfigProblem:
    return ConfigProblem(f"Invalid value {value} for configuration {name}: {why}")


# -- validators, as Kafka's ConfigDef names them ------------------------------------------


def at_least(low: int | float) -> Check:
    def check(name: str, value: Value) -> None:
        if isinstance(value, int | float) and value < low:
            raise _invalid(name, java_text(value), f"Value must be at least {low}")
    return check


def between(low: int | float, high: int | float) -> Check:
    def check(name: str, value: Value) -> None:
        if isinstance(value, int | float):
            if value < low:
                raise _invalid(name, java_text(value), f"Value must be at least {low}")
            if value > high:
                raise _invalid(name, java_text(value), f"Value must be no more than {high}")
    return check


def one_of(*choices: str) -> Check:
    """ValidString.in (STRING) or ValidList.in (each item of a LIST)."""
    def check(name: str, value: Value) -> None:
        for item in value if isinstance(value, list) else [value]:
            if item not in choices:
                raise _invalid(name, item, "String must be one of: " + ", ".join(choices))
    return check


# -- IncrementalAlterConfigs ------------------------------------------------------------


class OpProblem(ValueError):
    """An operation Kafka refuses before validating values: (error code, message)."""

    def __init__(self, error: int, message: str | None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def apply_ops(overrides: Mapping[str, str], ops: Iterable[tuple[str, int, str | None]],
              definitions: Mapping[str, ConfigDef], *, invalid_config: int,
              invalid_request: int, unknown_error: int) -> dict[str, str]:
    """The overrides after IncrementalAlterConfigs' (name, operation, value) triples."""
    result = dict(overrides)
    for name, op, value in ops:
        if op == OpType.SET:
            if value is None:
                raise OpProblem(invalid_request, f"Null value not supported for : {name}")
            result[name] = value
        elif op == OpType.DELETE:
            result.pop(name, None)
        elif op in (OpType.APPEND, OpType.SUBTRACT):
            definition = definitions.get(name)
            if definition is None or definition.type is not ConfigType.LIST:
                raise OpProblem(invalid_config, f"Can't {OpType(op).name} to key {name} "
                                                "because its type is not LIST.")
            current = result.get(name, definition.default or "")
            items = [part for part in current.split(",") if part]
            for part in (value or "").split(","):
                if op == OpType.APPEND and part not in items:
                    items.append(part)
                elif op == OpType.SUBTRACT and part in items:
                    items.remove(part)
            result[name] = ",".join(items)
        else:
            raise OpProblem(unknown_error, None)
    return result
