# hostile: replace itself with a shell
# expect: exception: PermissionError
import os
os.execv("/bin/sh", ["sh", "-c", "id"])
