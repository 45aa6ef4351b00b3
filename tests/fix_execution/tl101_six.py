# fix: TL101
# expect: repairs ModuleNotFoundError
# `torch._six` is gone since torch 2.0: the fix binds the names it held.
from torch._six import inf, string_classes

print("inf:", inf)
print("classes:", string_classes)
