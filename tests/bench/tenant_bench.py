# pylint: disable=disallowed-name,subprocess-run-check  # test tooling: "_" discards, exit codes read by hand
"""make bench-tenant: the shipped tenant playbook beside community.proxmox, and many tenants by our modules.

For each ansible-core given with --core NAME=VENV:
  playbook  tdemo (zone + VNet + subnet + SDN apply + one VM cloned, configured and started) as users run it:
            `ansible-playbook -i <inventory> deevnet.tenant.tenant -e tenant_file=tdemo.yml` (verify on: DNS records,
            then every check) against the lifecycle lab (extensions/molecule/shared/lab.sh: pvesim, PowerDNS,
            Unbound on 127.0.0.1; onboard and fabric run first, untimed), first run then no-op. The peer: the
            six-task community.proxmox playbook (proxmox_zone/proxmox_vnet/proxmox_subnet, proxmox_kvm clone,
            config, start) for the same network and VM, its settings read back from what ours made, against the
            same pvesim reset to the substrate alone.
  scale     N tenants x 3 VMs in one play by the modules themselves (one tenant_vrf run with tenants, staging and
            applying once; one tenant_vm run with tenants; first core only), the peer too for the N in --peer-scale.
floor     Ansible's own cost, which no playbook goes below: for ours, the shipped tenant playbook's plays (their hosts and
            gather_facts, read from playbooks/tenant.yml) with no task, through the same inventory; for the peer an
            empty play on localhost with its connection. Each run's time above its floor is what the playbook itself
            costs; the ratio of the peer's to ours is printed per core and run.
A no-op is run --noop-runs times (3) and the fastest kept, as for the floor; a first run is run once.
pvesim answers every API request after --latency (20 ms). Each run: wall time of ansible-playbook, tasks started
and the time of each (callback dvt_timer), requests pvesim counted (/_sim/stats: all, GETs, writes, SDN applies),
changed tasks, pvesim's RSS. Prints each run, the ratios and the playbook's slowest tasks; results.json in --out.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from converge_bench import SHARED, Lab, run_playbook  # noqa: E402  pylint: disable=wrong-import-position
NODE = 'dv02hyp002p02'
ROOT = HERE.parent.parent
FLOOR_RUNS = 3  # the floor is the fastest of these: it is what Ansible cannot go below
SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuBgRI8GCpQ1Li2FMavVoVf+RzPLi477unNJvv4IwTL ops@deevnet'


class Sim:
    """A pvesim process and its API/admin endpoints."""

    def __init__(self, binary, latency, work, lab_dir=None):
        self.token_file = work / 'token.json'
        self.ca = work / 'ca.pem'
        self.log, self.proc, self.pid = None, None, None
        if lab_dir is not None:
            # the lab's pvesim (lab.sh started it and stops it)
            self.token_file, self.ca = lab_dir / 'pvesim-token.json', lab_dir / 'pvesim-ca.pem'
            self.pid = int((lab_dir / 'pvesim.pid').read_text())
        else:
            self.log = open(work / 'pvesim.log', 'w')
            self.proc = subprocess.Popen([binary, '--listen', '127.0.0.1:0', '--latency', latency,
                                          '--ca-out', str(self.ca), '--token-out', str(self.token_file)],
                                         stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            self.pid = self.proc.pid
        for _ in range(200):
            if self.token_file.exists() and self.token_file.stat().st_size > 0:
                break
            if self.proc is not None and self.proc.poll() is not None:
                sys.exit('pvesim exited: see %s' % (work / 'pvesim.log'))
            time.sleep(0.05)
        self.conn = json.loads(self.token_file.read_text())
        self.url = 'https://127.0.0.1:%d' % self.conn['api_port']
        self.ctx = ssl.create_default_context(cafile=str(self.ca))
        self.auth = 'PVEAPIToken=%s=%s' % (self.conn['full_token_id'], self.conn['api_token_secret'])
        for _ in range(100):
            try:
                self.call('GET', '/api2/json/version')
                break
            except OSError:
                time.sleep(0.05)

    def call(self, method, path, data=None, json_body=None):
        body = urllib.parse.urlencode(data).encode() if data else None
        headers = {'Authorization': self.auth}
        if json_body is not None:
            body, headers['Content-Type'] = json.dumps(json_body).encode(), 'application/json'
        req = urllib.request.Request(self.url + path, data=body, method=method, headers=headers)
        with urllib.request.urlopen(req, context=self.ctx, timeout=60) as r:
            raw = r.read()
        return json.loads(raw).get('data') if raw else None

    def stats(self):
        return self.call('GET', '/_sim/stats')

    def set_latency(self, ms):
        self.call('POST', '/_sim/faults', json_body={'latency_ms': ms})

    def rss_kib(self):
        for line in open('/proc/%d/status' % self.pid):
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
        return 0

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.log.close()


def yaml_plays(path):
    """The plays of a shipped playbook (the bench venv has PyYAML: ansible needs it)."""
    import yaml  # pylint: disable=import-outside-toplevel
    return yaml.safe_load(path.read_text())


def tenants(n):
    return [{'name': 'tdemo' if n == 1 else 't%02d' % i, 'index': i} for i in range(1, n + 1)]


def play(name, tasks, defaults):
    return [{'name': name, 'hosts': 'localhost', 'gather_facts': False, 'module_defaults': defaults, 'tasks': tasks}]


def ours_playbook(conn, ts, vms):
    defaults = {'group/deevnet.tenant.proxmox': {k: conn[k] for k in (
        'api_host', 'api_port', 'api_user', 'api_token_id', 'api_token_secret', 'ca_path')}}
    vm = {'template': 'debian-12-genericcloud', 'count': vms, 'cores': 2, 'memory': 1024, 'ciuser': 'debian',
          'sshkeys': [SSH_KEY]}
    tasks = [
        {'name': 'tenant_vrf (every tenant, one apply)', 'deevnet.tenant.tenant_vrf': {'tenants': ts, 'apply': True}},
        {'name': 'tenant_vm (every tenant)', 'deevnet.tenant.tenant_vm': dict(
            {'tenants': [dict(t, count=vm['count']) for t in ts]}, **{k: v for k, v in vm.items() if k != 'count'})},
    ]
    return play('deevnet.tenant: %d tenant(s)' % len(ts), tasks, defaults)


def substrate_playbook(conn):
    defaults = {'group/deevnet.tenant.proxmox': {k: conn[k] for k in (
        'api_host', 'api_port', 'api_user', 'api_token_id', 'api_token_secret', 'ca_path')}}
    return play('substrate', [{'name': 'fabric and controller', 'deevnet.tenant.pve_sdn_fabric': {
        'nodes': [{'name': NODE, 'interfaces': ['vmbr0.51']}], 'apply': True}}], defaults)


def harvest(sim, ts, plans):
    """What ours made, as the peer's arguments: SDN objects from the pending views, VMs from their configs."""
    zones = {z['zone']: z for z in sim.call('GET', '/api2/json/cluster/sdn/zones')}
    vnets = {v['vnet']: v for v in sim.call('GET', '/api2/json/cluster/sdn/vnets')}
    out = []
    for t in ts:
        plan = plans[t['name']]
        z = zones[plan['zone']]
        v0 = plan['vnets'][0]
        vn = vnets[v0['id']]
        subnets = sim.call('GET', '/api2/json/cluster/sdn/vnets/%s/subnets' % v0['id'])
        vms = []
        for r in sim.call('GET', '/api2/json/cluster/resources?type=vm'):
            if r.get('pool') != plan['pool'] or r.get('template'):
                continue
            cfg = sim.call('GET', '/api2/json/nodes/%s/qemu/%d/config' % (r['node'], r['vmid']))
            vms.append({'vmid': r['vmid'], 'name': cfg['name'], 'node': r['node'], 'pool': plan['pool'],
                        'cores': int(cfg['cores']), 'memory': int(cfg['memory']), 'ciuser': cfg.get('ciuser'),
                        'net0': re.sub(r'^virtio=[0-9A-Fa-f:]+', 'virtio', cfg['net0']),
                        'ipconfig0': cfg['ipconfig0'], 'nameserver': cfg.get('nameserver'),
                        'searchdomain': cfg.get('searchdomain'),
                        'sshkeys': urllib.parse.unquote(cfg.get('sshkeys', '')).strip()})
        out.append({'zone': z['zone'], 'controller': z['controller'], 'vrf_vxlan': int(z['vrf-vxlan']),
                    'mtu': int(z['mtu']) if z.get('mtu') else None, 'nodes': z.get('nodes'),
                    'vnet': vn['vnet'], 'tag': int(vn['tag']), 'alias': vn.get('alias'),
                    'subnet': subnets[0]['cidr'], 'gateway': subnets[0].get('gateway'), 'vms': sorted(vms, key=lambda x: x['vmid'])})
    return out


