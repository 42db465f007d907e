"""Unit tests of the packet sweep's logic (issue 24): the plan test/lab/probe.py builds from the
inventory, pvesim and the nodes' rendered files, and what test/lab/guest/sweep.py does with it in
the guest (the counters it reads, the verdicts it gives, the probes it sends). The inventory is
examples/substrate's, read by ansible-inventory as probe.py reads it; the lab's answers (rendered
files, namespaces' addresses, pvesim's VNets and fabric, the VMs) are given by a stand-in of
probe.Lab whose node addresses come from that inventory."""

from __future__ import annotations

import importlib.util
import ipaddress
import json
import os
import socket
import sys
import threading

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
LAB = os.path.join(ROOT, 'test', 'lab')
sys.path.insert(0, LAB)  # probe.py imports pvesimapi from its own directory


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


probe = _load('probe', os.path.join(LAB, 'probe.py'))
sweep = _load('sweep', os.path.join(LAB, 'guest', 'sweep.py'))


@pytest.fixture(scope='module')
def inv(tmp_path_factory):
    """examples/substrate's inventory plus a lab's perimeter host, as probe.py reads them."""
    lab = tmp_path_factory.mktemp('lab')
    (lab / 'inventory.yml').write_text('all:\n  children:\n    perimeter:\n      hosts:\n        perimeter: {}\n')
    return probe.inventory(os.path.join(ROOT, 'examples', 'substrate', 'inventory'), str(lab))


def _strip(cidr):
    return cidr.split('/')[0]


class FakeLab:
    """probe.Lab's answers for a converged lab: two tenants (tdemo on both nodes, tother on the
    first), each node's rendered files holding the inventory's addresses and the VNets' gateways."""

    GW = {'tdemov0': '10.20.129.1/24', 'totherv0': '10.20.130.1/24'}

    def __init__(self, inv):
        self.hv = inv['_meta']['hostvars']
        self.nodes = inv['hypervisors']['hosts']
        self.site = self.hv[self.nodes[0]]['substrate_site']
        self.drop = set()          # (node, role): an address left out of the rendered files
        self.fabric = {n: _strip(self.hv[n]['substrate_node']['loopback']) for n in self.nodes}
        self.ns = {'perimeter': {'10.20.50.1': 'transit', '10.20.10.254': 'mgmt', '192.0.2.10': 'wan'},
                   'mgmt': {'10.20.10.1': 'eth0'},
                   '': {'10.20.10.100': 'vmbr0', '198.51.100.7': 'eth0'},
                   'resolver': {self.site['resolver']: 'svc', self.hv[self.nodes[0]]['substrate_pdns']['server']: 'svc'},
                   'outside': {'192.0.2.1': 'eth0'}}

    def rendered(self, node):
        sn, br = self.hv[node]['substrate_node'], self.site['bridge']
        ifaces = [('management', br, sn['management']),
                  ('transit', '%s.%d' % (br, self.site['transit_vlan']), sn['transit']),
                  ('underlay', '%s.%d' % (br, self.site['underlay_vlan']), sn['underlay']),
                  ('VTEP', 'dummy_ufab', sn['loopback'] + '/32')]
        ifaces += [('gateway', vnet, gw) for vnet, gw in self.GW.items()]
        # another address of the site (probed) and one outside it (not a destination)
        ifaces += [('other', '%s.60' % br, '10.20.60.%d/24' % (self.nodes.index(node) + 2)), ('outside', 'eth9', '192.168.100.2/24')]
        return ''.join('auto %s\niface %s inet static\n    address %s\n\n' % (i, i, a)
                       for role, i, a in ifaces if (node, role) not in self.drop)

    def addrs(self, ns):
        return dict(self.ns[ns])

    def vnets(self):
        return [{'vnet': 'tdemov0', 'zone': 'tdemo', 'tag': 10001}, {'vnet': 'totherv0', 'zone': 'tother', 'tag': 10002}]

    def fabric_nodes(self):
        return [{'node_id': n, 'ip': ip, 'fabric_id': self.site['fabric']} for n, ip in self.fabric.items()]

    def vms(self):
        rows = [(10101, 'tdemo-1', self.nodes[0], 'tdemov0', '10.20.129.11'), (10102, 'tdemo-2', self.nodes[1], 'tdemov0', '10.20.129.12'),
                (10201, 'tother-1', self.nodes[0], 'totherv0', '10.20.130.11')]
        return [{'vmid': v, 'name': n, 'node': node, 'bridge': br, 'mac': 'BC:24:11:00:00:%02x' % (v % 256), 'addr': a,
                 'gw': '', 'dom': n.split('-', maxsplit=1)[0] + '.' + self.site['zone'], 'zone': None} for v, n, node, br, a in rows]


