# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""The attachment file's format rules (plugins/filter/attachment.py; docs/releases.md)."""

from __future__ import annotations

import importlib.util
import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_spec = importlib.util.spec_from_file_location('attachment', os.path.join(ROOT, 'plugins', 'filter', 'attachment.py'))
att = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(att)
VERSION = str(yaml.safe_load(open(os.path.join(ROOT, 'galaxy.yml'), encoding='utf-8'))['version'])
SECRET = 'dvt-secret-never-printed'


def base():
    """A file as deevnet.tenant 0.1.0 wrote it: no format key."""
    return {'name': 'tdemo', 'index': 1, 'site': {},
            'pve': {'api_host': '127.0.0.1', 'api_token_secret': SECRET},
            'dns': {'server': '127.0.0.1', 'key_secret': SECRET}, 'resolver': {'server': '127.0.0.1', 'port': 53}}


def test_stamp_writes_the_current_format_and_this_release():
    s = att.tenant_attachment_stamp(base())
    assert s['format'] == att.FORMAT == 1
    assert s['written_by'] == 'deevnet.tenant %s' % VERSION
    assert att.tenant_attachment_errors(s) == []


def test_a_file_without_the_key_is_read_when_its_content_is_format_1():
    assert att.tenant_attachment_errors(base()) == []


def test_no_attachment_gives_no_message():
    assert att.tenant_attachment_errors({}) == []


def test_newer_format_names_the_field_the_writer_and_what_to_run():
    a = dict(base(), format=2, written_by='deevnet.tenant 9.1.0')
    [msg] = att.tenant_attachment_errors(a)
    assert msg.startswith('tenant_attachment.format 2 is newer than deevnet.tenant %s reads (formats 1..1)' % VERSION)
    assert 'written by deevnet.tenant 9.1.0' in msg
    assert 're-run the onboard playbook with deevnet.tenant %s' % VERSION in msg
    assert 'deevnet.tenant.onboard -e tenant_name=tdemo' in msg


def test_older_format_is_refused():
    [msg] = att.tenant_attachment_errors(dict(base(), format=0, written_by='deevnet.tenant 0.0.1'))
    assert msg.startswith('tenant_attachment.format 0 is older than deevnet.tenant %s reads' % VERSION)
    assert 'written by deevnet.tenant 0.0.1' in msg and 're-run the onboard playbook' in msg


@pytest.mark.parametrize('bad', ['1', 1.0, True, None, [1]])
def test_format_must_be_an_integer(bad):
    [msg] = att.tenant_attachment_errors(dict(base(), format=bad))
    assert msg.startswith('tenant_attachment.format ') and 'must be an integer' in msg


def test_written_by_must_be_a_string():
    [msg] = att.tenant_attachment_errors(dict(base(), format=1, written_by=3))
    assert msg.startswith('tenant_attachment.written_by must be a string')


def test_an_unstamped_file_missing_format_1_keys_is_refused_naming_each_key_never_a_secret():
    a = base()
    del a['dns']
    a['pve'] = 'PVEAPIToken=tenant-tdemo@pve!iac=' + SECRET
    [msg] = att.tenant_attachment_errors(a, 'tdemo')
    assert 'tenant_attachment.pve must be a mapping, not str' in msg
    assert 'tenant_attachment.dns is missing' in msg
    assert '(format 1 without the key, written by deevnet.tenant 0.1.0' in msg
    assert 'deevnet.tenant.onboard -e tenant_name=tdemo' in msg
    assert SECRET not in msg


def test_not_a_mapping():
    [msg] = att.tenant_attachment_errors(['x'])
    assert msg.startswith('tenant_attachment must be a mapping')
