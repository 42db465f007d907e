# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/nsupdate_tsig.

DOCUMENTATION = r'''
module: nsupdate_tsig
short_description: Converge DNS record sets over TSIG-signed RFC 2136 dynamic updates
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - Reads the current record sets from the primary server, computes the difference to the requested state,
    and sends B(one) TSIG-signed UPDATE per zone (ADR-0004). Nothing is sent when nothing differs.
  - Every UPDATE carries prerequisites that pin each set it touches to the content just read
    (RFC 2136 "RRset exists, value dependent", or "RRset does not exist" for a new set), so a concurrent
    writer makes the server refuse the whole update instead of having its change overwritten.
  - O(state=present) adds values to a set and never removes other values, so several tasks can each add
    one value to the same multi-value set. O(state=exact) makes the set hold exactly the values given.
    O(state=absent) removes the values given, or the whole set when no value is given.
  - PTR records for A and AAAA records are written into the reverse zone on request (O(ptr)), with that
    zone's own server and key when O(reverse) names them.
  - With O(owner), every set the module writes is marked by a TXT registry record (in the style of
    external-dns), and the module refuses to change or remove a set that another owner, or nobody, registered.
options:
  server:
    description: Address of the primary (authoritative) server that accepts updates. Reads go there too.
    type: str
    required: true
  port:
    description: DNS port of O(server).
    type: int
    default: 53
  zone:
    description:
      - The zone to update. Record names not ending in a dot and not already inside the zone are relative to it.
      - When omitted, each record's zone is discovered by SOA queries to O(server) (record names must then be
        fully qualified).
    type: str
  key_name:
    description: Name of the TSIG key.
    type: str
    required: true
  key_secret:
    description: Base64 secret of the TSIG key. Never printed, logged or returned.
    type: str
    required: true
  key_algorithm:
    description: HMAC algorithm of the key.
    type: str
    default: hmac-sha256
    choices: [hmac-sha1, hmac-sha224, hmac-sha256, hmac-sha384, hmac-sha512]
  protocol:
    description:
      - Transport for queries and updates. Over C(tcp) one connection carries every read of the run.
    type: str
    default: tcp
    choices: [tcp, udp]
  timeout:
    description: Seconds to wait for each answer.
    type: int
    default: 10
  read:
    description:
      - How the current record sets are read. C(query) asks one question per set. C(axfr) transfers the whole
        zone once (signed with the key; the server must allow the transfer to this key) and needs O(zone).
      - C(auto) transfers each zone once when more than one set of it is read, so a converge costs one read and
        at most one UPDATE per zone; it falls back to one question per set when the server refuses the transfer
        to the key (PowerDNS without the key in TSIG-ALLOW-AXFR, BIND outside C(allow-transfer)) or the zone
        holds more than 10000 records.
    type: str
    default: auto
    choices: [auto, query, axfr]
  record:
    description:
      - Owner name of one record set. C(@) is the zone apex. Mutually exclusive with O(records).
    type: str
    aliases: [name]
  type:
    description: Record type of O(record), for example C(A), C(AAAA), C(CNAME), C(TXT), C(MX), C(SRV), C(CAA). Not SOA.
    type: str
    default: A
  ttl:
    description:
      - TTL of the set. When omitted, an existing set keeps its TTL and a new set gets 3600.
      - When given and different from the server's, the whole set is rewritten with the new TTL.
    type: int
  values:
    description:
      - The values, as zone-file RDATA (relative names in CNAME, MX, SRV... are relative to O(zone)).
      - One string or a list of strings. A comma inside a string is part of the value.
      - A TXT value not starting with a double quote is taken literally (quotes and backslashes included) and
        split into strings of 255 bytes, so values over 255 characters work. A TXT value starting with a double
        quote is zone-file syntax, for example C("part one" "part two").
    type: raw
    aliases: [value]
  state:
    description:
      - C(present) adds the values, C(exact) makes the set exactly the values, C(absent) removes them
        (or the whole set without values). Also the default for each entry of O(records).
    type: str
    default: present
    choices: [present, absent, exact]
  ptr:
    description:
      - Also manage PTR records for the A/AAAA values. Each address the set holds gets a PTR to the record's name,
        each address it loses has that PTR removed. Other PTR values at the same name are left alone.
      - Also the default for each entry of O(records).
    type: bool
    default: false
  records:
    description: Several record sets converged in the same task (one UPDATE per zone). Mutually exclusive with O(record).
    type: list
    elements: dict
    suboptions:
      record:
        description: Owner name, as O(record).
        type: str
        required: true
        aliases: [name]
      type:
        description: Record type, as O(type).
        type: str
        default: A
      ttl:
        description: As O(ttl).
        type: int
      values:
        description: As O(values).
        type: raw
        aliases: [value]
      state:
        description: As O(state); defaults to the task's O(state).
        type: str
        choices: [present, absent, exact]
      ptr:
        description: As O(ptr); defaults to the task's O(ptr).
        type: bool
  reverse:
    description:
      - Where PTR records go. Each suboption not given is taken from the forward side (O(server), O(port),
        O(protocol), the key).
    type: dict
    suboptions:
      zone:
        description: The reverse zone. When omitted, it is discovered by SOA queries for each PTR name.
        type: str
      server:
        description: Primary server of the reverse zone.
        type: str
      port:
        description: Its DNS port.
        type: int
      protocol:
        description: Its transport.
        type: str
        choices: [tcp, udp]
      key_name:
        description: TSIG key for the reverse zone.
        type: str
      key_secret:
        description: Base64 secret of that key. Never printed, logged or returned.
        type: str
      key_algorithm:
        description: HMAC algorithm of that key.
        type: str
        choices: [hmac-sha1, hmac-sha224, hmac-sha256, hmac-sha384, hmac-sha512]
  owner:
    description:
      - Ownership registry. Each set written gets a TXT record at C(<owner_prefix><type>.<name>) holding
        C(heritage=deevnet.tenant,owner=<owner>); it is removed with the set.
      - A set registered to another owner, or an existing set without a registry record, is never changed or
        removed; the task fails naming the record and its owner.
    type: str
  owner_prefix:
    description: First label prefix of the registry TXT records.
    type: str
    default: _dvt-
  dns_records:
    description:
      - The tenant's DNS quota, C(envelope.dns_records) of its attachment (docs/adr/0017-dns-quota.md); 0, none.
      - A zone whose record sets named in this task (with their registry records) would hold more records after the
        task than this, and more than before, is refused before any UPDATE is sent, naming the zone, the count and the
        quota. The rest of the zone is not read; the site's DNS gateway counts it and refuses an UPDATE that does not
        fit, whole, which this module reports with the gateway's reason.
    type: int
    default: 0
  adopt:
    description:
      - Take over record sets another tool published over RFC 2136 (for example Terraform's DNS provider, with
        this key or another one, see docs/migrate-from-terraform.md) that have no registry record.
      - Each such set named in the task gets O(owner)'s registry record, even when its values already match,
        and is then managed as a set of its own. A set registered to another owner is refused as without I(adopt).
      - Requires O(owner). Key rotation is a separate action (onboarding's C(tenant_rotate_token) for the PVE token,
        a new TSIG key on the DNS server); adopt never changes a key.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reads the record sets and reports what would change; sends no UPDATE.
  diff_mode:
    support: full
    description: Shows each changing record set (TTL and values) before and after, keyed C(<name> <TYPE>).
  platform:
    support: full
    platforms: posix
    description: Runs wherever the task runs; it only needs to reach the DNS servers.
notes:
  - C(changed) is true only when the server accepted an UPDATE. A second run with the same input sends only reads.
  - Errors are in words. PowerDNS answers REFUSED both for a key that is not allowed on the zone and for an
    unknown key or a wrong secret; BIND answers NOTAUTH with BADKEY (unknown key) or BADSIG (wrong secret),
    and REFUSED when its update-policy does not grant the change. A failed prerequisite (NXRRSET, YXRRSET)
    means another writer changed the records between the read and the update; run again.
  - Forward zones are updated before reverse zones. If a reverse UPDATE fails after the forward one was accepted,
    the task fails with C(changed=true).
  - PTR records are not covered by O(owner); only the PTR value naming this record is ever added or removed.
seealso:
  - name: RFC 2136
    description: Dynamic Updates in the Domain Name System.
    link: https://www.rfc-editor.org/rfc/rfc2136
'''