def peer_playbook(conn, objs):
    c = {'api_host': conn['api_host'], 'api_port': conn['api_port'], 'api_user': conn['api_user'],
         'api_token_id': conn['api_token_id'], 'api_token_secret': conn['api_token_secret'], 'ca_path': conn['ca_path']}
    defaults = {'group/community.proxmox.proxmox': c}
    vms = [vm for o in objs for vm in o['vms']]

    def opt(d):
        return {k: v for k, v in d.items() if v is not None}
    tasks = [
        {'name': 'proxmox_zone', 'community.proxmox.proxmox_zone': opt({
            'zone': '{{ item.zone }}', 'type': 'evpn', 'controller': '{{ item.controller }}', 'vrf_vxlan': '{{ item.vrf_vxlan }}',
            'mtu': '{{ item.mtu }}', 'nodes': '{{ item.nodes }}'}), 'loop': objs},
        {'name': 'proxmox_vnet', 'community.proxmox.proxmox_vnet': {
            'vnet': '{{ item.vnet }}', 'zone': '{{ item.zone }}', 'tag': '{{ item.tag }}', 'alias': '{{ item.alias }}'}, 'loop': objs},
        {'name': 'proxmox_subnet', 'community.proxmox.proxmox_subnet': {
            'subnet': '{{ item.subnet }}', 'vnet': '{{ item.vnet }}', 'zone': '{{ item.zone }}', 'gateway': '{{ item.gateway }}'},
         'loop': objs},
        {'name': 'proxmox_kvm clone', 'community.proxmox.proxmox_kvm': {
            'node': '{{ item.node }}', 'name': '{{ item.name }}', 'clone': 'debian-12-genericcloud', 'newid': '{{ item.vmid }}',
            'pool': '{{ item.pool }}', 'full': False, 'timeout': 300}, 'loop': vms},
        {'name': 'proxmox_kvm config', 'community.proxmox.proxmox_kvm': {
            'node': '{{ item.node }}', 'vmid': '{{ item.vmid }}', 'update': True, 'cores': '{{ item.cores }}',
            'memory': '{{ item.memory }}', 'net': {'net0': '{{ item.net0 }}'}, 'ipconfig': {'ipconfig0': '{{ item.ipconfig0 }}'},
            'nameservers': ['{{ item.nameserver }}'], 'searchdomains': ['{{ item.searchdomain }}'],
            'ciuser': '{{ item.ciuser }}', 'sshkeys': '{{ item.sshkeys }}', 'timeout': 300}, 'loop': vms},
        {'name': 'proxmox_kvm start', 'community.proxmox.proxmox_kvm': {
            'node': '{{ item.node }}', 'vmid': '{{ item.vmid }}', 'state': 'started', 'timeout': 300}, 'loop': vms},
    ]
    if not any(vm.get('searchdomain') for vm in vms):
        del tasks[4]['community.proxmox.proxmox_kvm']['searchdomains']
    return play('community.proxmox: %d tenant(s)' % len(objs), tasks, defaults)


