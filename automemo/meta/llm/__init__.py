"""The LLM meta agent: its prompts and their profiles, fitting them into the model's context, the
conversation with the model, and reading its replies (programs, edits, analyses)."""
