"""``TurnStream`` (entrypoints/api/turn_stream.py) on its own, through the ASGI response it builds:
the user's turn slot is given back exactly once however the response ends, a streamed turn is
told it may store only after every item before was sent, and a client gone mid-stream cancels the
turn at its next event. Fakes: a counting slot keeper, a turn that is a plain function."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import ClientDisconnect

from folio.app.cancellation import TurnCancelled
from folio.app.chat import AnswerDelta, ChatEvent
from folio.domain.errors import ConversationError
from folio.entrypoints.api.deps import TurnSlots
from folio.entrypoints.api.turn_stream import TurnItem, TurnStream


class CountingSlots(TurnSlots):
    def __init__(self) -> None:
        super().__init__(limit=1)
        self.acquired = 0
        self.released = 0

    def acquire(self, user_id: str) -> None:
        super().acquire(user_id)
        self.acquired += 1

    def release(self, user_id: str) -> None:
        super().release(user_id)
        self.released += 1


async def frames(items: AsyncIterator[TurnItem]) -> AsyncIterator[bytes]:
    async for item in items:
        yield repr(item).encode() + b"\n"


def serve(
    response: Any, *, gone_after: int | None = None
) -> tuple[list[bytes], BaseException | None]:
    """Send ``response`` to an ASGI 2.4 client that leaves after ``gone_after`` body messages
    (``send`` raises ``OSError``, as a server does then): what it received, and what ended it."""
    received: list[bytes] = []

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if gone_after is not None and len(received) >= gone_after:
            raise OSError("the client has disconnected")
        if message["type"] == "http.response.body" and message.get("body"):
            received.append(message["body"])

    async def main() -> BaseException | None:
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.4"}}
        try:
            await response(scope, receive, send)
        except (OSError, ClientDisconnect) as e:
            return e
        return None

    return received, asyncio.run(main())


def failing_turn(
    events: int, *, then: Callable[[], None] = lambda: None
) -> Callable[[Callable[[ChatEvent], None] | None], Any]:
    """A turn that sends ``events`` deltas, calls ``then`` and fails (a domain error)."""

    def run(on_event: Callable[[ChatEvent], None] | None) -> Any:
        assert on_event is not None
        for i in range(events):
            on_event(AnswerDelta(f"w{i} "))
        then()
        raise ConversationError("no such conversation")

    return run


def test_a_client_gone_before_the_first_byte_never_runs_the_turn_and_frees_the_slot_once() -> None:
    slots = CountingSlots()
    ran: list[bool] = []
    turn = TurnStream(slots, "reader")
    response = turn.response(lambda on_event: ran.append(True), frames)
    received, ended = serve(response, gone_after=0)
    assert ended is None and received == []  # ends quietly: the client is gone
    assert ran == []
    assert (slots.acquired, slots.released) == (1, 1)
    slots.acquire("reader")  # free again: not 429


def test_a_turn_sent_whole_frees_the_slot_once_and_ends_with_its_failure() -> None:
    slots = CountingSlots()
    turn = TurnStream(slots, "reader")
    received, ended = serve(turn.response(failing_turn(3), frames))
    assert ended is None
    assert len(received) == 4 and b"TurnFailed" in received[-1]
    assert (slots.acquired, slots.released) == (1, 1)


def test_the_turn_may_store_only_once_every_item_before_was_sent() -> None:
    told: list[tuple[bool, int]] = []
    received: list[bytes] = []
    turn = TurnStream(CountingSlots(), "reader")

    def then() -> None:
        told.append((turn.still_wanted(), len(received)))

    async def counted(items: AsyncIterator[TurnItem]) -> AsyncIterator[bytes]:
        async for frame in frames(items):
            received.append(frame)
            yield frame

    serve(turn.response(failing_turn(200, then=then), counted))
    assert told == [(True, 200)]


def test_a_client_gone_mid_stream_cancels_the_turn_at_its_next_event() -> None:
    outcome: list[str] = []
    slots = CountingSlots()
    turn = TurnStream(slots, "reader")

    def run(on_event: Callable[[ChatEvent], None] | None) -> Any:
        assert on_event is not None
        try:
            for i in range(10_000):
                on_event(AnswerDelta(f"w{i} "))
        except TurnCancelled:
            outcome.append("cancelled")
            raise
        outcome.append("stored" if turn.still_wanted() else "not stored")
        raise ConversationError("the end")

    received, ended = serve(turn.response(run, frames), gone_after=2)  # waits for the worker
    assert ended is None and len(received) == 2  # ends quietly: the client is gone
    assert outcome in (["cancelled"], ["not stored"])
    assert (slots.acquired, slots.released) == (1, 1)
