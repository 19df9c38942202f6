# A small strawberry-graphql app for Tether's integration tests: one subscription (ticks, with
# an app cursor `since`), two mutations (post; fail, whose resolver raises), and a credential check on connection_init
# (token "s3cret"; anything else is rejected, which strawberry answers with close 4403).
# Started by the tests under uvicorn on a free loopback port: see PeerServer.swift.
import asyncio
import strawberry
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL

@strawberry.type
class Query:
    hello: str = "world"

@strawberry.type
class Mutation:
    @strawberry.mutation
    def post(self, text: str) -> int:
        return len(text)

    @strawberry.mutation
    def fail(self) -> int:
        raise ValueError("the resolver refused")

@strawberry.type
class Subscription:
    @strawberry.subscription
    async def ticks(self, room: str, since: int = 0) -> int:
        n = since
        while True:
            n += 1
            yield n
            await asyncio.sleep(0.05)

class App(GraphQL):
    async def on_ws_connect(self, context):
        params = context["connection_params"] or {}
        if params.get("token") != "s3cret":
            raise ConnectionRejectionError()
        return {"welcome": True}

app = App(strawberry.Schema(query=Query, mutation=Mutation, subscription=Subscription), subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL])
