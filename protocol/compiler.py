"""Turns a schema declaration into straight-line encoder/decoder functions.

For every (message, version) the compiler emits Python source specialised to
that version (fixed-width runs packed with one `struct` call, flexible vs.
classic lengths chosen at compile time, tagged fields dispatched by tag) and
`exec`s it once. The hot path then does no schema interpretation at all.
"""

from __future__ import annotations

import struct as _struct
from collections.abc import Callable
from typing import Any
from uuid import UUID

import msgspec

from .primitives import (
    UVARINT_TABLE,
    DecodeError,
    array_packer,
    array_unpacker,
    read_uvarint,
    uvarint_bytes,
)
from .schema import _MISSING, ArrayType, Field, Message, StructType

_FIXED = {
    "bool": ("?", 1),
    "int8": ("b", 1),
    "int16": ("h", 2),
    "int32": ("i", 4),
    "int64": ("q", 8),
    "uint16": ("H", 2),
    "uint32": ("I", 4),
    "float64": ("d", 8),
}

Decoder = Callable[[Any, int], tuple[Any, int]]
Encoder = Callable[[Any, bytearray], None]


class _Source:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0
        self._n = 0

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def var(self, hint: str = "v") -> str:
        self._n += 1
        return f"_{hint}{self._n}"

    def indent(self) -> _Indent:
        return _Indent(self)


class _Indent:
    def __init__(self, src: _Source) -> None:
        self.src = src

    def __enter__(self) -> None:
        self.src.depth += 1

    def __exit__(self, *exc: object) -> None:
        self.src.depth -= 1


