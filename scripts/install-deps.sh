#!/usr/bin/env bash
# Installs everything the build, the tests and the demo need on a fresh Debian 12 machine, as root:
# Debian packages (servers are NOT started: policy-rc.d refuses), golangci-lint, the Go modules.
# The Python tools go into .venv through `make venv` (mk/ansible.mk). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  # DNS: PowerDNS (sqlite backend), BIND, Unbound, dig/nsupdate
  pdns-server pdns-backend-sqlite3 sqlite3 bind9 bind9-dnsutils unbound
  # data plane: namespaces, nftables, ping
  iproute2 nftables iputils-ping
  # the QEMU guest for kernel features the host lacks (VRF, 802.1Q, VLAN-aware bridges)
  qemu-system-x86 busybox-static
  # the guard's io.max proof in that guest: dm-linear and dm-thin made with dmsetup (make test-guard-guest)
  dmsetup
  # trixie's guest kernel ships xz-compressed modules (test/guest/run.sh unpacks them for busybox insmod)
  xz-utils
  # the substrate lab: ssh to the guest and its nodes (test/lab/lab.sh)
  openssh-client
  # curl for the PowerDNS API and pvesim from scripts. No FRR here: every FRR check runs Debian 13's
  # FRR 10 from the Debian tree (scripts/debian-tree.sh), as the lab's nodes do
  curl ca-certificates make git
  # the API gate's certificate in make test-adversary (tests/adversary/run.sh)
  openssl
  # a Debian tree with ifupdown2, FRR and friends for checks and the substrate lab (scripts/debian-tree.sh)
  mmdebstrap
  # the site report's render test: headless Chromium for mermaid-cli (tests/report/render.sh)
  chromium
  # the linux/arm64 module binaries run under qemu-user (make test-platforms); `file` names binaries
  qemu-user-static file
)

# A package's postinst must never start its daemon here: an unbound started as a service would
# query the real root servers. 101 = "action forbidden by policy".
if [ ! -x /usr/sbin/policy-rc.d ] || ! grep -q 'exit 101' /usr/sbin/policy-rc.d; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian's packages ship units that would start on boot; stop nothing, just make sure none runs
# from this install (policy-rc.d above) and that the tests own every server they use.

GOLANGCI_LINT_VERSION=v2.15.0
if ! command -v golangci-lint >/dev/null 2>&1 && [ ! -x "$(go env GOPATH)/bin/golangci-lint" ]; then
  go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${GOLANGCI_LINT_VERSION}"
fi

go mod download

# mermaid-cli for the report render test, exactly as tests/report/package-lock.json pins it. Puppeteer
# downloads no browser (Debian's chromium above; tests/report/.puppeteerrc.cjs says so too).
if command -v npm >/dev/null 2>&1; then
  lock=$(sha256sum tests/report/package-lock.json | cut -d' ' -f1)
  if [ "$(cat tests/report/node_modules/.dvt-lock 2>/dev/null)" != "$lock" ]; then
    (cd tests/report && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
    echo "$lock" > tests/report/node_modules/.dvt-lock
  fi
else
  echo "install-deps: npm missing: Node.js 20 and npm are needed for tests/report (mermaid-cli)" >&2
  exit 1
fi
echo "install-deps: done"
