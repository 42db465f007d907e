# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""The module binaries ship xz-compressed; this unpacks one into a content-addressed cache.

The collection ships ``plugins/modules/__bin/<binary>_<os>_<arch>.xz`` (docs/adr/0011-binary-selection.md,
Size): xz, one block, integrity check SHA-256, so the stream itself carries the SHA-256 of the
binary it holds (read from the file's tail without decompressing) and liblzma verifies it while
decompressing. The controller unpacks a binary once into ``<cache>/<sha256>/<binary>`` (mode 0700,
the directory too) and Ansible copies or runs that file as it would the shipped one. Every later
task finds it with one ``stat``: no decompression, no hashing. Entries appear only through an
atomic rename after the content was checked, under an exclusive lock per entry, so forks and
concurrent playbooks never see a partial file and unpack a binary once between them.

Pure standard library (and no Ansible import): tests/platforms and the unit tests load this file
directly. ``lzma`` is imported only when a binary has to be unpacked, so a controller whose Python
lacks it still runs binaries already in the cache, and otherwise gets an error naming it.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
import struct
import sys
import tempfile
import zlib

SUFFIX = '.xz'

# Where the cache lives: this environment variable, else $XDG_CACHE_HOME/deevnet-tenant/bin, else
# ~/.cache/deevnet-tenant/bin.
CACHE_ENV = 'DEEVNET_TENANT_BIN_CACHE'

_XZ_MAGIC = b'\xfd7zXZ\x00'
_FOOTER_MAGIC = b'YZ'
_CHECK_SHA256 = 0x0A
_CHECK_SIZE = 32
_CHUNK = 1 << 20


class BinaryCacheError(Exception):
    """A shipped binary cannot be unpacked or the cache cannot be used; the message says why."""


def default_cache_dir(environ=None):
    """The cache directory: $DEEVNET_TENANT_BIN_CACHE, else under $XDG_CACHE_HOME or ~/.cache."""
    environ = os.environ if environ is None else environ
    if environ.get(CACHE_ENV):
        return environ[CACHE_ENV]
    base = environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'deevnet-tenant', 'bin')