class Runner:
    def __init__(self, args, sim, work):
        self.args, self.sim, self.work = args, sim, work
        self.rows = []
        self.profiles = {}

    def env(self, venv):
        e = dict(os.environ)
        site = next(pathlib.Path(self.args.peer_venv).glob('lib/python3*/site-packages'))
        e.update({
            'ANSIBLE_COLLECTIONS_PATH': '%s:%s' % (self.args.collections, site),
            'ANSIBLE_COLLECTIONS_SCAN_SYS_PATH': 'false',
            'ANSIBLE_PYTHON_INTERPRETER': str(pathlib.Path(self.args.peer_venv) / 'bin' / 'python'),
            'ANSIBLE_LOCALHOST_WARNING': 'false', 'ANSIBLE_INVENTORY_UNPARSED_WARNING': 'false',
            'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_DEPRECATION_WARNINGS': 'false', 'ANSIBLE_HOME': str(self.work / 'ansible-home'),
            'ANSIBLE_CALLBACK_PLUGINS': str(HERE.parent / 'ansible' / 'bench' / 'callback_plugins'), 'ANSIBLE_CALLBACKS_ENABLED': 'dvt_timer',
            'DVT_PROFILE_OUT': str(self.work / 'profile.json'), 'ANSIBLE_CONFIG': str(self.work / 'ansible.cfg'),
        })
        return e

    def playbook(self, venv, pb, name, empty=False):
        """Run pb; with empty, a play with no task (no host recap) passes on its exit code alone."""
        path = self.work / (name + '.yml')
        path.write_text(json.dumps(pb, indent=1))
        log = self.work / (name + '.log')
        t0 = time.perf_counter()
        rc = subprocess.run([str(pathlib.Path(venv) / 'bin' / 'ansible-playbook'), '-i', 'localhost,', '-c', 'local', str(path)],
                            stdout=open(log, 'w'), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=self.env(venv), cwd=self.work).returncode
        wall = time.perf_counter() - t0
        text = log.read_text()
        m = re.findall(r'ok=(\d+)\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)', text)
        ok, changed, failed = (int(x) for x in m[-1]) if m else (0, 0, 0 if empty else 1)
        if rc != 0 or failed:
            shutil.copy(log, self.args.out / (name + '.log'))
            msgs = re.findall(r'"msg": "([^"]{0,300})', text)
            print('  FAILED %s (rc %d): %s; log kept in %s' % (name, rc, msgs[-1] if msgs else text[-600:], self.args.out), flush=True)
        return wall, changed, rc == 0 and not failed

    def setup(self, ts, venv):
        self.sim.call('POST', '/_sim/reset')
        _, _, ok = self.playbook(venv, substrate_playbook(self.sim.conn), 'substrate')
        if not ok:
            sys.exit('substrate failed')
        for t in ts:
            self.sim.call('POST', '/api2/json/pools', {'poolid': 'tenant-' + t['name']})

    def peer_template(self):
        """The template with a NIC, as the peer needs: community.proxmox 2.0.0's proxmox_kvm update of net0 fails with
        KeyError 'net0' on a VM without one (the substrate's template has none, ADR-0013)."""
        self.sim.call('POST', '/api2/json/nodes/%s/qemu/9000/config' % NODE, {'net0': 'virtio,bridge=vmbr0'})

    def timed(self, core, venv, case, who, label, pb):
        self.sim.call('POST', '/_sim/stats/reset')
        name = re.sub(r'[^a-z0-9]+', '-', ('%s %s %s %s' % (core, case, who, label)).lower())
        wall, changed, ok = self.playbook(venv, pb, name)
        st = self.sim.stats()
        reqs = st['requests']
        row = {'core': core, 'case': case, 'who': who, 'run': label, 'wall': round(wall, 2), 'ok': ok,
               'requests': sum(reqs.values()), 'gets': sum(v for k, v in reqs.items() if k.startswith('GET ')),
               'writes': st['writes'], 'applies': reqs.get('PUT /cluster/sdn', 0), 'changed': changed,
               'rss_mib': round(self.sim.rss_kib() / 1024, 1), 'by_path': reqs}
        prof = self.work / 'profile.json'
        if prof.exists():
            row['profile'] = json.loads(prof.read_text())
            prof.unlink()
        return self.add(row)

    def add(self, row):
        row['tasks'] = len(row.get('profile', []))
        self.rows.append(row)
        print('  %-8s %-10s %-17s %-6s %7.2f s  %3d tasks  %5d requests (%4d GET, %3d writes, %d apply)  changed=%s  pvesim RSS %.0f MiB%s' % (
            row['core'], row['case'], row['who'], row['run'], row['wall'], row['tasks'], row['requests'], row['gets'], row['writes'],
            row['applies'], row['changed'], row['rss_mib'], '' if row['ok'] else '  FAILED'), flush=True)
        return row

    def shipped(self, core, venv, lab, label):
        """The shipped tenant playbook for tdemo, through the lifecycle lab's inventory."""
        r = run_playbook(venv, self.args.collections, lab, self.work, 'tenant', ['-e', 'tenant_file=%s' % (SHARED / 'tdemo.yml')])
        if r['rc']:
            (self.args.out / ('%s-tenant-%s.log' % (core, label))).write_text(r['log'])
            print('  FAILED the tenant playbook (%s %s): log in %s' % (core, label, self.args.out), flush=True)
        reqs = self.sim.stats()['requests']
        return self.add({'core': core, 'case': 'playbook', 'who': 'deevnet.tenant', 'run': label, 'wall': r['wall'], 'ok': r['rc'] == 0,
                         'requests': r['requests'], 'gets': sum(v for k, v in reqs.items() if k.startswith('GET ')),
                         'writes': r['writes'], 'applies': reqs.get('PUT /cluster/sdn', 0), 'changed': r['changed'],
                         'rss_mib': round(self.sim.rss_kib() / 1024, 1), 'by_path': reqs, 'profile': r['profile']})

    def floor(self, core, venv, lab, who):
        """The fastest of FLOOR_RUNS runs of who's playbook with no task (the module docstring's floor)."""
        best = None
        for i in range(FLOOR_RUNS):
            if who == 'deevnet.tenant':
                plays = yaml_plays(ROOT / 'playbooks' / 'tenant.yml')
                path = self.work / 'floor-ours.yml'
                path.write_text(json.dumps([{'name': 'floor: ' + str(p.get('name', '')), 'hosts': p['hosts'],
                                             'gather_facts': p.get('gather_facts', True), 'tasks': []} for p in plays]))
                r = run_playbook(venv, self.args.collections, lab, self.work, 'floor', [], playbook=path)
                wall, ok = r['wall'], r['rc'] == 0
            else:
                wall, _, ok = self.playbook(venv, play('floor', [], {}), '%s-floor-peer-%d' % (core, i), empty=True)
            if not ok:
                sys.exit('the floor play failed (%s, %s)' % (core, who))
            best = wall if best is None else min(best, wall)
        return self.add({'core': core, 'case': 'playbook', 'who': who, 'run': 'floor', 'wall': round(best, 2), 'ok': True,
                         'requests': 0, 'gets': 0, 'writes': 0, 'applies': 0, 'changed': 0,
                         'rss_mib': round(self.sim.rss_kib() / 1024, 1), 'by_path': {}})

    def playbook_case(self, core, venv):
        """tdemo by the shipped playbook, then by the peer's six tasks, on the lab's pvesim at --latency."""
        lab = Lab(self.work / ('lab-' + core), self.args.pvesim)
        saved = self.sim
        try:
            self.sim = Sim(None, None, self.work, lab_dir=lab.dir)
            self.sim.set_latency(0)
            for name, extra in (('onboard', ['-e', 'tenant_name=tdemo']), ('fabric', [])):
                r = run_playbook(venv, self.args.collections, lab, self.work, name, extra)
                if r['rc']:
                    (self.args.out / ('%s-%s.log' % (core, name))).write_text(r['log'])
                    sys.exit('%s failed (untimed set-up of the playbook case): log in %s' % (name, self.args.out))
            self.floor(core, venv, lab, 'deevnet.tenant')
            self.sim.set_latency(self.args.latency_ms)
            self.shipped(core, venv, lab, 'first')
            self.fastest(lambda: self.shipped(core, venv, lab, 'no-op'))
            ts = tenants(1)
            self.sim.set_latency(0)
            objs = harvest(self.sim, ts, self.plans(ts, venv))
            self.setup(ts, venv)
            self.peer_template()
            self.sim.set_latency(self.args.latency_ms)
            pb = peer_playbook(self.sim.conn, objs)
            self.floor(core, venv, lab, 'community.proxmox')
            self.timed(core, venv, 'playbook', 'community.proxmox', 'first', pb)
            self.fastest(lambda: self.timed(core, venv, 'playbook', 'community.proxmox', 'no-op', pb))
        finally:
            self.sim = saved
            lab.down()

    def fastest(self, measure):
        """A no-op can be repeated: measure() --noop-runs times and keep the fastest row, as the floor is the
        fastest of its runs (a single run is at the mercy of the machine's other work); every run's wall is kept."""
        rows = [measure() for _ in range(self.args.noop_runs)]
        best = min(rows, key=lambda r: (not r['ok'], r['wall']))
        self.rows = [r for r in self.rows if r is best or all(r is not o for o in rows)]
        best['walls'] = [r['wall'] for r in rows]
        if len(rows) > 1:
            print('  %-8s kept the fastest of %d no-op runs: %.2f s (%s)' % (
                best['core'], len(rows), best['wall'], ', '.join('%.2f' % r['wall'] for r in rows)), flush=True)
        return best

    def plans(self, ts, venv):
        """tenant_plan for each tenant (untimed): names the objects the peer must make."""
        pb = play('plans', [{'name': 'plan', 'deevnet.tenant.tenant_plan': {'name': '{{ item.name }}', 'index': '{{ item.index }}'},
                             'loop': ts, 'register': 'p'},
                            {'name': 'save', 'ansible.builtin.copy': {
                                'content': "{{ p.results | map(attribute='tenant') | list | to_json }}",
                                'dest': str(self.work / 'plans.json')}}], {})
        _, _, ok = self.playbook(venv, pb, 'plans')
        if not ok:
            sys.exit('tenant_plan failed')
        return {p['name']: p for p in json.loads((self.work / 'plans.json').read_text())}

    def case(self, core, venv, case, n, vms, peer):
        ts = tenants(n)
        plans = self.plans(ts, venv)
        self.setup(ts, venv)
        pb = ours_playbook(self.sim.conn, ts, vms)
        self.timed(core, venv, case, 'deevnet.tenant', 'first', pb)
        self.timed(core, venv, case, 'deevnet.tenant', 'no-op', pb)
        if not peer:
            return
        objs = harvest(self.sim, ts, plans)
        self.setup(ts, venv)
        self.peer_template()
        pb = peer_playbook(self.sim.conn, objs)
        self.timed(core, venv, case, 'community.proxmox', 'first', pb)
        self.timed(core, venv, case, 'community.proxmox', 'no-op', pb)


