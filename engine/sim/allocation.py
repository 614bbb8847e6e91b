"""Allocation rules: how many processors a job holds and whether they are free now.

``count``: any free processors; a job holds exactly what it asked for.

``buddy`` (Paragon paper §3.1): a job asking for r processors holds the smallest power of two
2**i >= r, or the whole machine N when r > 2**m (2**m the largest power of two <= N). A machine
that is not a power of two is split into power-of-two groups (100 = 64 + 32 + 4); inside a group,
blocks are split and merged as in a classic binary buddy system, so fragmentation is real: a
request fits only when an aligned free block of its size exists, not merely enough processors.
"""

from __future__ import annotations

from bisect import insort


class CountAllocator:
    """A homogeneous pool: a job fits when enough processors are free."""

    name = "count"

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.free = capacity

    def size_for(self, procs: int) -> int:
        return procs

    def fits(self, size: int) -> bool:
        return size <= self.free

    def allocate(self, job: int, size: int) -> None:
        if size > self.free:
            raise RuntimeError(f"job {job}: {size} processors asked, {self.free} free")
        self.free -= size

    def release(self, job: int, size: int) -> None:
        self.free += size


def power_of_two_groups(capacity: int) -> list[int]:
    """Split a machine into power-of-two groups, largest first: 100 -> [64, 32, 4]."""
    return [1 << bit for bit in range(capacity.bit_length() - 1, -1, -1) if capacity >> bit & 1]


def buddy_size(procs: int, capacity: int) -> int:
    """Processors a request of ``procs`` holds under the buddy rule."""
    largest = 1 << (capacity.bit_length() - 1)
    if procs > largest:
        return capacity
    return 1 << max(procs - 1, 0).bit_length()


class BuddyAllocator:
    """Binary buddy system over the machine's power-of-two groups."""

    name = "buddy"

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.free = capacity
        self.groups: list[tuple[int, int]] = []   # (offset, size)
        offset = 0
        for size in power_of_two_groups(capacity):
            self.groups.append((offset, size))
            offset += size
        # free blocks: size -> sorted offsets
        self.blocks: dict[int, list[int]] = {}
        for offset, size in self.groups:
            self.blocks.setdefault(size, []).append(offset)
        self.held: dict[int, list[tuple[int, int]]] = {}   # job -> [(offset, size)]

    def size_for(self, procs: int) -> int:
        return buddy_size(procs, self.capacity)

    def fits(self, size: int) -> bool:
        if size == self.capacity:
            return self.free == self.capacity
        return any(s >= size and offsets for s, offsets in self.blocks.items())

    def allocate(self, job: int, size: int) -> None:
        if size == self.capacity:
            if self.free != self.capacity:
                raise RuntimeError(f"job {job}: the whole machine is not free")
            self.held[job] = list(self.groups)
            self.blocks = {}
            self.free = 0
            return
        candidates = sorted(s for s, offsets in self.blocks.items() if s >= size and offsets)
        if not candidates:
            raise RuntimeError(f"job {job}: no free buddy block of {size} processors")
        block = candidates[0]
        offset = self.blocks[block].pop(0)
        while block > size:            # split, keeping the upper half free
            block //= 2
            insort(self.blocks.setdefault(block, []), offset + block)
        self.held[job] = [(offset, size)]
        self.free -= size

    def release(self, job: int, size: int) -> None:
        for offset, block in self.held.pop(job):
            self._merge(offset, block)
            self.free += block

    def _merge(self, offset: int, size: int) -> None:
        group_offset, group_size = self._group_containing(offset)
        while size < group_size:
            buddy = group_offset + ((offset - group_offset) ^ size)
            free_same = self.blocks.get(size, [])
            if buddy not in free_same:
                break
            free_same.remove(buddy)
            offset = min(offset, buddy)
            size *= 2
        insort(self.blocks.setdefault(size, []), offset)

    def _group_containing(self, offset: int) -> tuple[int, int]:
        for group_offset, group_size in self.groups:
            if group_offset <= offset < group_offset + group_size:
                return group_offset, group_size
        raise ValueError(offset)


ALLOCATORS: dict[str, type[CountAllocator | BuddyAllocator]] = {"count": CountAllocator, "buddy": BuddyAllocator}


def make_allocator(name: str, capacity: int) -> CountAllocator | BuddyAllocator:
    try:
        return ALLOCATORS[name](capacity)
    except KeyError:
        raise ValueError(f"unknown allocation rule {name!r}: choose from {', '.join(ALLOCATORS)}") from None
