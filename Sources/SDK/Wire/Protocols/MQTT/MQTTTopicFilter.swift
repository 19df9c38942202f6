/// MQTT topic names and filters (MQTT §4.7): levels split by `/`, `+` one level, `#` the rest.
package enum MQTTTopicFilter {
    /// Whether `filter` is one a broker accepts: 1 to 65,535 bytes, `+` and `#` each a whole
    /// level, `#` only last.
    package static func isValid(filter: String) -> Bool {
        guard !filter.isEmpty, filter.utf8.count <= 65_535, !filter.utf8.contains(0) else { return false }
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#"), level != "#" || index != levels.count - 1 { return false }
            if level.contains("+"), level != "+" { return false }
        }
        return true
    }

    /// Whether `topic` can be published to: a valid name without wildcards.
    package static func isValid(topic: String) -> Bool {
        !topic.isEmpty && topic.utf8.count <= 65_535 && !topic.utf8.contains(0) && !topic.contains("+") && !topic.contains("#")
    }

    /// Whether a message published to `topic` is delivered to a subscription to `filter`
    /// (a wildcard at the start does not match a topic starting with `$`).
    package static func matches(_ filter: String, topic: String) -> Bool {
        if topic.hasPrefix("$"), filter.hasPrefix("+") || filter.hasPrefix("#") { return false }
        let filterLevels = filter.split(separator: "/", omittingEmptySubsequences: false)
        let topicLevels = topic.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in filterLevels.enumerated() {
            if level == "#" { return true }
            guard index < topicLevels.count else {
                return false
            }
            if level != "+", level != topicLevels[index] { return false }
        }
        return filterLevels.count == topicLevels.count
    }
}
