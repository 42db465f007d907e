"""Unit tests of the go_module action plugin (plugins/plugin_utils/go_module.py).

They run against whichever ansible-core the venv holds (make test-ansible runs them with the newest
and the oldest admitted). The end-to-end behaviour through ansible-playbook is in
tests/ansible/playbooks/action_plugin.yml.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from unittest import mock

import pytest
from ansible.errors import AnsibleActionFail, AnsibleError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))


def _load(name, fqname):
    spec = importlib.util.spec_from_file_location(fqname, os.path.join(ROOT, 'plugins', 'plugin_utils', name + '.py'))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[fqname] = mod
    spec.loader.exec_module(mod)
    return mod


# go_module imports binary_cache by its collection name; no collection loader runs here.
binary_cache = _load('binary_cache', 'ansible_collections.deevnet.tenant.plugins.plugin_utils.binary_cache')
go_module = _load('go_module', 'go_module')


@pytest.mark.parametrize('system,machine,want', [
    ('Linux', 'x86_64', 'linux_amd64'),
    ('Linux', 'aarch64', 'linux_arm64'),
    ('Darwin', 'arm64', 'darwin_arm64'),
    ('Darwin', 'x86_64', 'darwin_amd64'),
    ('Linux', 'armv7l', 'linux_arm'),
    ('FreeBSD', 'amd64', 'freebsd_amd64'),
    ('Linux', 'i686', 'linux_386'),
    ('SunOS', 'i86pc', 'sunos_i86pc'),  # unknown names pass through, lowercased
])
def test_go_platform(system, machine, want):
    assert go_module.go_platform(system, machine) == want


@pytest.mark.parametrize('out,want', [
    ('Linux x86_64\n', 'linux_amd64'),
    ('  Darwin arm64  ', 'darwin_arm64'),
])
def test_parse_uname(out, want):
    assert go_module.parse_uname(out) == want


@pytest.mark.parametrize('out', ['', 'Linux', 'Linux x86_64 extra', 'bash: uname: command not found'])
def test_parse_uname_rejects(out):
    with pytest.raises(ValueError):
        go_module.parse_uname(out)


class _Resolved:
    def __init__(self, fqcn, path):
        self.resolved = path is not None
        self.resolved_fqcn = fqcn if path else None
        self.plugin_resolved_path = path


def _action(tmp_path, transport='ssh', delegate_to=None, delegate_facts=None, built=('linux_amd64',), uname='Linux x86_64\n',
            own=(), packed=()):
    """An ActionModule for task deevnet.tenant.tenant_plan with everything around it faked: the
    multi-call binary built for the platforms in built, tenant_plan's own binary for those in own;
    packed maps file names to the bytes of an .xz file put there instead."""
    mod_dir = tmp_path / 'plugins' / 'modules'
    (mod_dir / '__bin').mkdir(parents=True)
    (mod_dir / 'tenant_plan.py').write_text('DOCUMENTATION = ""\n')
    for plat in built:
        (mod_dir / '__bin' / ('tenant_modules_' + plat)).write_bytes(b'\x7fELF')
    for plat in own:
        (mod_dir / '__bin' / ('tenant_plan_' + plat)).write_bytes(b'\x7fELF')
    for name, data in dict(packed).items():
        (mod_dir / '__bin' / name).write_bytes(data)

    def find(name, collection_list=None):
        leaf = name.split('.')[-1]
        if name == 'deevnet.tenant.tenant_plan':
            return _Resolved(name, str(mod_dir / 'tenant_plan.py'))
        # as Ansible's loader: the exact name, else the name with any extension
        for path in (mod_dir / '__bin' / leaf, mod_dir / '__bin' / (leaf + '.xz')):
            if path.exists():
                return _Resolved(name, str(path))
        return _Resolved(name, None)

    task = mock.MagicMock()
    task.action = 'deevnet.tenant.tenant_plan'
    task.args = {'name': 'tdemo', 'index': 1}
    task.async_val = 0
    task.check_mode = True
    task.diff = True
    task.delegate_to = delegate_to
    task.delegate_facts = delegate_facts
    task.collections = None
    connection = mock.MagicMock()
    connection._load_name = transport
    connection.transport = transport
    connection.has_native_async = False
    shared = mock.MagicMock()
    shared.module_loader.find_plugin_with_context.side_effect = find
    action = go_module.GoModuleAction(task, connection, mock.MagicMock(), mock.MagicMock(), mock.MagicMock(), shared)
    action._shared_loader_obj = shared  # ansible-core >= 2.19 ignores the argument and uses the global loaders
    action._execute_module = mock.MagicMock(return_value={'changed': False, 'tenant': {'name': 'tdemo'}})
    action._low_level_execute_command = mock.MagicMock(return_value={'rc': 0, 'stdout': uname, 'stderr': ''})
    action._remove_tmp_path = mock.MagicMock()
    return action


def test_remote_detects_once_and_caches_fact(tmp_path):
    action = _action(tmp_path)
    result = action.run(task_vars={})
    action._low_level_execute_command.assert_called_once_with('uname -sm', sudoable=False)
    name = action._execute_module.call_args.kwargs['module_name']
    assert name == 'deevnet.tenant.__bin.tenant_modules_linux_amd64'
    # arguments reach the module untouched, plus the name of the module the binary is to be;
    # check/diff travel in the task, not in the args
    assert action._execute_module.call_args.kwargs['module_args'] == {
        'name': 'tdemo', 'index': 1, '_deevnet_tenant_module': 'deevnet.tenant.tenant_plan'}
    assert action._task.args == {'name': 'tdemo', 'index': 1}
    assert result['ansible_facts'] == {'deevnet_tenant_platform': 'linux_amd64'}
    assert result['tenant'] == {'name': 'tdemo'}


def test_cached_fact_skips_detection(tmp_path):
    action = _action(tmp_path, built=('linux_arm64',))
    result = action.run(task_vars={'ansible_facts': {'deevnet_tenant_platform': 'linux_arm64'}})
    action._low_level_execute_command.assert_not_called()
    assert action._execute_module.call_args.kwargs['module_name'].endswith('tenant_modules_linux_arm64')
    assert 'ansible_facts' not in result


def test_inventory_variable_overrides(tmp_path):
    action = _action(tmp_path, built=('darwin_arm64',))
    action.run(task_vars={'deevnet_tenant_platform': 'darwin_arm64'})
    action._low_level_execute_command.assert_not_called()
    assert action._execute_module.call_args.kwargs['module_name'].endswith('tenant_modules_darwin_arm64')


def test_bad_override_is_named(tmp_path):
    action = _action(tmp_path)
    with pytest.raises(AnsibleActionFail, match='deevnet_tenant_platform must look like'):
        action.run(task_vars={'deevnet_tenant_platform': 'Linux/x86_64'})


def test_local_connection_needs_no_round_trip(tmp_path):
    import platform
    action = _action(tmp_path, transport='local', built=(go_module.go_platform(platform.system(), platform.machine()),))
    result = action.run(task_vars={})
    action._low_level_execute_command.assert_not_called()
    assert 'ansible_facts' not in result


def test_delegated_platform_is_not_recorded_on_the_inventory_host(tmp_path):
    action = _action(tmp_path, delegate_to='hv1', uname='Linux aarch64', built=('linux_arm64',))
    result = action.run(task_vars={'ansible_facts': {'deevnet_tenant_platform': 'darwin_arm64'},
                                   'ansible_delegated_vars': {'hv1': {}}})
    # the inventory host's own fact is not used for the delegated host ...
    action._low_level_execute_command.assert_called_once()
    assert action._execute_module.call_args.kwargs['module_name'].endswith('tenant_modules_linux_arm64')
    # ... and the delegated host's platform is not written onto the inventory host
    assert 'ansible_facts' not in result


def test_delegate_facts_records_on_the_delegated_host(tmp_path):
    action = _action(tmp_path, delegate_to='hv1', delegate_facts=True)
    result = action.run(task_vars={'ansible_delegated_vars': {'hv1': {}}})
    assert result['ansible_facts'] == {'deevnet_tenant_platform': 'linux_amd64'}


def test_missing_binary_names_platform_and_what_exists(tmp_path):
    action = _action(tmp_path, uname='Darwin arm64', built=('linux_amd64', 'linux_arm64'))
    with pytest.raises(AnsibleActionFail) as err:
        action.run(task_vars={})
    msg = str(err.value)
    assert 'deevnet.tenant.tenant_plan has no binary for the target platform darwin/arm64' in msg
    assert 'neither plugins/modules/__bin/tenant_plan_darwin_arm64 nor tenant_modules_darwin_arm64 exists' in msg
    assert 'built for: linux_amd64, linux_arm64' in msg
    action._execute_module.assert_not_called()


def test_failed_uname_is_reported(tmp_path):
    action = _action(tmp_path)
    action._low_level_execute_command.return_value = {'rc': 127, 'stdout': '', 'stderr': 'uname: not found'}
    with pytest.raises(AnsibleActionFail, match=r'"uname -sm" failed \(rc=127\): uname: not found'):
        action.run(task_vars={})


@pytest.mark.parametrize('uname,plat', [('Darwin arm64', 'darwin_arm64'), ('Darwin x86_64', 'darwin_amd64'),
                                        ('Linux aarch64', 'linux_arm64')])
def test_picks_the_multicall_binary_of_each_platform(tmp_path, uname, plat):
    action = _action(tmp_path, uname=uname, built=('linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64'))
    action.run(task_vars={})
    assert action._execute_module.call_args.kwargs['module_name'] == 'deevnet.tenant.__bin.tenant_modules_' + plat


def test_own_binary_comes_before_the_multicall_one(tmp_path):
    # transit_route ships a binary of its own; a module without one for the platform falls back.
    action = _action(tmp_path, built=('linux_amd64', 'linux_arm64'), own=('linux_amd64',))
    action.run(task_vars={})
    assert action._execute_module.call_args.kwargs['module_name'] == 'deevnet.tenant.__bin.tenant_plan_linux_amd64'
    assert action._execute_module.call_args.kwargs['module_args']['_deevnet_tenant_module'] == 'deevnet.tenant.tenant_plan'
    action = _action(tmp_path / 'b', uname='Linux aarch64', built=('linux_arm64',), own=('linux_amd64',))
    action.run(task_vars={})
    assert action._execute_module.call_args.kwargs['module_name'] == 'deevnet.tenant.__bin.tenant_modules_linux_arm64'


def _xz(data):
    """An .xz file's bytes as scripts/xz-pack.py writes them (the script itself is tested below)."""
    import lzma
    return lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_SHA256, preset=6)


