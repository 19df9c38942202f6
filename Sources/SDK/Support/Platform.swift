// A watch app may open a WebSocket only in the cases of Apple's TN3135 (an active long-form audio
// session, a CallKit call); elsewhere the system denies the socket ("denied by NECP policy"), and
// a session would retry a socket that never opens. So the SDK does not build for watchOS, and
// says why, rather than fail at run time.
#if os(watchOS)
#error("Tether's SDK does not support watchOS: the system lets a watch app open a WebSocket only during long-form audio or a call (TN3135). Use WatchConnectivity or push on the watch; ConnectionPolicy builds there.")
#endif
