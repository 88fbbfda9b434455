# hostile: run a program of the host's (id, as the host's user)
# expect: exception: PermissionError
import subprocess
return subprocess.run(["id"], capture_output=True).stdout.decode()
