#!/usr/bin/env python3
"""Counts the Apple-only lines of the library products and checks that .ci/apple-compile compiled
every one: a line is counted when an Apple platform compiles it and it stands behind an `#if`
that names an Apple framework or platform (`canImport(UIKit)`, `canImport(Darwin) ||
canImport(FoundationNetworking)`, `os(watchOS)`, … — the conditions evaluated per platform);
Linux may compile it too, against other declarations. It is compiled when one of the two
shapes apple-compile builds (iOS with UIKit, macOS with AppKit, on this Linux compiler) has it
active, or the package's Linux build does (a fallback such as watchOS's `#else`). Lines none can reach are allowed only if uncompiled.txt names their file and
condition, with why. Prints the count and exits non-zero on a line left out.

Usage: count.py ROOT
"""
import os
import re
import sys

PRODUCTS = ["Sources/ConnectionPolicy", "Sources/SDK", "Sources/SDKTesting"]
EVERYWHERE = {"Foundation", "Dispatch", "Swift", "_Concurrency"}
APPLE = {"Darwin", "UIKit", "AppKit", "Network", "Security", "SwiftUI", "os", "BackgroundTasks", "Combine"}


def platform(name, modules, os_name, environment=None):
    return {"name": name, "modules": EVERYWHERE | modules, "os": os_name, "env": environment}


LINUX = platform("Linux", {"Glibc", "FoundationNetworking"}, "Linux")
APPLE_PLATFORMS = [
    platform("iOS", APPLE - {"AppKit"}, "iOS"),
    platform("macOS", APPLE - {"UIKit"}, "macOS"),
    platform("Mac Catalyst", APPLE, "iOS", "macCatalyst"),
    platform("tvOS", APPLE - {"AppKit", "BackgroundTasks"}, "tvOS"),
    platform("visionOS", APPLE - {"AppKit"}, "visionOS"),
    platform("watchOS", APPLE - {"AppKit"} | {"WatchKit"}, "watchOS"),
]
# What apple-compile builds: this Linux compiler (os(Linux)), the stub modules on the import path,
# FoundationNetworking hidden.
STUBS = {"Darwin", "Network", "Security", "SwiftUI", "os"}
SHAPES = [platform("iOS shape", STUBS | {"UIKit"}, "Linux"), platform("macOS shape", STUBS | {"AppKit"}, "Linux")]


def evaluate(condition, target):
    def replace(match):
        kind, arg = match.group(1), match.group(2).strip()
        if kind == "canImport":
            return str(arg.split(".")[0] in target["modules"])
        if kind == "os":
            return str(arg == target["os"])
        if kind == "targetEnvironment":
            return str(arg == target["env"])
        raise SystemExit(f"count.py: a condition it cannot read: {condition!r}")
    text = re.sub(r"(canImport|os|targetEnvironment)\s*\(([^)]*)\)", replace, condition)
    text = text.replace("&&", " and ").replace("||", " or ").replace("!", " not ")
    return bool(eval(text, {"__builtins__": {}}, {"True": True, "False": False}))


APPLE_TOKEN = re.compile(r"canImport\((%s)\)|os\((iOS|macOS|tvOS|watchOS|visionOS)\)|targetEnvironment\(macCatalyst\)" % "|".join(APPLE))


def lines_of(path, target):
    """(line number, active, innermost condition, behind an Apple condition) for each non-blank,
    non-comment, non-directive line."""
    stack = []  # (branch active, any earlier branch taken, condition text)
    result = []
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.strip()
            directive = re.match(r"#(if|elseif|else|endif)\b\s*(.*)", line)
            if directive:
                kind, condition = directive.group(1), directive.group(2).split("//")[0].strip()
                if kind == "if":
                    value = evaluate(condition, target)
                    stack.append([value, value, condition])
                elif kind == "elseif":
                    value = evaluate(condition, target) and not stack[-1][1]
                    stack[-1] = [value, stack[-1][1] or value, condition]
                elif kind == "else":
                    stack[-1] = [not stack[-1][1], True, "else of " + stack[-1][2]]
                else:
                    stack.pop()
                continue
            if not line or line.startswith("//"):
                continue
            behind_apple = any(APPLE_TOKEN.search(entry[2]) for entry in stack)
            result.append((number, all(entry[0] for entry in stack), stack[-1][2] if stack else None, behind_apple))
    return result


def main():
    root = sys.argv[1]
    allowed = {}
    with open(os.path.join(root, ".ci/apple-stubs/uncompiled.txt"), encoding="utf-8") as handle:
        for raw in handle:
            if raw.strip() and not raw.startswith("#"):
                place, why = raw.split(" — ", 1)
                allowed[place.strip()] = why.strip()
    files = sorted(os.path.join(d, f) for product in PRODUCTS for d, _, fs in os.walk(os.path.join(root, product)) for f in fs if f.endswith(".swift"))
    apple_only = compiled = allowed_count = 0
    touched = set()
    missing = []
    for path in files:
        relative = os.path.relpath(path, root)
        linux = lines_of(path, LINUX)
        apple = [lines_of(path, target) for target in APPLE_PLATFORMS]
        shapes = [lines_of(path, target) for target in SHAPES]
        for index, (number, on_linux, condition, behind_apple) in enumerate(linux):
            if not behind_apple or not any(platform_lines[index][1] for platform_lines in apple):
                continue
            apple_only += 1
            touched.add(relative)
            # A shape compiled it, or the package's own Linux build does (a fallback branch, such as
            # watchOS's `#else`, that names only the SDK's own declarations).
            if on_linux or any(shape_lines[index][1] for shape_lines in shapes):
                compiled += 1
            elif f"{relative} #if {condition}" in allowed:
                allowed_count += 1
            else:
                missing.append(f"{relative}:{number} (#if {condition})")
    stub_dir = os.path.join(root, ".ci/apple-stubs")
    declarations = sum(open(os.path.join(stub_dir, f), encoding="utf-8").read().count("// https://developer.apple.com") for f in os.listdir(stub_dir) if f.endswith(".swift"))
    if missing:
        print("apple-compile: Apple-only lines no shape compiled (compile them, or name them in .ci/apple-stubs/uncompiled.txt with why):")
        for place in missing:
            print("  " + place)
        sys.exit(1)
    unreachable = f"; {allowed_count} unreachable here, each named with why in .ci/apple-stubs/uncompiled.txt" if allowed_count else ""
    print(f"apple-compile: {compiled} of {apple_only - allowed_count} lines behind Apple-only #ifs compiled (100 %) in {len(touched)} files{unreachable}; "
          f"{declarations} stub declarations, each from its page of Apple's documentation")


main()
