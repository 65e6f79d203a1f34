"""Fixtures of tests/images: the built images, containers of them, the suite's services as a container reaches
them (tests/images/containers.py)."""

from tests.images.containers import built_images, containers, services  # noqa: F401
