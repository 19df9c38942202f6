# A small python-socketio app for Tether's integration tests: namespace auth (token "s3cret",
# else connect_error), join/leave/publish events answered with an ack, messages pushed to the
# room as a "message" event, and "kick_me" (the server disconnects the client: packet 41).
# The heartbeat is short (PING_INTERVAL_MS, PING_TIMEOUT_MS) so the tests see it; python-socketio
# truncates the interval to whole seconds (300 ms is announced as pingInterval 0), so keep it >= 1000.
# Started by the tests under uvicorn on a free loopback port: see PeerServer.swift.
import os

import socketio

sio = socketio.AsyncServer(
    async_mode="asgi",
    ping_interval=int(os.environ.get("PING_INTERVAL_MS", "1000")) / 1000,
    ping_timeout=int(os.environ.get("PING_TIMEOUT_MS", "1000")) / 1000,
)
app = socketio.ASGIApp(sio)


@sio.event
async def connect(sid, environ, auth):
    if not auth or auth.get("token") != "s3cret":
        raise socketio.exceptions.ConnectionRefusedError("unauthorized")


@sio.event
async def join(sid, room):
    await sio.enter_room(sid, room)
    return {"ok": True}


@sio.event
async def leave(sid, room):
    await sio.leave_room(sid, room)
    return {"ok": True}


@sio.event
async def publish(sid, message):
    await sio.emit("message", message, room=message["room"])
    return {"ok": True}


@sio.event
async def kick_me(sid, *args):
    await sio.disconnect(sid)
