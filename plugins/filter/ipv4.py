# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""IPv4 checks the substrate role needs (without depending on ansible.utils / netaddr)."""

from __future__ import annotations

import ipaddress

from ansible.errors import AnsibleFilterError



def _net(value, what):
    try:
        return ipaddress.IPv4Network(str(value), strict=False)
    except (ValueError, TypeError) as e:
        raise AnsibleFilterError(f'{what} {value!r} is not an IPv4 address or prefix: {e}') from e


def _addr(value, what):
    try:
        return ipaddress.IPv4Interface(str(value)).ip
    except (ValueError, TypeError) as e:
        raise AnsibleFilterError(f'{what} {value!r} is not an IPv4 address: {e}') from e


def ipv4_valid(value, kind='address'):
    """kind: address (a bare address), host (address/len, not the network or broadcast), prefix (no host bits)."""
    try:
        if kind == 'address':
            ipaddress.IPv4Address(str(value))
        elif kind == 'host':
            s = str(value)
            if '/' not in s:
                return False
            i = ipaddress.IPv4Interface(s)
            if i.network.prefixlen < 31 and i.ip in (i.network.network_address, i.network.broadcast_address):
                return False
        elif kind == 'prefix':
            ipaddress.IPv4Network(str(value), strict=True)
        else:
            raise AnsibleFilterError(f'ipv4_valid: unknown kind {kind!r} (address, host, prefix)')
    except (ValueError, TypeError):
        return False
    return True


def ipv4_in(value, prefix):
    return _addr(value, 'address') in _net(prefix, 'prefix')


def ipv4_offset(value, prefix):
    """The host number of an address in prefix (10.20.255.2 in 10.20.255.0/24 is 2)."""
    net = _net(prefix, 'prefix')
    a = _addr(value, 'address')
    if a not in net:
        raise AnsibleFilterError(f'{a} is not in {net}')
    return int(a) - int(net.network_address)


def ipv4_overlaps(value, other):
    return _net(value, 'prefix').overlaps(_net(other, 'prefix'))


def ipv4_subnet_of(value, other):
    return _net(value, 'prefix').subnet_of(_net(other, 'prefix'))


class FilterModule:
    def filters(self):
        return {
            'ipv4_valid': ipv4_valid,
            'ipv4_in': ipv4_in,
            'ipv4_offset': ipv4_offset,
            'ipv4_overlaps': ipv4_overlaps,
            'ipv4_subnet_of': ipv4_subnet_of,
        }
