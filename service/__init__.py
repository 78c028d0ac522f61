"""Swarm game server."""

__version__ = "0.12.0"  # the one version: package metadata and the OpenAPI document
