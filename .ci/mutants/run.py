#!/usr/bin/env python3
"""Applies each deliberate fault of mutants.txt to a copy of the tree and runs the tests that must
catch it; prints "N of M mutants killed" and exits non-zero unless every mutant was killed.

A mutant is killed when at least one of the tests it names fails (a failed expectation, or a
suite's time limit). Its fault must apply exactly once and compile: a mutant whose text no longer
matches the source is an error of the list, never a pass.

The copy holds only the library targets and the fast unit suites (ConnectionPolicyTests,
SDKTests, SDKTestingTests), built once and then incrementally per mutant; no server is started.

Usage: .ci/mutants/run.py [--only NAME[,NAME…]] [--list]
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
WORK = os.path.join(ROOT, ".build-mutants")
TREE = os.path.join(WORK, "tree")
COPIED = [
    "Sources/ConnectionPolicy", "Sources/SDK", "Sources/SDKTesting",
    "Tests/ConnectionPolicyTests", "Tests/SDKTests", "Tests/SDKTestingTests",
]
TEST_TIMEOUT = 240  # seconds per mutant's test run; the suites' own time limits are shorter


class Mutant:
    def __init__(self, name):
        self.name = name
        self.what = ""
        self.file = ""
        self.find = []
        self.replace = []
        self.tests = []

    def check(self):
        missing = [k for k in ("what", "file", "find", "replace", "tests") if not getattr(self, k)]
        if missing:
            raise SystemExit(f"mutants.txt: mutant {self.name} lacks {', '.join(missing)}")


def parse(path):
    """mutants.txt: blocks that start with `mutant NAME`; `what:`, `file:`, `killed by:` take one
    line each (`killed by:` may repeat); `find:` and `replace:` take the line after the colon and
    may repeat, each adding one line."""
    mutants, current = [], None
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line.startswith("mutant "):
                current = Mutant(line[len("mutant "):].strip())
                mutants.append(current)
                continue
            match = re.match(r"\s+(what|file|find|replace|killed by):(.*)$", line)
            if not match or current is None:
                raise SystemExit(f"mutants.txt:{number}: cannot read {line!r}")
            key, value = match.group(1), match.group(2)
            if key in ("find", "replace"):
                getattr(current, key).append(value[1:] if value.startswith(" ") else value)
            elif key == "killed by":
                current.tests.append(value.strip())
            else:
                setattr(current, key, value.strip())
    for mutant in mutants:
        mutant.check()
    names = [m.name for m in mutants]
    if len(set(names)) != len(names):
        raise SystemExit("mutants.txt: a name is used twice")
    return mutants


def manifest():
    """The copy's Package.swift: the real manifest's Swift settings and its property-testing
    package, with only the library targets and the fast unit suites."""
    with open(os.path.join(ROOT, "Package.swift"), encoding="utf-8") as handle:
        real = handle.read()
    settings = re.search(r"^let strictSettings: \[SwiftSetting\] = \[.*?^\]$", real, re.S | re.M)
    platforms = re.search(r"^\s*platforms: \[.*?\],$", real, re.M)
    property_based = re.search(r'\.package\(url: "[^"]*swift-property-based[^"]*", [^\n]*\)', real)
    if not (settings and platforms and property_based):
        raise SystemExit("mutants: Package.swift no longer has the parts the copy's manifest takes from it")
    return f"""// swift-tools-version:6.1
// Written by .ci/mutants/run.py from Package.swift: the library targets and the fast unit suites.
import PackageDescription

{settings.group(0)}

