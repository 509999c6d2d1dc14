"""Turns a schema declaration into straight-line encoder/decoder functions.

For every (message, version) the compiler emits Python source specialised to
that version (fixed-width runs packed with one `struct` call, flexible vs.
classic lengths chosen at compile time, tagged fields dispatched by tag, nested
structs inlined into one function) and `exec`s it once. The hot path then does
no schema interpretation at all, and no Python call per struct.
"""

from __future__ import annotations

import struct as _struct
from collections.abc import Callable
from typing import Any
from uuid import UUID

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
CountingEncoder = Callable[[Any, bytearray, dict[int, int]], int]


class _Source:
    """Lines of generated code, plus what error messages name: `label` is "Message vN";
    `diag` emits a record of the field being read before each read (the slow decoder that
    names the field a short or malformed buffer broke in)."""

    def __init__(self, label: str, diag: bool = False, counting: bool = False) -> None:
        self.lines: list[str] = []
        self.depth = 0
        self._n = 0
        self.label = label
        self.diag = diag
        self.counting = counting

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
    """Classes and per-version codecs of one declared message.

    `cls` is the message's static class (generated into `protocol/messages` by
    `protocol/typegen.py`); its nested classes are the message's structs."""

    def __init__(self, message: Message, cls: type) -> None:
        self.message = message
        self.cls = cls
        self.structs: dict[str, type] = {}
        self._class_by_struct: dict[int, type] = {}
        self._body = message.body
        self._bind(self._body, cls)
        self._decoders: dict[int, Decoder] = {}
        self._encoders: dict[int, Encoder] = {}
        self._explainers: dict[int, Decoder] = {}
        self._counting_encoders: dict[int, CountingEncoder] = {}

    # -- classes -------------------------------------------------------------

    def _bind(self, st: StructType, cls: type) -> None:
        """Map `st` and the structs it nests to their classes, checking each matches."""
        fields = tuple(fld.name for fld in st.fields)
        if getattr(cls, "__struct_fields__", None) != fields:
            raise RuntimeError(f"{cls.__qualname__} does not match the declaration of "
                               f"{st.name}: regenerate protocol/messages (make messages)")
        self._class_by_struct[id(st)] = cls
        for fld in st.fields:
            inner = _struct_of(fld.type)
            if inner is not None and id(inner) not in self._class_by_struct:
                inner_cls = getattr(self.cls, inner.name)
                self._bind(inner, inner_cls)
                self.structs[inner.name] = inner_cls

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
        """`(buf, pos) -> (obj, end)`; raises only DecodeError, naming the field at fault.

        It reads one message and stops: bytes after it are the caller's business
        (a Kafka broker ignores whatever follows a request body).
        """
        fn = self._decoders.get(version)
        if fn is None:
            fn = self._decoders[version] = self._compile(version, "decode")
        return fn

    def encoder(self, version: int) -> Encoder:
        fn = self._encoders.get(version)
        if fn is None:
            fn = self._encoders[version] = self._compile(version, "encode")
        return fn

    def counting_encoder(self, version: int) -> CountingEncoder:
        """`(obj, out, errors) -> n`: the encoder that also counts the error codes it writes,
        as Kafka's `errorCounts` does: each non-zero code into `errors` (code -> times), and
        returns how many it wrote, NONE included. Counting where the codes are written
        anyway costs a test per code, not a second walk of the answer."""
        fn = self._counting_encoders.get(version)
        if fn is None:
            fn = self._counting_encoders[version] = self._compile(version, "encode-counting")
        return fn

    def decode(self, buf: bytes, version: int) -> Any:
        """Decode a whole buffer; trailing bytes or a short buffer are errors."""
        obj, pos = self.decoder(version)(buf, 0)
        if pos != len(buf):
            raise DecodeError(
                f"{self.message.name} v{version}: {len(buf) - pos} bytes after the message"
            )
        return obj

    def encode(self, obj: Any, version: int) -> bytes:
        out = bytearray()
        self.encoder(version)(obj, out)
        return bytes(out)

    def explain(self, buf: Any, pos: int, version: int) -> str:
        """Why `buf` at `pos` is not a message of `version`: reruns a decoder that notes
        each field before reading it, so the error names the field (the cold path)."""
        fn = self._explainers.get(version)
        if fn is None:
            fn = self._explainers[version] = self._compile(version, "explain")
        try:
            fn(buf, pos)
        except DecodeError as exc:
            return str(exc)
        return f"{self.message.name} v{version}: malformed"  # pragma: no cover - both fail

    # -- code generation -----------------------------------------------------
    #
    # Each (message, version) compiles to one function: nested structs are
    # inlined where they are used, so an array of structs costs no Python call
    # per element. Temporaries of inlined code get unique names.

    def _compile(self, version: int, what: str) -> Callable[..., Any]:
        if version not in self.message.valid:
            raise KeyError(f"{self.message.name} has no version {version}")
        flexible = version in self.message.flexible
        src = _Source(f"{self.message.name} v{version}", diag=what == "explain",
                      counting=what == "encode-counting")
        env: dict[str, Any] = {
            "_DecodeError": DecodeError,
            "_StructError": _struct.error,
            "_explain": self.explain,
            "_why": _why,
            "_uvarint": read_uvarint,
            "_UVT": UVARINT_TABLE,
            "_uvb": uvarint_bytes,
            "_UUID": UUID,
            # classic length prefixes, precompiled rather than looked up by format
            "_Uh": _struct.Struct(">h").unpack_from,
            "_Ui": _struct.Struct(">i").unpack_from,
            "_Ph": _struct.Struct(">h").pack,
            "_Pi": _struct.Struct(">i").pack,
        }
        emit = self._emit_encoder if what.startswith("encode") else self._emit_decoder
        root = emit(self._body, version, flexible, src, env)
        code = "\n".join(src.lines)
        exec(compile(code, f"<kcsim {what} {self.message.name} v{version}>", "exec"), env)
        fn: Callable[..., Any] = env[root]
        vars(fn)["__source__"] = code  # kept for reading what was generated
        return fn

    def _class_ref(self, st: StructType, env: dict[str, Any]) -> str:
        """The name generated code calls to build `st` (one per class, however often used)."""
        cls = self._class_by_struct[id(st)]
        key = f"_C_{st.name}"
        while env.get(key, cls) is not cls:
            key += "_"
        env[key] = cls
        return key

    # -- decoders ------------------------------------------------------------

    def _emit_decoder(
        self, st: StructType, version: int, flexible: bool, src: _Source, env: dict[str, Any],
    ) -> str:
        """The function `(buf, pos) -> (obj, pos)` decoding the message body `st`.

        Lengths, counts and nulls are checked where they are read and the error
        names the field. A fixed-width read past the end, a UUID cut short, etc.
        surface as other exceptions; the `try` costs nothing until one happens,
        and then the explaining decoder says which field it was. That decoder
        turns every exception into a DecodeError naming the field it was reading.
        """
        fname = f"_d_{st.name}"
        src(f"def {fname}(buf, pos):")
        with src.indent():
            src("_p0 = pos" if not src.diag else f"_at = {'(start)'!r}")
            src("try:")
            with src.indent():
                src("_end = len(buf)")  # for the bounds checks of lengths read from the wire
                obj = self._decode_fields(st, "f_", "", version, flexible, src, env)
                src(f"return {obj}, pos")
            # A DecodeError this code raised names its field already (it starts with
            # the label); one from a helper (an overlong varint) does not.
            if src.diag:
                src("except Exception as _exc:")
                with src.indent():
                    src(f"if isinstance(_exc, _DecodeError) and str(_exc).startswith({src.label!r}):")
                    with src.indent():
                        src("raise")
                    src(f"raise _DecodeError({src.label + ', field '!r} + _at + ': '"
                        " + _why(_exc)) from None")
            else:
                src("except (_StructError, IndexError, ValueError, OverflowError) as _exc:")
                with src.indent():
                    src(f"if isinstance(_exc, _DecodeError) and str(_exc).startswith({src.label!r}):")
                    with src.indent():
                        src("raise")
                    src(f"raise _DecodeError(_explain(buf, _p0, {version})) from None")
        return fname

    def _decode_fields(
        self, st: StructType, prefix: str, path: str, version: int, flexible: bool,
        src: _Source, env: dict[str, Any],
    ) -> str:
        """Decode `st` at `pos` into locals `prefix + field`; return the expression building it.

        Consecutive fixed-width fields are read with one `unpack_from`, which
        also takes the length prefix or tagged-field count that follows them.
        `path` names the struct in error messages ("topics[].").
        """
        names: list[str] = []
        run: list[tuple[str, str]] = []
        for fld in st.fields:
            if version not in fld.versions or version in fld.tagged:
                continue
            target = prefix + fld.name
            names.append(fld.name)
            code = _fixed_code(fld.type)
            if code is not None:
                if src.diag:
                    src(f"_at = {path + fld.name!r}")
                run.append((code, target))
                if src.diag:
                    _flush_unpack(run, src, env)
                continue
            if src.diag:
                src(f"_at = {path + fld.name!r}")
            length = _flush_with_length(fld.type, path + fld.name, flexible, run, src, env)
            self._decode_value(fld, target, path + fld.name, version, flexible, src, env, length)
        if flexible:
            tagged = [x for x in st.fields if version in x.tagged]
            for x in tagged:
                src(f"{prefix}{x.name} = {self._fresh_default(x, env)}")
                names.append(x.name)
            if src.diag:
                _flush_unpack(run, src, env)
                src(f"_at = {path + '(tagged fields)'!r}")
            self._decode_tag_section(tagged, prefix, path, run, version, src, env)
        else:
            _flush_unpack(run, src, env)
        args = ", ".join(f"{x}={prefix}{x}" for x in names)
        return f"{self._class_ref(st, env)}({args})"

    def _decode_tag_section(
        self, tagged: list[Field], prefix: str, path: str, run: list[tuple[str, str]],
        version: int, src: _Source, env: dict[str, Any],
    ) -> None:
        """Read the tagged-field count (its first byte with the pending run, if any), then
        the tagged fields; a zero count, the common case, costs a single test."""
        n = src.var("nt")
        if run:
            run.append(("B", n))
            _flush_unpack(run, src, env)
            src(f"if {n}:")
            with src.indent():
                src("pos -= 1")
                _emit_uvarint(src, n)
                self._emit_tag_loop(n, tagged, prefix, path, version, src, env)
            return
        src("if buf[pos] == 0:")
        with src.indent():
            src("pos += 1")
        src("else:")
        with src.indent():
            _emit_uvarint(src, n)
            self._emit_tag_loop(n, tagged, prefix, path, version, src, env)

    def _emit_tag_loop(
        self, n: str, tagged: list[Field], prefix: str, path: str, version: int, src: _Source,
        env: dict[str, Any],
    ) -> None:
        """Decode `n` tagged fields: known tags into their fields, unknown ones skipped
        (as Kafka keeps them raw: their size must lie within the frame)."""
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
                    if src.diag:
                        src(f"_at = {path + x.name!r}")
                    self._decode_value(x, prefix + x.name, path + x.name, version, True, src,
                                       env)
            src("else:" if tagged else "if True:")
            with src.indent():
                src(f"if {s} > _end - pos:")
                with src.indent():
                    _raise(src, f"{path}(tagged fields): tag ' + str({t}) + ' of ' + str({s})"
                                " + ' bytes runs past the end of the frame")
                src(f"pos += {s}")

    def _decode_struct(
        self, st: StructType, target: str, path: str, version: int, flexible: bool,
        src: _Source, env: dict[str, Any],
    ) -> None:
        """Decode one `st` into `target`, its code inlined."""
        obj = self._decode_fields(st, src.var("p") + "_", path + ".", version, flexible, src,
                                  env)
        src(f"{target} = {obj}")

    def _decode_items(
        self, st: StructType, target: str, n: str, path: str, version: int, flexible: bool,
        src: _Source, env: dict[str, Any],
    ) -> None:
        """Decode `n` structs into the list `target`, the struct's code inlined in the loop."""
        ap = src.var("ap")
        src(f"{target} = []")
        src(f"{ap} = {target}.append")
        src(f"for _ in range({n}):")
        with src.indent():
            obj = self._decode_fields(st, src.var("p") + "_", path + "[].", version, flexible,
                                      src, env)
            src(f"{ap}({obj})")

    def _decode_null(self, target: str, path: str, nullable: bool, n: str, what: str,
                     src: _Source) -> None:
        """What a negative length means: null where the field is nullable in this version
        (any negative, as in Kafka), else the request is malformed."""
        if nullable:
            src(f"{target} = None")
        else:
            _raise(src, f"{path}: non-nullable {what} is null (length ' + str({n}) + ')")

    def _decode_value(
        self, fld: Field, target: str, path: str, version: int, flexible: bool, src: _Source,
        env: dict[str, Any], length: str | None = None,
    ) -> None:
        """Decode one field into `target`; `length` names its prefix if already read."""
        nullable = version in fld.nullable
        t = fld.type
        if isinstance(t, ArrayType):
            n = length or _read_length(src, flexible)
            item = t.item
            src(f"if {n} < 0:")
            with src.indent():
                self._decode_null(target, path, nullable, n, "array", src)
            # every item takes at least a byte (a fixed-width one, its width)
            width = _FIXED[item][1] if isinstance(item, str) and item in _FIXED else 1
            src(f"elif {n} > _end - pos:" if width == 1 else f"elif {n} * {width} > _end - pos:")
            with src.indent():
                _raise(src, f"{path}: array of ' + str({n}) + ' items runs past the end"
                            " of the frame (' + str(_end - pos) + ' bytes left)")
            src("else:")
            with src.indent():
                if isinstance(item, StructType):
                    self._decode_items(item, target, n, path, version, flexible, src, env)
                elif item in _FIXED:
                    ch, size = _FIXED[item]
                    env[f"_AU_{ch}"] = array_unpacker(ch)
                    src(f"{target} = _AU_{ch}({n}, buf, pos)")
                    src(f"pos += {size} * {n}")
                else:
                    it = src.var("it")
                    src(f"{target} = []")
                    src(f"for _ in range({n}):")
                    with src.indent():
                        inner = Field(name="_", type=item, versions=fld.versions)
                        self._decode_value(inner, it, path + "[]", version, flexible, src, env)
                        src(f"{target}.append({it})")
            return
        if isinstance(t, StructType):
            if not nullable:
                self._decode_struct(t, target, path, version, flexible, src, env)
                return
            src("if buf[pos] >= 128:")  # a negative int8 marks null, as Kafka reads it
            with src.indent():
                src(f"{target} = None")
                src("pos += 1")
            src("else:")
            with src.indent():
                src("pos += 1")
                self._decode_struct(t, target, path, version, flexible, src, env)
            return
        if t in _FIXED:
            _flush_unpack([(_FIXED[t][0], target)], src, env)
            return
        if t == "uuid":
            src("if pos + 16 > _end:")
            with src.indent():
                _raise(src, f"{path}: uuid runs past the end of the frame")
            src(f"{target} = _UUID(bytes=bytes(buf[pos:pos + 16]))")
            src("pos += 16")
            return
        # string, bytes, records: length-prefixed
        what = "string" if t == "string" else "bytes"
        n = length or _read_length(src, flexible, classic="h" if t == "string" else "i",
                                   string_path=path if t == "string" else None)
        src(f"if {n} < 0:")
        with src.indent():
            self._decode_null(target, path, nullable, n, what, src)
        if t == "string":
            src(f"elif {n} == 0:")
            with src.indent():
                src(f"{target} = ''")
        src(f"elif {n} > _end - pos:")
        with src.indent():
            _raise(src, f"{path}: {what} length ' + str({n}) + ' runs past the end of the"
                        " frame (' + str(_end - pos) + ' bytes left)")
        src("else:")
        with src.indent():
            if t == "string":
                # Kafka decodes strings leniently: malformed UTF-8 becomes U+FFFD
                src(f"{target} = str(buf[pos:pos + {n}], 'utf-8', 'replace')")
            else:
                src(f"{target} = bytes(buf[pos:pos + {n}])")
            src(f"pos += {n}")

    # -- encoders ------------------------------------------------------------

    def _emit_encoder(
        self, st: StructType, version: int, flexible: bool, src: _Source, env: dict[str, Any],
    ) -> str:
        """The function `(obj, out) -> None` appending the message body `st` to `out`."""
        fname = f"_e_{st.name}"
        if not src.counting:
            src(f"def {fname}(m, out):")
            with src.indent():
                self._encode_fields(st, "m", version, flexible, src, env)
                src("return None")
            return fname
        src(f"def {fname}(m, out, _c):")
        with src.indent():
            src("_n = 0")
            self._encode_fields(st, "m", version, flexible, src, env)
            src("return _n")
        return fname

    def _encode_fields(
        self, st: StructType, m: str, version: int, flexible: bool, src: _Source,
        env: dict[str, Any], counted: bool = False,
    ) -> None:
        """Write the fields of the struct in local `m`, each fixed-width run with one `pack`.

        An empty tagged-field section right after a run becomes the run's
        trailing pad byte ('x' packs a zero), saving a separate append.
        A counting encoder names each error code it packs and tallies it after the
        pack (`counted`: the caller counted this struct's code already, an array's at once).
        """
        run: list[tuple[str, str]] = []
        codes: list[str] = []  # error codes of the run, tallied once it is packed

        def flush() -> None:
            _flush_pack(run, src, env)
            for e in codes:
                src(f"if {e}: _c[{e}] = _c.get({e}, 0) + 1")
                if not counted:
                    src("_n += 1")
            codes.clear()

        for fld in st.fields:
            if version not in fld.versions or version in fld.tagged:
                continue
            code = _fixed_code(fld.type)
            if code is not None:
                if src.counting and fld.name == "error_code":
                    e = src.var("e")
                    codes.append(e)
                    run.append((code, f"({e} := {m}.error_code)"))
                else:
                    run.append((code, f"{m}.{fld.name}"))
                continue
            flush()
            self._encode_value(fld, f"{m}.{fld.name}", version, flexible, src, env)
        tagged = sorted((x for x in st.fields if version in x.tagged), key=lambda x: x.tag or 0)
        if flexible and not tagged:
            run.append(("x", ""))  # no tagged fields in this version: count 0
        flush()
        if flexible and tagged:
            self._encode_tags(tagged, m, version, src, env)

    def _encode_tags(
        self, tagged: list[Field], m: str, version: int, src: _Source, env: dict[str, Any],
    ) -> None:
        """Write the tagged fields of `m` that differ from their defaults, in tag order."""
        tl = src.var("tags")
        src(f"{tl} = []")
        for x in tagged:
            dflt = self._fresh_default(x, env)
            value = f"{m}.{x.name}"
            src(f"if {value} is not None and {value} != {dflt}:"
                if isinstance(x.type, StructType) else f"if {value} != {dflt}:")
            with src.indent():
                outer = src.var("outer")
                src(f"{outer}, out = out, bytearray()")
                self._encode_value(x, value, version, True, src, env)
                src(f"{tl}.append(({x.tag}, out))")
                src(f"out = {outer}")
        src(f"out += _UVT[len({tl})]")
        src(f"for _t, _b in {tl}:")
        with src.indent():
            src("out += _UVT[_t] if _t < 128 else _uvb(_t)")
            src("out += _UVT[len(_b)] if len(_b) < 128 else _uvb(len(_b))")
            src("out += _b")

    def _encode_value(
        self, fld: Field, expr: str, version: int, flexible: bool, src: _Source,
        env: dict[str, Any],
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
                if isinstance(item, str) and item in _FIXED:
                    ch, _ = _FIXED[item]
                    env[f"_AP_{ch}"] = array_packer(ch)
                    src(f"out += _AP_{ch}({v})")
                    return
                it = src.var("it")
                each = src.counting and _has_error_code(item, version)
                if each:  # every element's error code counted at once
                    src(f"_n += len({v})")
                src(f"for {it} in {v}:")
                with src.indent():
                    before = len(src.lines)
                    if isinstance(item, StructType):
                        self._encode_fields(item, it, version, flexible, src, env, counted=each)
                    else:
                        inner = Field(name="_", type=item, versions=fld.versions)
                        self._encode_value(inner, it, version, flexible, src, env)
                    if len(src.lines) == before:
                        src("pass")  # an empty struct of a classic version
            return
        if isinstance(t, StructType):
            v = src.var("s")
            src(f"{v} = {expr}")
            if not nullable:
                self._encode_fields(t, v, version, flexible, src, env)
                return
            src(f"if {v} is None:")
            with src.indent():
                src("out += b'\\xff'")
            src("else:")
            with src.indent():
                src("out += b'\\x01'")
                self._encode_fields(t, v, version, flexible, src, env)
            return
        if t in _FIXED:
            _flush_pack([(_FIXED[t][0], expr)], src, env)
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


def _why(exc: Exception) -> str:
    """An exception of a generated decoder in words."""
    if isinstance(exc, (IndexError, _struct.error)):
        return "the frame ends inside it"
    return str(exc) or type(exc).__name__


def _has_error_code(t: Any, version: int) -> bool:
    """Whether `t` is a struct that writes an `error_code` of its own at `version`."""
    return isinstance(t, StructType) and any(
        f.name == "error_code" and version in f.versions and version not in f.tagged
        and _fixed_code(f.type) is not None for f in t.fields)


def _struct_of(t: Any) -> StructType | None:
    if isinstance(t, StructType):
        return t
    if isinstance(t, ArrayType) and isinstance(t.item, StructType):
        return t.item
    return None


def _fixed_code(t: Any) -> str | None:
    """The `struct` format code of a fixed-width type, else None."""
    return _FIXED[t][0] if isinstance(t, str) and t in _FIXED else None


def _classic_length_code(t: Any) -> str | None:
    """The `struct` code of a classic (non-flexible) length prefix, else None."""
    if isinstance(t, ArrayType) or t in ("bytes", "records"):
        return "i"
    return "h" if t == "string" else None  # uuid, fixed-width and struct: no prefix


def _flush_unpack(run: list[tuple[str, str]], src: _Source, env: dict[str, Any]) -> None:
    """Read the pending (format code, target) run with one precompiled `unpack_from`."""
    if not run:
        return
    packer = _struct.Struct(">" + "".join(code for code, _ in run))
    key = f"_S{len(env)}"
    env[key] = packer.unpack_from
    targets = ", ".join(target for _, target in run)
    src(f"({targets},) = {key}(buf, pos)")
    src(f"pos += {packer.size}")
    run.clear()


def _flush_with_length(
    t: Any, path: str, flexible: bool, run: list[tuple[str, str]], src: _Source,
    env: dict[str, Any],
) -> str | None:
    """Flush the pending run, reading the length prefix of a `t` value with it if possible.

    A classic length is fixed-width and simply joins the run. A flexible one is
    a uvarint: the run reads its first byte, and a longer varint is reread.
    Returns the length's name, or None if the value's own code must read it.
    """
    code = _classic_length_code(t)
    if code is None or (flexible and not run):
        _flush_unpack(run, src, env)
        return None
    n = src.var("n")
    run.append(("B" if flexible else code, n))
    _flush_unpack(run, src, env)
    if flexible:
        src(f"{n} -= 1")
        src(f"if {n} >= 127:")
        with src.indent():
            src(f"{n}, pos = _uvarint(buf, pos - 1)")
            src(f"{n} -= 1")
            if t == "string":
                _check_string_length(src, n, path)
    return n


def _flush_pack(run: list[tuple[str, str]], src: _Source, env: dict[str, Any]) -> None:
    """Write the pending (format code, expression) run with one precompiled `pack`."""
    if not run:
        return
    packer = _struct.Struct(">" + "".join(code for code, _ in run))
    args = ", ".join(expr for _, expr in run if expr)
    if args:
        key = f"_P{len(env)}"
        env[key] = packer.pack
        src(f"out += {key}({args})")
    else:  # only pad bytes
        src(f"out += {packer.pack()!r}")
    run.clear()


def _emit_uvarint(src: _Source, target: str) -> None:
    """Inline the one-byte fast path of an unsigned varint read."""
    src(f"{target} = buf[pos]")
    src(f"if {target} < 128: pos += 1")
    src(f"else: {target}, pos = _uvarint(buf, pos)")


def _read_length(src: _Source, flexible: bool, classic: str = "i",
                 string_path: str | None = None) -> str:
    """Emit code reading an array/bytes/string length (negative means null); return its name.

    `string_path` names a string field, whose compact length Kafka caps at 0x7fff."""
    n = src.var("n")
    if flexible:  # a uvarint of length + 1, inlined for one byte
        src(f"{n} = buf[pos] - 1")
        src(f"if {n} < 127: pos += 1")
        src("else:")
        with src.indent():
            src(f"{n}, pos = _uvarint(buf, pos)")
            src(f"{n} -= 1")
            if string_path is not None:
                _check_string_length(src, n, string_path)
    else:
        size = 2 if classic == "h" else 4
        src(f"({n},) = _U{classic}(buf, pos)")
        src(f"pos += {size}")
    return n


def _check_string_length(src: _Source, n: str, path: str) -> None:
    """A string is at most 0x7fff bytes (its classic prefix is an int16), in every version."""
    src(f"if {n} > 0x7fff:")
    with src.indent():
        _raise(src, f"{path}: string length ' + str({n}) + ' is over 32767")


def _raise(src: _Source, text: str) -> None:
    """Emit a DecodeError naming the message, version and field; `text` starts with the
    field's path and may splice in expressions as `' + str(x) + '`."""
    src(f"raise _DecodeError('{src.label}, field {text}')")


def _write_length(src: _Source, expr: str, flexible: bool, classic: str = "i") -> None:
    if flexible:
        src(f"_l = {expr} + 1")
        src("out += _UVT[_l] if _l < 128 else _uvb(_l)")
    else:
        src(f"out += _P{classic}({expr})")


def _literal(fld: Field, env: dict[str, Any]) -> str:
    """A source expression for a field's default (fresh for mutable defaults)."""
    value = fld.default_value()
    if isinstance(value, list):
        return "[]"
    key = f"_D{len(env)}"
    env[key] = value
    return key
