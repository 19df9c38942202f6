import Foundation

// swift run -c release bench <scenario> [options]
//   recovery [--subscriptions N] [--rtt-ms MS] [--runs R] [--sweep]
// Each scenario prints its figures and ends with one summary line.

let usage = """
    usage: bench recovery [--subscriptions N] [--rtt-ms MS] [--runs R] [--sweep]
    """

let arguments = Array(CommandLine.arguments.dropFirst(2))
guard let scenario = CommandLine.arguments.dropFirst().first else {
    print(usage)
    exit(2)
}

func option(_ name: String, default value: Int) -> Int {
    let arguments = Array(CommandLine.arguments.dropFirst(2))
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let number = Int(arguments[index + 1]) else { return value }
    return number
}

do {
    switch scenario {
    case "recovery":
        let rtt = option("--rtt-ms", default: 20)
        let runs = option("--runs", default: 5)
        let counts = arguments.contains("--sweep") ? [1, 10, 100, 1000] : [option("--subscriptions", default: 100)]
        for count in counts {
            try await RecoveryBench(subscriptions: count, rtt: .milliseconds(rtt), runs: runs).run()
        }
    default:
        print(usage)
        exit(2)
    }
} catch {
    print("bench: failed: \(error)")
    exit(1)
}
