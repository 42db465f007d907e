"""The envelope guard's systemd units as roles/substrate tasks/guard.yml wrote them on one node,
read strictly, against what the hypervisor play ran there (tests/substrate/run.sh, section 5e).

  units.py UNIT_DIR PLAY_LOG NODE INTERVAL ENV_JSON

UNIT_DIR holds deevnet-envelope-guard.service, -watch.service and .timer; PLAY_LOG is an
ansible-playbook -v log of a hypervisor play that ran the guard's sweep (once, on one node), its
contain and its wire (on each node). Checked: only the sections and keys the role writes, each once
(ExecStart= and Environment= may repeat); the service is Type=oneshot with three ExecStart= lines,
unquoted as systemd.service(5) does ("..." with \\ and \" escapes, %% and $$; any other %
specifier or $ expansion refused): the first (prefixed "-") is the play's sweep, argument for
argument, with this node's guard as its program; the second (prefixed "-": a contain that fails
keeps no port from the wire) is exactly the play's contain on NODE; the third is exactly the play's
wire on NODE; the watch service runs the play's wire arguments with `watch` in wire's place, and
restarts; Environment= is ENV_JSON (the node's substrate_node_environment) in both services; the
timer's OnActiveSec= and OnUnitActiveSec= are INTERVAL. Exit 1 naming each difference.
"""
import json
import pathlib
import re
import sys

SWEEP_TASK = 'Set the guard as the hookscript where it lacks'
CONTAIN_TASK = "Put this node's tenant VMs running outside their tenant's group into it"  # the name's start
WIRE_TASK = 'Load the wire on this node'  # the name's start
ALLOWED = {
    'deevnet-envelope-guard.service': {'Unit': {'Description', 'After'}, 'Service': {'Type', 'Environment', 'ExecStart'}},
    'deevnet-envelope-guard-watch.service': {'Unit': {'Description', 'After', 'Before'},
                                             'Service': {'Type', 'Environment', 'ExecStart', 'Restart', 'RestartSec'},
                                             'Install': {'WantedBy'}},
    'deevnet-envelope-guard.timer': {'Unit': {'Description'}, 'Timer': {'OnActiveSec', 'OnUnitActiveSec', 'AccuracySec'},
                                     'Install': {'WantedBy'}},
}
REPEATS = {'ExecStart', 'Environment'}


def parse(path, allowed, errs):
    """A unit file's sections as {section: {key: [values]}}, refusing what the role does not write."""
    out, section = {}, None
    for n, line in enumerate(path.read_text().splitlines(), 1):
        where = '%s:%d' % (path.name, n)
        if not line.strip() or line.startswith(('#', ';')):
            continue
        if line != line.strip():
            errs.append('%s: leading or trailing blanks: %r' % (where, line))
        m = re.fullmatch(r'\[(\w+)\]', line)
        if m:
            section = m.group(1)
            if section not in allowed or section in out:
                errs.append('%s: section [%s] unexpected or repeated' % (where, section))
            out.setdefault(section, {})
            continue
        key, eq, value = line.partition('=')
        if section is None or not eq or key not in allowed.get(section, ()):
            errs.append('%s: %r is no key the role writes in [%s]' % (where, line, section))
            continue
        if key in out[section] and key not in REPEATS:
            errs.append('%s: %s= repeated' % (where, key))
        out[section].setdefault(key, []).append(value)
    for section in allowed:
        if section not in out:
            errs.append('%s: no [%s]' % (path.name, section))
    return out


def unquote(value, where, errs):
    """systemd's splitting of a command line or Environment= value into words."""
    words, i, n = [], 0, len(value)
    while i < n:
        if value[i] == ' ':
            i += 1
            continue
        if value[i] != '"':
            errs.append('%s: word at %d not quoted (the role quotes every one): %r' % (where, i, value))
            return words
        i += 1
        word = ''
        while True:
            if i >= n:
                errs.append('%s: unbalanced quoting: %r' % (where, value))
                return words
            c = value[i]
            if c == '"':
                i += 1
                break
            if c == '\\':
                if i + 1 >= n or value[i + 1] not in '\\"':
                    errs.append('%s: escape %r unknown to the role: %r' % (where, value[i:i + 2], value))
                word += value[i + 1:i + 2]
                i += 2
                continue
            if c in '%$':
                if value[i + 1:i + 2] != c:
                    errs.append('%s: %r would be a systemd specifier or expansion: %r' % (where, value[i:i + 2], value))
                word += c
                i += 2
                continue
            word += c
            i += 1
        if i < n and value[i] != ' ':
            errs.append('%s: text right after a closing quote: %r' % (where, value))
        words.append(word)
    return words


