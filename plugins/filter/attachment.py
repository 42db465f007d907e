# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""The attachment file's format (docs/releases.md, "The attachment file's format").

Onboarding stamps the file it writes with the format it follows (``tenant_attachment.format``) and the
release that wrote it (``tenant_attachment.written_by``); the tenant side reads the formats this
release knows and refuses any other, naming the release that wrote the file and what to run.
A file without ``format`` was written before the key existed (deevnet.tenant 0.1.0 and 0.2.0's
development versions): it is format 1 when it holds format 1's keys, which is the upgrade case.
"""

from __future__ import annotations

import json
import os

import yaml

# The format onboarding writes, and the oldest this release still reads. Raise FORMAT when a key is
# renamed, removed or reinterpreted (a release may add keys within a format); raise OLDEST only when
# this release can no longer read an older format.
FORMAT = 1
OLDEST = 1
# What a format-1 file holds, with the type each key has (the keys the tenant role reads).
_FORMAT1 = [('name', str, 'a string'), ('index', int, 'an integer'), ('pve', dict, 'a mapping'),
            ('dns', dict, 'a mapping'), ('resolver', dict, 'a mapping')]


def _collection_version():
    """This collection's version: MANIFEST.json when installed, galaxy.yml in a checkout."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        with open(os.path.join(root, 'MANIFEST.json'), encoding='utf-8') as f:
            return str(json.load(f)['collection_info']['version'])
    except (OSError, ValueError, KeyError):
        pass
    try:
        with open(os.path.join(root, 'galaxy.yml'), encoding='utf-8') as f:
            return str(yaml.safe_load(f)['version'])
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return 'unknown'


def tenant_attachment_stamp(attachment):
    """The attachment with the format it follows and the release that writes it."""
    out = dict(attachment)
    out['format'] = FORMAT
    out['written_by'] = 'deevnet.tenant %s' % _collection_version()
    return out


def tenant_attachment_errors(attachment, tenant=''):
    """One message per broken rule of the attachment file's format; empty when this release reads it."""
    if not attachment:
        return []  # no attachment file (destroy of a tenant never onboarded): the callers' own rules apply
    this = 'deevnet.tenant %s' % _collection_version()
    name = tenant or (attachment.get('name') if isinstance(attachment, dict) else '') or '<name>'
    onboard = ('re-run the onboard playbook with %s (ansible-playbook -i inventory deevnet.tenant.onboard -e tenant_name=%s) '
               'and use the attachment file it writes' % (this, name))
    if not isinstance(attachment, dict):
        return ['tenant_attachment must be a mapping (the attachment file holds the variable tenant_attachment): %s' % onboard]
    writer = attachment.get('written_by')
    if writer is not None and not isinstance(writer, str):
        return ['tenant_attachment.written_by must be a string naming the release that wrote the file '
                '(deevnet.tenant X.Y.Z), not %s: %s' % (type(writer).__name__, onboard)]
    wrote = writer or ('an unknown release (no tenant_attachment.written_by)' if 'format' in attachment
                       else 'deevnet.tenant 0.1.0 or a development version of 0.2.0 (no tenant_attachment.format)')
    fmt = attachment.get('format')
    if 'format' in attachment:
        if isinstance(fmt, bool) or not isinstance(fmt, int):
            return ['tenant_attachment.format %s must be an integer, the attachment file\'s format (written by %s; %s reads '
                    'formats %d..%d): %s' % (json.dumps(fmt, default=str)[:40], wrote, this, OLDEST, FORMAT, onboard)]
        if fmt > FORMAT:
            return ['tenant_attachment.format %d is newer than %s reads (formats %d..%d): the file was written by %s; '
                    'install that release or a later one (requirements.yml), or have the substrate %s'
                    % (fmt, this, OLDEST, FORMAT, wrote, onboard)]
        if fmt < OLDEST:
            return ['tenant_attachment.format %d is older than %s reads (formats %d..%d): the file was written by %s; %s'
                    % (fmt, this, OLDEST, FORMAT, wrote, onboard)]
    # Format 1, stamped or not (a file without the key was written before it existed).
    errors = []
    for key, kind, what in _FORMAT1:
        if key not in attachment:
            errors.append('tenant_attachment.%s is missing' % key)
        elif isinstance(attachment[key], bool) or not isinstance(attachment[key], kind):
            # the type, never the value: pve and dns hold the token secret and the TSIG key
            errors.append('tenant_attachment.%s must be %s, not %s' % (key, what, type(attachment[key]).__name__))
    if errors:
        return ['%s: the file (format %s, written by %s) is not an attachment file of format 1, which %s reads: %s'
                % ('; '.join(errors), fmt if fmt is not None else '1 without the key', wrote, this, onboard)]
    return []


class FilterModule:
    def filters(self):
        return {'tenant_attachment_errors': tenant_attachment_errors, 'tenant_attachment_stamp': tenant_attachment_stamp}
