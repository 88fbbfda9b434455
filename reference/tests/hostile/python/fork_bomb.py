# hostile: fork without end
# expect: exception: PermissionError
import os
while True:
    os.fork()
