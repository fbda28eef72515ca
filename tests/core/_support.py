"""What the kit's tests share."""

from __future__ import annotations

import attrs

from reactive_aio import Subscription


@attrs.define(eq=False)
class Recording(Subscription):
    """An upstream subscription that records requests and counts cancels."""

    requests: list[int] = attrs.field(factory=list)
    cancels: int = 0

    def request(self, n: int) -> None:
        self.requests.append(n)

    def cancel(self) -> None:
        self.cancels += 1
