#!/usr/bin/env python3
"""Rewrites the generated tables of docs/INPUTS.md (between <!-- schema:NAME --> markers) from
`trainsim schema NAME --markdown`. Usage: tools/regen_schema_docs.py build/trainsim"""
import pathlib
import re
import subprocess
import sys

doc = pathlib.Path(__file__).resolve().parent.parent / "docs/INPUTS.md"
text = doc.read_text()
for name in re.findall(r"<!-- schema:([\w-]+) -->", text):
    table = subprocess.run([sys.argv[1], "schema", name, "--markdown"], check=True,
                           capture_output=True, text=True).stdout
    pattern = re.compile(rf"(<!-- schema:{name} -->\n).*?(<!-- /schema:{name} -->)", re.S)
    text = pattern.sub(lambda m: m.group(1) + table + m.group(2), text)
doc.write_text(text)
