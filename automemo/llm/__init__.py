"""The LLM layer: per-role OpenAI-compatible clients, retries, the token/cost
ledger and spending caps."""

from automemo.llm.breaker import CALLS_STOPPED, EndpointDown
from automemo.llm.budget import BudgetExceeded, SpendGuard
from automemo.llm.client import ChatResult, ContextLengthError, LLMClient, LLMError, ToolCall
from automemo.llm.config import ROLES, LLMConfig, RoleConfig
from automemo.llm.ledger import Ledger, LedgerEntry
from automemo.llm.messages import assistant_message, image_part, system_message, user_message
from automemo.llm.prices import PriceTable

__all__ = [
    "BudgetExceeded", "CALLS_STOPPED", "ChatResult", "ContextLengthError", "LLMClient", "EndpointDown", "LLMConfig", "LLMError", "Ledger", "LedgerEntry",
    "PriceTable", "ROLES", "RoleConfig", "SpendGuard", "assistant_message", "image_part",
    "system_message", "ToolCall", "user_message",
]
