/// What the kill mode checks once a schedule's last launch is done, from what the server applied
/// (the observer's view, in the server's order) and what each launch of the app wrote:
///
/// - **Publishes**: none is applied twice; one the app saw acknowledged is applied; one the
///   store held (its write returned) is applied by the end or ends failed in a later launch —
///   never lost; on a protocol with keys none is `mayHaveBeenApplied`; a publish gets at most
///   one outcome across every launch; the store always opens, durable.
/// - **Messages**, per channel: each launch is handed them in the server's order with none
///   skipped; a relaunch starts no later than the message after the last one any earlier
///   launch was handed (nothing lost across a kill); every message an earlier launch was
///   handed that comes again is flagged `isRedelivery`; the last launch gets every message up to
///   the runner's `final` one.
///
/// On MQTT (`atLeastOnce`) a QoS 1 publish on the wire when the app was killed is sent again by
/// the relaunch and the broker applies both (MQTT 3.1.1 §4.3.2: a PUBLISH is a new
/// publication whatever its DUP flag): such a publish — one a later launch lists as an earlier
/// publish — may be applied more than once, and its copies are left out of the message checks
/// (which copy a launch gets first depends on the kill); the publish checks still hold it to
/// being applied.
struct KillChecks {
    let applied: [String: [String]]
    let channels: [String]
    let launches: [[String]]
    var atLeastOnce = false
    /// Publishes a relaunch sent again (MQTT: they may be applied twice).
    private var resent = Set<String>()
    private(set) var violations: [String] = []
    private(set) var publishCount = 0
    private(set) var messageCount = 0
    private(set) var redeliveryCount = 0

    init(applied: [String: [String]], channels: [String], launches: [[String]], atLeastOnce: Bool) {
        self.applied = applied
        self.channels = channels
        self.launches = launches
        self.atLeastOnce = atLeastOnce
    }

    mutating func run() {
        checkPublishes()
        for channel in channels { checkMessages(on: channel) }
    }

    private mutating func checkPublishes() {
        var count: [String: Int] = [:]
        for list in applied.values { for data in list where data.hasPrefix("P-") { count[data, default: 0] += 1 } }
        var started = Set<String>(), acked = Set<String>(), durable = Set<String>(), failedLater = Set<String>()
        var outcomes: [String: Int] = [:]
        for (index, lines) in launches.enumerated() {
            let launch = index + 1
            if let open = lines.first(where: { $0.hasPrefix("open ") }), open != "open durable loss=0" {
                violations.append("launch \(launch): the store did not open whole: \(open)")
            }
            for line in lines {
                let words = line.split(separator: " ").map(String.init)
                guard words.count >= 2 else { continue }
                let data = words[1]
                switch words[0] {
                case "start": started.insert(data)
                case "acked": acked.insert(data)
                case "durable": durable.insert(data)
                case "outcome":
                    outcomes[data, default: 0] += 1
                    if words.count > 2, words[2].hasPrefix("failed") { failedLater.insert(data) }
                case "earlier", "ended":
                    resent.insert(data)
                    if words.count > 2, words[2] == "mayHaveBeenApplied" {
                        violations.append("launch \(launch): \(data) is mayHaveBeenApplied on a protocol with keys")
                    }
                    if words.count > 2, words[2].hasPrefix("failed") { failedLater.insert(data) }
                    if line.hasPrefix("ended"), words.count > 2, words[2] == "waiting" {
                        violations.append("launch \(launch) (the last): \(data) still waits at the end")
                    }
                case "error": violations.append("launch \(launch): \(line)")
                default: break
                }
            }
        }
        publishCount = started.count
        for (data, times) in count where times > 1 && !(atLeastOnce && resent.contains(data)) { violations.append("\(data) was applied \(times) times") }
        for data in acked where (count[data] ?? 0) < 1 || (count[data] != 1 && !(atLeastOnce && resent.contains(data))) {
            violations.append("\(data) was acknowledged to the app but applied \(count[data] ?? 0) times")
        }
        for data in durable where (count[data] ?? 0) == 0 && !failedLater.contains(data) {
            violations.append("\(data) was kept by the store but never applied, and no launch was told it failed (lost)")
        }
        for (data, times) in outcomes where times > 1 { violations.append("\(data) got \(times) outcomes across launches") }
        for data in acked where outcomes[data] != nil { violations.append("\(data) was acknowledged to its own launch's await, and told again as an earlier publish's outcome") }
        for data in count.keys where !started.contains(data) { violations.append("\(data) was applied but no launch published it") }
    }

    private mutating func checkMessages(on channel: String) {
        // The server's order; the copies of a publish a relaunch sent again (MQTT) left out.
        var order: [String] = []
        var index: [String: Int] = [:]
        for data in applied[channel] ?? [] {
            if atLeastOnce && resent.contains(data) { continue }
            if index[data] != nil {
                if !(atLeastOnce && resent.contains(data)) { violations.append("\(channel): \(data) applied twice") }
                continue
            }
            index[data] = order.count
            order.append(data)
        }
        // The highest position any earlier launch was handed (-1: none yet).
        var seen = -1
        for (number, lines) in launches.enumerated() {
            let launch = number + 1
            var previous: Int?
            var last = seen
            for line in lines where line.hasPrefix("recv \(channel) ") {
                let words = line.split(separator: " ").map(String.init)
                if words.count == 4, atLeastOnce, resent.contains(words[3]) { continue }
                guard words.count == 4, let position = index[words[3]] else {
                    violations.append("launch \(launch): \(channel) handed something the server never applied: \(line)")
                    continue
                }
                messageCount += 1
                let flagged = words[2] == "r"
                if flagged { redeliveryCount += 1 }
                if let previous, position != previous + 1 {
                    violations.append("launch \(launch): \(channel) handed \(order[position]) (#\(position)) after #\(previous): \(position <= previous ? "again or out of order" : "skipped \(position - previous - 1)")")
                } else if previous == nil, seen < 0, position != 0 {
                    violations.append("launch \(launch): \(channel) began at #\(position): the \(position) published after the app first held it are lost")
                } else if previous == nil, seen >= 0, position > seen + 1 {
                    violations.append("launch \(launch): \(channel) resumed at #\(position), after the last one handed before (#\(seen)): \(position - seen - 1) lost across the kill")
                }
                if position <= seen && !flagged {
                    violations.append("launch \(launch): \(channel) handed #\(position) again (an earlier launch had it) without the redelivery flag")
                }
                previous = position
                last = max(last, position)
            }
            seen = last
        }
        if let final = index["final"], seen < final {
            violations.append("\(channel): the last launch was handed up to #\(seen), not the final message (#\(final))")
        }
    }
}