def test_packed_binary_is_unpacked_and_run_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(binary_cache.CACHE_ENV, str(tmp_path / 'cache'))
    binary = b'\x7fELF' + os.urandom(5000)
    action = _action(tmp_path, built=(), packed={'tenant_modules_linux_amd64.xz': _xz(binary)})
    action.run(task_vars={})
    assert action._execute_module.call_args.kwargs['module_name'] == 'deevnet.tenant.__bin.tenant_modules_linux_amd64'
    xz_path = str(tmp_path / 'plugins' / 'modules' / '__bin' / 'tenant_modules_linux_amd64.xz')
    cached = action._packed[xz_path]
    with open(cached, 'rb') as f:
        assert f.read() == binary
    # ActionBase's _configure_module returns the module file last in both layouts (2.18: four
    # fields, 2.19+: two): the .xz found by the loader becomes the unpacked binary, nothing else.
    for configured in (('binary', None, b'', xz_path), ('bits', xz_path), ('bits', '/other/module.py')):
        with mock.patch.object(go_module.ActionBase, '_configure_module', return_value=configured):
            got = action._configure_module(module_name='x', module_args={}, task_vars={})
        want = configured[:-1] + (cached,) if configured[-1] == xz_path else configured
        assert got == want


def test_broken_packed_binary_fails_naming_the_module_and_file(tmp_path, monkeypatch):
    monkeypatch.setenv(binary_cache.CACHE_ENV, str(tmp_path / 'cache'))
    action = _action(tmp_path, built=(), packed={'tenant_modules_linux_amd64.xz': b'\x7fELF not xz'})
    with pytest.raises(AnsibleActionFail, match=r'deevnet.tenant.tenant_plan: .*tenant_modules_linux_amd64.xz: not a binary packed'):
        action.run(task_vars={})
    action._execute_module.assert_not_called()