def play_argv(log, task, node):
    """The cmd the play's task ran on node (ansible-playbook -v result lines), or None."""
    current = None
    for line in log.splitlines():
        m = re.match(r'TASK \[(?:[\w.]+ : )?(.*?)\] \**$', line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r'(?:ok|changed): \[([^\]]+)\] => (\{.*\})$', line)
        if m and current and current.startswith(task) and m.group(1) == node:
            return json.loads(m.group(2))['cmd']
    return None


def main():
    unit_dir, log_path, node, interval, env_json = sys.argv[1:6]
    errs = []
    units = {name: parse(pathlib.Path(unit_dir) / name, allowed, errs) for name, allowed in ALLOWED.items()}
    svc, timer = units['deevnet-envelope-guard.service'], units['deevnet-envelope-guard.timer']
    watch = units['deevnet-envelope-guard-watch.service']
    log = pathlib.Path(log_path).read_text()
    sweep = next((a for a in (play_argv(log, SWEEP_TASK, h) for h in re.findall(r'\[(dv\w+)\] =>', log)) if a), None)
    contain = play_argv(log, CONTAIN_TASK, node)
    wire = play_argv(log, WIRE_TASK, node)
    if sweep is None or contain is None or wire is None:
        errs.append('%s: the play log holds no sweep (%s), no contain (%s) or no wire (%s) on %s: run with -v' % (log_path, sweep, contain, wire, node))
    service = svc.get('Service', {})
    if service.get('Type') != ['oneshot']:
        errs.append('Type=%s, want oneshot (three ExecStart= in turn)' % service.get('Type'))
    execs = service.get('ExecStart', [])
    got_sweep = got_contain = got_wire = []
    if len(execs) != 3 or not execs[0].startswith('-') or not execs[1].startswith('-') or execs[2].startswith('-'):
        errs.append('ExecStart= %r: want the sweep and contain (each prefixed "-") then wire' % execs)
    elif sweep and contain and wire:
        got_sweep = unquote(execs[0][1:], 'ExecStart= (sweep)', errs)
        got_contain = unquote(execs[1][1:], 'ExecStart= (contain)', errs)
        got_wire = unquote(execs[2], 'ExecStart= (wire)', errs)
        if got_contain != contain:
            errs.append('ExecStart= contain %r, the play ran %r on %s' % (got_contain, contain, node))
        if got_wire != wire:
            errs.append('ExecStart= wire %r, the play ran %r on %s' % (got_wire, wire, node))
        # the play sweeps once, on its first node: the same arguments, this node's guard
        if got_sweep[1:] != sweep[1:] or got_sweep[:1] != contain[:1]:
            errs.append('ExecStart= sweep %r, the play ran %r (with %s on %s)' % (got_sweep, sweep, contain[0], node))
    wsvc = watch.get('Service', {})
    if wsvc.get('Type') != ['simple'] or wsvc.get('Restart') != ['always']:
        errs.append('watch: Type=%s Restart=%s, want simple, always' % (wsvc.get('Type'), wsvc.get('Restart')))
    wexec = wsvc.get('ExecStart', [])
    if len(wexec) != 1 or (wire and unquote(wexec[0], 'watch ExecStart=', errs) != wire[:-1] + ['watch']):
        errs.append('watch: ExecStart= %r, want the play\'s wire %r with watch for wire' % (wexec, wire))
    if watch.get('Install', {}).get('WantedBy') != ['multi-user.target']:
        errs.append('watch: WantedBy=%s, want multi-user.target' % watch.get('Install', {}).get('WantedBy'))
    for name, unit in (('service', service), ('watch', wsvc)):
        env = {}
        for v in unit.get('Environment', []):
            for word in unquote(v, name + ' Environment=', errs):
                k, val = word.split('=', 1) if '=' in word else (word, '')
                env[k] = val
        if env != json.loads(env_json):
            errs.append('%s: Environment= %r, want the play\'s %s' % (name, env, env_json))
    t = timer.get('Timer', {})
    for key in ('OnActiveSec', 'OnUnitActiveSec'):
        if t.get(key) != [interval]:
            errs.append('%s=%s, want [%s]' % (key, t.get(key), interval))
    if timer.get('Install', {}).get('WantedBy') != ['timers.target']:
        errs.append('WantedBy=%s, want timers.target' % timer.get('Install', {}).get('WantedBy'))
    if errs:
        print('\n'.join('%s: %s' % (node, e) for e in errs))
        sys.exit(1)
    print('%s: ExecStart= %s ; %s ; %s' % (node, ' '.join(got_sweep), ' '.join(got_contain), ' '.join(got_wire)))


if __name__ == '__main__':
    main()
