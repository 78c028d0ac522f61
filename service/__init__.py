"""Swarm game server."""

__version__ = "0.12.1"  # the one version: package metadata and the OpenAPI document