def test_missing_binary_lists_the_packed_platforms(tmp_path):
    action = _action(tmp_path, uname='Darwin arm64', built=(), packed={'tenant_modules_linux_arm64.xz': _xz(b'x')})
    with pytest.raises(AnsibleActionFail, match='built for: linux_arm64[.]'):
        action.run(task_vars={})


def _local_action(tmp_path, become=None, async_val=0, transport='local'):
    """An action whose module would run on this machine (the local connection), with a real sh shell
    plugin and remote_tmp under tmp_path; its _remove_tmp_path is the plugin's own."""
    from ansible.plugins.shell.sh import ShellModule
    action = _action(tmp_path / 'collection', transport=transport)
    del action._remove_tmp_path
    action._connection.become = become
    action._connection._shell = ShellModule()
    action._task.async_val = async_val
    base = tmp_path / 'remote_tmp'
    action.get_shell_option = lambda option, default=None: str(base) if option == 'remote_tmp' else default
    return action, base


def test_local_module_run_makes_and_removes_its_temporary_directory_without_a_shell(tmp_path):
    action, base = _local_action(tmp_path)
    path = action._make_tmp_path()
    # Ansible's shape: a new ansible-tmp-* directory in remote_tmp, both mode 0700, with the trailing separator
    assert path.endswith(os.sep) and os.path.dirname(path.rstrip(os.sep)) == str(base)
    assert os.path.basename(path.rstrip(os.sep)).startswith('ansible-tmp-')
    assert action._connection._shell.tmpdir == path
    assert os.stat(base).st_mode & 0o777 == 0o700
    assert os.stat(path).st_mode & 0o777 == 0o700
    # the unpacked binary is linked, not copied (other files, such as the arguments, are copied)
    cached = tmp_path / 'cache' / 'tenant_modules_linux_amd64'
    cached.parent.mkdir()
    cached.write_bytes(b'\x7fELF')
    cached.chmod(0o600)
    action._packed = {'/collection/tenant_modules_linux_amd64.xz': str(cached)}
    module = os.path.join(path, 'AnsiballZ_tenant_modules_linux_amd64')
    assert action._transfer_file(str(cached), module) == module
    assert os.readlink(module) == str(cached)
    with mock.patch.object(go_module.ActionBase, '_transfer_file', return_value='/copied') as copy:
        assert action._transfer_file('/elsewhere/args', os.path.join(path, 'args')) == '/copied'
    copy.assert_called_once()
    assert action._fixup_perms2([path, module]) == [path, module]
    assert os.stat(module).st_mode & 0o777 == 0o700
    action._remove_tmp_path(action._connection._shell.tmpdir)
    assert not os.path.exists(path) and action._connection._shell.tmpdir is None
    assert cached.read_bytes() == b'\x7fELF'  # removing the link leaves the cache alone
    # none of it went through a shell command (four of them on Ansible's generic path)
    action._low_level_execute_command.assert_not_called()


