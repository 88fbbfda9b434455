# hostile: list the host's filesystem
# expect: exception: PermissionError
import os
return os.listdir("/")
