"""Unit tests of the controller's cache of unpacked module binaries (plugins/plugin_utils/binary_cache.py)
and of the packer that writes what it reads (scripts/xz-pack.py)."""

from __future__ import annotations

import hashlib
import importlib.util
import multiprocessing
import os
import stat
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
_spec = importlib.util.spec_from_file_location('binary_cache', os.path.join(ROOT, 'plugins', 'plugin_utils', 'binary_cache.py'))
bc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bc)


def _pack(tmp_path, data, name='tenant_modules_linux_amd64'):
    """Packs data with scripts/xz-pack.py, as make build-all does."""
    src = tmp_path / name
    src.write_bytes(data)
    dest = tmp_path / (name + '.xz')
    subprocess.run([sys.executable, os.path.join(ROOT, 'scripts', 'xz-pack.py'), str(src), str(dest)], check=True,
                   capture_output=True)
    return str(dest)


@pytest.mark.parametrize('size', [1, 31, 4093, 200000])  # block paddings differ
def test_content_id_is_the_sha256_and_size_of_the_binary(tmp_path, size):
    data = os.urandom(size)
    assert bc.xz_content_id(_pack(tmp_path, data)) == (hashlib.sha256(data).hexdigest(), size)


def test_content_id_refuses_other_xz_files(tmp_path):
    import lzma
    data = b'a binary' * 1000
    crc = tmp_path / 'crc.xz'
    crc.write_bytes(lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64))
    with pytest.raises(ValueError, match='not SHA-256'):
        bc.xz_content_id(str(crc))
    two = tmp_path / 'two.xz'
    two.write_bytes(lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_SHA256) * 2)
    with pytest.raises(ValueError, match='more than one stream'):
        bc.xz_content_id(str(two))
    plain = tmp_path / 'plain.xz'
    plain.write_bytes(b'\x7fELF' + data)
    with pytest.raises(ValueError, match='not an xz file'):
        bc.xz_content_id(str(plain))


def test_first_call_unpacks_private_then_cached_calls_only_look(tmp_path, monkeypatch):
    data = os.urandom(100000)
    src = _pack(tmp_path, data)
    cache = tmp_path / 'cache'
    os.umask(0)  # the modes below must not come from the umask
    try:
        path = bc.unpacked(src, str(cache))
    finally:
        os.umask(0o022)
    sha = hashlib.sha256(data).hexdigest()
    assert path == str(cache / sha / 'tenant_modules_linux_amd64')
    with open(path, 'rb') as f:
        assert f.read() == data
    for p in (cache, cache / sha, path):
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o700, p
    assert sorted(os.listdir(cache / sha)) == ['.lock', 'tenant_modules_linux_amd64']  # no temporary file left
    # A cached binary needs neither lzma nor a decompression.
    monkeypatch.setitem(sys.modules, 'lzma', None)
    assert bc.unpacked(src, str(cache)) == path


def test_changed_cache_entry_is_unpacked_again(tmp_path):
    data = os.urandom(50000)
    src = _pack(tmp_path, data)
    path = bc.unpacked(src, str(tmp_path / 'cache'))
    with open(path, 'r+b') as f:
        f.truncate(100)
    assert bc.unpacked(src, str(tmp_path / 'cache')) == path
    with open(path, 'rb') as f:
        assert f.read() == data


def test_missing_lzma_is_named(tmp_path, monkeypatch):
    src = _pack(tmp_path, b'binary')
    monkeypatch.setitem(sys.modules, 'lzma', None)
    with pytest.raises(bc.BinaryCacheError, match="has no 'lzma' module"):
        bc.unpacked(src, str(tmp_path / 'cache'))


def test_corrupt_file_fails_and_leaves_nothing(tmp_path):
    data = os.urandom(100000)
    src = _pack(tmp_path, data)
    raw = bytearray(open(src, 'rb').read())
    raw[5000] ^= 0xFF  # inside the compressed data: the tail still names the binary
    with open(src, 'wb') as f:
        f.write(raw)
    with pytest.raises(bc.BinaryCacheError, match='cannot unpack'):
        bc.unpacked(src, str(tmp_path / 'cache'))
    entry = tmp_path / 'cache' / hashlib.sha256(data).hexdigest()
    assert os.listdir(entry) == ['.lock']


def test_cache_of_another_user_or_open_to_others(tmp_path, monkeypatch):
    src = _pack(tmp_path, b'binary')
    cache = tmp_path / 'cache'
    cache.mkdir(mode=0o755)
    os.chmod(cache, 0o755)
    with pytest.raises(bc.BinaryCacheError, match='open to other users [(]mode 0755[)]: it must be mode 0700'):
        bc.unpacked(src, str(cache))
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o755  # left as it is: it may be a shared directory
    os.chmod(cache, 0o700)
    bc.unpacked(src, str(cache))
    monkeypatch.setattr(bc.os, 'getuid', lambda: os.stat(cache).st_uid + 1)
    with pytest.raises(bc.BinaryCacheError, match='belongs to uid'):
        bc.unpacked(src, str(cache))


def test_default_cache_dir():
    assert bc.default_cache_dir({bc.CACHE_ENV: '/x/c'}) == '/x/c'
    assert bc.default_cache_dir({'XDG_CACHE_HOME': '/x'}) == '/x/deevnet-tenant/bin'
    assert bc.default_cache_dir({'HOME': '/h'}).endswith(os.path.join('.cache', 'deevnet-tenant', 'bin'))


def _race(args):
    src, cache = args
    return bc.unpacked(src, cache)


def test_many_forks_at_once_get_one_complete_file_unpacked_once(tmp_path, monkeypatch):
    data = os.urandom(3000000)
    src = _pack(tmp_path, data)
    cache = str(tmp_path / 'cache')
    unpacks = tmp_path / 'unpacks'
    real = bc._unpack_to

    def counted(*args):
        with open(unpacks, 'a') as f:
            f.write('%d\n' % os.getpid())
        real(*args)

    monkeypatch.setattr(bc, '_unpack_to', counted)  # the forks inherit it
    with multiprocessing.get_context('fork').Pool(8) as pool:
        paths = pool.map(_race, [(src, cache)] * 16)
    assert len(set(paths)) == 1
    assert len(unpacks.read_text().split()) == 1  # the others waited for the lock, then found the file
    with open(paths[0], 'rb') as f:
        assert hashlib.sha256(f.read()).hexdigest() == hashlib.sha256(data).hexdigest()
    assert sorted(os.listdir(os.path.dirname(paths[0]))) == ['.lock', 'tenant_modules_linux_amd64']


def test_unpacked_content_is_checked_against_the_sha256(tmp_path, monkeypatch):
    src = _pack(tmp_path, b'binary' * 100)
    monkeypatch.setattr(bc, 'xz_content_id', lambda path: ('0' * 64, 600))
    with pytest.raises(bc.BinaryCacheError, match='the unpacked binary has SHA-256 [0-9a-f]{64} and 600 bytes, the file says 0{64}'):
        bc.unpacked(src, str(tmp_path / 'cache'))
    assert not os.path.exists(tmp_path / 'cache' / ('0' * 64) / 'tenant_modules_linux_amd64')