class MessageCodec:
    """Classes and per-version codecs of one declared message."""

    def __init__(self, message: Message) -> None:
        self.message = message
        self.structs: dict[str, type] = {}
        self._class_by_struct: dict[int, type] = {}
        self._body = message.body
        self.cls = self._build_class(self._body)
        for name, cls in self.structs.items():
            setattr(self.cls, name, cls)
        self._decoders: dict[int, Decoder] = {}
        self._encoders: dict[int, Encoder] = {}

    # -- classes -------------------------------------------------------------

    def _build_class(self, st: StructType) -> type:
        known = self._class_by_struct.get(id(st))
        if known is not None:
            return known
        for fld in st.fields:
            inner = _struct_of(fld.type)
            if inner is not None:
                self.structs[inner.name] = self._build_class(inner)
        cls = msgspec.defstruct(
            st.name,
            [(fld.name, Any, self._default(fld)) for fld in st.fields],
            kw_only=True,
            gc=False,  # messages are trees, never cycles: skip GC tracking
        )
        self._class_by_struct[id(st)] = cls
        return cls

    def _default(self, fld: Field) -> Any:
        """A never-nullable struct field defaults to an empty struct, as in Kafka."""
        t = fld.type
        if isinstance(t, StructType) and fld.nullable.lo < 0 and fld.default is _MISSING:
            return msgspec.field(default_factory=self._class_by_struct[id(t)])
        return fld.default_value()

    def _fresh_default(self, fld: Field, env: dict[str, Any]) -> str:
        """Source for a tagged field's default: written only when the value differs."""
        t = fld.type
        if isinstance(t, StructType) and fld.nullable.lo < 0 and fld.default is _MISSING:
            key = f"_E{len(env)}"
            env[key] = self._class_by_struct[id(t)]
            return f"{key}()"
        return _literal(fld, env)

    # -- public --------------------------------------------------------------

    def decoder(self, version: int) -> Decoder:
        fn = self._decoders.get(version)
        if fn is None:
            fn = self._decoders[version] = self._compile(version, "decode")
        return fn

    def encoder(self, version: int) -> Encoder:
        fn = self._encoders.get(version)
        if fn is None:
            fn = self._encoders[version] = self._compile(version, "encode")
        return fn

    def decode(self, buf: bytes, version: int) -> Any:
        """Decode a whole buffer; trailing bytes or a short buffer are errors."""
        try:
            obj, pos = self.decoder(version)(buf, 0)
        except (_struct.error, IndexError, ValueError, UnicodeDecodeError) as exc:
            raise DecodeError(f"{self.message.name} v{version}: {exc}") from None
        if pos != len(buf):
            raise DecodeError(
                f"{self.message.name} v{version}: consumed {pos} of {len(buf)} bytes"
            )
        return obj

    def encode(self, obj: Any, version: int) -> bytes:
        out = bytearray()
        self.encoder(version)(obj, out)
        return bytes(out)

    # -- code generation -----------------------------------------------------

    def _compile(self, version: int, what: str) -> Callable[..., Any]:
        if version not in self.message.valid:
            raise KeyError(f"{self.message.name} has no version {version}")
        flexible = version in self.message.flexible
        src = _Source()
        env: dict[str, Any] = {
            "_DecodeError": DecodeError,
            "_uvarint": read_uvarint,
            "_UVT": UVARINT_TABLE,
            "_uvb": uvarint_bytes,
            "_UUID": UUID,
            "_struct": _struct,
        }
        done: dict[int, str] = {}
        emit = self._emit_decoder if what == "decode" else self._emit_encoder
        root = emit(self._body, version, flexible, src, env, done)
        code = "\n".join(src.lines)
        exec(compile(code, f"<kcsim {what} {self.message.name} v{version}>", "exec"), env)
        fn = env[root]
        fn.__source__ = code  # type: ignore[attr-defined]
        return fn  # type: ignore[no-any-return]

    def _emit_decoder(
        self, st: StructType, version: int, flexible: bool, src: _Source,
        env: dict[str, Any], done: dict[int, str],
    ) -> str:
        if id(st) in done:
            return done[id(st)]
        fname = f"_d_{st.name}_{len(done)}"
        done[id(st)] = fname
        for fld in st.fields:
            inner = _struct_of(fld.type)
            if inner is not None and version in fld.versions:
                self._emit_decoder(inner, version, flexible, src, env, done)
        env[f"_C_{fname}"] = self._class_by_struct[id(st)]
        src(f"def {fname}(buf, pos):")
        with src.indent():
            names: list[str] = []
            regular = [x for x in st.fields if version in x.versions and version not in x.tagged]
            tagged = [x for x in st.fields if version in x.tagged]
            for run in _runs(regular):
                if isinstance(run, list):
                    fmt = ">" + "".join(_FIXED[x.type][0] for x in run)  # type: ignore[index]
                    packer = _struct.Struct(fmt)
                    key = f"_S{len(env)}"
                    env[key] = packer.unpack_from
                    targets = ", ".join(f"f_{x.name}" for x in run)
                    src(f"({targets},) = {key}(buf, pos)")
                    src(f"pos += {packer.size}")
                    names.extend(x.name for x in run)
                else:
                    self._decode_value(run, f"f_{run.name}", version, flexible, src, env, done)
                    names.append(run.name)
            if flexible:
                for x in tagged:
                    src(f"f_{x.name} = {self._fresh_default(x, env)}")
                    names.append(x.name)
                n = src.var("nt")
                src("if buf[pos] == 0:")  # no tagged fields: the common case
                with src.indent():
                    src("pos += 1")
                src("else:")
                with src.indent():
                    _emit_uvarint(src, n)
                    self._emit_tag_loop(n, tagged, version, src, env, done)
            args = ", ".join(f"{x}=f_{x}" for x in names)
            src(f"return _C_{fname}({args}), pos")
        return fname

    def _emit_tag_loop(
        self, n: str, tagged: list[Field], version: int, src: _Source,
        env: dict[str, Any], done: dict[int, str],
    ) -> None:
        """Decode `n` tagged fields: known tags into their fields, unknown ones skipped."""
        src(f"for _ in range({n}):")
        with src.indent():
            t = src.var("tag")
            s = src.var("sz")
            _emit_uvarint(src, t)
            _emit_uvarint(src, s)
            first = True
            for x in tagged:
                src(f"{'if' if first else 'elif'} {t} == {x.tag}:")
                first = False
                with src.indent():
                    self._decode_value(x, f"f_{x.name}", version, True, src, env, done)
            src("else:" if tagged else "if True:")
            with src.indent():
                src(f"if {s} > len(buf) - pos:")
                with src.indent():
                    src(f"raise _DecodeError('tagged field of ' + str({s}) + ' bytes"
                        " exceeds the frame')")
                src(f"pos += {s}")

    def _decode_value(
        self, fld: Field, target: str, version: int, flexible: bool, src: _Source,
        env: dict[str, Any], done: dict[int, str],
    ) -> None:
        nullable = version in fld.nullable
        t = fld.type
        if isinstance(t, ArrayType):
            n = src.var("n")
            _read_length(src, n, flexible)
            src(f"if {n} < 0:")
            with src.indent():
                src(f"{target} = None" if nullable else f"{target} = []")
            src(f"elif {n} > len(buf) - pos:")
            with src.indent():
                src(f"raise _DecodeError('array of ' + str({n}) + ' items exceeds the frame')")
            src("else:")
            with src.indent():
                item = t.item
                if isinstance(item, StructType):
                    sub = done[id(item)]
                    src(f"{target} = []")
                    src(f"_ap = {target}.append")
                    src(f"for _ in range({n}):")
                    with src.indent():
                        src(f"_it, pos = {sub}(buf, pos)")
                        src("_ap(_it)")
                elif item in _FIXED:
                    ch, size = _FIXED[item]
                    env[f"_AU_{ch}"] = array_unpacker(ch)
                    src(f"{target} = _AU_{ch}({n}, buf, pos)")
                    src(f"pos += {size} * {n}")
                else:
                    src(f"{target} = []")
                    src(f"for _ in range({n}):")
                    with src.indent():
                        inner = Field(name="_", type=item, versions=fld.versions)
                        self._decode_value(inner, "_it", version, flexible, src, env, done)
                        src(f"{target}.append(_it)")
            return
        if isinstance(t, StructType):
            sub = done[id(t)]
            if nullable:
                src("if buf[pos] == 255:")
                with src.indent():
                    src(f"{target} = None")
                    src("pos += 1")
                src("else:")
                with src.indent():
                    src("pos += 1")
                    src(f"{target}, pos = {sub}(buf, pos)")
            else:
                src(f"{target}, pos = {sub}(buf, pos)")
            return
        if t in _FIXED:
            ch, size = _FIXED[t]
            key = f"_S{len(env)}"
            env[key] = _struct.Struct(">" + ch).unpack_from
            src(f"({target},) = {key}(buf, pos)")
            src(f"pos += {size}")
            return
        if t == "uuid":
            src(f"{target} = _UUID(bytes=bytes(buf[pos:pos + 16]))")
            src("pos += 16")
            return
        # string, bytes, records: length-prefixed
        n = src.var("n")
        if t == "string":
            _read_length(src, n, flexible, classic="h")
        else:
            _read_length(src, n, flexible)
        src(f"if {n} < 0:")
        with src.indent():
            src(f"{target} = None")
        if t == "string":
            src(f"elif {n} == 0:")
            with src.indent():
                src(f"{target} = ''")
        src(f"elif {n} > len(buf) - pos:")
        with src.indent():
            src(f"raise _DecodeError('length ' + str({n}) + ' exceeds the frame')")
        src("else:")
        with src.indent():
            if t == "string":
                src(f"{target} = str(buf[pos:pos + {n}], 'utf-8')")
            else:
                src(f"{target} = bytes(buf[pos:pos + {n}])")
            src(f"pos += {n}")

    def _emit_encoder(
        self, st: StructType, version: int, flexible: bool, src: _Source,
        env: dict[str, Any], done: dict[int, str],
    ) -> str:
        if id(st) in done:
            return done[id(st)]
        fname = f"_e_{st.name}_{len(done)}"
        done[id(st)] = fname
        for fld in st.fields:
            inner = _struct_of(fld.type)
            if inner is not None and version in fld.versions:
                self._emit_encoder(inner, version, flexible, src, env, done)
        src(f"def {fname}(m, out):")
        with src.indent():
            regular = [x for x in st.fields if version in x.versions and version not in x.tagged]
            tagged = sorted(
                (x for x in st.fields if version in x.tagged), key=lambda x: x.tag or 0
            )
            for run in _runs(regular):
                if isinstance(run, list):
                    fmt = ">" + "".join(_FIXED[x.type][0] for x in run)  # type: ignore[index]
                    key = f"_P{len(env)}"
                    env[key] = _struct.Struct(fmt).pack
                    args = ", ".join(f"m.{x.name}" for x in run)
                    src(f"out += {key}({args})")
                else:
                    self._encode_value(run, f"m.{run.name}", version, flexible, src, env, done)
            if flexible:
                if not tagged:
                    src("out += b'\\x00'")
                else:
                    tl = src.var("tags")
                    src(f"{tl} = []")
                    for x in tagged:
                        dflt = self._fresh_default(x, env)
                        src(f"if m.{x.name} is not None and m.{x.name} != {dflt}:"
                            if isinstance(x.type, StructType) else f"if m.{x.name} != {dflt}:")
                        with src.indent():
                            src("_outer, out = out, bytearray()")
                            self._encode_value(x, f"m.{x.name}", version, True, src, env, done)
                            src(f"{tl}.append(({x.tag}, out))")
                            src("out = _outer")
                    src(f"out += _UVT[len({tl})]")
                    src(f"for _t, _b in {tl}:")
                    with src.indent():
                        src("out += _UVT[_t] if _t < 128 else _uvb(_t)")
                        src("out += _UVT[len(_b)] if len(_b) < 128 else _uvb(len(_b))")
                        src("out += _b")
            src("return None")
        return fname

    def _encode_value(
        self, fld: Field, expr: str, version: int, flexible: bool, src: _Source,
        env: dict[str, Any], done: dict[int, str],
    ) -> None:
        nullable = version in fld.nullable
        t = fld.type
        if isinstance(t, ArrayType):
            v = src.var("a")
            src(f"{v} = {expr}")
            src(f"if {v} is None:")
            with src.indent():
                if nullable:
                    src("out += b'\\x00'" if flexible else "out += b'\\xff\\xff\\xff\\xff'")
                else:
                    src("out += b'\\x01'" if flexible else "out += b'\\x00\\x00\\x00\\x00'")
            src("else:")
            with src.indent():
                _write_length(src, f"len({v})", flexible)
                item = t.item
                if isinstance(item, StructType):
                    sub = done[id(item)]
                    src(f"for _it in {v}:")
                    with src.indent():
                        src(f"{sub}(_it, out)")
                elif item in _FIXED:
                    ch, _ = _FIXED[item]
                    env[f"_AP_{ch}"] = array_packer(ch)
                    src(f"out += _AP_{ch}({v})")
                else:
                    src(f"for _it in {v}:")
                    with src.indent():
                        inner = Field(name="_", type=item, versions=fld.versions)
                        self._encode_value(inner, "_it", version, flexible, src, env, done)
            return
        if isinstance(t, StructType):
            sub = done[id(t)]
            if nullable:
                v = src.var("s")
                src(f"{v} = {expr}")
                src(f"if {v} is None:")
                with src.indent():
                    src("out += b'\\xff'")
                src("else:")
                with src.indent():
                    src("out += b'\\x01'")
                    src(f"{sub}({v}, out)")
            else:
                src(f"{sub}({expr}, out)")
            return
        if t in _FIXED:
            ch, _ = _FIXED[t]
            key = f"_P{len(env)}"
            env[key] = _struct.Struct(">" + ch).pack
            src(f"out += {key}({expr})")
            return
        if t == "uuid":
            src(f"out += {expr}.bytes")
            return
        v = src.var("b")
        src(f"{v} = {expr}")
        if t == "string":
            src(f"if {v} is None:")
            with src.indent():
                if nullable:
                    src("out += b'\\x00'" if flexible else "out += b'\\xff\\xff'")
                else:
                    src("out += b'\\x01'" if flexible else "out += b'\\x00\\x00'")
            src("else:")
            with src.indent():
                src(f"{v} = {v}.encode()")
                _write_length(src, f"len({v})", flexible, classic="h")
                src(f"out += {v}")
            return
        # bytes / records
        src(f"if {v} is None:")
        with src.indent():
            if nullable or t == "records":
                src("out += b'\\x00'" if flexible else "out += b'\\xff\\xff\\xff\\xff'")
            else:
                src("out += b'\\x01'" if flexible else "out += b'\\x00\\x00\\x00\\x00'")
        src("else:")
        with src.indent():
            _write_length(src, f"len({v})", flexible)
            src(f"out += {v}")