def _probes(site, name):
    vm = next(v for v in site.vms if v['name'] == name)
    return vm, probe.probes_of(site, vm)


def _find(probes, dst, proto, port=0):
    found = [p for p in probes if p['dst'] == dst and p['proto'] == proto and p['port'] == port]
    assert len(found) == 1, (dst, proto, port, found)
    return found[0]


def test_the_plan_probes_every_node_address_the_inventory_declares(inv):
    site = probe.Site(FakeLab(inv), inv)
    assert site.errors == []
    hv = inv['_meta']['hostvars']
    dests = {d['addr']: d for d in site.dests}
    for n in inv['hypervisors']['hosts']:
        for role in ('management', 'transit', 'underlay', 'loopback'):
            addr = _strip(hv[n]['substrate_node'][role])
            assert dests[addr]['receivers'] == [n] and dests[addr]['kind'] == 'node', (n, role)
    assert dests['10.20.60.3']['receivers'] == [inv['hypervisors']['hosts'][1]]
    assert '192.168.100.2' not in dests
    probes = _probes(site, 'tdemo-1')[1]
    transit = _strip(hv[inv['hypervisors']['hosts'][1]]['substrate_node']['transit'])
    for proto, ports in (('tcp', probe.TCP_PORTS), ('udp', probe.UDP_PORTS)):
        for port in ports:  # BGP (179), the API, ssh, DNS, BFD, VXLAN: none for a tenant
            assert _find(probes, transit, proto, port)['rule'] == 'forbidden'
    assert _find(probes, transit, 'icmp')['rule'] == 'forbidden'


def test_the_rules_of_one_vm(inv):
    lab = FakeLab(inv)
    site = probe.Site(lab, inv)
    vm, probes = _probes(site, 'tdemo-1')
    # its own peer (another node): ICMP only, allowed, counted at the peer
    peer = [p for p in probes if p['dst'] == '10.20.129.12']
    assert [(p['proto'], p['rule'], p['receiver']) for p in peer] == [('icmp', 'allowed', ['vm-tdemo-2'])]
    # the other tenant's VM: nothing
    other = [p for p in probes if p['dst'] == '10.20.130.11']
    assert other and all(p['rule'] == 'forbidden' for p in other)
    # its own gateway: ICMP answered on its own node; TCP/UDP reach the node's stack, no service answers
    gw = _strip(lab.GW['tdemov0'])
    assert _find(probes, gw, 'icmp')['rule'] == 'allowed' and _find(probes, gw, 'icmp')['receiver'] == [vm['node']]
    assert _find(probes, gw, 'tcp', 179)['rule'] == 'gateway' and _find(probes, gw, 'udp', 53)['rule'] == 'gateway'
    # the other tenant's gateway: forbidden, on every node
    ogw = [p for p in probes if p['dst'] == _strip(lab.GW['totherv0'])]
    assert ogw and all(p['rule'] == 'forbidden' and p['receiver'] == inv['hypervisors']['hosts'] for p in ogw)
    # the resolver answers DNS only; PowerDNS nothing
    res, pdns = site.site['resolver'], site.pdns
    assert _find(probes, res, 'udp', 53)['rule'] == 'allowed' and _find(probes, res, 'tcp', 53)['rule'] == 'allowed'
    assert _find(probes, res, 'tcp', 22)['rule'] == 'forbidden' and _find(probes, res, 'icmp')['rule'] == 'forbidden'
    assert all(p['rule'] == 'forbidden' for p in probes if p['dst'] == pdns)
    # the management host, the perimeter, the controller: nothing
    for addr in ('10.20.10.1', '10.20.50.1', '10.20.10.254', '10.20.10.100'):
        assert all(p['rule'] == 'forbidden' for p in probes if p['dst'] == addr), addr
    # the controller's address outside the site is not a destination
    assert not [p for p in probes if p['dst'] == '198.51.100.7']
    # egress: ICMP to the outside, counted there from the perimeter's NAT address
    out = _find(probes, '192.0.2.1', 'icmp')
    assert out['rule'] == 'allowed' and out['seen_src'] == '192.0.2.10' == site.nat
    # VXLAN probes inject into the other tenant's VNI; DNS probes ask for its own name
    assert {p['vni'] for p in probes} == {10002}
    assert _find(probes, res, 'udp', 53)['qname'] == 'tdemo-1.tdemo.' + site.site['zone']
    # no probe of itself
    assert not [p for p in probes if p['dst'] == vm['addr']]


