"""The lab's client of pvesim (lab.sh vms, phase2.sh snapshot and stats): the port and root token
pvesim wrote to LAB_DIR/pvesim-token.json, its certificate checked against LAB_DIR/pvesim-ca.pem."""
import json
import ssl
import urllib.parse
import urllib.request


class Pvesim:
    """pvesim of the lab in directory lab, on 127.0.0.1."""

    def __init__(self, lab):
        with open(lab + "/pvesim-token.json", encoding="utf-8") as f:
            self.token = json.load(f)
        self.ctx = ssl.create_default_context(cafile=lab + "/pvesim-ca.pem")

    def call(self, path, method="GET", auth=True, params=None):
        """The decoded answer of one request to path (below https://127.0.0.1:<port>), params form-encoded."""
        headers = {"Authorization": "PVEAPIToken=root@pam!sim=" + self.token["api_token_secret"]} if auth else {}
        data = urllib.parse.urlencode(params).encode() if params is not None else None
        req = urllib.request.Request("https://127.0.0.1:%d%s" % (self.token["api_port"], path), headers=headers, method=method, data=data)
        with urllib.request.urlopen(req, context=self.ctx) as r:
            return json.load(r)

    def get(self, path):
        """The data of GET /api2/json<path>."""
        return self.call("/api2/json" + path)["data"]

    def put(self, path, params):
        """The data of PUT /api2/json<path> with params."""
        return self.call("/api2/json" + path, "PUT", params=params)["data"]
