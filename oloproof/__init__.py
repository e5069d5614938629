"""Oloproof: a release gate for trained models and LLM prompts."""

from __future__ import annotations

__version__ = "0.1.0"
