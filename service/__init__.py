"""Swarm game server."""

__version__ = "0.13.0"  # the one version: package metadata and the OpenAPI document
