#!/usr/bin/env python3
"""Writes every Swift code block of the README, docs/*.md, the DocC articles and the doc comments in Sources/ into
a throw-away package (argument 1), so `swift build --build-tests` there compiles them all.

Each block becomes a file of its own, named after where it came from:
- a block that begins with `// swift-tools-version` is a manifest: Manifests/NAME/Package.swift;
- a block with `@Test`, or in SDKTesting's doc comments, goes into the test target;
- a block whose code begins with a declaration (struct, final class, extension, func, @main, …)
  stays at file scope; any other block is a run of statements and is wrapped in an `async
  throws` function, as an app would write it in one.
`import SwiftUI`, `BackgroundTasks` and `UIKit` become `import AppleStandIns` where those
frameworks do not exist (see AppleStandIns.swift)."""
import pathlib, re, sys

root = pathlib.Path(__file__).resolve().parents[2]
out = pathlib.Path(sys.argv[1])
apple = sys.argv[2] == "apple" if len(sys.argv) > 2 else False

def fenced_swift_blocks(numbered_lines):
    """(first line number, code) of every ```swift block in (number, text) lines."""
    inside, start, body = False, 0, []
    for number, text in numbered_lines:
        if not inside and text.strip() == "```swift":
            inside, start, body = True, number, []
        elif inside and text.strip() == "```":
            inside = False
            yield start, "\n".join(body)
        elif inside:
            body.append(text)

def blocks_in_markdown(path):
    return fenced_swift_blocks(enumerate(path.read_text().splitlines(), 1))

def blocks_in_doc_comments(path):
    def doc_lines():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            text = line.strip()
            if text.startswith("///"):
                text = text[3:]
                yield number, text[1:] if text.startswith(" ") else text
    return fenced_swift_blocks(doc_lines())

declaration = re.compile(r"^(@main|@Test|@Suite|@MainActor|struct |final class |class |enum |extension |func |actor |protocol |public |private )")

def place(name, code):
    imports, rest = [], []
    # A conditional import (`#if canImport(X)` / `import X` / `#endif`) is an import too.
    code = re.sub(r"^#if canImport\((\w+)\)\nimport (\w+)\n#endif$", lambda m: f"@@conditional-import {m.group(1)}", code, flags=re.M)
    for line in code.splitlines():
        if line.startswith("@@conditional-import "):
            module = line.split()[1]
            imports.append(f"#if canImport({module})\nimport {module}\n#endif")
            continue
        if line.startswith("import "):
            module = line.split()[1]
            if not apple and module in ("SwiftUI", "BackgroundTasks", "UIKit"):
                line = "import AppleStandIns"
            imports.append(line)
        else:
            rest.append(line)
    imports = sorted(set(imports) | {"import SDK", "import SnippetPrelude"})
    if not apple:
        imports = sorted(set(imports) | {"import AppleStandIns"})
    first = next((l for l in rest if l.strip() and not l.strip().startswith("//")), "")
    header = f"// From {name}\n" + "\n".join(imports) + "\n\n"
    if "@Test" in code:
        header = f"// From {name}\n" + "\n".join(sorted(set(imports) | {"import SDKTesting", "import Testing"})) + "\n\n"
        return "Tests/SnippetTests", header + "\n".join(rest) + "\n"
    if name.startswith("Sources/SDKTesting/"):
        # The test kit's examples are test code: they go into the test target, with its imports.
        header = f"// From {name}\n" + "\n".join(sorted(set(imports) | {"import SDKTesting", "import Testing"})) + "\n\n"
        if declaration.match(first):
            return "Tests/SnippetTests", header + "\n".join(rest) + "\n"
        body = "\n".join("    " + l if l else l for l in rest)
        function = re.sub(r"\W", "_", name)
        return "Tests/SnippetTests", header + f"func snippet_{function}() async throws {{\n{body}\n}}\n"
    if declaration.match(first):
        return "Sources/Snippets", header + "\n".join(rest) + "\n"
    body = "\n".join("    " + l if l else l for l in rest)
    function = re.sub(r"\W", "_", name)
    return "Sources/Snippets", header + f"func snippet_{function}() async throws {{\n{body}\n}}\n"

sources = [(p, blocks_in_markdown(p)) for p in [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted((root / "Sources").glob("*/*.docc/*.md"))]]
sources += [(p, blocks_in_doc_comments(p)) for p in sorted((root / "Sources").rglob("*.swift"))]
count = 0
for path, blocks in sources:
    for line, code in blocks:
        name = f"{path.relative_to(root)}:{line}"
        stem = re.sub(r"\W", "_", name)
        if code.lstrip().startswith("// swift-tools-version"):
            target = out / "Manifests" / stem / "Package.swift"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code + "\n")
        else:
            folder, text = place(name, code)
            target = out / folder / f"{stem}.swift"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        count += 1
        print(f"snippet {name} -> {target.relative_to(out)}")
# The SDK's Apple-only files, type-checked here against the stand-ins (their `#if` for the
# framework becomes `#if true`; other platforms' blocks stay out).
if not apple:
    # SwiftUI's modifier only: the snippets call `realtimeSession(_:)`. The rest of the Apple-only
    # lines (UIKit's uses internal helpers) .ci/apple-compile compiles inside the SDK module.
    apple_only = {"#if canImport(SwiftUI)"}
    for path in sorted((root / "Sources" / "SDK").rglob("*.swift")):
        lines = path.read_text().splitlines()
        if not any(line.strip() in apple_only for line in lines):
            continue
        text = []
        for line in lines:
            if line.strip() in apple_only:
                line = "#if true"
            elif re.match(r"^(public )?import (SwiftUI|UIKit)$", line.strip()):
                line = "import AppleStandIns"
            elif re.match(r"^public import ", line.strip()):
                line = line.replace("public import ", "import ")
            text.append(line)
        header = f"// From {path.relative_to(root)} (Apple-only, against the stand-ins)\nimport SDK\nimport ConnectionPolicy\n"
        target = out / "Sources" / "Snippets" / f"AppleOnly_{path.stem.replace('+', '_')}.swift"
        target.write_text(header + "\n".join(text) + "\n")
        count += 1
        print(f"apple-only {path.relative_to(root)} -> {target.relative_to(out)}")
print(f"snippets: {count}")
