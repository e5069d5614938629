"""Renderers: one result object in, text out. No renderer decides anything."""
