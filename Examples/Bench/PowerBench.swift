import ConnectionPolicy
import SDK
import SDKTesting

/// `bench power`: what staying connected costs over a simulated hour, on the test clock, for
/// each mode, in the foreground (idle) and in the background, on a normal, a constrained and an
/// expensive path, with and without Low Power Mode — with today's rules (`PowerSaving.off`:
/// the settings' heartbeat in every condition) beside the default (`PowerSaving.standard`), in
/// the same run. Counted: frames and bytes each way, sockets opened and closed, timer wake-ups,
/// and radio-high seconds.
///
/// The radio model: every frame sent or received keeps the cellular radio in its high-power
/// state for the 10 s that follow (LTE's inactivity tail, about 10 s: Huang et al., "A Close
/// Examination of Performance and Power Characteristics of 4G LTE Networks", MobiSys 2012).
/// Time is counted in 1 s steps: a second is radio-high when a frame (a close included) went
/// either way in it or in the 9 before it.
struct PowerBench {
    let minutes: Int

    struct Scenario {
        let auto: Bool
        let foreground: Bool
        let path: String
        let conditions: DeviceConditions
    }

    struct Cost: Equatable {
        var framesSent = 0, framesReceived = 0, bytes = 0, opens = 0, closes = 0, wakeUps = 0, radioHighSeconds = 0
        var livenessBound: Duration?
    }

    static let paths: [(String, DeviceConditions)] = [
        ("normal", DeviceConditions(interface: .wifi)),
        ("constrained", DeviceConditions(isConstrained: true, interface: .wifi)),
        ("expensive", DeviceConditions(isExpensive: true, interface: .cellular)),
    ]

    func run() async throws {
        var scenarios: [Scenario] = []
        for auto in [true, false] {
            for foreground in [true, false] {
                for (name, path) in Self.paths {
                    for lowPower in [false, true] {
                        var conditions = path
                        conditions.isLowPowerModeEnabled = lowPower
                        scenarios.append(Scenario(auto: auto, foreground: foreground, path: name + (lowPower ? "+low-power" : ""), conditions: conditions))
                    }
                }
            }
        }
        print("  \(minutes) simulated minutes each; radio-high: 10 s after every frame either way (1 s steps)")
        print("  mode    state       path                   rules     sent  recv   bytes opens closes wakes   radio-high  bound")
        var worstSavingRatio = 0.0
        var normalRatio = 0.0
        for scenario in scenarios {
            let today = try await measure(scenario, rules: .off)
            let standard = try await measure(scenario, rules: .standard)
            for (rules, cost) in [("today", today), ("standard", standard)] {
                print("  " + row(scenario, rules, cost))
            }
            guard scenario.foreground, today.radioHighSeconds > 0 else { continue }
            let ratio = Double(standard.radioHighSeconds) / Double(today.radioHighSeconds)
            if scenario.conditions.asksToSave {
                worstSavingRatio = max(worstSavingRatio, ratio)
            } else {
                normalRatio = max(normalRatio, ratio)
            }
        }
        print(
            "power: minutes=\(minutes) foreground_idle_radio_ratio_saving_max=\(worstSavingRatio.formatted(2)) "
                + "foreground_idle_radio_ratio_normal=\(normalRatio.formatted(2))"
        )
    }

    private func row(_ scenario: Scenario, _ rules: String, _ cost: Cost) -> String {
        func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
            let padding = String(repeating: " ", count: max(0, width - text.count))
            return left ? padding + text : text + padding
        }
        let share = Double(cost.radioHighSeconds) / Double(minutes * 60) * 100
        let bound = cost.livenessBound.map { "\($0.components.seconds) s" } ?? "-"
        return pad(scenario.auto ? "auto" : "manual", 8) + pad(scenario.foreground ? "foreground" : "background", 12) + pad(scenario.path, 23)
            + pad(rules, 9) + pad("\(cost.framesSent)", 5, left: true) + pad("\(cost.framesReceived)", 6, left: true)
            + pad("\(cost.bytes)", 8, left: true) + pad("\(cost.opens)", 6, left: true) + pad("\(cost.closes)", 7, left: true)
            + pad("\(cost.wakeUps)", 6, left: true) + pad("\(cost.radioHighSeconds) s \(share.formatted(1)) %", 15, left: true) + pad(bound, 7, left: true)
    }

    /// One simulated `minutes` of `scenario` under `rules`, with the production defaults
    /// otherwise (heartbeat 25 s / 10 s, Manual's watchdog 30 s): counted from the moment the
    /// app is connected and subscribed, in the foreground (and, for the background, moves there).
    private func measure(_ scenario: Scenario, rules: PowerSaving) async throws -> Cost {
        let server = TestServer()
        let clock = TestClock()
        let lifecycle = LifecycleDriver()
        let conditions = ConditionsDriver(scenario.conditions)
        let settings = try AppSettings.Builder().serverURL("ws://127.0.0.1:9/").token("bench").autoEstablishSocketConnection(scenario.auto)
            .powerSaving(rules).logger(.silent).build()
        let session = Session(settings: settings, transport: server.transport(), clock: clock, lifecycle: lifecycle, conditions: conditions)
        var cost = Cost()
        try await withRunningSession(session) { status in
            if !scenario.auto { try await session.connect() }
            try await status.waitFor(.connected)
            _ = try await session.subscribe(to: "news")
            await clock.settle()
            // Counted from here: the move to the background (its close) is part of its cost.
            let start = (server.traffic, server.acceptedConnectionCount, clock.wakeUps)
            var lastTrafficStep = Int.min / 2
            if !scenario.foreground {
                await lifecycle.background()
                await clock.settle()
                if server.traffic != start.0 { lastTrafficStep = 0 }
            }
            let liveness = await session.liveness
            cost.livenessBound = scenario.foreground ? liveness.heartbeat?.bound : nil
            var last = server.traffic
            for step in 1...(minutes * 60) {
                await clock.advance(by: .seconds(1))
                let now = server.traffic
                if now != last { lastTrafficStep = step }
                last = now
                if step - lastTrafficStep < 10 { cost.radioHighSeconds += 1 }
            }
            cost.framesSent = last.clientFrames - start.0.clientFrames
            cost.framesReceived = last.serverFrames - start.0.serverFrames
            cost.bytes = last.clientBytes + last.serverBytes - start.0.clientBytes - start.0.serverBytes
            cost.opens = server.acceptedConnectionCount - start.1
            cost.closes = last.closes - start.0.closes
            cost.wakeUps = clock.wakeUps - start.2
        }
        return cost
    }
}
