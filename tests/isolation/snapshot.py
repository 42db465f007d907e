"""snapshot.py LAB_DIR TENANT: print a JSON snapshot of everything tenant TENANT owns in the lab
(extensions/molecule/shared/lab.sh), every object found by its exact id from the tenant's index
(ADR-0002) - never by a name substring - plus the shared fabric. Two snapshots taken around another
tenant's destroy must be equal. Secrets are replaced by their SHA-256.

  PVE (pvesim, root token): the SDN zone, its VNets and their subnets (pending view), the fabric,
  its nodes and the controllers; the pool and its members; the user, its tokens, the ACL entries of
  the user and of the token; every guest of the pool or of the index's vmid range, its config and
  power state.
  DNS (PowerDNS API): both zones with every rrset; the tenant's TSIG key.
  Files: the attachment file, the tenant's registry entry.
"""
import hashlib
import json
import os
import ssl
import sys
import urllib.error
import urllib.request

import yaml  # the venv's PyYAML (ansible-core depends on it)


def digest(s):
    return "sha256:" + hashlib.sha256(s.encode()).hexdigest()


def main():
    lab, tenant = sys.argv[1], sys.argv[2]
    sub = yaml.safe_load(open(os.path.join(lab, "substrate.yml")))
    pve, pdns = sub["substrate_pve"], sub["substrate_pdns"]
    registry = yaml.safe_load(open(sub["tenant_registry_file"]))["tenants"]
    index = int(registry[tenant])
    zone, pool, user = "tn%02d" % index, "tenant-" + tenant, "tenant-%s@pve" % tenant
    token = user + "!iac"
    ctx = ssl.create_default_context(cafile=pve["ca_path"])
    auth = "PVEAPIToken=%s!%s=%s" % (pve["api_user"], pve["api_token_id"], pve["api_token_secret"])

    def get(path, missing=None):
        req = urllib.request.Request("https://%s:%s/api2/json%s" % (pve["api_host"], pve["api_port"], path),
                                     headers={"Authorization": auth})
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
                return json.load(r)["data"]
        except urllib.error.HTTPError as e:
            if e.code in (404, 500) and missing is not None:
                return missing
            raise

    def clean(o):
        # digest is of the whole config file: another tenant's removal changes it legitimately.
        if isinstance(o, dict):
            return {k: clean(v) for k, v in sorted(o.items()) if k != "digest"}
        if isinstance(o, list):
            return [clean(v) for v in o]
        return o

    snap = {"index": index}
    vnets = [v for v in get("/cluster/sdn/vnets?pending=1") if v.get("zone") == zone or (v.get("pending") or {}).get("zone") == zone]
    snap["sdn"] = clean({
        "zone": get("/cluster/sdn/zones/%s?pending=1" % zone, missing="absent"),
        "vnets": {v["vnet"]: {"vnet": v, "subnets": get("/cluster/sdn/vnets/%s/subnets?pending=1" % v["vnet"], missing=[])}
                  for v in vnets},
        "fabrics": get("/cluster/sdn/fabrics/all?pending=1", missing="absent"),
        "controllers": get("/cluster/sdn/controllers?pending=1"),
    })
    p = get("/pools/%s" % pool, missing="absent")
    snap["pool"] = p if p == "absent" else {"comment": p.get("comment"), "members": sorted(m["id"] for m in p.get("members", []))}
    snap["user"] = clean(get("/access/users/%s" % user, missing="absent"))
    snap["tokens"] = clean(get("/access/users/%s/token" % user, missing=[]))
    snap["acl"] = sorted((clean(e) for e in get("/access/acl") if e.get("ugid") in (user, token)),
                         key=lambda e: json.dumps(e, sort_keys=True))
    first = 10000 + 100 * index
    guests = {}
    for r in get("/cluster/resources"):
        if r.get("type") == "qemu" and (r.get("pool") == pool or first <= int(r["vmid"]) < first + 100):
            base = "/nodes/%s/qemu/%s" % (r["node"], r["vmid"])
            guests[str(r["vmid"])] = {"node": r["node"], "pool": r.get("pool"), "config": clean(get(base + "/config")),
                                      "status": get(base + "/status/current")["status"]}
    snap["guests"] = guests

    def pdns_get(path):
        req = urllib.request.Request(pdns["api_url"] + "/api/v1/servers/localhost" + path, headers={"X-API-Key": pdns["api_key"]})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            if e.code in (404, 422):
                return "absent"
            raise

    site = "mobile.deevnet.net"
    dns = {}
    for z in ("%s.%s." % (tenant, site), "%d.20.10.in-addr.arpa." % (128 + index)):
        zd = pdns_get("/zones/" + z)
        if zd != "absent":
            zd = {"rrsets": sorted(({"name": r["name"], "type": r["type"], "ttl": r.get("ttl"),
                                     "records": sorted(x["content"] for x in r["records"])} for r in zd["rrsets"]),
                                   key=lambda r: (r["name"], r["type"]))}
        dns[z] = zd
    key = pdns_get("/tsigkeys/%s." % pool)
    dns["tsigkey"] = key if key == "absent" else {"name": key["name"], "algorithm": key["algorithm"], "key": digest(key["key"])}
    snap["dns"] = dns
    att = os.path.join(sub["tenant_attachment_dir"], tenant + ".yml")
    snap["attachment"] = digest(open(att).read()) if os.path.exists(att) else "absent"
    snap["registry"] = registry.get(tenant)
    json.dump(snap, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
