# A scripted Phoenix Channels peer (V2 serializer) for Tether's tests and demo: no Phoenix server
# can be installed here (no hex), so this plays back what a real Phoenix 1.7.24 server on Bandit
# 1.11.1 did, frame for frame, in ../shared/research/phoenix-transcripts.md (§3, §6, §7):
#   - the upgrade: `token=s3cret` and `vsn=2.0.0` or a bare 403 (no reason; same for all three);
#   - heartbeats on topic "phoenix" answered, numeric refs echoed as numbers;
#   - `room:*` topics: join (a `reject` param refuses with that reason), the reply first, then
#     presence_diff (join_ref null) BEFORE presence_state (join_ref set); a second join of a joined
#     topic answers ok, then closes the old join (its join_ref); leave: reply, phx_close, then a
#     presence_diff; an unknown topic, or a push to a topic not joined: "unmatched topic" with
#     join_ref null;
#   - events: new_msg (broadcast to the topic, the sender's copy before the reply), echo, fail,
#     silent (no reply), crash (phx_error), stop (phx_close), binary echo and bin_broadcast;
#   - a frame that is not JSON: close 1011; the idle timeout (IDLE_TIMEOUT_MS, default 60 s,
#     counting any inbound frame): close 1002 (Bandit's code; IDLE_CLOSE_CODE=1000 plays Cowboy);
#   - HTTP: GET /health, POST /broadcast?topic=&event=&text=, POST /disconnect?user= (close 1000).
# Started under uvicorn on a free loopback port by the tests (PeerServer.swift) and by
# `Examples/PeerServers/Apps/serve phoenix PORT`.
import asyncio
import json
import os
import secrets
import time
from urllib.parse import parse_qs

IDLE_TIMEOUT = int(os.environ.get("IDLE_TIMEOUT_MS", "60000")) / 1000
IDLE_CLOSE_CODE = int(os.environ.get("IDLE_CLOSE_CODE", "1002"))

connections = set()
message_ids = iter(range(1, 1 << 62))


def encode(join_ref, ref, topic, event, payload):
    return json.dumps([join_ref, ref, topic, event, payload], separators=(",", ":"), sort_keys=True)


def binary_fields(kind, *fields):
    raw = [field.encode() for field in fields]
    return bytes([kind] + [len(field) for field in raw]) + b"".join(raw)


class Connection:
    def __init__(self, user):
        self.user = user
        self.out = asyncio.Queue()
        self.joins = {}  # topic -> (join_ref, phx_ref)

    def push(self, frame):
        self.out.put_nowait(frame)

    def reply(self, join_ref, ref, topic, status, response):
        self.push(encode(join_ref, ref, topic, "phx_reply", {"response": response, "status": status}))


def members(topic):
    return [c for c in connections if topic in c.joins]


def presence_entry(connection, topic):
    return {connection.user: {"metas": [{"online_at": int(time.time()), "phx_ref": connection.joins[topic][1]}]}}


def broadcast(topic, event, payload):
    for member in members(topic):
        member.push(encode(None, None, topic, event, payload))


def leave(connection, topic):
    entry = presence_entry(connection, topic)
    del connection.joins[topic]
    broadcast(topic, "presence_diff", {"joins": {}, "leaves": entry})


