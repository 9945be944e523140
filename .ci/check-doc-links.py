#!/usr/bin/env python3
"""Checks the relative links of the project's Markdown files: every linked file must exist and
every #anchor must name a heading of the file it points at (GitHub's heading slugs).
Usage: .ci/check-doc-links.py [root]; exits 1 and lists the broken links when there are any."""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..'))
SKIP = {'target', 'node_modules', '.git', '.mvn'}


def slug(heading):
    text = re.sub(r'[^\w\- ]', '', heading.strip().lower())
    return text.replace(' ', '-')


def anchors(path):
    found, counts, fence = set(), {}, False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('```'):
                fence = not fence
            match = None if fence else re.match(r'^#{1,6} (.*?)\s*#*\s*$', line)
            if match:
                base = slug(match.group(1))
                n = counts.get(base, 0)
                counts[base] = n + 1
                found.add(base if n == 0 else f'{base}-{n}')
            for name in re.findall(r'<a (?:name|id)="([^"]+)"', line):
                found.add(name)
    return found


def links(path):
    text, fence, out = open(path, encoding='utf-8').read(), False, []
    for number, line in enumerate(text.split('\n'), 1):
        if line.startswith('```'):
            fence = not fence
            continue
        if fence:
            continue
        line = re.sub(r'`[^`]*`', '', line)
        for target in re.findall(r'\]\(([^)\s]+)(?:\s+"[^"]*")?\)', line):
            out.append((number, target))
    return out


markdown = []
for directory, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if d not in SKIP]
    markdown += [os.path.join(directory, f) for f in files if f.endswith('.md')]

cache, broken, checked = {}, [], 0
for source in sorted(markdown):
    for number, target in links(source):
        if re.match(r'^[a-z][a-z0-9+.-]*:', target):
            continue
        checked += 1
        path, _, anchor = target.partition('#')
        destination = os.path.normpath(os.path.join(os.path.dirname(source), path)) if path else source
        where = f'{os.path.relpath(source, root)}:{number}: {target}'
        if not os.path.exists(destination):
            broken.append(f'{where} (no such file)')
        elif anchor and destination.endswith('.md'):
            if destination not in cache:
                cache[destination] = anchors(destination)
            if anchor not in cache[destination]:
                broken.append(f'{where} (no heading #{anchor} in {os.path.relpath(destination, root)})')

for line in broken:
    print(line)
print(f'{checked} relative links in {len(markdown)} Markdown files, {len(broken)} broken')
sys.exit(1 if broken else 0)
