"""Mini-Gallery: a seeded, offline, small Mem-Gallery."""

from automemo.benchmarks.minigallery.benchmark import MiniGallery, MiniGalleryOptions

__all__ = ["MiniGallery", "MiniGalleryOptions"]
