"""One exchange with the meta LLM that must yield something usable: ask, parse, and on a bad
reply ask once more saying exactly what was wrong, then give up with `MetaError`.

Usage (calls, tokens, cost, latency) is tallied across the exchanges of one proposal so that
the tree can show what each child cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar

from automemo.llm import ContextLengthError, LLMError, assistant_message, user_message
from automemo.meta.base import MetaError
from automemo.meta.config import MetaConfig
from automemo.prompting import render

T = TypeVar("T")


# Characters of a cut answer kept in the conversation when it is re-asked for a shorter one.
_CUT_SHOWN = 600
# Characters of an unusable answer quoted in the error (the node's failure says what came back).
_HEAD_SHOWN = 160


class UnusableReply(MetaError):
    """The model answered, but not in a usable form, even after the format re-ask."""


class PromptTooLong(MetaError):
    """The server refused the prompt as longer than the model's context."""


class TruncatedReply(UnusableReply):
    """The answer was cut at the completion cap (finish_reason "length") and was still unusable
    after its continuations: a cap too small for the answer, not a model that wrote no code."""


@dataclass
class UsageTally:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    models: set[str] = field(default_factory=set)

    def add(self, result: Any) -> None:
        self.calls += 1
        self.prompt_tokens += int(result.prompt_tokens or 0)
        self.completion_tokens += int(result.completion_tokens or 0)
        self.cost_usd += float(result.cost_usd or 0.0)
        self.latency_s += float(result.latency_s or 0.0)
        if result.model:
            self.models.add(result.model)

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "latency_s": round(self.latency_s, 3),
            "models": sorted(self.models),
        }


class MetaConversation:
    """Calls of the `meta` role for one node, sharing a usage tally."""

    def __init__(self, client: Any, config: MetaConfig, *, node_id: int | None) -> None:
        self.client = client
        self.config = config
        self.node_id = node_id
        self.usage = UsageTally()
        self.last_text = ""  # the last usable reply, for a follow-up in the same conversation

    def _call(self, history: list[dict], purpose: str, max_tokens: int, temperature: float | None) -> Any:
        try:
            return self.client.chat("meta", history, node=self.node_id, purpose=purpose,
                                    max_tokens=max_tokens, temperature=temperature)
        except ContextLengthError as exc:
            raise PromptTooLong(f"{purpose}: {exc}") from exc
        except LLMError as exc:
            # The client already retried; a failing endpoint fails this step, not the run (the
            # client's circuit breaker stops the run after a few in a row).
            # BudgetExceeded (and EndpointDown) is not an LLMError: it propagates and stops the search.
            raise MetaError(f"{purpose}: the meta LLM call failed: {exc}") from exc

    def _complete(self, history: list[dict], purpose: str, max_tokens: int,
                  temperature: float | None) -> tuple[str, bool]:
        """One answer, continued while it is cut at the completion cap (at most
        `max_continuations` times); (text, still cut)."""
        result = self._call(history, purpose, max_tokens, temperature)
        self.usage.add(result)
        text = result.text
        for n in range(self.config.llm.max_continuations):
            if getattr(result, "finish_reason", None) != "length":
                break
            history = [*history, assistant_message(text), user_message(render("meta_continue"))]
            result = self._call(history, f"{purpose}-continue-{n + 1}", max_tokens, temperature)
            self.usage.add(result)
            text += result.text
        return text, getattr(result, "finish_reason", None) == "length"

    def ask(
        self,
        messages: Sequence[dict],
        parse: Callable[[str], T],
        *,
        expected: str,
        purpose: str,
        max_tokens: int,
        temperature: float | None = None,
        after_cut: str | None = None,
    ) -> T:
        """Send `messages`; return `parse(reply)`. `parse` raises MetaError with a message the
        model can act on; the re-ask (`format_retries` of them) asks for `expected` ("json",
        "program" or "diff": SEARCH/REPLACE edits); after that the last error propagates. An
        answer cut at the completion cap is continued first; still cut and unusable, it is
        re-asked for `after_cut` (e.g. "diff": a short answer where the long one did not fit),
        or, without one, fails as TruncatedReply. `temperature` None: the meta config's (else
        the role's)."""
        history = list(messages)
        for attempt in range(self.config.llm.format_retries + 1):
            text, cut = self._complete(history, purpose if attempt == 0 else f"{purpose}-retry",
                                       max_tokens, self.config.llm.temperature if temperature is None else temperature)
            try:
                value = parse(text)
            except MetaError as exc:
                last = attempt == self.config.llm.format_retries
                if cut and (after_cut is None or last):
                    # not a model that wrote no code: one that was not let finish
                    raise TruncatedReply(
                        f"{purpose}: the answer was cut at the completion cap ({max_tokens} tokens, "
                        f"finish_reason \"length\") even after {self.config.llm.max_continuations} "
                        f"continuation(s); raise meta.generate_max_tokens / analysis_max_tokens (a whole "
                        f"program must fit it; SEARCH/REPLACE edits, meta.edit_mode = \"diff\", stay "
                        f"short)") from exc
                if last:
                    head = " ".join(text.split())[:_HEAD_SHOWN]
                    raise UnusableReply(
                        f"{purpose}: the meta model's answer was unusable after "
                        f"{attempt + 1} attempt(s): {exc}; it began {head!r}"
                    ) from exc
                if cut:
                    # The cut answer's head is enough for the model to know what it was doing;
                    # all of it would only make the re-ask long.
                    retry = render("meta_format_retry", problem="it was cut at the length limit",
                                   expected=after_cut, cut=True)
                    history += [assistant_message(text[:_CUT_SHOWN] + "\n[... cut]"), user_message(retry)]
                    continue
                retry = render("meta_format_retry", problem=str(exc), expected=expected, cut=False)
                history += [assistant_message(text), user_message(retry)]
                continue
            self.last_text = text
            return value
        raise AssertionError("unreachable")  # the loop returns or raises
