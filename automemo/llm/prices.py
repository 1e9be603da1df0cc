"""Per-model prices in USD per 1M (input, output) tokens, for the ledger's cost column.

The table holds public list prices of common OpenAI models as known when this file was written;
prices change, so a run's config (`llm.prices`) overrides and extends it. A model that matches
nothing costs 0 and is reported as unpriced, so a USD cap never silently passes for a model
whose price the tool does not know: the run says so (see `Cost.priced`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from automemo.llm.config import LLMConfig

DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "text-embedding-3-small": (0.02, 0.0),
    "text-embedding-3-large": (0.13, 0.0),
}


@dataclass(frozen=True)
class Cost:
    usd: float
    priced: bool  # False: the model is in no price table, `usd` is 0 by default


class PriceTable:
    def __init__(self, overrides: Mapping[str, tuple[float, float]] | None = None) -> None:
        self._prices = {**DEFAULT_PRICES, **{k: (float(v[0]), float(v[1])) for k, v in (overrides or {}).items()}}

    def lookup(self, model: str) -> tuple[float, float] | None:
        """Price of `model`: an exact name first, then the longest known name it starts with
        (dated snapshots such as "gpt-4o-2024-08-06"), after dropping a provider prefix
        ("openai/gpt-4o")."""
        if model in self._prices:
            return self._prices[model]
        name = model.rsplit("/", 1)[-1]
        if name in self._prices:
            return self._prices[name]
        matches = [k for k in self._prices if name.startswith(k + "-")]
        return self._prices[max(matches, key=len)] if matches else None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> Cost:
        price = self.lookup(model)
        if price is None:
            return Cost(0.0, False)
        return Cost((prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000, True)


def unpriced_cap_problem(config: LLMConfig, prices: PriceTable) -> str | None:
    """Why `config`'s USD cap cannot be held (a configured role's model has no price), or None.
    A cap that silently counts an unpriced model as free would let a run spend without limit."""
    if config.max_usd is None:
        return None
    from automemo.llm.config import ROLES

    missing = sorted({f"{config.role(r).model!r} (llm.{r})" for r in ROLES
                      if config.role(r).configured and prices.lookup(config.role(r).model) is None})
    if not missing:
        return None
    return (f"a USD cap (--max-usd / llm.max_usd = {config.max_usd:g}) needs a price for every model, and "
            f"there is none for {', '.join(missing)}: add it to [llm.prices] as "
            f'"MODEL" = [USD per 1M input tokens, USD per 1M output tokens] (0, 0 for a free local '
            f"model), or cap tokens instead (--max-tokens / llm.max_total_tokens)")