def summary(rows):
    lines = []
    by = {(r['core'], r['case'], r['who'], r['run']): r for r in rows}
    for core in dict.fromkeys(r['core'] for r in rows):
        for case in dict.fromkeys(r['case'] for r in rows if r['core'] == core):
            for run in ('first', 'no-op'):
                o, p = by.get((core, case, 'deevnet.tenant', run)), by.get((core, case, 'community.proxmox', run))
                if o and p and o['ok'] and p['ok']:
                    lines.append('%-8s %-10s %-6s community.proxmox / deevnet.tenant: wall %.1fx (%.2f s / %.2f s), requests %.1fx (%d / %d), '
                                 'tasks %d / %d' % (core, case, run, p['wall'] / o['wall'], p['wall'], o['wall'], p['requests'] / o['requests'],
                                                    p['requests'], o['requests'], p['tasks'], o['tasks']))
                    fo, fp = by.get((core, case, 'deevnet.tenant', 'floor')), by.get((core, case, 'community.proxmox', 'floor'))
                    if fo and fp:
                        above_o, above_p = o['wall'] - fo['wall'], p['wall'] - fp['wall']
                        lines.append('%-8s %-10s %-6s above the floor (ours %.2f s, the peer\'s %.2f s): deevnet.tenant %.2f s, '
                                     'community.proxmox %.2f s, the peer\'s / ours %s' % (
                                         core, case, run, fo['wall'], fp['wall'], above_o, above_p,
                                         '%.1fx' % (above_p / above_o) if above_o > 0 else 'n/a (ours at the floor)'))
    return lines


