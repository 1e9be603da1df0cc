"""Pseudo-questions: validation questions a label-free search builds from a user's own sessions
(`benchmark.questions = "self"` or `"llm"`), each with the turns that answer it, so that programs
can be ranked, fitted and selected without one labelled question (docs/label-free.md)."""
