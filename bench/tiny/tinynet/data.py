import random


def batches(items, size):
    items = list(items)
    random.shuffle(items)
    for start in range(0, len(items), size):
        yield items[start:start + size]