def profile(rows, top):
    """The shipped playbook's tasks: count and seconds by action, and the slowest tasks."""
    lines = []
    for row in rows:
        if row['case'] != 'playbook' or row['who'] != 'deevnet.tenant' or row['run'] == 'floor':
            continue
        tasks = row.get('profile', [])
        by = {}
        for t in tasks:
            n, sec = by.get(t['action'], (0, 0.0))
            by[t['action']] = (n + 1, sec + t['seconds'])
        lines.append('\n%s playbook %s: %d tasks, %.2f s in tasks; by action: %s' % (
            row['core'], row['run'], len(tasks), sum(t['seconds'] for t in tasks),
            ', '.join('%s %d/%.2f s' % (a, n, sec) for a, (n, sec) in sorted(by.items(), key=lambda kv: -kv[1][1]))))
        for t in sorted(tasks, key=lambda t: -t['seconds'])[:top]:
            lines.append('  %6.3f s  %s [%s] ok=%d changed=%d skipped=%d' % (
                t['seconds'], t['task'], t['action'], t['ok'], t['changed'], t['skipped']))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--pvesim', required=True)
    ap.add_argument('--collections', required=True, help='where deevnet.tenant is installed')
    ap.add_argument('--core', action='append', required=True, help='NAME=VENV with ansible-core; the first also runs the scale cases')
    ap.add_argument('--peer-venv', required=True, help='venv with the ansible package (community.proxmox), proxmoxer and requests')
    ap.add_argument('--latency', default='20ms', help='added to every API request, in ms (20ms)')
    ap.add_argument('--scale', default='10,63', help='tenant counts of the scale case (3 VMs each); empty: none')
    ap.add_argument('--peer-scale', default='10', help='tenant counts of the scale case the peer also runs')
    ap.add_argument('--noop-runs', type=int, default=3, help='no-op runs of each playbook; the fastest is kept, as for the floor (3)')
    ap.add_argument('--out', default='bench-out', help='directory for results.json and failed runs\' logs')
    ap.add_argument('--top', type=int, default=10, help="the shipped playbook's slowest tasks listed per core and run")
    args = ap.parse_args()
    m = re.fullmatch(r'(\d+)ms', args.latency)
    if not m:
        sys.exit('--latency: give milliseconds, e.g. 20ms')
    args.latency_ms = int(m.group(1))
    if args.noop_runs < 1:
        sys.exit('--noop-runs: give at least 1')
    args.pvesim = str(pathlib.Path(args.pvesim).resolve())
    load = os.getloadavg()
    args.out = pathlib.Path(args.out).resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    args.collections = str(pathlib.Path(args.collections).resolve())
    work = pathlib.Path(tempfile.mkdtemp(prefix='dvt-bench-tenant.'))
    (work / 'ansible.cfg').write_text('[defaults]\n')
    sim = Sim(args.pvesim, args.latency, work)
    r = Runner(args, sim, work)
    try:
        cores = [(n, str(pathlib.Path(v).absolute())) for n, v in (c.split('=', 1) for c in args.core)]
        args.peer_venv = str(pathlib.Path(args.peer_venv).absolute())
        versions = {}
        for name, venv in cores:
            out = subprocess.run([str(pathlib.Path(venv) / 'bin' / 'ansible'), '--version'], capture_output=True, text=True).stdout
            versions[name] = out.splitlines()[0] if out else '?'
        cp = next(pathlib.Path(args.peer_venv).glob('lib/python3*/site-packages/ansible_collections/community/proxmox/MANIFEST.json'))
        print('bench-tenant: pvesim --latency %s; %s; community.proxmox %s' % (
            args.latency, ', '.join('%s = %s' % kv for kv in versions.items()), json.loads(cp.read_text())['collection_info']['version']), flush=True)
        for name, venv in cores:
            r.playbook_case(name, venv)
        name, venv = cores[0]
        peer_scale = {int(x) for x in args.peer_scale.split(',') if x}
        for n in (int(x) for x in args.scale.split(',') if x):
            r.case(name, venv, '%d-tenants' % n, n, 3, n in peer_scale)
        print('\n'.join(['ratios:'] + summary(r.rows) + profile(r.rows, args.top)))
        print('load average at start: %.2f %.2f %.2f, at end: %.2f %.2f %.2f' % (load + os.getloadavg()))
        (args.out / 'results.json').write_text(json.dumps({'versions': versions, 'latency': args.latency, 'rows': r.rows}, indent=1))
        print('results: %s' % (args.out / 'results.json'))
    finally:
        sim.stop()
        shutil.rmtree(work, ignore_errors=True)
    if not all(row['ok'] for row in r.rows):
        sys.exit(1)


if __name__ == '__main__':
    main()
