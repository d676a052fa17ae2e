#!/usr/bin/env python3
"""Checks the links of the HTML that `cargo doc --workspace --no-deps` wrote: every relative
link of the workspace's crates' pages must name a file that exists (and an anchor it has, for
links into the workspace's own pages). Prints each broken link; exit status 1 if any.

    python3 .ci/doc_links.py [target/doc]
"""

import html.parser
import os
import sys
import urllib.parse

CRATES = ["irpass", "irpass_macros", "irpass_ir", "irpass_ir_macros", "irpass_onnx",
          "irpass_passes", "_native", "irpass_tests", "irpass_examples"]


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []
        self.ids = set()
        self.redirect = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "meta" and a.get("http-equiv", "").lower() == "refresh":
            content = a.get("content") or ""
            if "url=" in content.lower():
                self.redirect = content[content.lower().index("url=") + 4:]
        if "id" in a:
            self.ids.add(a["id"])
        if "name" in a and tag == "a":
            self.ids.add(a["name"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])


def parse(path, cache={}):
    if path not in cache:
        p = Links()
        with open(path, encoding="utf-8", errors="replace") as f:
            p.feed(f.read())
        cache[path] = p
    return cache[path]


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/doc")
    broken = []
    pages = 0
    for crate in CRATES:
        top = os.path.join(root, crate)
        if not os.path.isdir(top):
            continue
        for dirpath, _, files in os.walk(top):
            for name in files:
                if not name.endswith(".html"):
                    continue
                page = os.path.join(dirpath, name)
                pages += 1
                for href in parse(page).links:
                    url = urllib.parse.urlparse(href)
                    if url.scheme or href.startswith("//") or href.startswith("#"):
                        continue
                    target = os.path.normpath(os.path.join(dirpath, urllib.parse.unquote(url.path)))
                    if not os.path.exists(target):
                        broken.append(f"{os.path.relpath(page, root)}: {href}")
                        continue
                    # rustdoc writes a redirect page at an item's private path; follow it.
                    seen = 0
                    while target.endswith(".html") and parse(target).redirect and seen < 5:
                        target = os.path.normpath(os.path.join(os.path.dirname(target),
                                                               parse(target).redirect))
                        seen += 1
                    if not os.path.exists(target):
                        broken.append(f"{os.path.relpath(page, root)}: {href} (redirects nowhere)")
                        continue
                    inside = any(target.startswith(os.path.join(root, c) + os.sep) for c in CRATES)
                    if url.fragment and inside and target.endswith(".html"):
                        frag = urllib.parse.unquote(url.fragment)
                        if frag not in parse(target).ids and not frag.startswith("L"):
                            broken.append(f"{os.path.relpath(page, root)}: {href} (no #{frag})")
    for b in sorted(set(broken))[:200]:
        print(b)
    print(f"{pages} pages checked, {len(set(broken))} broken links", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
