"""Typed simulation descriptions: what a detailed task text prescribes, read by rules and run literally."""
