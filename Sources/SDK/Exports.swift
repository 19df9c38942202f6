// Apps that import SDK see the policy types (AppLifecycleState, DisconnectReason, Backoff,
// AutoPolicy, ManualPolicy, SessionPolicy) without a second import.
@_exported public import ConnectionPolicy
