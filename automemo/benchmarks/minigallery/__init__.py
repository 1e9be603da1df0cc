"""Mini-Gallery: a seeded, offline, small Mem-Gallery (RELATED-WORK §2.6)."""

from automemo.benchmarks.minigallery.benchmark import MiniGallery, MiniGalleryOptions

__all__ = ["MiniGallery", "MiniGalleryOptions"]