def test_local_module_run_keeps_its_files_when_asked(tmp_path):
    action = _local_action(tmp_path)[0]
    path = action._make_tmp_path()
    with mock.patch('ansible.plugins.action.C.DEFAULT_KEEP_REMOTE_FILES', True):
        action._remove_tmp_path(path)
    assert os.path.isdir(path) and action._connection._shell.tmpdir == path
    action._remove_tmp_path(path, force=True)
    assert not os.path.exists(path)


def test_local_temporary_directory_failure_names_the_path_and_the_setting(tmp_path):
    action, base = _local_action(tmp_path)
    base.write_text('a file where the directory should be')
    with pytest.raises(AnsibleError, match=r'Failed to create temporary directory %s/ansible-tmp-[^:]*: %s: File exists \(set remote_tmp'
                       % (re.escape(str(base)), re.escape(str(base)))):
        action._make_tmp_path()


@pytest.mark.parametrize('kind', ['become', 'async', 'remote'])
def test_become_async_and_remote_runs_keep_ansibles_own_handling(tmp_path, kind):
    action = _local_action(tmp_path, become=mock.MagicMock() if kind == 'become' else None,
                           async_val=10 if kind == 'async' else 0, transport='ssh' if kind == 'remote' else 'local')[0]
    with mock.patch.object(go_module.ActionBase, '_make_tmp_path', return_value='/r/ansible-tmp-1/') as make, \
            mock.patch.object(go_module.ActionBase, '_fixup_perms2', return_value=['/r/ansible-tmp-1/']) as fix, \
            mock.patch.object(go_module.ActionBase, '_transfer_file', return_value='/r/ansible-tmp-1/m') as copy, \
            mock.patch.object(go_module.ActionBase, '_remove_tmp_path') as remove:
        action._packed = {'/c/m.xz': '/cache/m'}
        assert action._make_tmp_path() == '/r/ansible-tmp-1/'
        action._transfer_file('/cache/m', '/r/ansible-tmp-1/m')
        action._fixup_perms2(['/r/ansible-tmp-1/'])
        action._remove_tmp_path('/r/ansible-tmp-1/')
    make.assert_called_once()
    copy.assert_called_once()
    fix.assert_called_once()
    remove.assert_called_once()
    assert not (tmp_path / 'remote_tmp').exists()
