import FolioCore
print("x")
