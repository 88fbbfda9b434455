# hostile: leave the process group the host kills at settlement
# expect: exception: PermissionError
import os
os.setsid()
return "left"
