# A scripted Supabase Realtime peer (Phoenix V2 serializer with Supabase's layer) for Tether's
# tests and demo: no Supabase server can be installed here (no hex), so this plays back what a
# real supabase/realtime v2.52.1 server did, frame for frame, in
# ../shared/research/supabase-transcripts.md (facts 1-14):
#   - the upgrade: `/…/websocket?apikey=anon&vsn=2.0.0` or a bare 403; POST /refuse?count=N
#     answers the next N upgrades 403 too (the joins-per-second limit, which lifts);
#   - heartbeats on topic "phoenix"; the idle timeout (IDLE_TIMEOUT_MS, default 60 s): close 1000;
#     a text frame that is not JSON: close 1011;
#   - `realtime:*` joins with `{"config", "access_token"}`: an expired JWT, or a private channel
#     with the API key as token, is refused with Supabase's reasons; the reply names the
#     postgres_changes bindings with their ids; then the replay (private, `replay {since, limit}`:
#     the newest `limit` stored since `since`, oldest first, `meta.replayed`, no id in the
#     payload), "Subscribed to PostgreSQL" when there are bindings, then presence_state;
#   - broadcasts: relayed to the other members (to the sender with `self`), replied with `ack`,
#     never stored; presence track/untrack replied, presence_diff to every member;
#   - tokens: a channel's token (its JWT `exp`) ends it at that second with a `system` "Token has
#     expired 0 seconds ago" and phx_close; an access_token push replaces it with no reply (an
#     expired one ends the channel the same way);
#   - HTTP: GET /health; POST /send?topic=&event=&n=[&live=0] (realtime.send on a private topic:
#     stored with an id, and broadcast live with `meta.id` and `payload.id` unless live=0);
#     POST /change?table=&type=&id=[&owner=] (a row change: to every channel with a binding on
#     the table whose filter matches, whatever event it asked for, as the real server does);
#     POST /ratelimit?topic= ("Too many messages per second" + phx_close to its members);
#     POST /disconnect?user= (close 1000);
#   - a postgres_changes binding on a table the database does not have (MISSING_TABLES, default
#     `no_such_table`, the transcript's): the join is answered `ok`, then the `system` error
#     "Unable to subscribe to changes…" on the join's ref, sent again every CHANGES_RETRY_MS
#     (default 6000: the real server's 56.3 s → 62.8 s) for as long as that join is current.
# Started under uvicorn on a free loopback port by the tests (PeerServer.swift) and by
# `Examples/PeerServers/Apps/serve supabase PORT`.
import asyncio
import base64
import binascii
import json
import os
import secrets
import time
import uuid
from urllib.parse import parse_qs

API_KEY = os.environ.get("SUPABASE_API_KEY", "anon")
IDLE_TIMEOUT = int(os.environ.get("IDLE_TIMEOUT_MS", "60000")) / 1000
MISSING_TABLES = set(os.environ.get("MISSING_TABLES", "no_such_table").split(","))
CHANGES_RETRY = int(os.environ.get("CHANGES_RETRY_MS", "6000")) / 1000

connections = set()
stored = {}  # topic -> [(inserted_at ms, id, event, payload)]
refusals = [0]


def encode(join_ref, ref, topic, event, payload):
    return json.dumps([join_ref, ref, topic, event, payload], separators=(",", ":"), sort_keys=True)


def now_ms():
    return int(time.time() * 1000)


def jwt_exp(token):
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, binascii.Error):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return exp if isinstance(exp, (int, float)) else None


def binding_id(binding):
    key = "|".join(str(binding.get(k, "")) for k in ("event", "schema", "table", "filter"))
    return binascii.crc32(key.encode()) & 0x7FFFFFF


class Join:
    def __init__(self, join_ref, config, token):
        self.join_ref = join_ref
        self.config = config
        self.token = token
        self.key = (config.get("presence") or {}).get("key") or str(uuid.uuid4())
        self.meta = None
        self.bindings = [dict(b, id=binding_id(b)) for b in config.get("postgres_changes") or []]
        self.expiry = None


class Connection:
    def __init__(self, user):
        self.user = user
        self.out = asyncio.Queue()
        self.joins = {}  # topic -> Join

    def push(self, frame):
        self.out.put_nowait(frame)

    def reply(self, join_ref, ref, topic, status, response):
        self.push(encode(join_ref, ref, topic, "phx_reply", {"response": response, "status": status}))


def members(topic):
    return [(c, c.joins[topic]) for c in connections if topic in c.joins]


def presence_diff(topic, joins, leaves):
    for member, join in members(topic):
        member.push(encode(join.join_ref, None, topic, "presence_diff", {"joins": joins, "leaves": leaves}))