@pytest.mark.parametrize('node,role', [(0, 'management'), (1, 'transit'), (1, 'underlay'), (0, 'VTEP')])
def test_an_address_missing_from_the_rendered_files_stops_the_plan(inv, node, role, capsys):
    lab = FakeLab(inv)
    n = lab.nodes[node]
    lab.drop.add((n, role))
    site = probe.Site(lab, inv)
    assert len(site.errors) == 1 and site.errors[0].startswith("%s: the inventory's %s address" % (n, role)), site.errors
    with pytest.raises(SystemExit) as e:
        probe.plan(site, site.vms, [])
    assert e.value.code == 1 and site.errors[0] in capsys.readouterr().err


def test_the_fabric_the_resolver_and_the_perimeter_are_checked(inv):
    lab = FakeLab(inv)
    lab.fabric[lab.nodes[1]] = '10.20.255.99'
    del lab.ns['resolver'][lab.site['resolver']]
    lab.ns['perimeter'] = {'10.20.10.254': 'mgmt'}
    errors = probe.Site(lab, inv).errors
    assert any(e.startswith("%s: pvesim's fabric has VTEP 10.20.255.99" % lab.nodes[1]) for e in errors), errors
    assert any(e.startswith("resolver's address %s is on no host" % lab.site['resolver']) for e in errors), errors
    assert any(e.startswith('the perimeter has no transit_gateway') for e in errors), errors
    assert any(e.startswith('the perimeter has no address on its uplink') for e in errors), errors


def test_the_plan_as_sweep_reads_it(inv):
    site = probe.Site(FakeLab(inv), inv)
    doc = probe.plan(site, site.vms, [p for vm in site.vms for p in probe.probes_of(site, vm)])
    assert doc['sources'] == [site.site['overlay'], '192.0.2.10']
    assert doc['receivers'] == sorted({'outside', 'perimeter', 'mgmt', '', 'resolver', 'vm-tdemo-1', 'vm-tdemo-2', 'vm-tother-1'}
                                      | set(site.node_names))
    assert [v['icmp_id'] for v in doc['vms']] == [10101, 10102, 10201]
    assert all(p['receiver'] for p in doc['probes'])
    json.dumps(doc)  # what probe.sh hands to the guest


def test_the_move_sweep_probes_the_management_segment_only(inv):
    site = probe.Site(FakeLab(inv), inv)
    doc = probe.movesweep(site, 'tdemo')
    mgmt = ipaddress.ip_network(site.site['management'])
    dsts = {p['dst'] for p in doc['probes']}
    assert dsts == {d['addr'] for d in site.dests if ipaddress.ip_address(d['addr']) in mgmt}
    assert '10.20.10.1' in dsts and '10.20.50.1' not in dsts
    assert {(p['proto'], p['port'], p['rule']) for p in doc['probes']} == {('icmp', 0, 'forbidden'), ('tcp', 22, 'forbidden')}
    assert [v['name'] for v in doc['vms']] == ['tdemo-1']
    assert doc['setup'] == {'tdemo-1': [{'do': ['ip', 'route', 'replace', str(mgmt), 'dev', 'eth0'],
                                         'undo': ['ip', 'route', 'del', str(mgmt), 'dev', 'eth0']}]}


