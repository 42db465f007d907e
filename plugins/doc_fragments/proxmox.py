# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""Connection options shared by every deevnet.tenant module that talks to the Proxmox VE API.

Names and environment fallbacks are community.proxmox's, so one module_defaults block serves both
collections. The Go side of these options is internal/pve.ConnectionOptions.
"""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  api_host:
    description:
      - Host name or address of the Proxmox VE API.
      - If not given, the environment variable E(PROXMOX_HOST) is used.
    type: str
    required: true
  api_port:
    description:
      - TCP port of the Proxmox VE API.
      - If not given, the environment variable E(PROXMOX_PORT) is used.
    type: int
    default: 8006
  api_user:
    description:
      - The user that owns the API token, as C(user@realm), for example C(tenant-tdemo@pve).
      - If not given, the environment variable E(PROXMOX_USER) is used.
    type: str
    required: true
  api_token_id:
    description:
      - Name of the API token of O(api_user), for example C(iac). A full token id
        C(user@realm!name) is accepted as well.
      - Only API tokens are supported, because a token can be scoped to one tenant and a password cannot.
      - If not given, the environment variable E(PROXMOX_TOKEN_ID) is used.
    type: str
    required: true
  api_token_secret:
    description:
      - Secret (UUID) of the API token. Never shown in output, diffs, logs or error messages.
      - If not given, the environment variable E(PROXMOX_TOKEN_SECRET) is used.
    type: str
    required: true
  validate_certs:
    description:
      - Verify the API server's TLS certificate.
      - Unlike community.proxmox, the default is V(true); set V(false) only for a lab.
      - If not given, the environment variable E(PROXMOX_VALIDATE_CERTS) is used.
    type: bool
    default: true
  ca_path:
    description:
      - PEM file of the certificate authority that signed the API server's certificate,
        used instead of the system trust store (PVE's own C(/etc/pve/pve-root-ca.pem), for example).
    type: path
  api_timeout:
    description:
      - Timeout in seconds of each API request.
    type: int
    default: 30
notes:
  - All connection options can be set once for every Proxmox module of this collection with
    C(module_defaults) and the action group C(group/deevnet.tenant.proxmox).
'''
