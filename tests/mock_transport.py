"""A scripted player for testing the referee's side without processes.

In the spirit of python-chess's ``MockTransport.expect(line, responses)``:
each message the referee sends must be the one the script expects next, and
the "bot" answers with the raw lines the script gives, which go through the
same codec and parsers as a real bot's output (:func:`arena.protocol.wire.decode`,
:func:`arena.protocol.parse.parse_ready`), so a test can feed the referee any
bytes at all. It keeps :class:`arena.protocol.player.Player`'s contract the
way :class:`arena.match.process.BotProcess` does:

- a line written in answer to a notification, or a second line after a reply,
  is output nobody asked for: the next request raises ``unasked``;
- ``fault=`` makes the player fail at that message as a process would
  (``BotTimeout``, ``BotCrashed``): at once for ``start``/``request``, at the
  next request for a notification;
- after a fault, nothing more may be sent to it (the referee's promise).

A message that is not the expected one fails the test (``AssertionError``),
as does :meth:`MockTransport.assert_done` while expectations are left.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from arena.errors import BotFault, ProtocolError
from arena.protocol.messages import Notification, ReadyMessage, RefereeMessage, TurnMessage, hello_message
from arena.protocol.parse import RawMessage, parse_ready
from arena.protocol.wire import clip, decode, encode

Line = bytes | str


Responses = Iterable[Line] | Callable[[dict[str, Any]], Iterable[Line]]  # lines, or lines made from the message


@dataclass
class _Expect:
    pattern: Mapping[str, object]  # every key given must be equal in the message (as JSON)
    responses: Responses
    fault: BotFault | None
    cpu: float
    lines: tuple[bytes, ...] = ()  # the answer to the message it last matched

    def matches(self, msg: dict[str, Any]) -> bool:
        if not all(k in msg and msg[k] == v for k, v in self.pattern.items()):
            return False
        answer = self.responses(msg) if callable(self.responses) else self.responses
        self.lines = tuple(_bytes(r) for r in answer)
        return True


def _as_json(msg: RefereeMessage) -> dict[str, Any]:
    """The message as the bot would read it (tuples become lists, keys strings)."""
    obj = orjson.loads(encode(msg))
    assert isinstance(obj, dict)
    return obj


class MockTransport:
    def __init__(self, name: str = "mock") -> None:
        self.name = name
        self.sent: list[dict[str, Any]] = []  # every message received, as JSON
        self._script: deque[_Expect] = deque()
        self._standing: list[_Expect] = []
        self._unasked: list[bytes] = []  # lines written when nobody asked
        self._fault: BotFault | None = None  # noticed while notifying, raised by the next request
        self._dead = False  # faulted: the referee must send nothing more
        self.closed = False

    # -- the script ----------------------------------------------------------------

    def expect(
        self,
        pattern: Mapping[str, object],
        responses: Responses = (),
        *,
        fault: BotFault | None = None,
        cpu: float = 0.001,
    ) -> MockTransport:
        """The next message must match ``pattern``; answer it with ``responses``
        (lines without their newline, or a function of the message giving them)."""
        self._script.append(_Expect(dict(pattern), _keep(responses), fault, cpu))
        return self

    def otherwise(
        self,
        pattern: Mapping[str, object],
        responses: Responses = (),
        *,
        fault: BotFault | None = None,
        cpu: float = 0.001,
    ) -> MockTransport:
        """A standing answer for any message matching ``pattern`` once the script is used up."""
        self._standing.append(_Expect(dict(pattern), _keep(responses), fault, cpu))
        return self

    def assert_done(self) -> None:
        assert not self._script, f"{self.name}: expected messages never sent: {[e.pattern for e in self._script]}"

    # -- the Player protocol ---------------------------------------------------------

    def start(self) -> ReadyMessage:
        step = self._receive(hello_message(), "hello")  # what a process-backed player sends first
        if step.fault is not None:
            self._dead = True
            raise step.fault
        if not step.lines:
            raise AssertionError(f"{self.name}: the script gives no answer to hello")
        self._unasked += step.lines[1:]
        try:
            return parse_ready(decode(step.lines[0]))
        except ProtocolError as exc:
            self._dead = True
            raise ProtocolError(f"bot {self.name} answered hello wrongly: {exc.detail}", "malformed") from None

    def notify(self, msg: Notification) -> None:
        step = self._receive(msg, str(msg.get("type")))
        if self._fault is not None:
            return
        if step.fault is not None:
            self._fault = step.fault
        self._unasked += step.lines

    def request(self, msg: TurnMessage) -> tuple[RawMessage, float]:
        step = self._receive(msg, "turn")
        try:
            if self._fault is not None:
                raise self._fault
            if self._unasked:
                raise ProtocolError(f"bot {self.name} wrote without being asked: {clip(self._unasked[0])}", "unasked")
            if step.fault is not None:
                raise step.fault
            if not step.lines:
                raise AssertionError(f"{self.name}: the script gives no answer to a turn; use fault=")
            self._unasked += step.lines[1:]
            try:
                return decode(step.lines[0]), step.cpu
            except ProtocolError as exc:
                raise ProtocolError(f"bot {self.name} replied with a line that is {exc.detail}", "malformed") from None
        except BotFault:
            self._dead = True  # as a faulted process is killed
            raise

    def close(self) -> None:
        self.closed = True

    # -- internals -----------------------------------------------------------------

    def _receive(self, msg: RefereeMessage, what: str) -> _Expect:
        obj = _as_json(msg)
        assert not self._dead, f"{self.name}: sent {what} after it faulted: {clip(orjson.dumps(obj))}"
        assert not self.closed, f"{self.name}: sent {what} after close()"
        self.sent.append(obj)
        if self._script:
            step = self._script.popleft()
            assert step.matches(obj), (
                f"{self.name}: expected a message like {step.pattern}, got {clip(orjson.dumps(obj), 400)}"
            )
            return step
        for step in self._standing:
            if step.matches(obj):
                return step
        raise AssertionError(f"{self.name}: unexpected message {clip(orjson.dumps(obj), 400)}")


def _keep(responses: Responses) -> Responses:
    return responses if callable(responses) else tuple(responses)


def _bytes(line: Line) -> bytes:
    return line.encode() if isinstance(line, str) else line
