"""Offline link check of the built docs site (docs/site/build.sh, make docs).

Every link, stylesheet, script and image of every HTML page that stays inside the site must name a
file of the site, and a #fragment an id (or name) in that file; links out of the site are listed,
never fetched (no network here). The site must also hold, reachable from index.html by links, a
page for every module and filter, every role (with each of its argument spec entry points), the
tenant contract and every ADR of the installed collection: what ships is what is documented.

usage: python linkcheck.py SITE_HTML_DIR COLLECTION_DIR
"""
from __future__ import annotations

import glob
import html
import html.parser
import os
import sys
import urllib.parse

import yaml


class _Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ('id', 'name'):
            if a.get(key) and (key == 'id' or tag == 'a'):
                self.ids.add(a[key])
        for key in ('href', 'src'):
            if a.get(key) is not None:
                self.links.append(a[key])


def parse(path, cache):
    if path not in cache:
        page = _Page()
        with open(path, encoding='utf-8') as f:
            page.feed(f.read())
        cache[path] = page
    return cache[path]


def check(site):
    site = os.path.abspath(site)
    cache = {}
    broken, external = [], set()
    for path in sorted(glob.glob(os.path.join(site, '**', '*.html'), recursive=True)):
        for link in parse(path, cache).links:
            u = urllib.parse.urlsplit(link)
            if u.scheme in ('http', 'https') or link.startswith('//'):
                external.add(link)
                continue
            if u.scheme in ('mailto', 'data', 'javascript'):
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(path), urllib.parse.unquote(u.path))) if u.path else path
            if os.path.isdir(target):
                target = os.path.join(target, 'index.html')
            where = '%s: %s' % (os.path.relpath(path, site), link)
            if not target.startswith(site + os.sep) or not os.path.isfile(target):
                broken.append(where + ' (no such file in the site)')
            elif u.fragment and target.endswith('.html') and urllib.parse.unquote(u.fragment) not in parse(target, cache).ids:
                broken.append(where + ' (no such anchor)')
    return broken, external, cache


def reachable(site, cache):
    """The pages reachable from index.html over the site's own links."""
    seen, todo = set(), [os.path.join(site, 'index.html')]
    while todo:
        path = todo.pop()
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        for link in parse(path, cache).links:
            u = urllib.parse.urlsplit(link)
            if u.scheme or not u.path.endswith('.html'):
                continue
            todo.append(os.path.normpath(os.path.join(os.path.dirname(path), urllib.parse.unquote(u.path))))
    return seen


def expected_pages(collection):
    """(page, words it must contain) for what the installed collection ships."""
    want = []
    for stub in sorted(glob.glob(os.path.join(collection, 'plugins', 'modules', '*.py'))):
        name = os.path.basename(stub)[:-3]
        want.append(('collection/%s_module.html' % name, ['deevnet.tenant.' + name]))
    for doc in sorted(glob.glob(os.path.join(collection, 'plugins', 'filter', '*.yml'))):
        name = os.path.basename(doc)[:-4]
        want.append(('collection/%s_filter.html' % name, ['deevnet.tenant.' + name]))
    for spec in sorted(glob.glob(os.path.join(collection, 'roles', '*', 'meta', 'argument_specs.yml'))):
        role = spec.split(os.sep)[-3]
        entry_points = sorted((yaml.safe_load(open(spec)) or {}).get('argument_specs', {}))
        want.append(('collection/%s_role.html' % role, ['deevnet.tenant.' + role] + entry_points))
    # The Markdown docs: each page carries its source's first heading.
    pages = ['docs/tenant-contract.md', 'docs/security.md', 'docs/migrate-from-terraform.md']
    for md in pages + sorted(glob.glob(os.path.join(collection, 'docs', 'adr', '*.md'))):
        md = os.path.relpath(os.path.join(collection, md), collection)
        with open(os.path.join(collection, md), encoding='utf-8') as f:
            title = next((line.lstrip('#').strip() for line in f if line.startswith('# ')), '')
        want.append((md[:-3] + '.html', [html.escape(title, quote=False)] if title else []))
    return want


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1])
        return 2
    site, collection = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    broken, external, cache = check(site)
    pages = sorted(glob.glob(os.path.join(site, '**', '*.html'), recursive=True))
    ok = True
    if broken:
        ok = False
        print('FAIL  %d broken links:' % len(broken))
        for b in broken[:50]:
            print('        ' + b)
    else:
        print('PASS  every link inside the site resolves (%d pages, %d links out of the site, not fetched)'
              % (len(pages), len(external)))
    seen = reachable(site, cache)
    missing = []
    for page, words in expected_pages(collection):
        path = os.path.join(site, page)
        if path not in seen:
            missing.append(page + (' (not reachable from index.html)' if os.path.isfile(path) else ' (missing)'))
            continue
        text = open(path, encoding='utf-8').read()
        missing += ['%s does not mention %s' % (page, w) for w in words if w not in text]
    if missing:
        ok = False
        print('FAIL  the site lacks what the collection ships:')
        for m in missing:
            print('        ' + m)
    else:
        print('PASS  every module, filter, role (with its entry points), the tenant contract and every ADR has a page reachable from index.html')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