def leave(connection, topic):
    join = connection.joins.pop(topic, None)
    if join is None:
        return
    if join.expiry:
        join.expiry.cancel()
    if join.meta:
        presence_diff(topic, {}, {join.key: {"metas": [join.meta]}})


def end_channel(connection, topic, message):
    join = connection.joins.get(topic)
    if join is None:
        return
    name = topic[len("realtime:"):]
    connection.push(encode(join.join_ref, None, topic, "system", {"channel": name, "extension": "system", "message": message, "status": "error"}))
    connection.push(encode(join.join_ref, join.join_ref, topic, "phx_close", {}))
    leave(connection, topic)


def watch_token(connection, topic, join):
    if join.expiry:
        join.expiry.cancel()
        join.expiry = None
    exp = jwt_exp(join.token)
    if exp is None:
        return

    async def expire():
        await asyncio.sleep(max(0, exp - time.time()))
        if connection.joins.get(topic) is join:
            end_channel(connection, topic, "Token has expired 0 seconds ago")

    join.expiry = asyncio.get_running_loop().create_task(expire())


def repeat_changes_error(connection, topic, join, name, binding):
    """The real server retries a binding it cannot subscribe and says so each time, on the
    channel's current join, while the channel stays joined."""
    params = "event: %s, schema: %s, table: %s" % (binding.get("event", "*"), binding.get("schema", "public"), binding.get("table"))
    message = "{:error, \"Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: [%s]\"}" % params
    frame = encode(join.join_ref, None, topic, "system", {"channel": name, "extension": "postgres_changes", "message": message, "status": "error"})

    async def repeat():
        while connection.joins.get(topic) is join:
            connection.push(frame)
            await asyncio.sleep(CHANGES_RETRY)

    asyncio.get_running_loop().create_task(repeat())


def join_channel(connection, join_ref, ref, topic, payload):
    if not topic.startswith("realtime:"):
        connection.reply(None, ref, topic, "error", {"reason": "unmatched topic"})
        return
    config = payload.get("config") or {}
    token = payload.get("access_token") or API_KEY
    exp = jwt_exp(token)
    if exp is not None and exp <= time.time():
        reason = "InvalidJWTToken: Token has expired %d seconds ago" % int(time.time() - exp)
        connection.reply(join_ref, ref, topic, "error", {"reason": reason})
        return
    private = bool(config.get("private"))
    name = topic[len("realtime:"):]
    if private and token == API_KEY:
        connection.reply(join_ref, ref, topic, "error", {"reason": "Unauthorized: You do not have permissions to read from this Channel topic: " + name})
        return
    replay = (config.get("broadcast") or {}).get("replay")
    if replay is not None and (not private or not isinstance(replay.get("since"), int)):
        reason = "Replay is not allowed for public channels" if not private else "Replay params are not valid"
        connection.reply(join_ref, ref, topic, "error", {"reason": "UnableToReplayMessages: " + reason})
        return
    old = connection.joins.get(topic)
    join = Join(join_ref, config, token)
    connection.joins[topic] = join
    response = [{k: v for k, v in b.items()} for b in join.bindings]
    connection.reply(join_ref, ref, topic, "ok", {"postgres_changes": response})
    if old:
        if old.expiry:
            old.expiry.cancel()
        connection.push(encode(old.join_ref, old.join_ref, topic, "phx_close", {}))
    if replay is not None:
        limit = min(max(int(replay.get("limit", 25)), 1), 25)
        since = [m for m in stored.get(topic, []) if m[0] >= replay["since"]][-limit:]
        for _, message_id, event, body in since:
            frame = {"event": event, "meta": {"id": message_id, "replayed": True}, "payload": body, "type": "broadcast"}
            connection.push(encode(join_ref, None, topic, "broadcast", frame))
    missing = [b for b in join.bindings if b.get("table") in MISSING_TABLES]
    if missing:
        repeat_changes_error(connection, topic, join, name, missing[0])
    elif join.bindings:
        connection.push(encode(join_ref, None, topic, "system", {"channel": name, "extension": "postgres_changes", "message": "Subscribed to PostgreSQL", "status": "ok"}))
    if (config.get("presence") or {}).get("enabled", True) is not False:
        state = {j.key: {"metas": [j.meta]} for _, j in members(topic) if j.meta}
        connection.push(encode(join_ref, None, topic, "presence_state", state))
    watch_token(connection, topic, join)


