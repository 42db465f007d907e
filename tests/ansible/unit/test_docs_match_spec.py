"""Each module's documentation names exactly the options its binary accepts.

The docs live in plugins/modules/<m>.py (plus doc fragments); the options live in the Go spec.
Nothing else keeps the two in step, so this asks each built binary for its supported options (the
protocol lists them when it refuses an unknown one) and compares them with the merged docs.
"""

import importlib.util
import json
import pathlib
import re
import subprocess

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[3]
MODULES = ROOT / 'plugins' / 'modules'
FRAGMENTS = ROOT / 'plugins' / 'doc_fragments'
_spec = importlib.util.spec_from_file_location('binary_cache', ROOT / 'plugins' / 'plugin_utils' / 'binary_cache.py')
binary_cache = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(binary_cache)


@pytest.fixture(scope='module')
def cache_dir(tmp_path_factory):
    """A private cache of unpacked binaries for this file's tests (unpacked once, then found)."""
    return str(tmp_path_factory.mktemp('bin-cache'))


def _documentation(path):
    namespace = {}
    exec(compile(path.read_text(), str(path), 'exec'), namespace)  # the stubs hold only strings
    return namespace


def _documented_options(module):
    doc = yaml.safe_load(_documentation(MODULES / (module + '.py'))['DOCUMENTATION'])
    options = dict(doc.get('options') or {})
    for fragment in doc.get('extends_documentation_fragment') or []:
        name = fragment.split('.')[-1]
        frag = _documentation(FRAGMENTS / (name + '.py'))['ModuleDocFragment'].DOCUMENTATION
        options.update(yaml.safe_load(frag).get('options') or {})
    names = set(options)
    for opt in options.values():
        names.update(opt.get('aliases') or [])
    return names


def _accepted_options(module, tmp_path, cache_dir):
    # The module's own binary if it has one (transit_route), else the multi-call binary, told which
    # module to be as the go_module action plugin tells it, unpacked as the action plugin does.
    packed = MODULES / '__bin' / (module + '_linux_amd64.xz')
    if not packed.exists():
        packed = MODULES / '__bin' / 'tenant_modules_linux_amd64.xz'
    if not packed.exists():
        pytest.fail('%s is not built: run make build first' % packed)
    binary = binary_cache.unpacked(str(packed), cache_dir)
    args = tmp_path / 'args'
    args.write_text(json.dumps({'zz_not_an_option': 1, '_deevnet_tenant_module': 'deevnet.tenant.' + module}))
    out = subprocess.run([str(binary), str(args)], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, check=False)
    msg = json.loads(out.stdout)['msg']
    listed = re.search(r'Supported parameters include: (.*?)\.(?:;|$)', msg)
    assert listed, msg
    return set(listed.group(1).split(', '))


@pytest.mark.parametrize('module', sorted(p.stem for p in MODULES.glob('*.py')))
def test_docs_name_exactly_the_accepted_options(module, tmp_path, cache_dir):
    documented = _documented_options(module)
    accepted = _accepted_options(module, tmp_path, cache_dir)
    assert not accepted - documented, 'accepted but not documented: %s' % sorted(accepted - documented)
    assert not documented - accepted, 'documented but refused: %s' % sorted(documented - accepted)
