"""Swarm game server."""

__version__ = "0.10.1"  # the one version: package metadata and the OpenAPI document
