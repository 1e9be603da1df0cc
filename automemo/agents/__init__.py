"""Fixed execution agents and judges. `build_agent(benchmark, llm)` picks the agent a
benchmark needs: the web agent for web benchmarks, the visual/QA agent for visual and
conversation benchmarks in QA mode, and None where no agent acts (Mini-Gallery retrieval mode,
whose score needs no LLM at all)."""

from __future__ import annotations

from typing import Any


def build_agent(benchmark: Any, llm: Any) -> Any:
    kind = benchmark.agent_kind()
    if kind is None:
        return None
    if llm is None or not llm.configured("agent"):
        raise ValueError(
            f"benchmark {benchmark.name!r} needs an execution agent: configure the agent role "
            "(llm.agent.model and llm.agent.base_url)"
            + ("; or use minigallery's retrieval mode, which needs no LLM" if benchmark.name == "minigallery" else "")
        )
    if kind == "web":
        from automemo.agents.web import WebAgent, WebAgentConfig

        # A benchmark may shape the agent (its step budget, whether `back` exists).
        return WebAgent(llm, WebAgentConfig(**getattr(benchmark, "web_agent_options", {})))
    tools = getattr(benchmark, "agent_tools", None)  # a visual benchmark whose protocol gives web tools
    if tools is not None:
        from automemo.agents.tool_agent import ToolUsingAgent

        return ToolUsingAgent(llm, tools)
    from automemo.agents.visual import VisualAgent

    return VisualAgent(llm)


__all__ = ["build_agent"]
