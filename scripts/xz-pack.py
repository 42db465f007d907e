# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""python3 scripts/xz-pack.py SRC DEST.xz: compress a module binary the way the collection ships it (make build-all).

One xz stream of one block with the SHA-256 check, preset 6 (its 8 MiB dictionary covers a whole
binary: preset 9 gives the same size, 9e is larger; decompressing needs about 9 MiB). The action
plugin reads the SHA-256 of the binary from the file's tail (plugins/plugin_utils/binary_cache.py);
this script checks that it can before writing DEST, atomically. Python's lzma is single-threaded,
so the output is one block and the same bytes for the same input (xz >= 5.6 would compress
multi-threaded into several blocks by default).
"""

from __future__ import annotations

import hashlib
import importlib.util
import lzma
import os
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))


def _binary_cache():
    spec = importlib.util.spec_from_file_location('binary_cache', os.path.join(ROOT, 'plugins', 'plugin_utils', 'binary_cache.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv):
    if len(argv) != 3 or not argv[2].endswith('.xz'):
        print('usage: xz-pack.py SRC DEST.xz', file=sys.stderr)
        return 2
    src, dest = argv[1], argv[2]
    with open(src, 'rb') as f:
        data = f.read()
    packed = lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_SHA256, preset=6)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(dest)), prefix='.xz-pack.')
    try:
        with os.fdopen(fd, 'wb') as out:
            out.write(packed)
        os.chmod(tmp, 0o644)
        got = _binary_cache().xz_content_id(tmp)
        want = (hashlib.sha256(data).hexdigest(), len(data))
        if got != want:
            print('xz-pack.py: %s: the packed file says %s, the binary is %s' % (dest, got, want), file=sys.stderr)
            return 1
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    print('%s: %d -> %d bytes' % (dest, len(data), len(packed)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