def test_the_parsers_of_what_the_lab_answers():
    text = open(os.path.join(ROOT, 'extensions', 'molecule', 'render', 'expected', 'interfaces'), encoding='utf-8').read()
    got = probe.rendered_addrs(text)  # the node network role's rendering, as its molecule scenario checks it
    assert got['10.20.50.2'] == 'vmbr0.50' and got['10.20.51.2'] == 'vmbr0.51' and got['172.31.0.12'] == 'vmbr0'
    ip_out = ('1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n'
              '2: wan    inet 192.0.2.10/24 brd 192.0.2.255 scope global wan\\       valid_lft forever preferred_lft forever\n'
              '3: transit    inet 10.20.50.1/24 scope global transit\\       valid_lft forever preferred_lft forever\n')
    assert probe.parse_addrs(ip_out) == {'192.0.2.10': 'wan', '10.20.50.1': 'transit'}


# --- sweep.py ---

@pytest.mark.parametrize('rule,answered,counted,want', [
    ('allowed', 'yes', 2, 'ok'),
    ('allowed', 'no', 0, 'FAIL'),          # an allowed flow without an answer
    ('allowed', 'no', 3, 'FAIL'),          # counted, but nothing came back
    ('allowed', 'yes', 0, 'FAIL'),         # an answer the receiver did not count: from someone else
    ('forbidden', 'no', 0, 'ok'),
    ('forbidden', 'refused', 0, 'ok'),
    ('forbidden', 'unreachable', 0, 'ok'),
    ('forbidden', 'no', 1, 'FAIL'),        # counted at the receiver: it got there
    ('forbidden', 'yes', 0, 'FAIL'),       # a service answered
    ('gateway', 'refused', 0, 'ok'),       # the node's kernel: nothing listens
    ('gateway', 'yes', 1, 'FAIL'),         # a service of the node answered
    ('gateway', 'no', 1, 'FAIL'),
])
def test_verdict(rule, answered, counted, want):
    assert sweep.verdict(rule, answered, counted) == want


# `nft -j list table inet dvtprobe` of nftables 1.0.6 with one element in pl4 (the sets' shape)
NFT_JSON = json.dumps({'nftables': [
    {'metainfo': {'version': '1.0.6', 'json_schema_version': 1}},
    {'table': {'family': 'inet', 'name': 'dvtprobe', 'handle': 2}},
    {'set': {'family': 'inet', 'name': 'picmp', 'table': 'dvtprobe', 'type': ['ipv4_addr', 'ipv4_addr', 'integer'],
             'elem': [{'elem': {'val': {'concat': ['10.20.129.11', '10.20.10.1', 10101]}, 'counter': {'packets': 1, 'bytes': 38}}}]}},
    {'set': {'family': 'inet', 'name': 'pl4', 'table': 'dvtprobe', 'type': ['ipv4_addr', 'ipv4_addr', 'inet_proto', 'inet_service'],
             'elem': [{'elem': {'val': {'concat': ['10.20.129.11', '10.20.50.2', 'tcp', 179]}, 'counter': {'packets': 3, 'bytes': 180}}}]}},
    {'set': {'family': 'inet', 'name': 'pans', 'table': 'dvtprobe', 'type': ['ipv4_addr', 'ipv4_addr', 'inet_proto', 'inet_service'],
             'elem': [{'elem': {'val': {'concat': ['10.20.129.11', '10.20.129.1', 'udp', 53]}, 'counter': {'packets': 1, 'bytes': 60}}}]}},
    {'chain': {'family': 'inet', 'table': 'dvtprobe', 'name': 'input', 'hook': 'input', 'prio': 100}},
]})


