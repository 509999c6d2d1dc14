"""The compaction manifest: the commit point that makes a segment swap atomic.

Compaction writes its output segments under temporary names, then durably
renames a manifest naming the input segments and the outputs into place. Before
that rename nothing visible has changed; after it, the swap is decided and
whoever gets there first (the compaction itself, or the next start-up after a
crash) rolls it forward:

1. move each output from its temporary name to its final name (os.replace, so
   an output whose final name equals an input's name atomically replaces it),
2. unlink the inputs whose names are not output names,
3. fsync the directory, delete the manifest, fsync again.

Every step is idempotent and the manifest is removed last, so a crash at any
point is resolved at the next start-up: with no manifest the leftover
temporary outputs are deleted and the inputs are still complete; with a
manifest the roll-forward is finished. Replay only ever sees one of the two
complete sets of segments, never both.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass

from .errors import CorruptLogError
from .fsutil import fsync_dir, write_file_durably
from .segment import parse_segment_name

MANIFEST_NAME = "compaction.manifest"
TMP_SUFFIX = ".compacting"
_MANIFEST_FORMAT = 1

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompactionManifest:
    inputs: tuple[str, ...]  # segment file names being replaced
    outputs: tuple[str, ...]  # final file names of the compacted segments

    def encode(self) -> bytes:
        return json.dumps(
            {"format": _MANIFEST_FORMAT, "inputs": list(self.inputs), "outputs": list(self.outputs)}
        ).encode()

    @classmethod
    def decode(cls, data: bytes, path: str) -> CompactionManifest:
        try:
            doc = json.loads(data)
            if doc["format"] != _MANIFEST_FORMAT:
                raise ValueError(f"unknown manifest format {doc['format']}")
            inputs = tuple(str(name) for name in doc["inputs"])
            outputs = tuple(str(name) for name in doc["outputs"])
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptLogError(path, 0, f"unreadable compaction manifest: {exc}") from exc
        for name in inputs + outputs:
            if parse_segment_name(name) is None:
                raise CorruptLogError(path, 0, f"manifest names a non-segment file {name!r}")
        return cls(inputs, outputs)


def temporary_name(final_name: str) -> str:
    return final_name + TMP_SUFFIX


def commit_manifest(directory: str, manifest: CompactionManifest) -> None:
    """Durably put the manifest in place: the swap is decided once this returns."""
    final = os.path.join(directory, MANIFEST_NAME)
    tmp = temporary_name(final)
    write_file_durably(tmp, manifest.encode())
    os.replace(tmp, final)
    fsync_dir(directory)


def manifest_committed(directory: str) -> bool:
    return os.path.exists(os.path.join(directory, MANIFEST_NAME))


def read_manifest(directory: str) -> CompactionManifest | None:
    path = os.path.join(directory, MANIFEST_NAME)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    return CompactionManifest.decode(data, path)


def roll_forward(directory: str, manifest: CompactionManifest) -> None:
    """Finish a committed swap; safe to repeat after a crash at any point."""
    for name in manifest.outputs:
        tmp = os.path.join(directory, temporary_name(name))
        if os.path.exists(tmp):
            os.replace(tmp, os.path.join(directory, name))
    replaced = set(manifest.outputs)
    for name in manifest.inputs:
        if name not in replaced:
            try:
                os.unlink(os.path.join(directory, name))
            except FileNotFoundError:
                pass
    fsync_dir(directory)
    os.unlink(os.path.join(directory, MANIFEST_NAME))
    fsync_dir(directory)


def finish_interrupted_compaction(directory: str) -> None:
    """Resolve a compaction interrupted by a crash, before the segments are read: roll a
    committed swap forward, discard an uncommitted one's files."""
    manifest = read_manifest(directory)
    if manifest is not None:
        log.warning("finishing a compaction interrupted in %s", directory)
        roll_forward(directory, manifest)
    leftovers = [name for name in os.listdir(directory) if name.endswith(TMP_SUFFIX)]
    for name in leftovers:
        os.unlink(os.path.join(directory, name))
    if leftovers:
        log.warning("discarded %d files of an unfinished compaction in %s",
                    len(leftovers), directory)
        fsync_dir(directory)


def segment_files(directory: str) -> dict[int, str]:
    """Segment base -> path for the segment files currently in ``directory``."""
    files = {}
    for name in os.listdir(directory):
        base = parse_segment_name(name)
        if base is not None:
            files[base] = os.path.join(directory, name)
    return files


def effective_segment_files(directory: str) -> dict[int, str]:
    """The segments a roll-forward would leave, without changing anything.

    Lets a read-only open see a consistent log even if a compaction is between
    its commit point and the end of its roll-forward.
    """
    files = segment_files(directory)
    manifest = read_manifest(directory)
    if manifest is None:
        return files
    outputs = set(manifest.outputs)
    for name in manifest.inputs:
        base = parse_segment_name(name)  # never None: decoding checked every name
        if name not in outputs and base is not None:
            files.pop(base, None)
    for name in manifest.outputs:
        base = parse_segment_name(name)
        tmp = os.path.join(directory, temporary_name(name))
        if base is not None and os.path.exists(tmp):
            files[base] = tmp
    return files