let package = Package(
    name: "TetherMutants",
{platforms.group(0)}
    dependencies: [{property_based.group(0)}],
    targets: [
        .target(name: "ConnectionPolicy", swiftSettings: strictSettings),
        .target(name: "SDK", dependencies: ["ConnectionPolicy"], swiftSettings: strictSettings),
        .target(name: "SDKTesting", dependencies: ["SDK", "ConnectionPolicy"], swiftSettings: strictSettings),
        .testTarget(
            name: "ConnectionPolicyTests",
            dependencies: ["ConnectionPolicy", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "SDKTests", dependencies: ["SDK", "SDKTesting", "ConnectionPolicy"], swiftSettings: strictSettings),
        .testTarget(name: "SDKTestingTests", dependencies: ["SDK", "SDKTesting", "ConnectionPolicy"], swiftSettings: strictSettings),
    ]
)
"""


def sync_tree():
    os.makedirs(TREE, exist_ok=True)
    for part in COPIED:
        source, target = os.path.join(ROOT, part), os.path.join(TREE, part)
        if os.path.isdir(target):
            shutil.rmtree(target)
        shutil.copytree(source, target)
    with open(os.path.join(TREE, "Package.swift"), "w", encoding="utf-8") as handle:
        handle.write(manifest())


def descendants(pid):
    """Every process below `pid`, from /proc (SwiftPM starts the `*.xctest` runner in a process
    group of its own: killing `swift test`'s group misses it)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, encoding="utf-8", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def kill_tree(pid):
    """SIGKILLs `pid`, its process group and every process below it, whatever group it is in."""
    below = descendants(pid)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    for child in [pid] + below:
        try:
            os.kill(child, signal.SIGKILL)
        except OSError:
            pass


def run(command, timeout=None):
    """Runs `command` in the copy, in a process group of its own; a timeout ends the whole tree
    below it (`kill_tree`), the test runner included."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=TREE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
        return process.returncode, output, time.monotonic() - started
    except subprocess.TimeoutExpired:
        kill_tree(process.pid)
        output, _ = process.communicate()
        return None, output, time.monotonic() - started


def build():
    return run(["swift", "build", "--build-tests"])


class Applied:
    """Applies `mutant` to the copy for the `with` block and builds it; `problem` says why it
    could not be (its text not found exactly once, or it does not compile)."""

    def __init__(self, mutant):
        self.mutant = mutant
        self.path = os.path.join(TREE, mutant.file)
        self.problem = None
        self.build_seconds = 0.0

    def __enter__(self):
        with open(self.path, encoding="utf-8") as handle:
            self.original = handle.read()
        find, replace = "\n".join(self.mutant.find), "\n".join(self.mutant.replace)
        count = self.original.count(find)
        if count != 1:
            self.problem = f"its text is found {count} times in {self.mutant.file} (the list is stale)"
            return self
        with open(self.path, "w", encoding="utf-8") as handle:
            handle.write(self.original.replace(find, replace))
        status, output, self.build_seconds = build()
        if status != 0:
            errors = [l for l in output.splitlines() if "error:" in l][:5]
            self.problem = f"does not compile: {' | '.join(errors)}"
        return self

    def __exit__(self, *_):
        with open(self.path, "w", encoding="utf-8") as handle:
            handle.write(self.original)
        return False


def test_filter(tests):
    # Swift Testing's ids: Target.Suite/function(arguments:); a name may omit the "()".
    return "|".join(re.escape(t) if t.endswith(")") else re.escape(t) + r"\(" for t in tests)


def run_tests(tests):
    return run(["swift", "test", "--skip-build", "--filter", test_filter(tests)], timeout=TEST_TIMEOUT)


def failed_names(output):
    return sorted(set(re.findall(r'^✘ Test (?!run )(?:"[^"]*"|\S+)', output, re.M)))


def discover(mutants):
    """Which tests fail under each mutant (to choose the ones the list names)."""
    report = os.path.join(WORK, "discover.xml")
    for mutant in mutants:
        with Applied(mutant) as applied:
            if applied.problem:
                print(f"  ? {mutant.name}: {applied.problem}")
                continue
            for leftover in (report, report.replace(".xml", "-swift-testing.xml")):
                if os.path.exists(leftover):
                    os.remove(leftover)
            status, output, _ = run(["swift", "test", "--skip-build", "--xunit-output", report], timeout=TEST_TIMEOUT)
            xml = ""
            candidate = report.replace(".xml", "-swift-testing.xml")
            if os.path.exists(candidate):
                with open(candidate, encoding="utf-8") as handle:
                    xml = handle.read()
            failing = re.findall(r'<testcase classname="([^"]+)" name="([^"]+)"[^>]*>\s*<failure', xml)
            print(f"{mutant.name}: status {status}; failing: " + ", ".join(f"{c}/{n}" for c, n in failing))
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="names of the mutants to run, comma-separated")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--discover", action="store_true", help="run every fast suite under each mutant and print which tests fail")
    args = parser.parse_args()
    mutants = parse(os.path.join(HERE, "mutants.txt"))
    if args.list:
        for mutant in mutants:
            print(f"{mutant.name}: {mutant.what}  [{', '.join(mutant.tests)}]")
        return 0
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {m.name for m in mutants}
        if unknown:
            raise SystemExit(f"unknown mutants: {', '.join(sorted(unknown))}")
        mutants = [m for m in mutants if m.name in wanted]

    sync_tree()
    status, output, seconds = build()
    if status != 0:
        print(output[-6000:])
        raise SystemExit("mutants: the unmutated copy does not build")
    print(f"mutants: the copy built in {seconds:.0f} s")
    # Every named test must pass unmutated, or its failure under a mutant would prove nothing.
    if args.discover:
        return discover(mutants)
    every_test = sorted({t for m in mutants for t in m.tests})
    status, output, seconds = run_tests(every_test)
    if status != 0:
        print(output[-6000:])
        raise SystemExit("mutants: a named test fails on the unmutated code")
    ran = len(re.findall(r"^✔ Test .* passed", output, re.M))
    if ran < len(every_test):
        print(output[-6000:])
        raise SystemExit(f"mutants: only {ran} of the {len(every_test)} named tests ran: a name in mutants.txt is wrong")
    print(f"mutants: the {len(every_test)} named tests pass unmutated ({ran} test runs, {seconds:.0f} s)")

    killed, problems = 0, []
    for mutant in mutants:
        with Applied(mutant) as applied:
            if applied.problem:
                problems.append(f"{mutant.name}: {applied.problem}")
                print(f"  ? {mutant.name}: {applied.problem}")
                continue
            build_seconds = applied.build_seconds
            status, output, test_seconds = run_tests(mutant.tests)
            if status is None:
                killed += 1
                print(f"  ✔ {mutant.name}: killed (the tests did not finish within {TEST_TIMEOUT} s) — {mutant.what}")
            elif status != 0:
                killed += 1
                failures = failed_names(output)
                how = f"{len(failures)} failing test(s)" if failures else "the test process crashing"
                print(f"  ✔ {mutant.name}: killed by {how} in {test_seconds:.0f} s (built in {build_seconds:.0f} s) — {mutant.what}")
            else:
                problems.append(f"{mutant.name}: SURVIVED — {mutant.what}; its tests all passed: {', '.join(mutant.tests)}")
                print(f"  ✘ {mutant.name}: survived — {mutant.what}")

    print(f"\n{killed} of {len(mutants)} mutants killed")
    for problem in problems:
        print(f"  {problem}")
    return 0 if killed == len(mutants) and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
