#!/usr/bin/env python3
"""Fails when a top-level public symbol of a library product (a type, a protocol, a function, a
type alias) is curated by no topic group of its product's DocC catalog: each must be linked as
``Name`` (or ``Name/member``) under a `## Topics` heading of some page of
Sources/<Product>/<Product>.docc. Members are grouped under their type by DocC itself.
Argument 1: the folder holding one folder of symbol graphs per product."""
import json, pathlib, re, sys

root = pathlib.Path(__file__).resolve().parents[2]
graphs = pathlib.Path(sys.argv[1])
uncurated = []
for product_dir in sorted(p for p in graphs.iterdir() if p.is_dir()):
    product = product_dir.name
    data = json.loads((product_dir / f"{product}.symbols.json").read_text())
    top = {s["pathComponents"][0] for s in data["symbols"] if len(s["pathComponents"]) == 1}
    curated = set()
    for page in (root / "Sources" / product / f"{product}.docc").rglob("*.md"):
        text = page.read_text()
        topics = text.split("## Topics", 1)[1] if "## Topics" in text else ""
        curated |= {link.split("/")[0] for link in re.findall(r"``([^`]+)``", topics)}
    for name in sorted(top - curated):
        uncurated.append(f"{product}: {name}")
for entry in uncurated:
    print(f"curation: not in any topic group: {entry}")
if uncurated:
    print(f"curation: {len(uncurated)} top-level public symbol(s) curated by no topic group")
    sys.exit(1)
print("curation: every top-level public symbol is in a topic group of its product's catalog")