def handle_text(connection, text):
    join_ref, ref, topic, event, payload = json.loads(text)
    if topic == "phoenix" and event == "heartbeat":
        connection.reply(None, ref, topic, "ok", {})
        return
    if event == "phx_join":
        if not topic.startswith("room:"):
            connection.reply(None, ref, topic, "error", {"reason": "unmatched topic"})
            return
        if isinstance(payload, dict) and payload.get("reject"):
            connection.reply(join_ref, ref, topic, "error", {"reason": payload["reject"]})
            return
        old = connection.joins.get(topic)
        connection.joins[topic] = (join_ref, secrets.token_urlsafe(12))
        connection.reply(join_ref, ref, topic, "ok", {"topic": topic, "user": connection.user})
        if old:
            connection.push(encode(old[0], old[0], topic, "phx_close", {}))
        broadcast(topic, "presence_diff", {"joins": presence_entry(connection, topic), "leaves": {}})
        state = {}
        for member in members(topic):
            state.update(presence_entry(member, topic))
        connection.push(encode(join_ref, None, topic, "presence_state", state))
        return
    joined = connection.joins.get(topic)
    if joined is None:
        connection.reply(None, ref, topic, "error", {"reason": "unmatched topic"})
        return
    current = joined[0]  # a stale join_ref is routed to the current join, answered with it
    if event == "phx_leave":
        connection.reply(current, ref, topic, "ok", {})
        connection.push(encode(current, current, topic, "phx_close", {}))
        leave(connection, topic)
    elif event == "new_msg":
        message_id = next(message_ids)
        broadcast(topic, "new_msg", dict(payload, id=message_id, user=connection.user))
        connection.reply(current, ref, topic, "ok", {"id": message_id})
    elif event == "echo":
        connection.reply(current, ref, topic, "ok", payload)
    elif event == "fail":
        connection.reply(current, ref, topic, "error", {"reason": "failed"})
    elif event == "crash":
        connection.push(encode(current, current, topic, "phx_error", {}))
        leave(connection, topic)
    elif event == "stop":
        connection.push(encode(current, current, topic, "phx_close", {}))
        leave(connection, topic)
    # "silent" and anything else: no reply, as a channel without a handle_in reply


def handle_binary(connection, data):
    kind, lengths = data[0], list(data[1:5])
    offset = 5
    fields = []
    for length in lengths:
        fields.append(data[offset:offset + length].decode())
        offset += length
    join_ref, ref, topic, event = fields
    body = data[offset:]
    if kind != 0 or topic not in connection.joins:
        return
    if event == "echo":
        connection.push(binary_fields(1, join_ref, ref, topic, "ok") + body)
    elif event == "bin_broadcast":
        for member in members(topic):
            member.push(binary_fields(2, topic, event) + body)
        connection.reply(join_ref, ref, topic, "ok", {})


async def serve_socket(scope, receive, send):
    query = parse_qs(scope.get("query_string", b"").decode())
    await receive()  # websocket.connect
    if query.get("token") != ["s3cret"] or query.get("vsn") != ["2.0.0"]:
        await send({"type": "websocket.close", "code": 1008})  # before accept: HTTP 403
        return
    await send({"type": "websocket.accept"})
    connection = Connection(query.get("user", ["anon"])[0])
    connections.add(connection)

    async def writer():
        while True:
            frame = await connection.out.get()
            if isinstance(frame, int):
                await send({"type": "websocket.close", "code": frame})
                return
            key = "bytes" if isinstance(frame, bytes) else "text"
            await send({"type": "websocket.send", key: frame})

    writing = asyncio.create_task(writer())
    try:
        while True:
            try:
                message = await asyncio.wait_for(receive(), IDLE_TIMEOUT)
            except asyncio.TimeoutError:
                connection.push(IDLE_CLOSE_CODE)
                break
            if message["type"] == "websocket.disconnect":
                break
            if message.get("text") is not None:
                try:
                    handle_text(connection, message["text"])
                except (ValueError, TypeError):
                    connection.push(1011)  # the serializer's crash
                    break
            elif message.get("bytes") is not None:
                handle_binary(connection, message["bytes"])
        await asyncio.wait_for(asyncio.shield(writing), 1)
    except (asyncio.TimeoutError, Exception):
        pass
    finally:
        writing.cancel()
        connections.discard(connection)
        for topic in list(connection.joins):
            leave(connection, topic)


async def serve_http(scope, receive, send):
    query = {key: values[0] for key, values in parse_qs(scope.get("query_string", b"").decode()).items()}
    status, body = 200, b"ok"
    if scope["path"] == "/broadcast":
        broadcast(query.get("topic", ""), query.get("event", "new_msg"), {"body": query.get("text", "")})
    elif scope["path"] == "/disconnect":
        for connection in [c for c in connections if c.user == query.get("user")]:
            connection.push(1000)
    elif scope["path"] != "/health":
        status, body = 404, b"not found"
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
    elif scope["type"] == "websocket":
        await serve_socket(scope, receive, send)
    elif scope["type"] == "http":
        await serve_http(scope, receive, send)