def handle_text(connection, text):
    join_ref, ref, topic, event, payload = json.loads(text)
    if topic == "phoenix" and event == "heartbeat":
        connection.reply(None, ref, topic, "ok", {})
        return
    if event == "phx_join":
        join_channel(connection, join_ref, ref, topic, payload if isinstance(payload, dict) else {})
        return
    join = connection.joins.get(topic)
    if join is None:
        connection.reply(None, ref, topic, "error", {"reason": "unmatched topic"})
        return
    if event == "phx_leave":
        connection.reply(join.join_ref, ref, topic, "ok", {})
        connection.push(encode(join.join_ref, join.join_ref, topic, "phx_close", {}))
        leave(connection, topic)
    elif event == "access_token":
        token = payload.get("access_token")
        exp = jwt_exp(token)
        if exp is not None and exp <= time.time():
            end_channel(connection, topic, "Token has expired %d seconds ago" % int(time.time() - exp))
            return
        join.token = token  # accepted: no reply
        watch_token(connection, topic, join)
    elif event == "broadcast":
        broadcast = (join.config.get("broadcast") or {})
        relayed = {k: v for k, v in payload.items() if k in ("event", "payload", "type")}
        for member, other in members(topic):
            if member is not connection or broadcast.get("self"):
                member.push(encode(None, None, topic, "broadcast", relayed))
        if broadcast.get("ack"):
            connection.reply(join.join_ref, ref, topic, "ok", {})
    elif event == "presence":
        kind = payload.get("event")
        if kind == "track":
            previous = join.meta
            join.meta = dict(payload.get("payload") or {}, phx_ref=secrets.token_urlsafe(12))
            if previous:
                join.meta["phx_ref_prev"] = previous["phx_ref"]
            connection.reply(join.join_ref, ref, topic, "ok", {})
            presence_diff(topic, {join.key: {"metas": [join.meta]}}, {join.key: {"metas": [previous]}} if previous else {})
        elif kind == "untrack":
            previous, join.meta = join.meta, None
            connection.reply(join.join_ref, ref, topic, "ok", {})
            if previous:
                presence_diff(topic, {}, {join.key: {"metas": [previous]}})
        else:
            connection.reply(join.join_ref, ref, topic, "error", {})
    # any other event on a joined channel: ignored, no reply


def send_from_database(topic, event, body, live):
    message_id = str(uuid.uuid4())
    stored.setdefault(topic, []).append((now_ms(), message_id, event, body))
    if live:
        frame = {"event": event, "meta": {"id": message_id}, "payload": dict(body, id=message_id), "type": "broadcast"}
        for member, join in members(topic):
            if join.config.get("private"):
                member.push(encode(None, None, topic, "broadcast", frame))


def row_change(table, change_type, record):
    data = {"columns": [{"name": k, "type": "text"} for k in sorted(record)], "commit_timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "errors": None, "schema": "public", "table": table, "type": change_type}
    if change_type == "DELETE":
        data["old_record"] = {"id": record.get("id")}
    else:
        data["record"] = record
    for connection in list(connections):
        for topic, join in connection.joins.items():
            ids = []
            for binding in join.bindings:
                column, _, condition = (binding.get("filter") or "").partition("=eq.")
                if binding.get("table") == table and (not column or (change_type != "DELETE" and str(record.get(column)) == condition)):
                    ids.append(binding["id"])
            if ids:
                connection.push(encode(None, None, topic, "postgres_changes", {"data": data, "ids": ids}))


async def serve_socket(scope, receive, send):
    query = parse_qs(scope.get("query_string", b"").decode())
    await receive()  # websocket.connect
    refused = refusals[0] > 0
    if refused:
        refusals[0] -= 1
    if refused or not scope["path"].endswith("/websocket") or query.get("apikey") != [API_KEY] or query.get("vsn") != ["2.0.0"]:
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
            await send({"type": "websocket.send", "text": frame})

    writing = asyncio.create_task(writer())
    try:
        while True:
            try:
                message = await asyncio.wait_for(receive(), IDLE_TIMEOUT)
            except asyncio.TimeoutError:
                connection.push(1000)
                break
            if message["type"] == "websocket.disconnect":
                break
            if message.get("text") is not None:
                try:
                    handle_text(connection, message["text"])
                except (ValueError, TypeError, AttributeError):
                    connection.push(1011)  # the serializer's crash
                    break
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
    topic = "realtime:" + query.get("topic", "")
    if scope["path"] == "/send":
        send_from_database(topic, query.get("event", "tick"), {"n": int(query.get("n", "0"))}, query.get("live", "1") != "0")
    elif scope["path"] == "/change":
        record = {k: v for k, v in query.items() if k not in ("table", "type")}
        row_change(query.get("table", ""), query.get("type", "INSERT"), record)
    elif scope["path"] == "/ratelimit":
        for connection, _ in members(topic):
            end_channel(connection, topic, "Too many messages per second")
    elif scope["path"] == "/refuse":
        refusals[0] = int(query.get("count", "1"))
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
