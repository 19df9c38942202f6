import ConnectionPolicy
import Foundation
@testable import SDK
import Testing

/// Tokens that outlive their first hour (supabase-transcripts.md §6 and fact 10): asked for
/// before they expire, pushed in band with no reply awaited; a channel closed for an expired
/// token rejoined with a fresh one. And the limits (§8b, §8c): a 403 that lifts, a channel closed
/// for its message rate.
extension SupabaseMachineTests {
    /// An unsigned JWT with `exp` (Unix seconds): the client reads the claim, the server checks.
    static func jwt(exp: Int64, role: String = "authenticated") -> String {
        func part(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return part(#"{"alg":"HS256","typ":"JWT"}"#) + "." + part(#"{"role":"\#(role)","exp":\#(exp)}"#) + ".c2ln"
    }

    static let now: Int64 = 1_800_000_000_000
    static let tokenTimer = PhoenixChannels.tokenTimer

    /// A machine on its own wall clock (tests run in parallel: the suite's shared one moves),
    /// started with `token`.
    static func machine(clock: Locked<Int64>, token: String) -> PhoenixChannels.Machine {
        var machine = PhoenixChannels.Machine(configuration: PhoenixChannels(credentials: .none, supabase: .init(apiKey: "anon", now: { clock.withLock { $0 } })), continuing: nil)
        // Ready with the keep-alive, and the refresh timer only for a token with an exp.
        let start = machine.start(credentials: Secret(token))
        expectKinds(start, JWTExpiry.seconds(of: token) == nil ? [.ready, .arm] : [.ready, .arm, .arm])
        return machine
    }

    @Test("a JWT's exp is read; anything else has none")
    func jwtExpiry() {
        #expect(JWTExpiry.seconds(of: Self.jwt(exp: 1_800_003_600)) == 1_800_003_600)
        #expect(JWTExpiry.seconds(of: "not-a-jwt") == nil)
        #expect(JWTExpiry.seconds(of: "a.b.c") == nil)
        #expect(JWTExpiry.hasExpired(Self.jwt(exp: 1_800_000_000), nowMilliseconds: Self.now))
        #expect(!JWTExpiry.hasExpired(Self.jwt(exp: 1_800_000_001), nowMilliseconds: Self.now))
        #expect(!JWTExpiry.hasExpired("sb_publishable_key", nowMilliseconds: Self.now), "not a JWT: not known to be expired")
    }

    @Test("the token provider is asked a minute before the token's exp (halfway when less than two minutes are left); a token that is not a JWT is not asked for ahead")
    func refreshAhead() {
        let clock = Locked(Self.now)
        let configuration = PhoenixChannels(credentials: .none, supabase: .init(apiKey: "anon", now: { clock.withLock { $0 } }))
        var hour = PhoenixChannels.Machine(configuration: configuration, continuing: nil)
        #expect(hour.start(credentials: Secret(Self.jwt(exp: 1_800_003_600))).last == .arm(Self.tokenTimer, after: .seconds(3540)))
        var short = PhoenixChannels.Machine(configuration: configuration, continuing: nil)
        #expect(short.start(credentials: Secret(Self.jwt(exp: 1_800_000_090))).last == .arm(Self.tokenTimer, after: .seconds(45)))
        var opaque = PhoenixChannels.Machine(configuration: configuration, continuing: nil)
        #expect(opaque.start(credentials: Secret("opaque")) == [.ready, .arm(PhoenixChannels.keepAliveTimer, after: .seconds(30))])
        #expect(PhoenixChannels.Machine.refreshDelay(expiresIn: 120_001) == .milliseconds(60_001))
        #expect(PhoenixChannels.Machine.refreshDelay(expiresIn: 120_000) == .milliseconds(60_000))
        #expect(PhoenixChannels.Machine.refreshDelay(expiresIn: 0) == .zero)
    }

    @Test("at the refresh: credentialsNeeded; the answer is pushed as access_token to every joined channel with no reply awaited, and the next refresh armed for the new token")
    func refreshPushed() {
        let clock = Locked(Self.now)
        var machine = Self.machine(clock: clock, token: Self.jwt(exp: 1_800_003_600))
        expectKinds(machine.perform(.subscribe(1, Topic("tok"), resume: nil)), [.send])
        expectKinds(machine.receive(.text(#"["1","1","realtime:tok","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)), [.subscribed])
        #expect(machine.timerFired(Self.tokenTimer) == [.credentialsNeeded])
        clock.withLock { $0 += 3_540_000 }
        let fresh = Self.jwt(exp: 1_800_007_200)
        let pushed = machine.perform(.credentials(Secret(fresh)))
        #expect(PhoenixMachineTests.frames(pushed) == [PhoenixMachineTests.message("1", "2", "realtime:tok", "access_token", ["access_token": .string(fresh)])])
        #expect(PhoenixMachineTests.others(pushed) == [.arm(Self.tokenTimer, after: .seconds(3600))], "its exp is 61 min away: asked in 60")
        #expect(machine.pending.isEmpty, "an accepted access_token gets no reply: nothing waits for one")
        let same = machine.perform(.credentials(Secret(fresh)))
        #expect(PhoenixMachineTests.others(same).isEmpty, "the same token: not armed again")
    }

    @Test("a channel closed for an expired token (§6 tok2: system 'Token has expired 0 seconds ago', then phx_close) asks for a fresh token and rejoins with it; the subscription stays")
    func expiredTokenRejoins() {
        var machine = Self.machine(clock: Locked(Self.now), token: "opaque-1")
        expectKinds(machine.perform(.subscribe(1, Topic("tok2"), resume: nil)), [.send])
        expectKinds(machine.receive(.text(#"["1","1","realtime:tok2","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)), [.subscribed])
        let expiry = #"["1",null,"realtime:tok2","system",{"channel":"tok2","extension":"system","message":"Token has expired 0 seconds ago","status":"error"}]"#
        #expect(machine.receive(.text(expiry)).count == 1, "the app hears the server's word")
        #expect(machine.receive(.text(#"["1","1","realtime:tok2","phx_close",{}]"#)) == [.credentialsNeeded])
        let fresh = Self.jwt(exp: 1_800_003_600)
        let rejoin = machine.perform(.credentials(Secret(fresh)))
        let frames = PhoenixMachineTests.frames(rejoin)
        #expect(frames.map(\.event) == ["phx_join"], "the closed channel is not sent the token: it rejoins with it")
        #expect(frames.first?.joinRef == "2" && Self.payload(frames.first)?["access_token"] == .string(fresh))
        #expect(PhoenixMachineTests.others(rejoin) == [.arm(WireTimer("phoenix-rejoin-realtime:tok2"), after: .seconds(10)), .arm(Self.tokenTimer, after: .seconds(3540))])
        #expect(machine.receive(.text(#"["2","2","realtime:tok2","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#))
            == [.cancel(WireTimer("phoenix-rejoin-realtime:tok2"))])
        let after = #"[null,null,"realtime:tok2","broadcast",{"event":"m","payload":{},"type":"broadcast"}]"#
        #expect(machine.receive(.text(after)).count == 1, "delivered on the same subscription")
    }

    @Test("no valid token to rejoin with (none, or a JWT already expired): the subscription ends with the server's word and why")
    func noValidToken() {
        for answer in [nil, Secret(Self.jwt(exp: 1_799_999_990))] {
            var machine = Self.machine(clock: Locked(Self.now), token: "opaque")
            expectKinds(machine.perform(.subscribe(1, Topic("tok"), resume: nil)), [.send])
            expectKinds(machine.receive(.text(#"["1","1","realtime:tok","phx_reply",{"response":{},"status":"ok"}]"#)), [.subscribed])
            expectKinds(machine.receive(.text(#"["1",null,"realtime:tok","system",{"channel":"tok","extension":"system","message":"Token has expired 10 seconds ago","status":"error"}]"#)), [.delivery])
            expectKinds(machine.receive(.text(#"["1","1","realtime:tok","phx_close",{}]"#)), [.credentialsNeeded])
            let ended = machine.perform(.credentials(answer))
            let why = answer == nil ? "the token provider gave no token" : "the token provider's token has expired too"
            #expect(ended == [.subscriptionEnded(1, reason: "the channel closed: Token has expired 10 seconds ago; \(why)")])
        }
    }

    @Test("'Too many messages per second' then phx_close (§8c): rejoined after 1, then 2 s; the server accepts the rejoin")
    func rateLimitRejoins() {
        var machine = PhoenixMachineTests.joined(Self.supabase, topic: Topic("flood"))
        let limit = #"["1",null,"realtime:flood","system",{"channel":"flood","extension":"system","message":"Too many messages per second","status":"error"}]"#
        let rejoinTimer = WireTimer("phoenix-rejoin-realtime:flood")
        expectKinds(machine.receive(.text(limit)), [.delivery])
        #expect(machine.receive(.text(#"["1","1","realtime:flood","phx_close",{}]"#)) == [.arm(rejoinTimer, after: .seconds(1))])
        let rejoin = PhoenixMachineTests.frames(machine.timerFired(rejoinTimer))
        #expect(rejoin.map(\.event) == ["phx_join"] && rejoin.first?.joinRef == "2")
        #expect(machine.receive(.text(#"["2","2","realtime:flood","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)) == [.cancel(rejoinTimer)])
        expectKinds(machine.receive(.text(#"["2",null,"realtime:flood","system",{"channel":"flood","extension":"system","message":"Too many messages per second","status":"error"}]"#)), [.delivery])
        #expect(machine.receive(.text(#"["2","2","realtime:flood","phx_close",{}]"#)) == [.arm(rejoinTimer, after: .seconds(2))], "backing off")
    }

    @Test("a 403 at the upgrade on Supabase: with an API key valid by its exp (or not a JWT), retried after 1, 2, 4 s before it counts as rejected; an expired one at once; plain Phoenix at once")
    func refusedUpgrade() {
        func ending(apiKey: String, _ refusals: Int) -> WireEnding {
            PhoenixChannels(credentials: .none, supabase: .init(apiKey: apiKey, now: { Self.now })).ending(httpStatus: 403, refusalsInARow: refusals)
        }
        let valid = Self.jwt(exp: 1_900_000_000, role: "anon")
        #expect((1...3).map { ending(apiKey: valid, $0).disposition } == [.retryAfter(.seconds(1)), .retryAfter(.seconds(2)), .retryAfter(.seconds(4))])
        #expect(ending(apiKey: valid, 1).reason.code != .credentialsRejected)
        #expect(ending(apiKey: valid, 4).disposition == .doNotRetry && ending(apiKey: valid, 4).reason.code == .credentialsRejected)
        #expect(ending(apiKey: "sb_publishable_x", 2).disposition == .retryAfter(.seconds(2)))
        let expired = ending(apiKey: Self.jwt(exp: 1_700_000_000, role: "anon"), 1)
        #expect(expired.disposition == .doNotRetry && expired.reason.code == .credentialsRejected)
        #expect(expired.reason.detail?.contains("has expired") == true)
        #expect(ending(apiKey: valid, 1).reason.detail?.contains(valid) == false, "the key never in a message")
        #expect(PhoenixChannels().ending(httpStatus: 403, refusalsInARow: 1).disposition == .doNotRetry)
        #expect(ending(apiKey: valid, 1) == PhoenixChannels(credentials: .none, supabase: .init(apiKey: valid, now: { Self.now })).ending(httpStatus: 403, refusalsInARow: 1))
        #expect(ending(apiKey: valid, 1).reason.code == DisconnectReason.error("x").code)
        #expect(PhoenixChannels(credentials: .none, supabase: .init(apiKey: valid)).ending(httpStatus: 503, refusalsInARow: 1).disposition == .retry)
    }
}
