# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""The action that runs the Go binary of a deevnet.tenant module built for the target's platform.

Ansible picks a module file by name only, never by OS or architecture, but the collection's
modules are compiled Go programs. Every module has an action plugin of its own name
(plugins/action/<module>.py) that is this class. It finds the target's platform, then executes
``plugins/modules/__bin/<module>_<os>_<arch>`` when the module has a binary of its own, else the
multi-call binary ``plugins/modules/__bin/tenant_modules_<os>_<arch>``, through the ordinary
module machinery (``_execute_module``), so check mode, diff mode, no_log, async, become and
module_defaults behave exactly as for any other module. The argument ``_deevnet_tenant_module``
tells the binary which module to be. The binaries ship xz-compressed (``<binary>.xz``): the plugin
unpacks one on the controller into a content-addressed cache (binary_cache.py) and Ansible copies
or runs the unpacked file. See docs/adr/0011-binary-selection.md.

When the module runs on this machine as this user (the local connection, no become, not async),
the temporary directory is made, made executable and removed in this process rather than by a
shell command each: Ansible's generic path spawns four shells around the module's own (expand ~,
mkdir, chmod, rm), about 30 ms of every module task (issue 36). The binary is linked from the
cache, not copied. The directory, its mode (0700), ANSIBLE_KEEP_REMOTE_FILES and the module's
command stay Ansible's.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import stat

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible.utils.vars import merge_hash
from ansible_collections.deevnet.tenant.plugins.plugin_utils.binary_cache import SUFFIX, BinaryCacheError, unpacked

# Host fact (and inventory variable) holding "<os>_<arch>", e.g. "linux_amd64". Set it in the
# inventory to skip detection; otherwise it is detected once per host and returned as a fact.
PLATFORM_FACT = 'deevnet_tenant_platform'

# Subdirectory of plugins/modules holding the binaries. The leading "__" keeps ansible-doc --list
# from listing the binaries as modules; the ".py" doc stubs stay the only listed entries.
BIN_SUBDIR = '__bin'

# The multi-call binary holding every module without a binary of its own (cmd/tenant_modules).
MULTICALL = 'tenant_modules'

# The argument naming the module the binary is to be (module.SelectKey in internal/module).
SELECT_KEY = '_deevnet_tenant_module'

display = Display()

_PLATFORM_RE = re.compile(r'^[a-z0-9]+_[a-z0-9]+$')

# uname -s / platform.system() and uname -m / platform.machine() -> Go's GOOS / GOARCH.
_OS = {'linux': 'linux', 'darwin': 'darwin', 'freebsd': 'freebsd', 'openbsd': 'openbsd', 'netbsd': 'netbsd'}
_ARCH = {
    'x86_64': 'amd64', 'amd64': 'amd64', 'x64': 'amd64',
    'aarch64': 'arm64', 'arm64': 'arm64', 'aarch64_be': 'arm64be',
    'i386': '386', 'i486': '386', 'i586': '386', 'i686': '386', 'x86': '386',
    'armv6l': 'arm', 'armv7l': 'arm', 'armv7': 'arm',
    'ppc64le': 'ppc64le', 's390x': 's390x', 'riscv64': 'riscv64',
}


def go_platform(system, machine):
    """Map an OS name and a machine name (uname -s, uname -m) to "<goos>_<goarch>"."""
    system = system.strip().lower()
    machine = machine.strip().lower()
    if not system or not machine:
        raise ValueError('empty OS or machine name')
    goos = _OS.get(system, re.sub(r'[^a-z0-9]', '', system))
    goarch = _ARCH.get(machine, re.sub(r'[^a-z0-9]', '', machine))
    if not goos or not goarch:
        raise ValueError('unusable OS or machine name %r %r' % (system, machine))
    return '%s_%s' % (goos, goarch)


def parse_uname(output):
    """Parse the output of ``uname -sm`` ("Linux x86_64")."""
    fields = output.split()
    if len(fields) != 2:
        raise ValueError('unexpected output of uname -sm: %r' % output.strip()[:80])
    return go_platform(fields[0], fields[1])


