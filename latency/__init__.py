import os

# numpy asks the kernel for transparent huge pages for every array of 4 MB and more (madvise). Where the kernel
# defragments for such requests (Debian's default) and the page cache is full, as beside PostgreSQL at 100 M rows,
# the first of those arrays in a new process waits while memory is compacted, and a cold read's time varies with
# it (docs/architecture/storage.md, "Huge pages").
# numpy reads this once, when first imported, so it is set before anything imports numpy; an operator's own setting
# wins.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

from latency.celery import app as celery_app

__all__ = ["celery_app"]