def _varint(buf, pos):
    """Decode one xz multibyte integer at pos; return (value, next position)."""
    value = shift = 0
    for i in range(9):
        if pos + i >= len(buf):
            break
        byte = buf[pos + i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos + i + 1
        shift += 7
    raise ValueError('bad integer in the xz index')


def xz_content_id(path):
    """Return (sha256 hex, size) of the binary an .xz file holds, read from its tail.

    The file must be one xz stream of one block with the SHA-256 check (scripts/xz-pack.py writes
    them so): the block's check, the 32 bytes before the index, is the SHA-256 of the
    uncompressed data, and the index records its size. Raises ValueError for anything else.
    """
    with open(path, 'rb') as f:
        head = f.read(12)
        f.seek(0, os.SEEK_END)
        total = f.tell()
        if len(head) < 12 or head[:6] != _XZ_MAGIC or total < 12 + 12 + 8:
            raise ValueError('not an xz file')
        if head[7] & 0x0F != _CHECK_SHA256:
            raise ValueError('the xz check is not SHA-256')
        f.seek(total - 12)
        footer = f.read(12)
        if footer[10:] != _FOOTER_MAGIC or footer[8:10] != head[6:8]:
            raise ValueError('bad xz stream footer')
        if zlib.crc32(footer[4:10]) != struct.unpack('<I', footer[:4])[0]:
            raise ValueError('bad xz stream footer checksum')
        index_size = (struct.unpack('<I', footer[4:8])[0] + 1) * 4
        if index_size > total - 24:
            raise ValueError('bad xz index size')
        f.seek(total - 12 - index_size)
        index = f.read(index_size)
        if index[0] != 0 or zlib.crc32(index[:-4]) != struct.unpack('<I', index[-4:])[0]:
            raise ValueError('bad xz index')
        records, pos = _varint(index, 1)
        if records != 1:
            raise ValueError('the xz stream holds %d blocks, not one' % records)
        unpadded, pos = _varint(index, pos)
        size, pos = _varint(index, pos)
        # The block: header, compressed data, padding to 4 bytes, then the check (unpadded size
        # counts all but the padding).
        block_end = 12 + (unpadded + 3) // 4 * 4
        if block_end + index_size + 12 != total:
            raise ValueError('the xz file holds more than one stream')
        f.seek(block_end - _CHECK_SIZE)
        check = f.read(_CHECK_SIZE)
    return check.hex(), size


def _lzma():
    try:
        import lzma  # pylint: disable=import-outside-toplevel
    except ImportError:
        lzma = None
    if lzma is None:
        raise BinaryCacheError(
            "the deevnet.tenant module binaries ship xz-compressed and this controller's Python (%s, %s) "
            "has no 'lzma' module (it was built without liblzma): use a Python with lzma (any distribution's "
            "python3; when building Python, install liblzma-dev / xz-devel first)"
            % (sys.executable, sys.version.split()[0]))
    return lzma


def _private_dir(path):
    """Create path (mode 0700) if missing; refuse one another user owns or others may write to or read."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError as e:
        raise BinaryCacheError('cannot create the binary cache directory %s: %s (set %s to a writable directory)'
                               % (path, e.strerror or e, CACHE_ENV))
    if not os.path.isdir(path) or os.path.islink(path):
        raise BinaryCacheError('the binary cache %s is not a directory' % path)
    if st.st_uid != os.getuid():
        raise BinaryCacheError('the binary cache %s belongs to uid %d, not to this user (uid %d): set %s'
                               % (path, st.st_uid, os.getuid(), CACHE_ENV))
    if st.st_mode & 0o077:
        # Never chmod it: the variable may name a shared directory (/tmp); a private one is needed.
        raise BinaryCacheError('the binary cache %s is open to other users (mode %04o): it must be mode 0700 (set %s to a private directory)'
                               % (path, stat.S_IMODE(st.st_mode), CACHE_ENV))


def _unpack_to(lzma, src, dest_dir, name, want_sha, want_size):
    """Decompress src into dest_dir/name through a temporary file, checked, renamed into place."""
    fd, tmp = tempfile.mkstemp(dir=dest_dir, prefix='.%s.' % name)
    try:
        digest, size = hashlib.sha256(), 0
        with os.fdopen(fd, 'wb') as out, lzma.open(src, 'rb', format=lzma.FORMAT_XZ) as xz:
            for chunk in iter(lambda: xz.read(_CHUNK), b''):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
            out.flush()
            os.fchmod(out.fileno(), 0o700)
            os.fsync(out.fileno())
        if digest.hexdigest() != want_sha or size != want_size:
            raise BinaryCacheError('%s: the unpacked binary has SHA-256 %s and %d bytes, the file says %s and %d bytes'
                                   % (src, digest.hexdigest(), size, want_sha, want_size))
        os.replace(tmp, os.path.join(dest_dir, name))
    except (lzma.LZMAError, EOFError, OSError) as e:
        raise BinaryCacheError('%s: cannot unpack: %s (rebuild it: make build-all)' % (src, e))
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def unpacked(src, cache_dir=None):
    """Return the path of the binary the .xz file src holds, unpacking it into the cache if needed."""
    name = os.path.basename(src)
    if not name.endswith(SUFFIX):
        raise BinaryCacheError('%s is not an .xz file' % src)
    name = name[:-len(SUFFIX)]
    try:
        sha, size = xz_content_id(src)
    except (OSError, ValueError) as e:
        raise BinaryCacheError('%s: not a binary packed by scripts/xz-pack.py: %s (rebuild it: make build-all)' % (src, e))
    root = cache_dir or default_cache_dir()
    _private_dir(root)
    entry = os.path.join(root, sha)
    path = os.path.join(entry, name)
    if _present(path, size):
        return path
    lzma = _lzma()
    _private_dir(entry)
    with open(os.path.join(entry, '.lock'), 'a') as lock:
        # One unpacker per entry: the others wait here and then find the file.
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        if not _present(path, size):
            _unpack_to(lzma, src, entry, name, sha, size)
    return path


def _present(path, size):
    try:
        st = os.stat(path)
    except OSError as e:
        if e.errno == errno.ENOENT:
            return False
        raise BinaryCacheError('cannot read the binary cache entry %s: %s' % (path, e.strerror or e))
    # Entries only appear complete (atomic rename after the check); a size that differs means the
    # file was changed behind our back: unpack it again.
    return st.st_size == size


def main(argv):
    """For the tests that run a binary without Ansible (tests/platforms, tests/manifest):
    ``binary_cache.py unpack FILE.xz CACHE_DIR`` prints the unpacked binary's path,
    ``binary_cache.py id FILE.xz`` prints its SHA-256 and size."""
    try:
        if len(argv) == 4 and argv[1] == 'unpack':
            print(unpacked(argv[2], argv[3]))
            return 0
        if len(argv) == 3 and argv[1] == 'id':
            print('%s %d' % xz_content_id(argv[2]))
            return 0
    except (BinaryCacheError, OSError, ValueError) as e:
        print('%s: %s' % (argv[2], e), file=sys.stderr)
        return 1
    print('usage: binary_cache.py unpack FILE.xz CACHE_DIR | id FILE.xz', file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