class GoModuleAction(ActionBase):
    """Runs the module's Go binary for the target's platform; plugins/action/<module>.py subclass it."""

    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        result = super(GoModuleAction, self).run(tmp, task_vars)
        del tmp  # deprecated by ansible-core and unused
        task_vars = task_vars or {}

        # task.resolved_action names this action plugin, not the module (ansible-core 2.18 sets it
        # from the routing), so resolve the module name the task was written with.
        module_loader = self._shared_loader_obj.module_loader
        stub = module_loader.find_plugin_with_context(self._task.action, collection_list=self._task.collections)
        fqcn = stub.resolved_fqcn if stub.resolved else self._task.action
        parts = fqcn.split('.')
        if len(parts) < 3:
            raise AnsibleActionFail('deevnet.tenant: cannot tell the collection of module %r' % fqcn)
        collection, leaf = '.'.join(parts[:2]), parts[-1]

        plat, detected = self._platform(task_vars)
        # A module's own binary first (transit_route: copied to the hypervisor, kept small), then
        # the multi-call binary. The loader resolves <name>.xz for <name> (any extension matches).
        for name in (leaf, MULTICALL):
            binary = '%s.%s.%s_%s' % (collection, BIN_SUBDIR, name, plat)
            found = module_loader.find_plugin_with_context(binary, collection_list=self._task.collections)
            if found.resolved:
                break
        else:
            raise AnsibleActionFail(self._missing_binary_msg(fqcn, leaf, plat, stub))
        self._packed = {}
        if found.plugin_resolved_path.endswith(SUFFIX):
            try:
                self._packed[found.plugin_resolved_path] = unpacked(found.plugin_resolved_path)
            except BinaryCacheError as e:
                raise AnsibleActionFail('%s: %s' % (fqcn, e))

        module_args = dict(self._task.args)
        module_args[SELECT_KEY] = fqcn
        wrap_async = self._task.async_val and not self._connection.has_native_async
        result = merge_hash(result, self._execute_module(module_name=binary, module_args=module_args,
                                                         task_vars=task_vars, wrap_async=wrap_async))
        if detected and self._may_cache_fact():
            facts = dict(result.get('ansible_facts') or {})
            facts[PLATFORM_FACT] = plat
            result['ansible_facts'] = facts

        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    def _configure_module(self, module_name, module_args, task_vars):
        # ActionBase returns the module file's path last (ansible-core 2.18: style, shebang, data,
        # path; 2.19+: module bits, path), and a binary module is copied from that path: point it
        # at the unpacked binary instead of the .xz the loader found.
        configured = super(GoModuleAction, self)._configure_module(module_name=module_name, module_args=module_args,
                                                                   task_vars=task_vars)
        path = getattr(self, '_packed', {}).get(configured[-1])
        if path is None:
            return configured
        return tuple(configured[:-1]) + (path,)

    def _platform(self, task_vars):
        """Return ("<os>_<arch>", detected_now) for the host the module will run on."""
        host_vars = task_vars
        if self._task.delegate_to:
            # The module runs on the delegated host: read its facts, not the inventory host's.
            host_vars = (task_vars.get('ansible_delegated_vars') or {}).get(self._task.delegate_to) or {}
        known = (host_vars.get('ansible_facts') or {}).get(PLATFORM_FACT) or host_vars.get(PLATFORM_FACT)
        if known:
            known = str(known)
            if not _PLATFORM_RE.match(known):
                raise AnsibleActionFail('%s must look like "linux_amd64" (<goos>_<goarch>), got %r' % (PLATFORM_FACT, known))
            return known, False

        if self._is_local():
            # The module runs in this very process tree: no round trip needed.
            try:
                return go_platform(platform.system(), platform.machine()), False
            except ValueError as e:
                raise AnsibleActionFail('cannot tell the controller platform: %s' % e)

        res = self._low_level_execute_command('uname -sm', sudoable=False)
        if res.get('rc') != 0:
            raise AnsibleActionFail('cannot tell the target platform: "uname -sm" failed (rc=%s): %s'
                                    % (res.get('rc'), (res.get('stderr') or '').strip()[:200]))
        try:
            return parse_uname(res.get('stdout') or ''), True
        except ValueError as e:
            raise AnsibleActionFail('cannot tell the target platform: %s' % e)

    def _is_local(self):
        name = getattr(self._connection, '_load_name', '') or getattr(self._connection, 'transport', '')
        return name in ('local', 'ansible.builtin.local', 'ansible.legacy.local')

    def _runs_here(self):
        """The module runs on this machine as this user: the local connection without become, not async
        (async_wrapper and become keep Ansible's own handling of the temporary directory)."""
        return self._is_local() and not self._connection.become and not self._task.async_val

    def _make_tmp_path(self, remote_user=None):
        if not self._runs_here():
            return super(GoModuleAction, self)._make_tmp_path(remote_user)
        # What the shell's mkdtemp does: remote_tmp with ~ and $VARS expanded, created if missing,
        # then a new directory of Ansible's naming in it, both mode 0700.
        base = os.path.expandvars(os.path.expanduser(self.get_shell_option('remote_tmp', default='~/.ansible/tmp')))
        path = os.path.join(base, self._connection._shell._generate_temp_dir_name())
        try:
            os.makedirs(base, mode=0o700, exist_ok=True)
            os.mkdir(path, 0o700)
        except OSError as e:
            raise AnsibleError('Failed to create temporary directory %s: %s: %s (set remote_tmp, or ansible_remote_tmp, to a '
                               'directory this user can write)' % (path, e.filename or base, e.strerror or e))
        self._cleanup_remote_tmp = True
        path = os.path.join(path, '')  # as Ansible's: with the trailing separator
        self._connection._shell.tmpdir = path
        return path

    def _transfer_file(self, local_path, remote_path):
        if not (self._runs_here() and local_path in getattr(self, '_packed', {}).values()):
            return super(GoModuleAction, self)._transfer_file(local_path, remote_path)
        # The unpacked binary is this user's, mode 0700, checked and never rewritten (binary_cache.py):
        # run it where it is rather than copy its 8 MB for every task.
        try:
            os.symlink(local_path, remote_path)
        except OSError as e:
            raise AnsibleError('Failed to transfer file to %r: %s' % (remote_path, e.strerror or e))
        return remote_path

    def _fixup_perms2(self, remote_paths, remote_user=None, execute=True):
        if not self._runs_here():
            return super(GoModuleAction, self)._fixup_perms2(remote_paths, remote_user, execute)
        # No become: the files are this user's; Ansible's chmod u+rwx, without its shell.
        if execute:
            for path in remote_paths:
                try:
                    os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) | stat.S_IRWXU)
                except OSError as e:
                    raise AnsibleError('Failed to set permissions on remote files (%s: %s)' % (path, e.strerror or e))
        return remote_paths

    def _remove_tmp_path(self, tmp_path, force=False):
        if not self._runs_here():
            return super(GoModuleAction, self)._remove_tmp_path(tmp_path, force)
        if tmp_path is None and self._connection._shell.tmpdir:
            tmp_path = self._connection._shell.tmpdir
        if force or self._should_remove_tmp_path(tmp_path):
            try:
                shutil.rmtree(tmp_path)
            except FileNotFoundError:
                pass  # already gone: as removed
            except OSError as e:
                display.warning('Error deleting remote temporary files (%s: %s)' % (e.filename or tmp_path, e.strerror or e))
                return None
            self._connection._shell.tmpdir = None
        return None

    def _may_cache_fact(self):
        # Returned facts land on the inventory host unless delegate_facts is set; a delegated
        # host's platform must not be recorded as the inventory host's.
        return not self._task.delegate_to or bool(self._task.delegate_facts)

    def _missing_binary_msg(self, fqcn, leaf, plat, stub):
        built = set()
        if stub.resolved and stub.plugin_resolved_path:
            bin_dir = os.path.join(os.path.dirname(stub.plugin_resolved_path), BIN_SUBDIR)
            try:
                files = os.listdir(bin_dir)
            except OSError:
                files = []
            for prefix in (leaf + '_', MULTICALL + '_'):
                built.update(f[len(prefix):] for f in (n[:-len(SUFFIX)] if n.endswith(SUFFIX) else n for n in files)
                             if f.startswith(prefix) and _PLATFORM_RE.match(f[len(prefix):]))
        goos, dummy, goarch = plat.partition('_')
        return ('%s has no binary for the target platform %s/%s (neither plugins/modules/%s/%s_%s nor %s_%s exists); '
                'built for: %s. Build it with GOOS=%s GOARCH=%s (make build-all), or set %s if the '
                'detected platform is wrong.'
                % (fqcn, goos, goarch, BIN_SUBDIR, leaf, plat, MULTICALL, plat, ', '.join(sorted(built)) or 'no platform',
                   goos, goarch, PLATFORM_FACT))
