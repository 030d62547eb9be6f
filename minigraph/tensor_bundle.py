"""TensorFlow's tensor bundle (a V2 checkpoint, a SavedModel's ``variables/``), read and
written without TensorFlow.

A bundle with prefix ``P`` is ``P.index`` plus the shards ``P.data-00000-of-0000N``. The index
is a LevelDB-format table (TensorFlow's ``core/lib/io/table``), mapping each key in sorted
order to a serialized ``BundleEntryProto`` (dtype, shape, shard, offset, size, CRC32C), the
empty key to a ``BundleHeaderProto`` (shard count, endianness). A tensor's bytes are the raw
little-endian array at ``offset`` in its shard. No pip package reads this without TensorFlow,
so the table is read here (:func:`read_table`); the two messages are protobuf classes built
from their field list (:func:`messages`), since tensorboard does not ship them.

The table format, as TensorFlow writes it for bundles (uncompressed: BundleWriter sets
``kNoCompression``, so snappy is never needed):

- footer: the file's last 48 bytes: two BlockHandles (varint64 offset, varint64 size: the
  metaindex block, then the index block), zero padding to 40 bytes, then the magic number
  ``0xdb4775248b80fb57`` as a little-endian fixed64;
- every block is followed by a 5-byte trailer: its compression type (0: none) and the
  masked CRC32C of the block and that type byte;
- a block is a run of entries ``varint32 shared, varint32 non_shared, varint32 value_size,
  key[shared:] bytes, value bytes`` (each key shares a prefix with the one before, restarted
  every few entries), then the restart offsets (fixed32 each) and their count (fixed32);
- the index block maps a separator key per data block to that block's BlockHandle.

Everything a damaged file can get wrong (sizes, offsets, varints, checksums, key order, a
missing shard, a short shard) is a :class:`~minigraph.errors.DataLossError` or
NotFoundError naming the file; nothing is allocated before it is checked against the file.

:class:`BundleWriter` writes what TensorFlow's BundleWriter does for one shard (the data
file, then the index through :func:`write_table`, each to a temporary name renamed into
place), so that ``tf.train.load_checkpoint`` and TensorFlow's Saver read it.
"""

from __future__ import annotations

import functools
import os
import struct
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import errors

__all__ = ["BundleReader", "BundleWriter", "read_table", "write_table", "crc32c", "messages"]

TABLE_MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48  # 2 * BlockHandle::kMaxEncodedLength (2 * 10) + padding + 8-byte magic
BLOCK_TRAILER_SIZE = 5
_CRC_MASK_DELTA = 0xA282EAD8
# TensorFlow's table::Options: data blocks of about 256 KiB, a restart point every 16 keys
# (every key in the index block).
BLOCK_SIZE = 262144
RESTART_INTERVAL = 16
BUNDLE_VERSION = 1  # kTensorBundleVersion, the header's producer


# -- CRC32C (Castagnoli), as TensorFlow's crc32c::Value / Mask ---------------------------