def test_counters_and_what_each_probe_saw():
    cnt = sweep.parse_counters(NFT_JSON)
    assert cnt == {('picmp', ('10.20.129.11', '10.20.10.1', '10101')): 1,
                   ('pl4', ('10.20.129.11', '10.20.50.2', 'tcp', '179')): 3,
                   ('pans', ('10.20.129.11', '10.20.129.1', 'udp', '53')): 1}
    vm = {'addr': '10.20.129.11', 'icmp_id': 10101}
    assert sweep.seen(cnt, {'proto': 'icmp', 'dst': '10.20.10.1', 'port': 0, 'rule': 'forbidden'}, vm) == 1
    assert sweep.seen(cnt, {'proto': 'icmp', 'dst': '10.20.10.1', 'port': 0, 'rule': 'forbidden'}, dict(vm, icmp_id=7)) == 0
    assert sweep.seen(cnt, {'proto': 'tcp', 'dst': '10.20.50.2', 'port': 179, 'rule': 'forbidden'}, vm) == 3
    assert sweep.seen(cnt, {'proto': 'udp', 'dst': '10.20.50.2', 'port': 179, 'rule': 'forbidden'}, vm) == 0
    # the gateway rule counts a service's answers (pans), not the probe's packets (pl4)
    assert sweep.seen(cnt, {'proto': 'udp', 'dst': '10.20.129.1', 'port': 53, 'rule': 'gateway'}, vm) == 1
    assert sweep.seen(cnt, {'proto': 'tcp', 'dst': '10.20.50.2', 'port': 179, 'rule': 'gateway'}, vm) == 0
    # egress: counted from the NAT address
    cnt[('picmp', ('192.0.2.10', '192.0.2.1', '10101'))] = 2
    assert sweep.seen(cnt, {'proto': 'icmp', 'dst': '192.0.2.1', 'port': 0, 'rule': 'allowed', 'seen_src': '192.0.2.10'}, vm) == 2


def test_the_counter_table_counts_tenant_sources_only():
    table = sweep.nft_table(['10.20.128.0/18', '192.0.2.10'])
    assert table.count('{ 10.20.128.0/18, 192.0.2.10 }') == 2   # input and output both filter on them
    assert 'hook input priority 100' in table and 'hook output priority 100' in table


def test_the_packets_sweep_sends():
    pkt_hdr = b'\x08\x00\x00\x00\x27\x75\x00\x01'
    body = b'dvtprobe\x00\x01'
    cs = sweep.icmp_checksum(pkt_hdr + body)
    whole = pkt_hdr[:2] + cs.to_bytes(2, 'big') + pkt_hdr[4:] + body
    assert sweep.icmp_checksum(whole) == 0  # RFC 1071: a packet with its checksum sums to 0
    q = sweep.dns_query('tdemo-1.tdemo.mobile.deevnet.net')
    assert q[12:] == b'\x07tdemo-1\x05tdemo\x06mobile\x07deevnet\x03net\x00\x00\x01\x00\x01'
    vx = sweep.payload({'port': 4789, 'vni': 10002})
    assert vx[:8] == bytes.fromhex('08000000') + (10002 << 8).to_bytes(4, 'big') and vx[8:14] == b'\xff' * 6
    assert sweep.payload({'port': 53, 'qname': 'x.'}) == sweep.dns_query('x.')


@pytest.fixture
def loopback_services():
    """A TCP listener and a UDP echo on 127.0.0.1, and a port where nothing listens."""
    tcp = socket.socket()
    tcp.bind(('127.0.0.1', 0))
    tcp.listen(8)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(('127.0.0.1', 0))
    closed = socket.socket()
    closed.bind(('127.0.0.1', 0))
    stop = threading.Event()

    def echo():
        udp.settimeout(0.1)
        while not stop.is_set():
            try:
                data, peer = udp.recvfrom(4096)
                udp.sendto(data, peer)
            except OSError:
                pass
    t = threading.Thread(target=echo, daemon=True)
    t.start()
    yield tcp.getsockname()[1], udp.getsockname()[1], closed.getsockname()[1]
    stop.set()
    t.join()
    for s in (tcp, udp, closed):
        s.close()


def test_send_reports_what_answered(loopback_services, capsys):
    tcp, udp, closed = loopback_services
    spec = {'timeout': 1.0, 'icmp_id': 1, 'probes': [
        {'proto': 'tcp', 'dst': '127.0.0.1', 'port': tcp, 'rule': 'forbidden'},
        {'proto': 'tcp', 'dst': '127.0.0.1', 'port': closed, 'rule': 'forbidden'},
        {'proto': 'udp', 'dst': '127.0.0.1', 'port': udp, 'rule': 'allowed'},
        {'proto': 'udp', 'dst': '127.0.0.1', 'port': closed, 'rule': 'forbidden'},
    ]}
    sweep.send(spec)
    assert json.loads(capsys.readouterr().out) == ['yes', 'refused', 'yes', 'refused']
