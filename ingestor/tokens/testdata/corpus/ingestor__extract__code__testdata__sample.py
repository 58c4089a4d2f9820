#!/usr/bin/env python3
"""Sample module.

def not_a_function():
    pass
"""

import functools

CONSTANT = 3


# A comment about the decorator.
@functools.lru_cache(
    maxsize=None,
)
def cached(n):
    return n * 2


class Base:
    """Base class."""

    def __init__(self):
        self.x = '''
def also_not_a_function():
'''

    @property
    def value(self):
        return self.x

    @staticmethod
    async def fetch(url: str) -> str:
        return url

    class Inner:
        def deep(self):
            pass


async def main():
    print("def nope(): # not a comment")


if __name__ == "__main__":
    main()