def _crc_table() -> np.ndarray:
    table = np.zeros(256, np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table[i] = c
    return table


_TABLE = _crc_table()
_TABLE_LIST = [int(v) for v in _TABLE]
_LANE_BYTES = 4096  # bytes per lane of the vectorised CRC: its Python loop runs this often


def _crc_register(data: memoryview | bytes, reg: int) -> int:
    """The CRC register after ``data``, one byte at a time (for short data)."""
    table = _TABLE_LIST
    for b in bytes(data):
        reg = table[(reg ^ b) & 0xFF] ^ (reg >> 8)
    return reg


def _gf2_times(matrix: list[int], vec: int) -> int:
    out, i = 0, 0
    while vec:
        if vec & 1:
            out ^= matrix[i]
        vec >>= 1
        i += 1
    return out


@functools.lru_cache(maxsize=64)
def _zeros_operator(n: int) -> tuple[int, ...]:
    """The GF(2) matrix (32 columns) that feeds ``n`` zero bytes through the CRC register."""
    one = [_crc_register(b"\0", 1 << i) for i in range(32)]  # one zero byte
    result = [1 << i for i in range(32)]
    power = one
    while n:
        if n & 1:
            result = [_gf2_times(power, c) for c in result]
        power = [_gf2_times(power, c) for c in power]
        n >>= 1
    return tuple(result)


def crc32c(data: bytes | memoryview) -> int:
    """CRC32C of ``data``. Long data runs in lanes: NumPy advances one register per
    4096-byte lane in lockstep (the register update is linear over GF(2)), then the lanes
    are joined by shifting each partial register over the zeros of the lanes after it."""
    view = memoryview(data).cast("B")
    lanes = len(view) // _LANE_BYTES
    if lanes < 4:
        return _crc_register(view, 0xFFFFFFFF) ^ 0xFFFFFFFF
    body = np.frombuffer(view[: lanes * _LANE_BYTES], np.uint8).reshape(lanes, _LANE_BYTES)
    columns = np.ascontiguousarray(body.T)  # column i: byte i of every lane
    regs = np.zeros(lanes, np.uint32)
    regs[0] = 0xFFFFFFFF
    for i in range(_LANE_BYTES):
        regs = _TABLE[(regs ^ columns[i]) & 0xFF] ^ (regs >> 8)
    shift = list(_zeros_operator(_LANE_BYTES))
    reg = int(regs[0])
    for lane in regs[1:]:
        reg = _gf2_times(shift, reg) ^ int(lane)
    reg = _crc_register(view[lanes * _LANE_BYTES :], reg)
    return reg ^ 0xFFFFFFFF


def unmask(masked: int) -> int:
    """TensorFlow's crc32c::Unmask: stored CRCs are rotated and offset."""
    rot = (masked - _CRC_MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def mask(crc: int) -> int:
    """TensorFlow's crc32c::Mask, the inverse of :func:`unmask`."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _CRC_MASK_DELTA) & 0xFFFFFFFF


def varint(value: int) -> bytes:
    """``value`` as a LevelDB/protobuf varint: 7 bits a byte, low bits first."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# -- the LevelDB table -------------------------------------------------------------------


class _Bytes:
    """A cursor over one file's bytes that raises DataLossError naming it."""

    def __init__(self, data: bytes, where: str) -> None:
        self.data, self.where = data, where

    def fail(self, msg: str) -> Any:
        raise errors.DataLossError(f"{self.where}: corrupt table: {msg}")

    def varint(self, pos: int, end: int, bits: int = 32) -> tuple[int, int]:
        value, shift = 0, 0
        while True:
            if pos >= end:
                self.fail(f"a varint runs past its block at byte {pos}")
            b = self.data[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift >= bits + 7:
                self.fail(f"a varint{bits} longer than {bits} bits at byte {pos}")
        if value >> bits:
            self.fail(f"a varint{bits} longer than {bits} bits at byte {pos}")
        return value, pos

    def handle(self, pos: int, end: int) -> tuple[int, int, int]:
        """A BlockHandle (offset, size) and the position after it."""
        offset, pos = self.varint(pos, end, 64)
        size, pos = self.varint(pos, end, 64)
        return offset, size, pos

    def block(self, offset: int, size: int) -> tuple[int, int]:
        """Check block [offset, offset+size) and its trailer; return its bounds."""
        end = offset + size
        if end + BLOCK_TRAILER_SIZE > len(self.data) - FOOTER_SIZE:
            self.fail(f"a block at {offset} of {size} bytes runs past the end of the table")
        kind = self.data[end]
        (stored,) = struct.unpack_from("<I", self.data, end + 1)
        if unmask(stored) != crc32c(memoryview(self.data)[offset : end + 1]):
            self.fail(f"checksum mismatch in the block at byte {offset}")
        if kind != 0:
            raise errors.UnimplementedError(
                f"{self.where}: a block compressed with type {kind} (1 is snappy); TensorFlow "
                "writes bundles uncompressed and minigraph reads only those"
            )
        return offset, end

    def entries(self, start: int, end: int) -> Iterator[tuple[bytes, bytes]]:
        """A block's (key, value) pairs, checked: restarts, bounds, increasing keys."""
        if end - start < 4:
            self.fail(f"a block at byte {start} is too short to hold its restart count")
        (restarts,) = struct.unpack_from("<I", self.data, end - 4)
        limit = end - 4 - 4 * restarts
        if restarts == 0 or limit < start:
            self.fail(f"a block at byte {start} has a bad restart count {restarts}")
        points = set(struct.unpack_from(f"<{restarts}I", self.data, limit))
        pos, key = start, b""
        while pos < limit:
            at = pos - start
            shared, pos = self.varint(pos, limit)
            unshared, pos = self.varint(pos, limit)
            size, pos = self.varint(pos, limit)
            if shared > len(key) or (at in points and shared):
                self.fail(f"an entry at byte {pos} shares more of its key than it can")
            if pos + unshared + size > limit:
                self.fail(f"an entry at byte {pos} runs past its block")
            new = key[:shared] + self.data[pos : pos + unshared]
            if key and new <= key:
                self.fail(f"keys out of order at byte {pos}")
            key = new
            pos += unshared
            yield key, self.data[pos : pos + size]
            pos += size


def read_table(data: bytes, where: str) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of a LevelDB-format table held in ``data`` (``where`` names it in
    errors), in key order; the footer, every block's checksum and the key order are checked."""
    t = _Bytes(data, where)
    if len(data) < FOOTER_SIZE:
        t.fail(f"{len(data)} bytes, shorter than the {FOOTER_SIZE}-byte footer")
    (magic,) = struct.unpack_from("<Q", data, len(data) - 8)
    if magic != TABLE_MAGIC:
        t.fail(f"bad magic number {magic:#x} (not a table, or truncated)")
    footer = len(data) - FOOTER_SIZE
    _, _, pos = t.handle(footer, footer + 40)  # the metaindex block: TF writes it empty
    index_offset, index_size, _ = t.handle(pos, footer + 40)
    start, end = t.block(index_offset, index_size)
    out: list[tuple[bytes, bytes]] = []
    for _sep, handle in t.entries(start, end):
        ht = _Bytes(handle, where)
        offset, size, used = ht.handle(0, len(handle))
        if used != len(handle):
            t.fail("an index entry holds more than a block handle")
        b_start, b_end = t.block(offset, size)
        for key, value in t.entries(b_start, b_end):
            if out and key <= out[-1][0]:
                t.fail("keys out of order between blocks")
            out.append((key, value))
    return out


class _BlockBuilder:
    """One block being written, as LevelDB's BlockBuilder: each key shares a prefix with the
    one before except at a restart point (every ``interval`` keys); then the restart offsets
    and their count."""

    def __init__(self, interval: int) -> None:
        self.interval = interval
        self.buffer = bytearray()
        self.restarts = [0]
        self.count = 0
        self.last = b""

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self.count == self.interval:
            self.restarts.append(len(self.buffer))
            self.count = 0
        else:
            limit = min(len(self.last), len(key))
            while shared < limit and self.last[shared] == key[shared]:
                shared += 1
        self.buffer += varint(shared) + varint(len(key) - shared) + varint(len(value))
        self.buffer += key[shared:] + value
        self.last = key
        self.count += 1

    def size(self) -> int:
        return len(self.buffer) + 4 * len(self.restarts) + 4

    def finish(self) -> bytes:
        n = len(self.restarts)
        return bytes(self.buffer) + struct.pack(f"<{n}I", *self.restarts) + struct.pack("<I", n)


def _separator(start: bytes, limit: bytes) -> bytes:
    """A short key in [start, limit), as the bytewise comparator's FindShortestSeparator."""
    n = min(len(start), len(limit))
    i = next((k for k in range(n) if start[k] != limit[k]), n)
    if i < n and start[i] < 0xFF and start[i] + 1 < limit[i]:
        return start[:i] + bytes([start[i] + 1])
    return start


def _successor(key: bytes) -> bytes:
    """A short key >= ``key``, as the bytewise comparator's FindShortSuccessor."""
    i = next((k for k, b in enumerate(key) if b != 0xFF), None)
    return key if i is None else key[:i] + bytes([key[i] + 1])


def write_table(entries: list[tuple[bytes, bytes]]) -> bytes:
    """A LevelDB-format table of ``entries`` (sorted by key, keys unique), uncompressed,
    byte for byte as TensorFlow's TableBuilder writes it: data blocks closed once they
    reach :data:`BLOCK_SIZE` bytes, each with its trailer (type 0 and the masked CRC32C);
    an empty metaindex block; the index block (a short separator key per data block and
    its BlockHandle); the footer. :func:`read_table` reads it back."""
    out = bytearray()

    def raw_block(block: _BlockBuilder) -> bytes:
        contents = block.finish()
        handle = varint(len(out)) + varint(len(contents))
        out.extend(contents)
        out.extend(b"\0" + struct.pack("<I", mask(crc32c(contents + b"\0"))))
        return handle

    index = _BlockBuilder(1)
    data = _BlockBuilder(RESTART_INTERVAL)
    pending: bytes | None = None  # the handle of a data block not yet in the index
    last = b""
    for i, (key, value) in enumerate(entries):
        if i and key <= last:
            raise ValueError(f"table keys must be unique and sorted: {key!r} after {last!r}")
        if pending is not None:
            index.add(_separator(last, key), pending)
            pending = None
        data.add(key, value)
        last = key
        if data.size() >= BLOCK_SIZE:
            pending = raw_block(data)
            data = _BlockBuilder(RESTART_INTERVAL)
    if data.count:
        pending = raw_block(data)
    if pending is not None:
        index.add(_successor(last), pending)
    footer = raw_block(_BlockBuilder(RESTART_INTERVAL)) + raw_block(index)
    out += footer + bytes(40 - len(footer)) + struct.pack("<Q", TABLE_MAGIC)
    return bytes(out)


# -- the bundle's messages -----------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def messages() -> Any:
    """BundleHeaderProto and BundleEntryProto (tensorflow/core/protobuf/tensor_bundle.proto),
    and TensorSliceProto, as protobuf classes over tensorboard's shape, dtype and version
    messages; built from their fields, as tensorboard does not ship them."""
    import types

    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    from .tf_proto import protos

    protos()  # registers tensorboard's files in the default pool (or names the extra)
    name = "minigraph/tf/tensor_bundle.proto"
    pool = descriptor_pool.Default()
    try:
        fd = pool.FindFileByName(name)
    except KeyError:
        f = descriptor_pb2.FileDescriptorProto(name=name, package="minigraph.tf", syntax="proto3")
        f.dependency.extend(
            [f"tensorboard/compat/proto/{d}.proto" for d in ("tensor_shape", "types", "versions")]
        )
        fdp = descriptor_pb2.FieldDescriptorProto
        opt, rep = fdp.LABEL_OPTIONAL, fdp.LABEL_REPEATED

        def field(msg: Any, fname: str, number: int, kind: int, type_name: str = "") -> Any:
            f = msg.field.add(name=fname, number=number, type=kind, label=opt)
            if type_name:
                f.type_name = type_name
            return f

        header = f.message_type.add(name="BundleHeaderProto")
        header.enum_type.add(name="Endianness").value.add(name="LITTLE", number=0)
        header.enum_type[0].value.add(name="BIG", number=1)
        field(header, "num_shards", 1, fdp.TYPE_INT32)
        field(header, "endianness", 2, fdp.TYPE_ENUM, ".minigraph.tf.BundleHeaderProto.Endianness")
        field(header, "version", 3, fdp.TYPE_MESSAGE, ".tensorboard.VersionDef")
        sl = f.message_type.add(name="TensorSliceProto")
        extent = sl.nested_type.add(name="Extent")
        field(extent, "start", 1, fdp.TYPE_INT64)
        length = field(extent, "length", 2, fdp.TYPE_INT64)
        extent.oneof_decl.add(name="has_length")
        length.oneof_index = 0
        field(
            sl, "extent", 1, fdp.TYPE_MESSAGE, ".minigraph.tf.TensorSliceProto.Extent"
        ).label = rep
        entry = f.message_type.add(name="BundleEntryProto")
        field(entry, "dtype", 1, fdp.TYPE_ENUM, ".tensorboard.DataType")
        field(entry, "shape", 2, fdp.TYPE_MESSAGE, ".tensorboard.TensorShapeProto")
        field(entry, "shard_id", 3, fdp.TYPE_INT32)
        field(entry, "offset", 4, fdp.TYPE_INT64)
        field(entry, "size", 5, fdp.TYPE_INT64)
        field(entry, "crc32c", 6, fdp.TYPE_FIXED32)
        field(entry, "slices", 7, fdp.TYPE_MESSAGE, ".minigraph.tf.TensorSliceProto").label = rep
        fd = pool.AddSerializedFile(f.SerializeToString())
    return types.SimpleNamespace(
        **{
            n: message_factory.GetMessageClass(fd.message_types_by_name[n])
            for n in ("BundleHeaderProto", "BundleEntryProto", "TensorSliceProto")
        }
    )


# -- the reader ----------------------------------------------------------------------------


class BundleReader:
    """The tensors of the bundle at ``prefix`` (``prefix.index`` and its data shards).

    The index is read and checked when the reader is made; a tensor's bytes are read from
    its shard when :meth:`tensor` asks for it, checked against its size and CRC32C.
    """

    def __init__(self, prefix: str | os.PathLike) -> None:
        self.prefix = os.fspath(prefix)
        self.index_path = f"{self.prefix}.index"
        data = _read_file(self.index_path, "index")
        m = messages()
        self.entries: dict[str, Any] = {}
        header = None
        for key, value in read_table(data, f"tensor bundle index {self.index_path}"):
            msg = m.BundleHeaderProto() if key == b"" else m.BundleEntryProto()
            try:
                msg.ParseFromString(value)
            except Exception as e:  # protobuf's DecodeError
                raise errors.DataLossError(
                    f"tensor bundle index {self.index_path}: the entry for "
                    f"{errors.short_repr(key)} is not a valid message ({e})"
                ) from None
            if key == b"":
                header = msg
            else:
                self.entries[key.decode("utf-8", "replace")] = msg
        if header is None:
            raise errors.DataLossError(
                f"tensor bundle index {self.index_path}: no header entry (the empty key)"
            )
        if header.num_shards < 1 and self.entries:
            raise errors.DataLossError(
                f"tensor bundle index {self.index_path}: {header.num_shards} data shards"
            )
        self.num_shards = int(header.num_shards)
        self.big_endian = header.endianness == 1
        self._shards: dict[int, bytes] = {}

    def shard_path(self, shard: int) -> str:
        return f"{self.prefix}.data-{shard:05d}-of-{self.num_shards:05d}"

    def keys(self) -> list[str]:
        return sorted(self.entries)

    def tensor(self, key: str) -> np.ndarray:
        """The tensor saved under ``key``, as a read-only array."""
        from .kernel import check_output_size
        from .tf_proto import Fail, _enum_to_dtype, _shape_from_proto, protos

        entry = self.entries.get(key)
        where = f"tensor {key!r} of bundle {self.index_path}"
        if entry is None:
            raise errors.NotFoundError(f"Key {key} not found in checkpoint {self.prefix}")

        def fail(msg: str, error: type[errors.OpError] = errors.DataLossError) -> Any:
            raise error(f"{where}: {msg}")

        if len(entry.slices):
            fail("it is saved in slices (a partitioned variable)", errors.UnimplementedError)
        p = protos()
        if entry.dtype == p.types_pb2.DT_STRING:
            fail(
                "a string tensor (DT_STRING): minigraph reads numbers only",
                errors.UnimplementedError,
            )
        dt = _enum_to_dtype(p, entry.dtype, Fail(), where)
        if dt.is_handle:
            fail(f"a {dt.name} tensor cannot be read from a bundle", errors.UnimplementedError)
        shape = _shape_from_proto(entry.shape, Fail(), where)
        if shape.dims is None or None in shape.dims:
            fail(f"its shape {shape} is not fully known")
        dims = [int(d) for d in shape.dims]  # type: ignore[union-attr, arg-type]
        count = check_output_size(dims, dt.size, "", "")
        if entry.size != count * dt.size:
            fail(f"{entry.size} bytes saved, {dt.name}{dims} needs {count * dt.size}")
        if not 0 <= entry.shard_id < self.num_shards:
            fail(f"shard {entry.shard_id} of {self.num_shards}")
        data = self._shard(entry.shard_id)
        if entry.offset < 0 or entry.offset + entry.size > len(data):
            fail(
                f"bytes [{entry.offset}, {entry.offset + entry.size}) lie past the end of "
                f"{self.shard_path(entry.shard_id)} ({len(data)} bytes): truncated"
            )
        raw = memoryview(data)[entry.offset : entry.offset + entry.size]
        if unmask(entry.crc32c) != crc32c(raw):
            fail(f"checksum mismatch in {self.shard_path(entry.shard_id)}: corrupt data")
        stored = dt.np.newbyteorder(">") if self.big_endian else dt.np.newbyteorder("<")
        arr = np.frombuffer(raw, dtype=stored).astype(dt.np).reshape(dims)
        arr.flags.writeable = False
        return arr

    def _shard(self, shard: int) -> bytes:
        if shard not in self._shards:
            self._shards[shard] = _read_file(self.shard_path(shard), "data shard")
        return self._shards[shard]


class BundleWriter:
    """Writes the bundle ``prefix`` (``prefix.index`` and ``prefix.data-00000-of-00001``):
    :meth:`add` each tensor under its key, then :meth:`finish`. Tensors are stored as
    TensorFlow stores them: raw little-endian bytes one after another in the data file, an
    index entry (dtype, shape, offset, size, masked CRC32C) per key; numbers and bools only.
    """

    def __init__(self, prefix: str | os.PathLike) -> None:
        self.prefix = os.fspath(prefix)
        self._data = bytearray()
        self._entries: dict[bytes, bytes] = {}

    def add(self, key: str, value: Any) -> None:
        from .dtypes import as_dtype
        from .tf_proto import _dtype_to_enum, _shape_to_proto, protos

        if not key:
            raise errors.InvalidArgumentError(
                "Adding the empty key is not allowed (it names the header)"
            )
        name = key.encode("utf-8")
        if name in self._entries:
            raise errors.InvalidArgumentError(f"Adding duplicate key: {key}")
        arr = np.asarray(value)
        try:
            dt = as_dtype(arr.dtype)
        except (TypeError, ValueError):
            dt = None
        if dt is None or dt.is_handle:
            raise errors.UnimplementedError(
                f"tensor {key!r}: a {arr.dtype} array cannot be saved (numbers and bools only)"
            )
        raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        p = protos()
        entry = messages().BundleEntryProto(
            dtype=_dtype_to_enum(p, dt),
            shard_id=0,
            offset=len(self._data),
            size=len(raw),
            crc32c=mask(crc32c(raw)),
        )
        entry.shape.CopyFrom(_shape_to_proto(p, list(arr.shape)))
        self._data += raw
        self._entries[name] = entry.SerializeToString()

    def finish(self) -> None:
        """Write the data file, then the index (each under a temporary name first)."""
        header = messages().BundleHeaderProto(num_shards=1, endianness=0)
        header.version.producer = BUNDLE_VERSION
        table = write_table([(b"", header.SerializeToString()), *sorted(self._entries.items())])
        _write_file(f"{self.prefix}.data-00000-of-00001", bytes(self._data))
        _write_file(f"{self.prefix}.index", table)


def _write_file(path: str, data: bytes) -> None:
    tmp = f"{path}.tempstate{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        raise errors.NotFoundError(f"cannot write {path}: {e.strerror}") from None


def _read_file(path: str, what: str) -> bytes:
    from . import config

    try:
        size = os.stat(path).st_size
        limit = config.max_tensor_bytes()
        if size > limit:
            raise errors.ResourceExhaustedError(
                f"tensor bundle {what} {path} is {size} bytes, at most {limit} can be read"
            )
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise errors.NotFoundError(
            f"cannot read tensor bundle {what} {path}: {e.strerror}"
        ) from None
