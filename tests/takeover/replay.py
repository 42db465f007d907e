"""Replays a recorded tool's API calls (tests/takeover/*.json) against pvesim, in order.

    python3 replay.py FIXTURE URL CA TOKEN_FILE

The Go tests replay the same file with internal/pvesim/pvesimtest.Replay; this is the same loop for
the playbook test (tests/takeover/run.sh), which has no Go test binary at hand. Each call is sent
as a form, as the provider sends it, with the simulator's root token; a call answered with a task
waits for the task to stop, and any error ends the replay naming the call.
"""
import json
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def main(fixture, url, ca, token_file):
    tok = json.load(open(token_file))
    auth = 'PVEAPIToken=%s=%s' % (tok['full_token_id'], tok['api_token_secret'])
    ctx = ssl.create_default_context(cafile=ca)

    def call(method, path, params=None):
        data = urllib.parse.urlencode(params or {}).encode() if method != 'GET' else None
        req = urllib.request.Request(url + '/api2/json' + path, data=data, method=method,
                                     headers={'Authorization': auth})
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return json.load(r).get('data')

    for i, c in enumerate(json.load(open(fixture))['calls']):
        try:
            out = call(c['method'], c['path'], c['params'])
            if isinstance(out, str) and out.startswith('UPID:'):
                node = out.split(':')[1]
                status = '/nodes/%s/tasks/%s/status' % (node, urllib.parse.quote(out, safe=''))
                deadline = time.monotonic() + 30
                while True:
                    st = call('GET', status)
                    if st.get('status') == 'stopped':
                        if st.get('exitstatus') != 'OK':
                            raise RuntimeError('task %s: %s' % (out, st.get('exitstatus')))
                        break
                    if time.monotonic() > deadline:
                        raise RuntimeError('task %s did not stop' % out)
                    time.sleep(0.05)
        except (urllib.error.HTTPError, RuntimeError) as e:
            body = e.read().decode() if isinstance(e, urllib.error.HTTPError) else ''
            sys.exit('%s: calls[%d] (%s) %s %s: %s %s' % (fixture, i, c['what'], c['method'], c['path'], e, body))


if __name__ == '__main__':
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
