"""Settings of `automemo report`, every default in one place."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportConfig:
    # Sample tasks shown per node, half from the top of its latest evaluation and half from the
    # bottom: what the memory retrieved when it helped and when it did not.
    samples_per_node: int = 4
    # Agent screenshots per sample (the first and the last ones): enough to see where the agent
    # started and where it ended without turning each node page into a film strip.
    screenshots_per_sample: int = 2
    # Agent actions listed per sample (the first ones), one line each: what the agent did with
    # the memory it was given, without the whole trajectory.
    agent_steps_per_sample: int = 8
    # Thumbnail bounding box in pixels; large enough to read a button label in a screenshot.
    thumb_px: int = 360
    # JPEG quality of thumbnails; 72 keeps text legible at about a tenth of PNG's size.
    jpeg_quality: int = 72
    # All images together stop growing past this, so a long run's report stays under 5 MB
    # (pages and styles take the rest). Images past it are left out and counted on the page.
    image_budget_bytes: int = 3_500_000
    # Characters of a payload's text shown per sample; the full text is in the run's evidence.
    payload_chars: int = 3_000
    # Unchanged lines kept around each change in a node's diff against its parent.
    diff_context: int = 3
