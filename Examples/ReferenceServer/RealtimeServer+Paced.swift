public import SDK

extension RealtimeServer {
    /// Publishes `data` to `channel` `count` times, paced as a chat is: in groups of 1, 2, 3, 1,
    /// 2, 3 … up to `largestGroup` messages, each group one write, `gap` apart (so a client's
    /// socket reads a few frames at a time, and each read costs its wake-ups). Returns at once;
    /// the messages go out from a task of their own.
    public func publishPaced(_ data: JSONValue, to channel: String, count: Int, largestGroup: Int, gap: Duration = .microseconds(300)) {
        let largest = max(1, largestGroup)
        Task {
            var left = count
            var group = 1
            while left > 0 {
                let size = min(group, left)
                guard (try? publish(data, to: channel, count: size)) != nil else { return }
                left -= size
                group = group % largest + 1
                try? await Task.sleep(for: gap)
            }
        }
    }
}
