#!/usr/bin/env python3
"""Lists the public symbols of the library products that have no documentation comment, from
the compiler's symbol graphs (the arguments: their folders). A symbol that implements a protocol's
requirement (`sourceOrigin`, e.g. `description`, `Clock.now`) takes that requirement's
documentation, as DocC shows it; synthesized symbols are the compiler's. Exits 1 when any is
left, naming each with its file and line."""
import json, pathlib, sys

missing = []
for graph in sorted(g for folder in sys.argv[1:] for g in pathlib.Path(folder).glob("*.symbols.json")):
    data = json.loads(graph.read_text())
    inherited = {r["source"] for r in data["relationships"] if "sourceOrigin" in r}
    for symbol in data["symbols"]:
        precise = symbol["identifier"]["precise"]
        if "docComment" in symbol or "::SYNTHESIZED::" in precise or precise in inherited:
            continue
        location = symbol.get("location", {})
        where = location.get("uri", "?").split("/Sources/", 1)[-1]
        line = location.get("position", {}).get("line", -1) + 1
        missing.append(f"Sources/{where}:{line}: {'.'.join(symbol['pathComponents'])} ({symbol['kind']['displayName']})")
for entry in sorted(set(missing)):
    print(entry)
if missing:
    print(f"undocumented: {len(set(missing))} public symbol(s) without a documentation comment")
    sys.exit(1)
print("undocumented: none: every public symbol has a documentation comment")