EXAMPLES = r'''
# The tenant's server, zone and key are the same for every task: set them once for a block.
- name: Converge tdemo's records, in the tenant's own zones, with the tenant's key
  module_defaults:
    deevnet.tenant.nsupdate_tsig:
      server: 10.20.99.53
      zone: tdemo.mobile.deevnet.net
      key_name: tenant-tdemo
      key_secret: "{{ tdemo_tsig_secret }}"
  block:
    - name: Publish tdemo-1 with its PTR
      deevnet.tenant.nsupdate_tsig:
        owner: tdemo
        record: tdemo-1
        type: A
        values: 10.20.129.10
        ttl: 300
        ptr: true
        reverse:
          zone: 129.20.10.in-addr.arpa

    - name: Add one address to a round-robin set from a separate task (the other values stay)
      deevnet.tenant.nsupdate_tsig:
        record: web
        values: [10.20.129.11]

    - name: Several record sets in one UPDATE
      deevnet.tenant.nsupdate_tsig:
        owner: tdemo
        records:
          - {record: www, type: CNAME, values: tdemo-1}
          - {record: "@", type: TXT, values: "v=spf1 -all", state: exact}
          - {record: _dmarc, type: TXT, values: "v=DMARC1; p=reject"}
          - {record: old, state: absent}

    - name: The reverse zone lives on another server with its own key
      deevnet.tenant.nsupdate_tsig:
        record: tdemo-2
        values: 10.20.129.11
        ptr: true
        reverse:
          server: 10.20.99.54
          key_name: rev-10-20-129
          key_secret: "{{ reverse_tsig_secret }}"
'''

RETURN = r'''
changes:
  description: Each record set that changed (or would change in check mode), registry and PTR sets included.
  returned: always
  type: list
  elements: dict
  sample:
    - zone: tdemo.mobile.deevnet.net
      record: tdemo-1.tdemo.mobile.deevnet.net
      type: A
      before: {values: []}
      after: {ttl: 300, values: [10.20.129.10]}
zones:
  description: The zones read (forward and reverse), without trailing dot.
  returned: always
  type: list
  elements: str
  sample: [129.20.10.in-addr.arpa, tdemo.mobile.deevnet.net]
dns_messages:
  description: DNS messages the module sent, by kind; a run with nothing to change sends no update.
  returned: always
  type: dict
  sample: {queries: 4, axfr: 0, updates: 0}
msg:
  description: What happened, in words.
  returned: always
  type: str
  sample: 3 record set(s) changed in 2 UPDATE(s)
'''
