#!/usr/bin/env bash
# bench.sh --venv DIR --collections DIR [--tasks N]
# Wall time of N deevnet.tenant.tenant_plan tasks against N ansible.builtin.ping tasks on localhost,
# in one ansible-playbook run, the cost of the go_module action plugin's platform detection, and of
# unpacking the shipped .xz binary (first call: into an empty cache; every later call: found there).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
venv= coll= n=100
while [ $# -gt 0 ]; do
  case $1 in
    --venv) venv=$2; shift 2;; --collections) coll=$2; shift 2;; --tasks) n=$2; shift 2;;
    *) echo "usage: $0 --venv DIR --collections DIR [--tasks N]" >&2; exit 2;;
  esac
done
export ANSIBLE_COLLECTIONS_PATH=$coll ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
export ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_HOME=${ANSIBLE_HOME:-$root/.ansible/home}
export ANSIBLE_CALLBACK_PLUGINS=$here/bench/callback_plugins ANSIBLE_CALLBACKS_ENABLED=dvt_timer
export ANSIBLE_CONNECTION_PLUGINS=$here/playbooks/connection_plugins
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
printf '[defaults]\n' >"$work/ansible.cfg"; export ANSIBLE_CONFIG=$work/ansible.cfg
export DVT_TIMER_OUT=$work/timer.json DVT_UNAME_LOG=$work/uname.log
# An empty cache of unpacked binaries: the warmup play's tenant_plan task unpacks, the rest find it.
export DEEVNET_TENANT_BIN_CACHE=$work/cache

# The installed collection's action code (it imports its siblings by their collection names).
plat=$(PYTHONPATH=$coll "$venv/bin/python" - <<'PY'
import platform
from ansible_collections.deevnet.tenant.plugins.plugin_utils import go_module as m
print(m.go_platform(platform.system(), platform.machine()))
PY
)
tasks(){ # tasks MODULE-YAML: N numbered copies of one task
  for i in $(seq 1 "$n"); do printf '    - name: t%d\n      %s\n' "$i" "$1"; done; }
play(){ # play NAME HOSTS [VARS-YAML]
  printf -- '- name: %s\n  hosts: %s\n  gather_facts: false\n' "$1" "$2"; [ -z "${3:-}" ] || printf '  vars: %s\n' "$3"; printf '  tasks:\n'; }
plan='deevnet.tenant.tenant_plan: {name: tdemo, index: 1}'
{
  echo '---'
  play warmup localhost; printf '    - ansible.builtin.ping:\n    - %s\n' "$plan"
  play ping localhost; tasks 'ansible.builtin.ping:'
  play tenant_plan localhost; tasks "$plan"
  # detection on/off twice, interleaved, so that drift in the machine's load shows as noise
  play tenant_plan_platform_preset localhost "{deevnet_tenant_platform: $plat}"; tasks "$plan"
  play tenant_plan_2 localhost; tasks "$plan"
  play tenant_plan_platform_preset_2 localhost "{deevnet_tenant_platform: $plat}"; tasks "$plan"
  play tenant_plan_remote dvt-a; tasks "$plan"
} >"$work/bench.yml"

start=$(date +%s.%N)
"$venv/bin/ansible-playbook" -i "$here/inventory.yml" "$work/bench.yml" >"$work/bench.log" 2>&1 || { tail -30 "$work/bench.log"; exit 1; }
end=$(date +%s.%N)

PYTHONPATH=$coll "$venv/bin/python" - "$work/timer.json" "$n" "$(wc -l <"$work/uname.log")" "$start" "$end" \
  "$coll/ansible_collections/deevnet/tenant/plugins/modules/__bin/tenant_modules_$plat.xz" "$work" <<'PY'
import json, os, platform, statistics, sys, time, timeit
from ansible_collections.deevnet.tenant.plugins.plugin_utils import binary_cache as bc, go_module as m
plays = {p['name']: p for p in json.load(open(sys.argv[1]))}
n, unames, total = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[5]) - float(sys.argv[4])
from ansible.release import __version__
ms = lambda s: '%.1f ms' % (s * 1000)
ping, plan = plays['ping'], plays['tenant_plan']
preset, remote = plays['tenant_plan_platform_preset'], plays['tenant_plan_remote']
print('ansible-core %s, Python %s, %d tasks per play, whole run %.1f s' % (__version__, platform.python_version(), n, total))
for p in (ping, plan, preset, plays['tenant_plan_2'], plays['tenant_plan_platform_preset_2'], remote):
    t = p['tasks']
    print('  %-28s %6.2f s  mean %s  median %s' % (p['name'], p['seconds'], ms(statistics.mean(t)), ms(statistics.median(t))))
print('tenant_plan / ping wall time ratio: %.2f' % (plan['seconds'] / ping['seconds']))
loops = 100000
py = timeit.timeit(lambda: m.go_platform(platform.system(), platform.machine()), number=loops) / loops
print('platform detection, local connection: %.2f us per task (platform.system/machine + mapping, timeit x%d; each task runs in a fresh worker, cold about 10 us)' % (py * 1e6, loops))
d1 = statistics.median(plan['tasks']) - statistics.median(preset['tasks'])
d2 = statistics.median(plays['tenant_plan_2']['tasks']) - statistics.median(plays['tenant_plan_platform_preset_2']['tasks'])
print('platform detection, local, end to end: %+.2f / %+.2f ms per task (median of detected minus preset, two interleaved pairs; the spread is the noise)'
      % (d1 * 1000, d2 * 1000))
rt = remote['tasks']
print('platform detection, remote connection: uname -sm ran %d time(s) for %d tasks; first task %s vs median of the rest %s (+%s once per host)'
      % (unames, n, ms(rt[0]), ms(statistics.median(rt[1:])), ms(rt[0] - statistics.median(rt[1:]))))
xz, first = sys.argv[6], plays['warmup']['tasks'][1]
print('unpacking %s (%.2f MB, %.2f MB unpacked), end to end: the first tenant_plan task (empty cache) %s vs median %s (+%s once per controller and binary)'
      % (os.path.basename(xz), os.path.getsize(xz) / 1e6, bc.xz_content_id(xz)[1] / 1e6, ms(first), ms(statistics.median(plan['tasks'])),
         ms(first - statistics.median(plan['tasks']))))
cold = []
for i in range(3):
    t0 = time.perf_counter(); bc.unpacked(xz, os.path.join(sys.argv[7], 'cold%d' % i)); cold.append(time.perf_counter() - t0)
warm = timeit.timeit(lambda: bc.unpacked(xz, os.path.join(sys.argv[7], 'cold0')), number=1000) / 1000
print('unpacking, in process: first call %s (median of 3 empty caches: xz, SHA-256, fsync, rename), cached call %.1f us (timeit x1000: read the xz tail, stat)'
      % (ms(statistics.median(cold)), warm * 1e6))
PY