def _struct_of(t: Any) -> StructType | None:
    if isinstance(t, StructType):
        return t
    if isinstance(t, ArrayType) and isinstance(t.item, StructType):
        return t.item
    return None


def _runs(fields: list[Field]) -> list[Any]:
    """Group consecutive fixed-width fields so one struct call handles them."""
    out: list[Any] = []
    for fld in fields:
        if isinstance(fld.type, str) and fld.type in _FIXED:
            if out and isinstance(out[-1], list):
                out[-1].append(fld)
            else:
                out.append([fld])
        else:
            out.append(fld)
    return out


def _emit_uvarint(src: _Source, target: str) -> None:
    """Inline the one-byte fast path of an unsigned varint read."""
    src(f"{target} = buf[pos]")
    src(f"if {target} < 128: pos += 1")
    src(f"else: {target}, pos = _uvarint(buf, pos)")


def _read_length(src: _Source, target: str, flexible: bool, classic: str = "i") -> None:
    """Emit code reading an array/bytes/string length (-1 means null)."""
    if flexible:
        _emit_uvarint(src, target)
        src(f"{target} -= 1")
    else:
        size = 2 if classic == "h" else 4
        src(f"({target},) = _struct.unpack_from('>{classic}', buf, pos)")
        src(f"pos += {size}")


def _write_length(src: _Source, expr: str, flexible: bool, classic: str = "i") -> None:
    if flexible:
        src(f"_l = {expr} + 1")
        src("out += _UVT[_l] if _l < 128 else _uvb(_l)")
    else:
        src(f"out += _struct.pack('>{classic}', {expr})")


def _literal(fld: Field, env: dict[str, Any]) -> str:
    """A source expression for a field's default (fresh for mutable defaults)."""
    value = fld.default_value()
    if isinstance(value, list):
        return "[]"
    key = f"_D{len(env)}"
    env[key] = value
    return key
