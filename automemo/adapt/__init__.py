"""Adaptation of a served memory to its own history (`automemo serve --adapt`, `automemo memory
adapt`): the label-free search run on what a namespace remembered, its selection raced against
the live program, and installed as a new version (`automemo.serve.storage.versions`) only on a paired
win. Above `serve` and `search`: neither imports it."""
