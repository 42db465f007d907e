"""extract.py DOC: the commands of DOC's ```sh guide blocks, as one bash script for tests/guide/run.sh.

A block opens with a line ```sh guide, optionally followed by expect="REGEX" (its commands' output
must match it, Python re, searched line by line as grep -E does). Each line of a block is one command, run as
printed in one bash shell, in order (a trailing backslash continues it on the next line); lines
starting with # are comments. The script prints each command with its line in DOC, runs it, and
stops at the first that fails (exit status not 0, or no output line matching the block's expect),
naming the line."""
import re
import shlex
import sys

OPEN = re.compile(r'^```sh guide(?:\s+expect="(?P<expect>[^"]*)")?\s*$')


def blocks(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    i, out = 0, []
    while i < len(lines):
        m = OPEN.match(lines[i])
        if not m:
            if lines[i].startswith('```sh guide'):
                sys.exit(f'{path}:{i + 1}: a guide block opens with ```sh guide [expect="REGEX"]: {lines[i]!r}')
            i += 1
            continue
        expect, cmds, i = m.group('expect'), [], i + 1
        while i < len(lines) and lines[i] != '```':
            start, cmd = i + 1, lines[i]
            while cmd.endswith('\\') and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + lines[i].lstrip()
            if cmd.strip() and not cmd.lstrip().startswith('#'):
                cmds.append((start, cmd))
            i += 1
        if i >= len(lines):
            sys.exit(f'{path}: the guide block opened at line {start} is not closed')
        out.append((expect, cmds))
        i += 1
    return out


def main():
    path = sys.argv[1]
    bl = blocks(path)
    if not bl:
        sys.exit(f'{path}: no ```sh guide block')
    print('set -u')
    print('guide_t0=${GUIDE_T0:-$(date +%s%N)}')
    n = 0
    for expect, cmds in bl:
        for line, cmd in cmds:
            n += 1
            where = f'{path}:{line}'
            print(f'printf "\\n== %s\\n$ %s\\n" {shlex.quote(where)} {shlex.quote(cmd)}')
            # run in this shell (cd and exports carry over), output to the log and to a file
            print('{ ' + cmd + '\n} > "$GUIDE_OUT" 2>&1; guide_rc=$?; cat "$GUIDE_OUT"')
            print(f'echo "{where} $(( ($(date +%s%N) - guide_t0) / 1000000 )) ms rc=$guide_rc" >> "$GUIDE_TIMES"')
            print(f'if [ $guide_rc -ne 0 ]; then echo "guide: {where}: exit status $guide_rc: "{shlex.quote(cmd)} >&2; exit 1; fi')
            if expect:
                print(f'if ! grep -Eq -- {shlex.quote(expect)} "$GUIDE_OUT"; then '
                      f'echo "guide: {where}: no line of its output matches "{shlex.quote(repr(expect))}": "{shlex.quote(cmd)} >&2; exit 1; fi')
    print(f'echo "guide: {n} commands of {path} worked as printed"')


if __name__ == '__main__':
    main()
